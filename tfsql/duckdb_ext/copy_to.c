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
 * spec takes), COMPRESSION / CODEC (with COMPRESSION_LEVEL), INDEX. The writer's
 * options that decide the files themselves (NUM_SHARDS, ROWS_PER_FILE, TFDS, ...) are
 * refused with a message naming tfsql.write_tfrecord / tfsql convert, where they work.
 *
 * The target's lock (copy_lock.c: the core's flock on the target directory, which
 * tfsql/locking.py takes too) is taken when the first file is opened -- this API gives
 * bind no path, so after DuckDB applied OVERWRITE (the V2 binding locks at bind) -- and
 * held until the statement's bind data is freed, after DuckDB has moved its 'tmp_' files
 * into place.
 *
 * What both DuckDB bindings share -- the column types' rules, the records' encoding, the
 * files, sidecars, lock and compression -- is engine-neutral (copy_encode.c,
 * copy_files.c); this file holds the v1 API's calls only.
 */
#include "duckdb_ext.h"

#include <stdio.h>
#include <string.h>

/* DuckDB's type id -> copy_encode.c's leaf. */
int copy_leaf_of(duckdb_type t) {
    switch (t) {
    case DUCKDB_TYPE_SQLNULL: return COPY_LEAF_SQLNULL;
    case DUCKDB_TYPE_BOOLEAN: return COPY_LEAF_BOOL;
    case DUCKDB_TYPE_TINYINT: return COPY_LEAF_I8;
    case DUCKDB_TYPE_SMALLINT: return COPY_LEAF_I16;
    case DUCKDB_TYPE_INTEGER: return COPY_LEAF_I32;
    case DUCKDB_TYPE_BIGINT: return COPY_LEAF_I64;
    case DUCKDB_TYPE_DATE: return COPY_LEAF_DATE;
    case DUCKDB_TYPE_TIME:
    case DUCKDB_TYPE_TIMESTAMP:
    case DUCKDB_TYPE_TIMESTAMP_S:
    case DUCKDB_TYPE_TIMESTAMP_MS:
    case DUCKDB_TYPE_TIMESTAMP_NS:
    case DUCKDB_TYPE_TIMESTAMP_TZ: return COPY_LEAF_TIMESTAMP;
    case DUCKDB_TYPE_UTINYINT: return COPY_LEAF_U8;
    case DUCKDB_TYPE_USMALLINT: return COPY_LEAF_U16;
    case DUCKDB_TYPE_UINTEGER: return COPY_LEAF_U32;
    case DUCKDB_TYPE_UBIGINT: return COPY_LEAF_U64;
    case DUCKDB_TYPE_FLOAT: return COPY_LEAF_F32;
    case DUCKDB_TYPE_DOUBLE: return COPY_LEAF_F64;
    case DUCKDB_TYPE_VARCHAR: return COPY_LEAF_VARCHAR;
    case DUCKDB_TYPE_BLOB: return COPY_LEAF_BLOB;
    case DUCKDB_TYPE_DECIMAL: return COPY_LEAF_DECIMAL;
    default: return COPY_LEAF_NONE;
    }
}

static int is_list_type(duckdb_type t) {
    return t == DUCKDB_TYPE_LIST || t == DUCKDB_TYPE_ARRAY;
}

/* The child type of a LIST or ARRAY type (a new type), with the ARRAY's size. */
static duckdb_logical_type list_child(duckdb_logical_type t, uint64_t *array_size) {
    if (duckdb_get_type_id(t) == DUCKDB_TYPE_ARRAY) {
        *array_size = duckdb_array_type_array_size(t);
        return duckdb_array_type_child_type(t);
    }
    *array_size = 0;
    return duckdb_list_type_child_type(t);
}

void copy_describe_type(duckdb_logical_type t, copy_type *out) {
    memset(out, 0, sizeof(*out));
    duckdb_logical_type owned[2] = {NULL, NULL};
    duckdb_logical_type leaf = t;
    while (out->levels < 2 && is_list_type(duckdb_get_type_id(leaf))) {
        owned[out->levels] = list_child(leaf, &out->array[out->levels]);
        leaf = owned[out->levels++];
    }
    duckdb_type id = duckdb_get_type_id(leaf);
    out->leaf = copy_leaf_of(id);
    out->time = id == DUCKDB_TYPE_TIMESTAMP_S    ? COPY_TIME_S
                : id == DUCKDB_TYPE_TIMESTAMP_MS ? COPY_TIME_MS
                : id == DUCKDB_TYPE_TIMESTAMP    ? COPY_TIME_US
                : id == DUCKDB_TYPE_TIMESTAMP_NS ? COPY_TIME_NS
                : id == DUCKDB_TYPE_TIMESTAMP_TZ ? COPY_TIME_US_TZ
                                                 : COPY_TIME_OF_DAY;
    if (id == DUCKDB_TYPE_DECIMAL) {
        out->width = duckdb_decimal_width(leaf);
        out->scale = duckdb_decimal_scale(leaf);
    }
    snprintf(out->type_name, sizeof(out->type_name), "type id %d", (int)id);
    for (int i = 0; i < 2; i++) {
        if (owned[i] != NULL) {
            duckdb_destroy_logical_type(&owned[i]);
        }
    }
}

/* ------------------------------------------------------------------------------------ */
/* Bind: options and columns                                                            */
/* ------------------------------------------------------------------------------------ */

/* The statement's bind data: its options, columns and target (row_struct: the input
 * columns are the fields of one STRUCT column). */
typedef copy_common copybind;

static void copybind_free(void *p) {
    if (p != NULL) {
        copy_common_end((copybind *)p);
        free(p);
    }
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
    return rc == 0 ? copy_settings_check(&b->set, err) : rc;
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
    "TO ... (FORMAT tfrecord, PARTITION_BY (split)). The V2 build (DuckDB 2) takes any "
    "query; here tfsql.write_tfrecord(con.sql(query).arrow(), path) writes its rows";

/* Plan input column i named `name` of type `t`. */
static int plan_feature(copybind *b, int i, const char *name, duckdb_logical_type t, char *err) {
    copy_type ct;
    copy_describe_type(t, &ct);
    return copy_plan_column(&b->plan, i, name, &ct, err);
}

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
    if (b->set.record_type == RAW && id != DUCKDB_TYPE_STRUCT) {
        rc = copy_plan_start(&b->plan, &b->set, 1, err) || plan_feature(b, 0, "record", row, err);
    } else if (id != DUCKDB_TYPE_STRUCT) {
        snprintf(err, ERRLEN, "%s (its one column is not a STRUCT)", NEED_A_ROW);
        rc = -1;
    } else {
        b->row_struct = 1;
        idx_t fields = duckdb_struct_type_child_count(row);
        rc = copy_plan_start(&b->plan, &b->set, (int)fields, err);
        for (idx_t i = 0; i < fields && rc == 0; i++) {
            char *name = duckdb_struct_type_child_name(row, i);
            duckdb_logical_type t = duckdb_struct_type_child_type(row, i);
            rc = plan_feature(b, (int)i, name, t, err);
            duckdb_destroy_logical_type(&t);
            duckdb_free(name);
        }
    }
    duckdb_destroy_logical_type(&row);
    return rc ? -1 : copy_plan_finish(&b->plan, err);
}

static void copy_bind(duckdb_copy_function_bind_info info) {
    char err[ERRLEN] = "";
    copybind *b = (copybind *)calloc(1, sizeof(copybind));
    if (b == NULL) {
        duckdb_copy_function_bind_set_error(info, "out of memory");
        return;
    }
    /* the v1 API gives no target path: a FILENAME_PATTERN's files cannot be checked
     * against it (docs/duckdb-extension.md) */
    copy_common_start(b, NULL);
    if (parse_copy_options(info, b, err) || plan_columns(info, b, err)) {
        copybind_free(b);
        duckdb_copy_function_bind_set_error(info, err);
        return;
    }
    duckdb_copy_function_bind_set_bind_data(info, b, copybind_free);
}

/* ------------------------------------------------------------------------------------ */
/* Files                                                                                */
/* ------------------------------------------------------------------------------------ */

typedef struct {
    copyfile *file;
    copy_encoder enc;
} v1file;

static void v1file_free(void *p) {
    v1file *f = (v1file *)p;
    if (f != NULL) {
        copyfile_free(f->file);
        copy_encoder_free(&f->enc);
        free(f);
    }
}

static void copy_global_init(duckdb_copy_function_global_init_info info) {
    copybind *b = (copybind *)duckdb_copy_function_global_init_get_bind_data(info);
    const char *path = duckdb_copy_function_global_init_get_file_path(info);
    char err[ERRLEN] = "";
    v1file *f = (v1file *)calloc(1, sizeof(v1file));
    if (f == NULL || path == NULL || copy_encoder_init(&f->enc, &b->plan)) {
        v1file_free(f);
        duckdb_copy_function_global_init_set_error(info, "out of memory");
        return;
    }
    int io_error = 0;
    f->file = copyfile_open(&b->target, &b->set, path, err, &io_error);
    if (f->file == NULL) {
        v1file_free(f);
        duckdb_copy_function_global_init_set_error(info, err);
        return;
    }
    duckdb_copy_function_global_init_set_global_state(info, f, v1file_free);
}

/* ------------------------------------------------------------------------------------ */
/* Sink: a chunk -> records                                                             */
/* ------------------------------------------------------------------------------------ */

static int view_vector(void *vector, copy_view *out, char *err) {
    (void)err;
    duckdb_vector v = (duckdb_vector)vector;
    out->vector = vector;
    out->data = duckdb_vector_get_data(v);
    out->validity = duckdb_vector_get_validity(v);
    return 0;
}

static void *child_vector(void *vector, int is_array) {
    duckdb_vector v = (duckdb_vector)vector;
    return is_array ? duckdb_array_vector_get_child(v) : duckdb_list_vector_get_child(v);
}

static const copy_vector_ops V1_VECTORS = {view_vector, child_vector};

static void copy_sink(duckdb_copy_function_sink_info info, duckdb_data_chunk chunk) {
    const copybind *b = (const copybind *)duckdb_copy_function_sink_get_bind_data(info);
    v1file *f = (v1file *)duckdb_copy_function_sink_get_global_state(info);
    char err[ERRLEN] = "";
    idx_t n = duckdb_data_chunk_get_size(chunk);
    if (n == 0) {
        return;
    }
    duckdb_vector input = duckdb_data_chunk_get_vector(chunk, 0);
    void **vectors = (void **)calloc((size_t)b->plan.ncols + 1, sizeof(void *));
    if (vectors == NULL) {
        duckdb_copy_function_sink_set_error(info, "out of memory");
        return;
    }
    for (int i = 0; i < b->plan.ncols; i++) {
        vectors[i] = b->row_struct ? duckdb_struct_vector_get_child(input, (idx_t)i) : input;
    }
    const uint64_t *row_validity = b->row_struct ? duckdb_vector_get_validity(input) : NULL;
    pthread_mutex_lock(&f->file->lock);
    int rc = copy_encode_rows(&f->enc, &b->plan, &V1_VECTORS, vectors, row_validity, n, err);
    if (rc == 0) {
        rc = copyfile_put(f->file, &f->enc.framed, &f->enc.ends, (size_t)n, err);
    }
    pthread_mutex_unlock(&f->file->lock);
    free(vectors);
    if (rc) {
        duckdb_copy_function_sink_set_error(info, err);
    }
}

static void copy_finalize(duckdb_copy_function_finalize_info info) {
    v1file *f = (v1file *)duckdb_copy_function_finalize_get_global_state(info);
    copybind *b = (copybind *)duckdb_copy_function_finalize_get_bind_data(info);
    char err[ERRLEN] = "";
    pthread_mutex_lock(&f->file->lock);
    int rc = copyfile_commit(&b->target, f->file, err);
    pthread_mutex_unlock(&f->file->lock);
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
