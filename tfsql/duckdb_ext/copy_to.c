/*
 * tfsql/duckdb_ext/copy_to.c -- COPY ... TO ... (FORMAT tfrecord, ...) in any DuckDB
 * client (C API v1.5.6 copy functions, DuckDB >= 1.5.6).
 *
 * DuckDB runs the statement: it applies PARTITION_BY, OVERWRITE, OVERWRITE_OR_IGNORE,
 * APPEND, FILENAME_PATTERN, PER_THREAD_OUTPUT and USE_TMP_FILE itself and calls this
 * function once per file (global init, measured on DuckDB 2.0.1):
 *
 *   COPY t TO 'out.tfrecord'                   -> 'out.tfrecord' ('tmp_out.tfrecord' when
 *                                                 the target exists: DuckDB renames it)
 *   COPY t TO 'out' (PARTITION_BY (p))         -> 'out/p=0/data_0.'  (no FILE_EXTENSION)
 *   ... APPEND                                 -> 'out/p=0/<uuid>.'
 *   ... FILE_EXTENSION 'tfrecord'              -> 'out/p=0/data_0.tfrecord'
 *
 * A path ending in '.' (DuckDB's name with an empty extension, as the C API cannot
 * declare one) gets the extension TFRecord files have: 'tfrecord', 'tfrecord.gz' or
 * 'tfrecord.zz' by COMPRESSION. Every file is written under a hidden temporary name
 * beside its final one ('.<name>.tfsql-tmp-<pid>-<n>', which readers skip) and renamed
 * into place once complete and synced, so a killed COPY leaves no partial file under a
 * final name. RETURN_FILES lists the names DuckDB chose: with an extension added they
 * end in '.' instead (pass FILE_EXTENSION 'tfrecord' to have both agree).
 *
 * The format's own options (COPY's bind gets only these) are read by options.c from the
 * table generated from tfsql/options.py (options_gen.h): RECORD_TYPE (every spelling the
 * spec takes), COMPRESSION / CODEC (with COMPRESSION_LEVEL), INDEX. tfsql.connect()'s
 * COPY options that decide the files themselves (NUM_SHARDS, ROWS_PER_FILE, TFDS, ...)
 * are refused with a message naming tfsql.connect(), where they work.
 *
 * The target's lock (copy_lock.c, tfsql/locking.py's protocol) is taken when the first
 * file is opened and held until the statement's bind data is freed, after DuckDB has
 * moved its 'tmp_' files into place.
 */
#include "duckdb_ext.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

/* ------------------------------------------------------------------------------------ */
/* Columns: DuckDB types -> features                                                    */
/* ------------------------------------------------------------------------------------ */

/* How one input column is read: its leaf type and the list levels above it. */
typedef struct {
    duckdb_type leaf;
    int kind, shape;
    idx_t outer_array, inner_array; /* fixed ARRAY sizes; 0 when that level is a LIST */
    int skip;                       /* a column of type NULL: never a feature */
} incol;

/* BOOLEAN and the integer types: an int64_list feature, and what one casts to. */
int integer_type(duckdb_type t) {
    switch (t) {
    case DUCKDB_TYPE_BOOLEAN:
    case DUCKDB_TYPE_TINYINT:
    case DUCKDB_TYPE_SMALLINT:
    case DUCKDB_TYPE_INTEGER:
    case DUCKDB_TYPE_BIGINT:
    case DUCKDB_TYPE_UTINYINT:
    case DUCKDB_TYPE_USMALLINT:
    case DUCKDB_TYPE_UINTEGER:
    case DUCKDB_TYPE_UBIGINT:
        return 1;
    default:
        return 0;
    }
}

static int leaf_kind(duckdb_type t) {
    if (integer_type(t)) {
        return KIND_INT64;
    }
    switch (t) {
    case DUCKDB_TYPE_DATE:
    case DUCKDB_TYPE_TIME:
    case DUCKDB_TYPE_TIMESTAMP:
    case DUCKDB_TYPE_TIMESTAMP_S:
    case DUCKDB_TYPE_TIMESTAMP_MS:
    case DUCKDB_TYPE_TIMESTAMP_NS:
    case DUCKDB_TYPE_TIMESTAMP_TZ:
        return KIND_INT64; /* the stored integer, as tfsql.encoding writes them */
    case DUCKDB_TYPE_FLOAT:
    case DUCKDB_TYPE_DOUBLE:
        return KIND_FLOAT;
    case DUCKDB_TYPE_VARCHAR:
    case DUCKDB_TYPE_BLOB:
        return KIND_BYTES;
    default:
        return KIND_NONE;
    }
}

/* The child type of a LIST or ARRAY type (a new type), with the ARRAY's size. */
static duckdb_logical_type list_child(duckdb_logical_type t, idx_t *array_size) {
    if (duckdb_get_type_id(t) == DUCKDB_TYPE_ARRAY) {
        *array_size = duckdb_array_type_array_size(t);
        return duckdb_array_type_child_type(t);
    }
    *array_size = 0;
    return duckdb_list_type_child_type(t);
}

static int is_list_type(duckdb_type t) {
    return t == DUCKDB_TYPE_LIST || t == DUCKDB_TYPE_ARRAY;
}

/* Plan column `name` of type `t`; -1 with `err` set for a type no feature holds. */
static int plan_column(const char *name, duckdb_logical_type t, incol *ic, char *err) {
    memset(ic, 0, sizeof(*ic));
    duckdb_type id = duckdb_get_type_id(t);
    if (id == DUCKDB_TYPE_SQLNULL) {
        ic->skip = 1; /* only nulls: the feature is omitted from every record */
        return 0;
    }
    duckdb_logical_type owned[2] = {NULL, NULL};
    duckdb_logical_type leaf = t;
    ic->shape = SCALAR;
    if (is_list_type(id)) {
        owned[0] = list_child(t, &ic->outer_array);
        leaf = owned[0];
        ic->shape = LIST;
        if (is_list_type(duckdb_get_type_id(leaf))) {
            owned[1] = list_child(leaf, &ic->inner_array);
            leaf = owned[1];
            ic->shape = LIST_OF_LIST;
        }
    }
    ic->leaf = duckdb_get_type_id(leaf);
    ic->kind = leaf_kind(ic->leaf);
    for (int i = 0; i < 2; i++) {
        if (owned[i] != NULL) {
            duckdb_destroy_logical_type(&owned[i]);
        }
    }
    if (ic->kind == KIND_NONE) {
        snprintf(err, ERRLEN,
                 "COPY ... (FORMAT tfrecord): column \"%s\" has a type no TFRecord feature holds "
                 "(type id %d%s); features hold integers, booleans, dates and timestamps "
                 "(int64_list), FLOAT / DOUBLE (float_list), VARCHAR / BLOB (bytes_list) and "
                 "lists or lists of lists of them: cast it in the query (a DECIMAL to DOUBLE "
                 "or VARCHAR, a STRUCT to its fields)",
                 name, (int)ic->leaf, ic->shape == SCALAR ? "" : " inside a list");
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------------------------------ */
/* Bind: options and columns                                                            */
/* ------------------------------------------------------------------------------------ */

static char *index_name(const char *path);

/* A file committed under DuckDB's 'tmp_<name>' with its index: when DuckDB has moved the
 * file (this inode) to <name> by the end of the statement, its index follows it. */
typedef struct {
    char *data, *index;
    dev_t dev;
    ino_t ino;
} tmp_commit;

typedef struct {
    copy_settings set; /* the format's own options */
    pthread_mutex_t mu; /* guards the fields below (DuckDB opens files from several threads) */
    copy_lock lock;     /* the target's lock, from the first file opened to the statement's end */
    tmp_commit *tmp;    /* files committed under a 'tmp_' name with an index */
    size_t ntmp;
    int ncols;     /* input columns */
    incol *in;     /* one per input column */
    int *enc;      /* input column -> encoder column, -1 when skipped */
    int row_struct; /* the input columns are the fields of one STRUCT column */
    schema sc;     /* the encoder's columns */
    tfsql_column *described; /* the row's fields as a description (NULL: none, RAW) */
    size_t ndescribed;
    int description_done; /* a partitioned target's features.json is written or checked */
} copybind;

/* The index of a file DuckDB moved from 'tmp_<name>' to '<name>' after it was committed
 * (its USE_TMP_FILE) follows the file; a file still under its own name keeps its index. */
static void move_tmp_indexes(copybind *b) {
    for (size_t i = 0; i < b->ntmp; i++) {
        tmp_commit *t = &b->tmp[i];
        const char *slash = strrchr(t->data, '/');
        const char *base = slash ? slash + 1 : t->data;
        char *moved = xprintf("%.*s%s", (int)(base - t->data), t->data, base + 4);
        struct stat st;
        if (moved != NULL && access(t->data, F_OK) != 0 && stat(moved, &st) == 0 &&
            st.st_dev == t->dev && st.st_ino == t->ino) {
            char *index = index_name(moved);
            if (index != NULL) {
                rename(t->index, index);
            }
            free(index);
        }
        free(moved);
        free(t->data);
        free(t->index);
    }
    free(b->tmp);
    b->tmp = NULL;
    b->ntmp = 0;
}

static void copybind_free(void *p) {
    copybind *b = (copybind *)p;
    if (b == NULL) {
        return;
    }
    move_tmp_indexes(b); /* the statement is over: DuckDB has moved its tmp_ files */
    copy_lock_release(&b->lock);
    pthread_mutex_destroy(&b->mu);
    free(b->in);
    free(b->enc);
    schema_free(&b->sc);
    tfsql_description_free(b->described, b->ndescribed);
    free(b);
}

/* The text of an option's value (a new string), or NULL for a flag given alone. */
static char *option_text(duckdb_value v) {
    if (v == NULL || duckdb_is_null_value(v)) {
        return NULL;
    }
    char *s = duckdb_get_varchar(v);
    char *copy = s ? xstrdup(s) : NULL;
    duckdb_free(s);
    return copy;
}

static int parse_copy_options(duckdb_copy_function_bind_info info, copybind *b, char *err) {
    duckdb_value options = duckdb_copy_function_bind_get_options(info);
    if (options == NULL) {
        return 0;
    }
    int rc = 0;
    if (!duckdb_is_null_value(options)) {
        /* a STRUCT of the options, names upper case; its type is the value's own (not to
         * be destroyed: that crashed DuckDB 1.4 and 2.0) */
        duckdb_logical_type t = duckdb_get_value_type(options);
        idx_t n = duckdb_struct_type_child_count(t);
        for (idx_t i = 0; i < n && rc == 0; i++) {
            char *name = duckdb_struct_type_child_name(t, i);
            duckdb_value v = duckdb_get_struct_child(options, i);
            char *text = option_text(v);
            rc = read_copy_option(&b->set, name, text, err);
            free(text);
            duckdb_destroy_value(&v);
            duckdb_free(name);
        }
    }
    duckdb_destroy_value(&options);
    if (rc == 0 && b->set.level >= 0 && (b->set.compression == COMP_NONE)) {
        snprintf(err, ERRLEN, "COPY option COMPRESSION_LEVEL needs COMPRESSION gzip or zlib");
        return -1;
    }
    if (rc == 0 && b->set.index && b->set.compression != COMP_NONE && b->set.compression != COMP_INFER) {
        snprintf(err, ERRLEN, "COPY option INDEX writes record offsets, which compressed files "
                              "do not have; drop INDEX or COMPRESSION");
        return -1;
    }
    return rc;
}

/* Add feature column `name` of type `t` (input field `i`); -1 with `err` set. */
static int plan_feature(copybind *b, idx_t i, const char *name, duckdb_logical_type t, char *err) {
    incol *ic = &b->in[i];
    b->enc[i] = -1;
    if (plan_column(name, t, ic, err)) {
        return -1;
    }
    if (ic->skip) {
        return 0;
    }
    if (b->set.record_type == RAW && (ic->kind != KIND_BYTES || ic->shape != SCALAR)) {
        snprintf(err, ERRLEN, "RECORD_TYPE bytes writes one VARCHAR or BLOB column verbatim, "
                              "but column \"%s\" is not one", name);
        return -1;
    }
    if (b->set.record_type == EXAMPLE && ic->shape == LIST_OF_LIST) {
        snprintf(err, ERRLEN,
                 "column \"%s\" is a list of lists: it becomes a SequenceExample feature list, "
                 "which an Example cannot hold; add RECORD_TYPE sequence_example (or flatten "
                 "the column)",
                 name);
        return -1;
    }
    colspec *cs = &b->sc.cols[b->sc.ncols];
    cs->name_len = strlen(name);
    cs->name = (uint8_t *)xstrdup(name);
    if (cs->name == NULL) {
        snprintf(err, ERRLEN, "out of memory");
        return -1;
    }
    cs->kind = ic->kind;
    cs->shape = ic->shape;
    cs->location = ic->shape == LIST_OF_LIST ? FEATURE_LISTS : FEATURES;
    b->enc[i] = b->sc.ncols++;
    return 0;
}

/* The description type of a DuckDB type the encoder writes (tfsql/description.py's
 * type_text for the Arrow type DuckDB gives it): 0, or -1 for one it cannot say. */
static int describe_type(duckdb_logical_type t, tfsql_type *out, int depth) {
    duckdb_type id = duckdb_get_type_id(t);
    if (id == DUCKDB_TYPE_LIST || id == DUCKDB_TYPE_ARRAY) {
        if (out->nwrap == TFSQL_TYPE_MAX_WRAP || depth > 2) {
            return -1;
        }
        int at = out->nwrap++;
        idx_t size = 0;
        duckdb_logical_type child = list_child(t, &size);
        out->wrap[at] = id == DUCKDB_TYPE_ARRAY ? TFSQL_WRAP_FIXED_LIST : TFSQL_WRAP_LIST;
        out->wrap_size[at] = (int64_t)size;
        int rc = describe_type(child, out, depth + 1);
        duckdb_destroy_logical_type(&child);
        return rc;
    }
    static const struct {
        duckdb_type id;
        int leaf, unit, utc;
    } leaves[] = {
        {DUCKDB_TYPE_SQLNULL, TFSQL_TYPE_NULL, 0, 0},
        {DUCKDB_TYPE_BOOLEAN, TFSQL_TYPE_BOOL, 0, 0},
        {DUCKDB_TYPE_TINYINT, TFSQL_TYPE_INT8, 0, 0},
        {DUCKDB_TYPE_SMALLINT, TFSQL_TYPE_INT16, 0, 0},
        {DUCKDB_TYPE_INTEGER, TFSQL_TYPE_INT32, 0, 0},
        {DUCKDB_TYPE_BIGINT, TFSQL_TYPE_INT64, 0, 0},
        {DUCKDB_TYPE_UTINYINT, TFSQL_TYPE_UINT8, 0, 0},
        {DUCKDB_TYPE_USMALLINT, TFSQL_TYPE_UINT16, 0, 0},
        {DUCKDB_TYPE_UINTEGER, TFSQL_TYPE_UINT32, 0, 0},
        {DUCKDB_TYPE_UBIGINT, TFSQL_TYPE_UINT64, 0, 0},
        {DUCKDB_TYPE_FLOAT, TFSQL_TYPE_FLOAT32, 0, 0},
        {DUCKDB_TYPE_DOUBLE, TFSQL_TYPE_FLOAT64, 0, 0},
        {DUCKDB_TYPE_VARCHAR, TFSQL_TYPE_STRING, 0, 0},
        {DUCKDB_TYPE_BLOB, TFSQL_TYPE_BINARY, 0, 0},
        {DUCKDB_TYPE_DATE, TFSQL_TYPE_DATE32, 0, 0},
        {DUCKDB_TYPE_TIME, TFSQL_TYPE_TIME64, TFSQL_UNIT_US, 0},
        {DUCKDB_TYPE_TIMESTAMP, TFSQL_TYPE_TIMESTAMP, TFSQL_UNIT_US, 0},
        {DUCKDB_TYPE_TIMESTAMP_S, TFSQL_TYPE_TIMESTAMP, TFSQL_UNIT_S, 0},
        {DUCKDB_TYPE_TIMESTAMP_MS, TFSQL_TYPE_TIMESTAMP, TFSQL_UNIT_MS, 0},
        {DUCKDB_TYPE_TIMESTAMP_NS, TFSQL_TYPE_TIMESTAMP, TFSQL_UNIT_NS, 0},
        {DUCKDB_TYPE_TIMESTAMP_TZ, TFSQL_TYPE_TIMESTAMP, TFSQL_UNIT_US, 1},
    };
    for (size_t i = 0; i < sizeof(leaves) / sizeof(leaves[0]); i++) {
        if (leaves[i].id == id) {
            out->leaf = leaves[i].leaf;
            out->unit = leaves[i].unit;
            if (leaves[i].utc) {
                memcpy(out->tz, "UTC", 4);
            }
            return 0;
        }
    }
    return -1;
}

/* Add field `name` of type `t` to the row's description; a type it cannot say drops the
 * description (none is written). */
static void describe_field(copybind *b, const char *name, duckdb_logical_type t) {
    if (b->described == NULL || duckdb_get_type_id(t) == DUCKDB_TYPE_SQLNULL) {
        return; /* a NULL column is in no record: not described (tfsql.description.render) */
    }
    tfsql_column *c = &b->described[b->ndescribed];
    memset(c, 0, sizeof(*c));
    c->name = xstrdup(name);
    c->name_len = c->name != NULL ? strlen(name) : 0;
    if (c->name == NULL || describe_type(t, &c->type, 0) != 0) {
        free(c->name);
        tfsql_description_free(b->described, b->ndescribed);
        b->described = NULL;
        b->ndescribed = 0;
        return;
    }
    b->ndescribed++;
}

/* DuckDB's C API gives a COPY function its columns' types but not their names, so the
 * features come from one STRUCT column, whose field names are known: COPY (SELECT t FROM
 * t) TO ..., or COPY (SELECT {'label': label, 'text': text} AS row, split FROM t) with
 * PARTITION_BY (split). RECORD_TYPE bytes needs no name: its one column is the record. */
static const char *const NEED_A_ROW =
    "COPY ... TO ... (FORMAT tfrecord) in the extension takes the records as one STRUCT "
    "column, because DuckDB's C API tells a COPY function its columns' types but not their "
    "names (the feature names). Write COPY (SELECT t FROM t) TO ... to store every column "
    "of table t, or COPY (SELECT {'label': label, 'text': text} AS features, split FROM t) "
    "TO ... (FORMAT tfrecord, PARTITION_BY (split)); tfsql.connect()'s COPY takes any query";

/* The encoder's columns from the input columns (tfsql.encoding's rules). */
static int plan_columns(duckdb_copy_function_bind_info info, copybind *b, char *err) {
    idx_t n = duckdb_copy_function_bind_get_column_count(info);
    if (n != 1) {
        snprintf(err, ERRLEN, "%s (the query gives %llu columns besides partition columns)",
                 NEED_A_ROW, (unsigned long long)n);
        return -1;
    }
    duckdb_logical_type row = duckdb_copy_function_bind_get_column_type(info, 0);
    duckdb_type id = duckdb_get_type_id(row);
    int rc = 0;
    b->sc.record_type = b->set.record_type;
    if (b->set.record_type == RAW && id != DUCKDB_TYPE_STRUCT) {
        b->ncols = 1;
        b->in = (incol *)calloc(1, sizeof(incol));
        b->enc = (int *)calloc(1, sizeof(int));
        b->sc.cols = (colspec *)calloc(1, sizeof(colspec));
        rc = b->in && b->enc && b->sc.cols ? plan_feature(b, 0, "record", row, err) : -2;
    } else if (id != DUCKDB_TYPE_STRUCT) {
        snprintf(err, ERRLEN, "%s (its one column is not a STRUCT)", NEED_A_ROW);
        rc = -1;
    } else {
        b->row_struct = 1;
        idx_t fields = duckdb_struct_type_child_count(row);
        b->ncols = (int)fields;
        b->in = (incol *)calloc(fields + 1, sizeof(incol));
        b->enc = (int *)calloc(fields + 1, sizeof(int));
        b->sc.cols = (colspec *)calloc(fields + 1, sizeof(colspec));
        if (b->in == NULL || b->enc == NULL || b->sc.cols == NULL) {
            rc = -2;
        }
        if (b->set.record_type != RAW) {
            b->described = (tfsql_column *)calloc(fields + 1, sizeof(tfsql_column));
        }
        for (idx_t i = 0; i < fields && rc == 0; i++) {
            char *name = duckdb_struct_type_child_name(row, i);
            duckdb_logical_type t = duckdb_struct_type_child_type(row, i);
            rc = plan_feature(b, i, name, t, err);
            describe_field(b, name, t);
            duckdb_destroy_logical_type(&t);
            duckdb_free(name);
        }
        if (rc == 0 && b->set.record_type == RAW && b->sc.ncols != 1) {
            snprintf(err, ERRLEN, "RECORD_TYPE bytes writes exactly one VARCHAR or BLOB column "
                                  "verbatim, but the row has %d fields; select one",
                     b->sc.ncols);
            rc = -1;
        }
    }
    duckdb_destroy_logical_type(&row);
    if (rc == -2) {
        snprintf(err, ERRLEN, "out of memory");
    }
    if (rc) {
        return -1;
    }
    int dup = -1;
    int indexed = schema_index(&b->sc, &dup);
    if (indexed == -2) {
        snprintf(err, ERRLEN, "field \"%.*s\" is given twice; feature names must be unique",
                 (int)b->sc.cols[dup].name_len, (const char *)b->sc.cols[dup].name);
        return -1;
    }
    if (indexed != 0) {
        snprintf(err, ERRLEN, "out of memory");
        return -1;
    }
    return 0;
}

static void copy_bind(duckdb_copy_function_bind_info info) {
    char err[ERRLEN] = "";
    copybind *b = (copybind *)calloc(1, sizeof(copybind));
    if (b == NULL) {
        duckdb_copy_function_bind_set_error(info, "out of memory");
        return;
    }
    b->set.record_type = EXAMPLE;
    b->set.compression = COMP_INFER;
    b->set.level = -1;
    b->lock.fd = -1;
    pthread_mutex_init(&b->mu, NULL);
    if (parse_copy_options(info, b, err) || plan_columns(info, b, err)) {
        copybind_free(b);
        duckdb_copy_function_bind_set_error(info, err);
        return;
    }
    duckdb_copy_function_bind_set_bind_data(info, b, copybind_free);
}

/* ------------------------------------------------------------------------------------ */
/* Files: a temporary name, committed by rename                                         */
/* ------------------------------------------------------------------------------------ */

/* The buffers of one encoder column for a chunk (Encoder.encode's arrays). */
typedef struct {
    tbuf validity, outer, inner, vo, values;
} colbufs;

typedef struct {
    pthread_mutex_t lock;
    char *final_path, *temp_path;
    char *index_final, *index_temp; /* NULL without INDEX */
    int fd, compression, committed;
    deflater d;
    uint64_t offset; /* uncompressed bytes written: the next record's offset */
    tbuf framed, ends, packed, index_text;
    colbufs *bufs;
    ecol *ecols;
    int ncols;
} copyfile;

static unsigned long temp_counter;
static pthread_mutex_t temp_lock = PTHREAD_MUTEX_INITIALIZER;

/* '.<name>.tfsql-tmp-<pid>-<n>' beside `path`: hidden, so no reader lists it. */
static char *temp_name(const char *path) {
    pthread_mutex_lock(&temp_lock);
    unsigned long n = ++temp_counter;
    pthread_mutex_unlock(&temp_lock);
    const char *slash = strrchr(path, '/');
    int dir_len = slash ? (int)(slash - path + 1) : 0;
    return xprintf("%.*s.%s.tfsql-tmp-%ld-%lu", dir_len, path, slash ? slash + 1 : path,
                   (long)getpid(), n);
}

/* The index sidecar of `path`: '.<name>.idx' beside it (tfsql.record_index). */
static char *index_name(const char *path) {
    const char *slash = strrchr(path, '/');
    int dir_len = slash ? (int)(slash - path + 1) : 0;
    return xprintf("%.*s.%s.idx", dir_len, path, slash ? slash + 1 : path);
}

/* The name a file DuckDB calls `path` gets: DuckDB's name, with the TFRecord extension
 * after a final '.' (DuckDB's name when no FILE_EXTENSION is given). */
static char *final_name(const char *path, int compression) {
    size_t n = strlen(path);
    if (n > 0 && path[n - 1] == '.' && (n == 1 || path[n - 2] != '/')) {
        const char *ext = compression == COMP_GZIP   ? "tfrecord.gz"
                          : compression == COMP_ZLIB ? "tfrecord.zz"
                                                     : "tfrecord";
        return xprintf("%s%s", path, ext);
    }
    return xstrdup(path);
}

/* A name that says a compression holds that one (tfsql.naming.check_name_compression).
 *
 * Whether the name stays inside the COPY's target cannot be checked here: DuckDB applies
 * FILENAME_PATTERN and FILE_EXTENSION itself, hands neither to the bind, and passes
 * global init the path already joined and normalised ('a/b/target' with FILENAME_PATTERN
 * '../../../x_{i}' arrives as 'a/x_0.'), so nothing tells it from a target of its own
 * (docs/duckdb-extension.md says so; tfsql.connect()'s COPY refuses such patterns). */
static int check_file_name(const char *final_path, int compression, char *err) {
    size_t k = 0;
    int said = name_compression(final_path, &k);
    if (said != COMP_NONE && said != compression) {
        static const char *const names[] = {"none", "gzip", "zlib"};
        size_t n = strlen(final_path);
        snprintf(err, ERRLEN,
                 "COPY ... TO (FORMAT tfrecord): '%s' ends in '%s', which says %s, but the file "
                 "would hold %s (COMPRESSION %s): name it '%.*s%s' or give COMPRESSION %s",
                 final_path, final_path + n - k, names[said],
                 compression == COMP_NONE ? "no compression" : names[compression], names[compression],
                 (int)(n - k), final_path,
                 compression == COMP_GZIP ? ".gz" : compression == COMP_ZLIB ? ".zz" : "",
                 names[said]);
        return -1;
    }
    return 0;
}

static void copyfile_free(void *p) {
    copyfile *f = (copyfile *)p;
    if (f == NULL) {
        return;
    }
    if (f->fd >= 0) {
        close(f->fd);
    }
    if (!f->committed) { /* an error or an interrupted COPY: nothing stays behind */
        if (f->temp_path != NULL) {
            unlink(f->temp_path);
        }
        if (f->index_temp != NULL) {
            unlink(f->index_temp);
        }
    }
    deflater_end(&f->d);
    for (int c = 0; c < f->ncols && f->bufs != NULL; c++) {
        tbuf_free(&f->bufs[c].validity);
        tbuf_free(&f->bufs[c].outer);
        tbuf_free(&f->bufs[c].inner);
        tbuf_free(&f->bufs[c].vo);
        tbuf_free(&f->bufs[c].values);
    }
    free(f->bufs);
    free(f->ecols);
    tbuf_free(&f->framed);
    tbuf_free(&f->ends);
    tbuf_free(&f->packed);
    tbuf_free(&f->index_text);
    free(f->final_path);
    free(f->temp_path);
    free(f->index_final);
    free(f->index_temp);
    pthread_mutex_destroy(&f->lock);
    free(f);
}

/* Take the lock of the target of `final_path` for this COPY (once per statement). */
static int take_target_lock(copybind *b, const char *final_path, char *err) {
    char *target = copy_target_of(final_path);
    if (target == NULL) {
        snprintf(err, ERRLEN, "out of memory");
        return -1;
    }
    pthread_mutex_lock(&b->mu);
    int rc = copy_lock_take(&b->lock, target, err);
    pthread_mutex_unlock(&b->mu);
    free(target);
    return rc;
}

static int write_all(int fd, const uint8_t *p, size_t n, const char *path, char *err);

/* The data columns of two descriptions agree (names, order, types); else -1 with the
 * first column that differs in *at (its index in `have`, or `want`'s count). */
static int same_data_columns(const tfsql_column *have, size_t nhave, const tfsql_column *want,
                             size_t nwant, size_t *at) {
    size_t i = 0, j = 0;
    for (;;) {
        while (i < nhave && have[i].partition) {
            i++;
        }
        while (j < nwant && want[j].partition) {
            j++;
        }
        if (i == nhave || j == nwant) {
            *at = j;
            return i == nhave && j == nwant ? 0 : -1;
        }
        char a[TFSQL_TYPE_TEXT_MAX], c[TFSQL_TYPE_TEXT_MAX];
        if (have[i].name_len != want[j].name_len ||
            memcmp(have[i].name, want[j].name, want[j].name_len) != 0 ||
            tfsql_type_render(&have[i].type, a, sizeof(a)) < 0 ||
            tfsql_type_render(&want[j].type, c, sizeof(c)) < 0 || strcmp(a, c) != 0) {
            *at = j;
            return -1;
        }
        i++;
        j++;
    }
}

/* A PARTITION_BY COPY's target directory gets the row's description (features.json,
 * tfsql.description) once per statement; one already there must describe the same
 * columns (an append), else the COPY fails naming the column. Called with b->mu held. */
static int write_description(copybind *b, const char *final_path, char *err) {
    if (b->described == NULL || b->description_done) {
        return 0;
    }
    char *target = copy_target_of(final_path);
    const char *slash = strrchr(final_path, '/');
    size_t dir_len = slash != NULL ? (size_t)(slash - final_path) : 0;
    if (target == NULL) {
        snprintf(err, ERRLEN, "out of memory");
        return -1;
    }
    int partitioned = !(strlen(target) == dir_len && strncmp(target, final_path, dir_len) == 0) &&
                      !(dir_len == 0 && strcmp(target, ".") == 0);
    if (!partitioned) { /* one file named itself: read as its own records, no description */
        free(target);
        b->description_done = 1;
        return 0;
    }
    char *path = xprintf("%s/%s", target, TFSQL_DESCRIPTION_NAME);
    char *temp = path != NULL ? temp_name(path) : NULL;
    char *rendered = NULL;
    size_t n = 0;
    int rc = -1;
    if (temp == NULL || tfsql_description_render(b->described, b->ndescribed, &rendered, &n)) {
        snprintf(err, ERRLEN, "out of memory");
        goto done;
    }
    FILE *fp = fopen(path, "rb");
    if (fp != NULL) { /* an append: the target's description must agree */
        char *data = (char *)malloc(TFSQL_TFDS_FEATURES_MAX_BYTES + 1);
        size_t got = data != NULL ? fread(data, 1, TFSQL_TFDS_FEATURES_MAX_BYTES + 1, fp) : 0;
        fclose(fp);
        tfsql_column *have = NULL;
        size_t nhave = 0, at = 0;
        int parsed = data != NULL && tfsql_description_parse(data, got, &have, &nhave) == 0;
        free(data);
        int same = parsed && same_data_columns(have, nhave, b->described, b->ndescribed, &at) == 0;
        tfsql_description_free(have, nhave);
        if (parsed && !same) {
            char text[TFSQL_TYPE_TEXT_MAX] = "";
            if (at < b->ndescribed) {
                tfsql_type_render(&b->described[at].type, text, sizeof(text));
            }
            snprintf(err, ERRLEN,
                     "COPY ... TO: %s describes other columns than this COPY writes (%s%s%s%s); "
                     "cast or reorder the query's columns to match the target, or write with "
                     "OVERWRITE",
                     path, at < b->ndescribed ? "column \"" : "fewer columns",
                     at < b->ndescribed ? b->described[at].name : "",
                     at < b->ndescribed ? "\" as " : "", text);
            goto done;
        }
        rc = 0; /* the same columns, or a file that is not a description: left as it is */
        b->description_done = 1;
        goto done;
    }
    int fd = open(temp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0 || write_all(fd, (const uint8_t *)rendered, n, temp, err) || fsync(fd) != 0 ||
        close(fd) != 0 || rename(temp, path) != 0) {
        if (err[0] == 0) {
            snprintf(err, ERRLEN, "cannot write %s: %s", path, strerror(errno));
        }
        if (fd >= 0) {
            close(fd);
        }
        unlink(temp);
        goto done;
    }
    b->description_done = 1;
    rc = 0;
done:
    free(rendered);
    free(temp);
    free(path);
    free(target);
    return rc;
}

static void copy_global_init(duckdb_copy_function_global_init_info info) {
    const copybind *b = (const copybind *)duckdb_copy_function_global_init_get_bind_data(info);
    const char *path = duckdb_copy_function_global_init_get_file_path(info);
    char err[ERRLEN] = "";
    copyfile *f = (copyfile *)calloc(1, sizeof(copyfile));
    if (f == NULL || path == NULL) {
        free(f);
        duckdb_copy_function_global_init_set_error(info, "out of memory");
        return;
    }
    pthread_mutex_init(&f->lock, NULL);
    f->fd = -1;
    f->ncols = b->sc.ncols;
    f->compression = b->set.compression == COMP_INFER ? name_compression(path, NULL) : b->set.compression;
    f->final_path = final_name(path, f->compression);
    f->temp_path = f->final_path ? temp_name(f->final_path) : NULL;
    f->bufs = (colbufs *)calloc((size_t)f->ncols + 1, sizeof(colbufs));
    f->ecols = (ecol *)calloc((size_t)f->ncols + 1, sizeof(ecol));
    if (f->final_path == NULL || f->temp_path == NULL || f->bufs == NULL || f->ecols == NULL) {
        snprintf(err, ERRLEN, "out of memory");
        goto fail;
    }
    if (check_file_name(f->final_path, f->compression, err)) {
        goto fail;
    }
    if (take_target_lock((copybind *)b, f->final_path, err)) {
        goto fail;
    }
    pthread_mutex_lock(&((copybind *)b)->mu);
    int described = write_description((copybind *)b, f->final_path, err);
    pthread_mutex_unlock(&((copybind *)b)->mu);
    if (described) {
        goto fail;
    }
    if (b->set.index && f->compression == COMP_NONE) {
        /* the sidecar of the file written; one DuckDB then moves from 'tmp_<name>' gets its
         * index moved with it when the statement ends (move_tmp_indexes) */
        f->index_final = index_name(f->final_path);
        f->index_temp = f->index_final ? temp_name(f->index_final) : NULL;
        if (f->index_temp == NULL) {
            snprintf(err, ERRLEN, "out of memory");
            goto fail;
        }
    } else if (b->set.index) {
        snprintf(err, ERRLEN, "COPY option INDEX: %s is compressed (its name says so), and "
                              "compressed files have no record offsets; drop INDEX",
                 f->final_path);
        goto fail;
    }
    if (f->compression != COMP_NONE && deflater_start(&f->d, f->compression, b->set.level, err)) {
        goto fail;
    }
    f->fd = open(f->temp_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (f->fd < 0) {
        snprintf(err, ERRLEN, "cannot create %s (for %s): %s", f->temp_path, f->final_path,
                 strerror(errno));
        goto fail;
    }
    duckdb_copy_function_global_init_set_global_state(info, f, copyfile_free);
    return;
fail:
    copyfile_free(f);
    duckdb_copy_function_global_init_set_error(info, err);
}

static int write_all(int fd, const uint8_t *p, size_t n, const char *path, char *err) {
    while (n > 0) {
        ssize_t w = write(fd, p, n > 0x40000000u ? 0x40000000u : n);
        if (w < 0 && errno == EINTR) {
            continue;
        }
        if (w <= 0) {
            snprintf(err, ERRLEN, "cannot write %s: %s", path, w < 0 ? strerror(errno) : "no space");
            return -1;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Write framed records: compressed when asked, and their index lines. */
static int put_records(copyfile *f, const tbuf *framed, const tbuf *ends, size_t n, char *err) {
    if (f->index_temp != NULL) {
        uint64_t start = 0;
        for (size_t i = 0; i < n; i++) {
            uint64_t end = load_le64(ends->data + 8 * i);
            char line[48];
            int len = snprintf(line, sizeof(line), "%llu %llu\n",
                               (unsigned long long)(f->offset + start),
                               (unsigned long long)(end - start));
            if (tbuf_reserve(&f->index_text, (size_t)len)) {
                snprintf(err, ERRLEN, "out of memory");
                return -1;
            }
            memcpy(f->index_text.data + f->index_text.len, line, (size_t)len);
            f->index_text.len += (size_t)len;
            start = end;
        }
    }
    f->offset += framed->len;
    if (f->compression == COMP_NONE) {
        return write_all(f->fd, framed->data, framed->len, f->temp_path, err);
    }
    f->packed.len = 0;
    if (deflater_run(&f->d, framed->data, framed->len, 0, &f->packed, err)) {
        return -1;
    }
    return write_all(f->fd, f->packed.data, f->packed.len, f->temp_path, err);
}

/* ------------------------------------------------------------------------------------ */
/* Sink: a chunk -> the encoder's arrays -> framed records                              */
/* ------------------------------------------------------------------------------------ */

static int put_i64(tbuf *b, int64_t v) { return tbuf_put_u64(b, (uint64_t)v); }

static int row_is_valid(uint64_t *validity, idx_t row) {
    return validity == NULL || duckdb_validity_row_is_valid(validity, row);
}

/* Append the leaf value at `row` of the flat vector `vec` to the column's values. */
static int put_leaf(const incol *ic, duckdb_vector vec, idx_t row, colbufs *cb, const char *name,
                    char *err) {
    void *data = duckdb_vector_get_data(vec);
    int64_t iv = 0;
    switch (ic->leaf) {
    case DUCKDB_TYPE_BOOLEAN:
        iv = ((const bool *)data)[row] ? 1 : 0;
        break;
    case DUCKDB_TYPE_TINYINT:
        iv = ((const int8_t *)data)[row];
        break;
    case DUCKDB_TYPE_SMALLINT:
        iv = ((const int16_t *)data)[row];
        break;
    case DUCKDB_TYPE_INTEGER:
    case DUCKDB_TYPE_DATE:
        iv = ((const int32_t *)data)[row];
        break;
    case DUCKDB_TYPE_UTINYINT:
        iv = ((const uint8_t *)data)[row];
        break;
    case DUCKDB_TYPE_USMALLINT:
        iv = ((const uint16_t *)data)[row];
        break;
    case DUCKDB_TYPE_UINTEGER:
        iv = ((const uint32_t *)data)[row];
        break;
    case DUCKDB_TYPE_UBIGINT: {
        uint64_t u = ((const uint64_t *)data)[row];
        if (u > (uint64_t)INT64_MAX) {
            snprintf(err, ERRLEN, "column \"%s\": the UBIGINT %llu does not fit an int64 feature; "
                                  "cast it to VARCHAR (exact) or DOUBLE in the query",
                     name, (unsigned long long)u);
            return -1;
        }
        iv = (int64_t)u;
        break;
    }
    case DUCKDB_TYPE_FLOAT: {
        float v = ((const float *)data)[row];
        return tbuf_reserve(&cb->values, 4) ? -1 : (memcpy(cb->values.data + cb->values.len, &v, 4),
                                                    cb->values.len += 4, 0);
    }
    case DUCKDB_TYPE_DOUBLE: {
        float v = (float)((const double *)data)[row]; /* float_list holds float32 */
        return tbuf_reserve(&cb->values, 4) ? -1 : (memcpy(cb->values.data + cb->values.len, &v, 4),
                                                    cb->values.len += 4, 0);
    }
    case DUCKDB_TYPE_VARCHAR:
    case DUCKDB_TYPE_BLOB: {
        duckdb_string_t *s = &((duckdb_string_t *)data)[row];
        uint32_t len = duckdb_string_t_length(*s);
        const char *p = duckdb_string_t_data(s);
        if (tbuf_reserve(&cb->values, len)) {
            return -1;
        }
        memcpy(cb->values.data + cb->values.len, p, len);
        cb->values.len += len;
        return put_i64(&cb->vo, (int64_t)cb->values.len);
    }
    default: /* the int64 timestamps and times */
        iv = ((const int64_t *)data)[row];
        break;
    }
    return put_i64(&cb->values, iv);
}

/* A placeholder for a null scalar (its feature is omitted; the encoder indexes by row). */
static int put_null_scalar(const incol *ic, colbufs *cb) {
    if (ic->kind == KIND_BYTES) {
        return put_i64(&cb->vo, (int64_t)cb->values.len);
    }
    size_t width = ic->kind == KIND_FLOAT ? 4 : 8;
    if (tbuf_reserve(&cb->values, width)) {
        return -1;
    }
    memset(cb->values.data + cb->values.len, 0, width);
    cb->values.len += width;
    return 0;
}

/* The element range of row `row` of a LIST or ARRAY vector. */
static void list_range(duckdb_vector vec, idx_t array_size, idx_t row, idx_t *from, idx_t *to) {
    if (array_size > 0) {
        *from = row * array_size;
        *to = *from + array_size;
        return;
    }
    const duckdb_list_entry *e = &((const duckdb_list_entry *)duckdb_vector_get_data(vec))[row];
    *from = e->offset;
    *to = e->offset + e->length;
}

static duckdb_vector child_of(duckdb_vector vec, idx_t array_size) {
    return array_size > 0 ? duckdb_array_vector_get_child(vec) : duckdb_list_vector_get_child(vec);
}

/* Append the values of elements [from, to) of the list vector's child `child`. */
static int put_elements(const incol *ic, duckdb_vector child, idx_t from, idx_t to, colbufs *cb,
                        const char *name, idx_t row, char *err) {
    uint64_t *validity = duckdb_vector_get_validity(child);
    for (idx_t j = from; j < to; j++) {
        if (!row_is_valid(validity, j)) {
            snprintf(err, ERRLEN, "column \"%s\", row %llu of this chunk: a list holds a NULL "
                                  "element, which no feature can store; filter it out "
                                  "(list_filter(x, v -> v IS NOT NULL)) in the query",
                     name, (unsigned long long)row);
            return -1;
        }
        if (put_leaf(ic, child, j, cb, name, err)) {
            if (!err[0]) {
                snprintf(err, ERRLEN, "out of memory");
            }
            return -1;
        }
    }
    return 0;
}

/* Fill one encoder column's arrays from input vector `vec` (n rows). */
static int fill_encoder_column(const incol *ic, duckdb_vector vec, uint64_t *row_validity,
                               idx_t n, colbufs *cb, const char *name, char *err) {
    cb->validity.len = cb->outer.len = cb->inner.len = cb->vo.len = cb->values.len = 0;
    if (tbuf_reserve(&cb->validity, n + 1) || put_i64(&cb->outer, 0) || put_i64(&cb->inner, 0) ||
        put_i64(&cb->vo, 0)) {
        snprintf(err, ERRLEN, "out of memory");
        return -1;
    }
    uint64_t *validity = duckdb_vector_get_validity(vec);
    for (idx_t row = 0; row < n; row++) {
        /* a NULL row (the STRUCT itself) holds no features: an empty record */
        int valid = row_is_valid(validity, row) && row_is_valid(row_validity, row);
        cb->validity.data[row] = (uint8_t)valid;
        int rc = 0;
        if (ic->shape == SCALAR) {
            rc = valid ? put_leaf(ic, vec, row, cb, name, err) : put_null_scalar(ic, cb);
        } else if (valid) {
            idx_t from, to;
            list_range(vec, ic->outer_array, row, &from, &to);
            duckdb_vector child = child_of(vec, ic->outer_array);
            if (ic->shape == LIST) {
                rc = put_elements(ic, child, from, to, cb, name, row, err);
            } else {
                uint64_t *inner_validity = duckdb_vector_get_validity(child);
                duckdb_vector leaves = child_of(child, ic->inner_array);
                for (idx_t s = from; s < to && rc == 0; s++) {
                    if (!row_is_valid(inner_validity, s)) {
                        snprintf(err, ERRLEN, "column \"%s\", row %llu of this chunk: a list of "
                                              "lists holds a NULL list, which no feature list "
                                              "can store; filter it out in the query",
                                 name, (unsigned long long)row);
                        return -1;
                    }
                    idx_t a, z;
                    list_range(child, ic->inner_array, s, &a, &z);
                    rc = put_elements(ic, leaves, a, z, cb, name, row, err);
                    if (rc == 0) {
                        size_t count = ic->kind == KIND_BYTES ? cb->vo.len / 8 - 1
                                                              : cb->values.len /
                                                                    (ic->kind == KIND_FLOAT ? 4 : 8);
                        rc = put_i64(&cb->inner, (int64_t)count);
                    }
                }
            }
        }
        if (rc == 0 && ic->shape != SCALAR) {
            size_t items = ic->shape == LIST_OF_LIST ? cb->inner.len / 8 - 1
                           : ic->kind == KIND_BYTES  ? cb->vo.len / 8 - 1
                                                     : cb->values.len /
                                                          (ic->kind == KIND_FLOAT ? 4 : 8);
            rc = put_i64(&cb->outer, (int64_t)items);
        }
        if (rc) {
            if (!err[0]) {
                snprintf(err, ERRLEN, "out of memory");
            }
            return -1;
        }
    }
    return 0;
}

static void copy_sink(duckdb_copy_function_sink_info info, duckdb_data_chunk chunk) {
    const copybind *b = (const copybind *)duckdb_copy_function_sink_get_bind_data(info);
    copyfile *f = (copyfile *)duckdb_copy_function_sink_get_global_state(info);
    char err[ERRLEN] = "";
    idx_t n = duckdb_data_chunk_get_size(chunk);
    if (n == 0) {
        return;
    }
    pthread_mutex_lock(&f->lock);
    int rc = 0;
    duckdb_vector input = duckdb_data_chunk_get_vector(chunk, 0);
    uint64_t *row_validity = b->row_struct ? duckdb_vector_get_validity(input) : NULL;
    for (int i = 0; i < b->ncols && rc == 0; i++) {
        int c = b->enc[i];
        if (c < 0) {
            continue;
        }
        const colspec *cs = &b->sc.cols[c];
        colbufs *cb = &f->bufs[c];
        duckdb_vector vec = b->row_struct ? duckdb_struct_vector_get_child(input, (idx_t)i) : input;
        rc = fill_encoder_column(&b->in[i], vec, row_validity, n, cb, (const char *)cs->name, err);
        ecol *e = &f->ecols[c];
        memset(e, 0, sizeof(*e));
        e->spec = cs;
        e->validity = cb->validity.data;
        e->outer = cb->outer.data;
        e->inner = cb->inner.data;
        e->vo = cb->vo.data;
        e->values = cb->values.data;
        e->values_len = cb->values.len;
    }
    if (rc == 0) {
        size_t bad_row = 0;
        f->framed.len = f->ends.len = 0;
        int erc = encode_core(&b->sc, f->ecols, (size_t)n, &f->framed, &f->ends, &bad_row);
        if (erc == EE_NULL_RAW) {
            snprintf(err, ERRLEN, "RECORD_TYPE bytes: row %zu of this chunk is NULL, and a "
                                  "record cannot be null; filter NULLs out in the query",
                     bad_row);
            rc = -1;
        } else if (erc != 0) {
            snprintf(err, ERRLEN, "out of memory while encoding %llu records",
                     (unsigned long long)n);
            rc = -1;
        } else {
            rc = put_records(f, &f->framed, &f->ends, (size_t)n, err);
        }
    }
    pthread_mutex_unlock(&f->lock);
    if (rc) {
        duckdb_copy_function_sink_set_error(info, err);
    }
}

/* ------------------------------------------------------------------------------------ */
/* Finalize: flush, sync, rename into place                                             */
/* ------------------------------------------------------------------------------------ */

static int sync_directory_of(const char *path) {
    const char *slash = strrchr(path, '/');
    char *dir = slash ? xstrndup(path, slash == path ? 1 : (size_t)(slash - path)) : xstrdup(".");
    if (dir == NULL) {
        return -1;
    }
    int fd = open(dir, O_RDONLY | O_CLOEXEC);
    free(dir);
    if (fd < 0) {
        return -1;
    }
    fsync(fd);
    close(fd);
    return 0;
}

/* Remember a committed 'tmp_<name>' file with an index (move_tmp_indexes). */
static void note_tmp_commit(copybind *b, const copyfile *f) {
    const char *slash = strrchr(f->final_path, '/');
    const char *base = slash ? slash + 1 : f->final_path;
    struct stat st;
    if (f->index_final == NULL || strncmp(base, "tmp_", 4) != 0 || stat(f->final_path, &st) != 0) {
        return;
    }
    pthread_mutex_lock(&b->mu);
    tmp_commit *grown = (tmp_commit *)realloc(b->tmp, (b->ntmp + 1) * sizeof(tmp_commit));
    if (grown != NULL) {
        b->tmp = grown;
        tmp_commit *t = &b->tmp[b->ntmp];
        t->data = xstrdup(f->final_path);
        t->index = xstrdup(f->index_final);
        t->dev = st.st_dev;
        t->ino = st.st_ino;
        if (t->data != NULL && t->index != NULL) {
            b->ntmp++;
        } else {
            free(t->data);
            free(t->index);
        }
    }
    pthread_mutex_unlock(&b->mu);
}

static int commit_file(copybind *b, copyfile *f, char *err) {
    if (f->compression != COMP_NONE) {
        f->packed.len = 0;
        if (deflater_run(&f->d, NULL, 0, 1, &f->packed, err) ||
            write_all(f->fd, f->packed.data, f->packed.len, f->temp_path, err)) {
            return -1;
        }
    }
    if (fsync(f->fd) != 0 || close(f->fd) != 0) {
        f->fd = -1;
        snprintf(err, ERRLEN, "cannot write %s: %s", f->temp_path, strerror(errno));
        return -1;
    }
    f->fd = -1;
    if (f->index_temp != NULL) {
        int fd = open(f->index_temp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd < 0 || write_all(fd, f->index_text.data, f->index_text.len, f->index_temp, err) ||
            fsync(fd) != 0) {
            if (!err[0]) {
                snprintf(err, ERRLEN, "cannot write %s: %s", f->index_temp, strerror(errno));
            }
            if (fd >= 0) {
                close(fd);
            }
            return -1;
        }
        close(fd);
    }
    pthread_mutex_lock(&b->mu);
    int replaced = copy_lock_check(&b->lock, f->final_path, err);
    pthread_mutex_unlock(&b->mu);
    if (replaced) {
        return -1;
    }
    if (rename(f->temp_path, f->final_path) != 0) {
        snprintf(err, ERRLEN, "cannot rename %s to %s: %s", f->temp_path, f->final_path,
                 strerror(errno));
        return -1;
    }
    f->committed = 1; /* the data file stands; its index follows it */
    if (f->index_temp != NULL && rename(f->index_temp, f->index_final) != 0) {
        snprintf(err, ERRLEN, "wrote %s but cannot rename its index %s to %s: %s", f->final_path,
                 f->index_temp, f->index_final, strerror(errno));
        unlink(f->index_temp);
        return -1;
    }
    sync_directory_of(f->final_path);
    return 0;
}

static void copy_finalize(duckdb_copy_function_finalize_info info) {
    copyfile *f = (copyfile *)duckdb_copy_function_finalize_get_global_state(info);
    copybind *b = (copybind *)duckdb_copy_function_finalize_get_bind_data(info);
    char err[ERRLEN] = "";
    pthread_mutex_lock(&f->lock);
    int rc = commit_file(b, f, err);
    if (rc == 0) {
        note_tmp_commit(b, f);
    }
    pthread_mutex_unlock(&f->lock);
    if (rc) {
        duckdb_copy_function_finalize_set_error(info, err);
    }
}

/* ------------------------------------------------------------------------------------ */
/* Registration                                                                         */
/* ------------------------------------------------------------------------------------ */

int register_copy(duckdb_connection con) {
    if (!capi_has_copy()) {
        return 0;
    }
    duckdb_copy_function f = duckdb_create_copy_function();
    duckdb_copy_function_set_name(f, "tfrecord");
    duckdb_copy_function_set_bind(f, copy_bind);
    duckdb_copy_function_set_global_init(f, copy_global_init);
    duckdb_copy_function_set_sink(f, copy_sink);
    duckdb_copy_function_set_finalize(f, copy_finalize);
    duckdb_table_function from = copy_from_function();
    if (from != NULL) {
        duckdb_copy_function_set_copy_from_function(f, from);
        duckdb_destroy_table_function(&from);
    }
    duckdb_state st = duckdb_register_copy_function(con, f);
    duckdb_destroy_copy_function(&f);
    return st == DuckDBSuccess ? 0 : -1;
}
