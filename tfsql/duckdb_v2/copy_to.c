/*
 * tfsql/duckdb_v2/copy_to.c -- COPY ... TO ... (FORMAT tfrecord) on DuckDB 2's V2 C API.
 *
 * The V2 API names the columns a COPY writes, so every column is a feature named after
 * it: COPY t TO 'x.tfrecord' (FORMAT tfrecord), COPY (SELECT ...) TO ..., COPY t (b, a)
 * TO ... (no STRUCT column needed; the v1 binding's form, one STRUCT column whose fields
 * are the features, is taken too, so a statement works on both). DuckDB runs the statement:
 * PARTITION_BY (the partition columns are not features unless WRITE_PARTITION_COLUMNS),
 * OVERWRITE, APPEND, FILENAME_PATTERN, FILE_EXTENSION, PER_THREAD_OUTPUT, USE_TMP_FILE
 * and RETURN_FILES are its own; RETURN_STATS gets each file's rows and size from here.
 *
 * Per statement: bind (options read by option_rules.c from the option spec, columns
 * planned by copy_encode.c), then per file: init (copy_files.c opens a hidden temporary
 * file beside DuckDB's name, after checking the name stays inside the COPY's target and
 * taking the target's lock unless bind took it: bind does for an existing directory, before
 * DuckDB's OVERWRITE empties it), batch (rows -> framed records, on any thread), flush (the
 * records appended, in order), finalize (synced and renamed into place, with its INDEX).
 *
 * Names: the function declares the extension 'tfrecord', so DuckDB names the files of a
 * directory target 'data_0.tfrecord'; a compressed one becomes 'data_0.tfrecord.gz' /
 * '.zz' (the API takes one extension per function, not per statement: RETURN_FILES then
 * lists DuckDB's name without the suffix; give FILE_EXTENSION 'tfrecord.gz' to have both
 * agree). A single-file target keeps the name written.
 *
 *   COPY t TO 'out.tfrecord' (FORMAT tfrecord)                   -> out.tfrecord
 *   COPY t TO 'out' (FORMAT tfrecord, PARTITION_BY (p), COMPRESSION gzip)
 *                                                                -> out/p=0/data_0.tfrecord.gz
 */
#include "v2_ext.h"

#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------------------------------ */
/* Types                                                                                */
/* ------------------------------------------------------------------------------------ */

static DUCKDB_V2_LOGICAL_TYPE_ID type_id(duckdb_v2_logical_type_handle t) {
    DUCKDB_V2_LOGICAL_TYPE_ID id = DUCKDB_V2_LOGICAL_TYPE_ID_INVALID;
    duckdb_v2_logical_type_get_id(t, &id, NULL);
    return id;
}

/* DuckDB's type id -> copy_encode.c's leaf (the same types as the v1 binding's). */
static int leaf_of(DUCKDB_V2_LOGICAL_TYPE_ID id) {
    switch (id) {
    case DUCKDB_V2_LOGICAL_TYPE_ID_SQLNULL: return COPY_LEAF_SQLNULL;
    case DUCKDB_V2_LOGICAL_TYPE_ID_BOOLEAN: return COPY_LEAF_BOOL;
    case DUCKDB_V2_LOGICAL_TYPE_ID_TINYINT: return COPY_LEAF_I8;
    case DUCKDB_V2_LOGICAL_TYPE_ID_SMALLINT: return COPY_LEAF_I16;
    case DUCKDB_V2_LOGICAL_TYPE_ID_INTEGER: return COPY_LEAF_I32;
    case DUCKDB_V2_LOGICAL_TYPE_ID_BIGINT: return COPY_LEAF_I64;
    case DUCKDB_V2_LOGICAL_TYPE_ID_DATE: return COPY_LEAF_DATE;
    case DUCKDB_V2_LOGICAL_TYPE_ID_TIME:
    case DUCKDB_V2_LOGICAL_TYPE_ID_TIMESTAMP:
    case DUCKDB_V2_LOGICAL_TYPE_ID_TIMESTAMP_SEC:
    case DUCKDB_V2_LOGICAL_TYPE_ID_TIMESTAMP_MS:
    case DUCKDB_V2_LOGICAL_TYPE_ID_TIMESTAMP_NS:
    case DUCKDB_V2_LOGICAL_TYPE_ID_TIMESTAMP_TZ: return COPY_LEAF_TIMESTAMP;
    case DUCKDB_V2_LOGICAL_TYPE_ID_UTINYINT: return COPY_LEAF_U8;
    case DUCKDB_V2_LOGICAL_TYPE_ID_USMALLINT: return COPY_LEAF_U16;
    case DUCKDB_V2_LOGICAL_TYPE_ID_UINTEGER: return COPY_LEAF_U32;
    case DUCKDB_V2_LOGICAL_TYPE_ID_UBIGINT: return COPY_LEAF_U64;
    case DUCKDB_V2_LOGICAL_TYPE_ID_FLOAT: return COPY_LEAF_F32;
    case DUCKDB_V2_LOGICAL_TYPE_ID_DOUBLE: return COPY_LEAF_F64;
    case DUCKDB_V2_LOGICAL_TYPE_ID_VARCHAR: return COPY_LEAF_VARCHAR;
    case DUCKDB_V2_LOGICAL_TYPE_ID_BLOB: return COPY_LEAF_BLOB;
    case DUCKDB_V2_LOGICAL_TYPE_ID_DECIMAL: return COPY_LEAF_DECIMAL;
    default: return COPY_LEAF_NONE;
    }
}

static int is_list_type(DUCKDB_V2_LOGICAL_TYPE_ID id) {
    return id == DUCKDB_V2_LOGICAL_TYPE_ID_LIST || id == DUCKDB_V2_LOGICAL_TYPE_ID_ARRAY;
}

/* The element type of a LIST or ARRAY type (owned; NULL on failure), with the ARRAY's
 * size: its parameters are the child type (a TYPE value) and, for an ARRAY, the size. */
static duckdb_v2_logical_type_handle list_child(duckdb_v2_logical_type_handle t, uint64_t *array_size) {
    duckdb_v2_logical_type_handle child = NULL;
    idx_t n = 0;
    *array_size = 0;
    duckdb_v2_logical_type_get_param_count(t, &n, NULL);
    for (idx_t i = 0; i < n; i++) {
        duckdb_v2_identifier_t name = {NULL, 0};
        duckdb_v2_value_handle v = NULL;
        if (duckdb_v2_logical_type_get_param(t, i, &name, &v, NULL) != V2_OK) {
            continue;
        }
        duckdb_v2_logical_type_handle vt = NULL;
        duckdb_v2_value_get_logical_type(v, &vt, NULL);
        DUCKDB_V2_LOGICAL_TYPE_ID vid = vt != NULL ? type_id(vt) : DUCKDB_V2_LOGICAL_TYPE_ID_INVALID;
        duckdb_v2_logical_type_destroy(&vt);
        int64_t size = 0;
        if (vid == DUCKDB_V2_LOGICAL_TYPE_ID_TYPE && child == NULL) {
            duckdb_v2_value_get_type(v, &child, NULL);
        } else if (vid == DUCKDB_V2_LOGICAL_TYPE_ID_BIGINT && duckdb_v2_value_get_bigint(v, &size, NULL) == V2_OK) {
            *array_size = (uint64_t)size;
        }
        duckdb_v2_value_destroy(&v);
    }
    return child;
}

/* A DECIMAL type's width and scale: its two parameters, UTINYINT values. */
static void decimal_params(duckdb_v2_logical_type_handle t, copy_type *out) {
    int *into[2] = {&out->width, &out->scale};
    for (idx_t i = 0; i < 2; i++) {
        duckdb_v2_identifier_t name = {NULL, 0};
        duckdb_v2_value_handle v = NULL;
        uint8_t u = 0;
        if (duckdb_v2_logical_type_get_param(t, i, &name, &v, NULL) == V2_OK &&
            duckdb_v2_value_get_utinyint(v, &u, NULL) == V2_OK) {
            *into[i] = u;
        }
        duckdb_v2_value_destroy(&v);
    }
}

void v2_describe_type(duckdb_v2_logical_type_handle t, copy_type *out) {
    memset(out, 0, sizeof(*out));
    duckdb_v2_logical_type_handle owned[2] = {NULL, NULL};
    duckdb_v2_logical_type_handle leaf = t;
    while (out->levels < 2 && leaf != NULL && is_list_type(type_id(leaf))) {
        owned[out->levels] = list_child(leaf, &out->array[out->levels]);
        leaf = owned[out->levels++];
    }
    DUCKDB_V2_LOGICAL_TYPE_ID id = leaf != NULL ? type_id(leaf) : DUCKDB_V2_LOGICAL_TYPE_ID_INVALID;
    out->leaf = leaf != NULL ? leaf_of(id) : COPY_LEAF_NONE;
    out->time = id == DUCKDB_V2_LOGICAL_TYPE_ID_TIMESTAMP_SEC  ? COPY_TIME_S
                : id == DUCKDB_V2_LOGICAL_TYPE_ID_TIMESTAMP_MS ? COPY_TIME_MS
                : id == DUCKDB_V2_LOGICAL_TYPE_ID_TIMESTAMP    ? COPY_TIME_US
                : id == DUCKDB_V2_LOGICAL_TYPE_ID_TIMESTAMP_NS ? COPY_TIME_NS
                : id == DUCKDB_V2_LOGICAL_TYPE_ID_TIMESTAMP_TZ ? COPY_TIME_US_TZ
                                                               : COPY_TIME_OF_DAY;
    if (id == DUCKDB_V2_LOGICAL_TYPE_ID_DECIMAL) {
        decimal_params(leaf, out);
    }
    duckdb_v2_identifier_t name = {NULL, 0};
    if (leaf != NULL && duckdb_v2_logical_type_get_name(leaf, &name, NULL) == V2_OK && name.ptr != NULL) {
        snprintf(out->type_name, sizeof(out->type_name), "%.*s", (int)name.len, name.ptr);
        if (id == DUCKDB_V2_LOGICAL_TYPE_ID_DECIMAL) {
            size_t at = strlen(out->type_name);
            snprintf(out->type_name + at, sizeof(out->type_name) - at, "(%d,%d)", out->width, out->scale);
        }
    } else {
        snprintf(out->type_name, sizeof(out->type_name), "an unknown type");
    }
    for (int i = 0; i < 2; i++) {
        duckdb_v2_logical_type_destroy(&owned[i]);
    }
}

/* ------------------------------------------------------------------------------------ */
/* Bind                                                                                 */
/* ------------------------------------------------------------------------------------ */

typedef struct {
    copy_common c; /* the options, columns and target */
    duckdb_v2_logical_type_handle *types; /* the input columns' types (to scan batches) */
    int ntypes;
} copybind;

static void copybind_free(void *p) {
    copybind *b = (copybind *)p;
    if (b == NULL) {
        return;
    }
    copy_common_end(&b->c);
    for (int i = 0; i < b->ntypes; i++) {
        duckdb_v2_logical_type_destroy(&b->types[i]);
    }
    free(b->types);
    free(b);
}

/* The text of an option's value (a new string): a bare name (BOOLEAN true) as "true". */
static char *option_text(duckdb_v2_value_handle v) {
    idx_t len = 0;
    if (duckdb_v2_value_to_string(v, NULL, 0, &len, NULL) != V2_OK && len == 0) {
        return NULL;
    }
    char *s = (char *)malloc(len + 1);
    if (s != NULL && duckdb_v2_value_to_string(v, s, len + 1, &len, NULL) != V2_OK) {
        free(s);
        return NULL;
    }
    return s;
}

static int read_options(duckdb_v2_copy_to_bind_info_handle info, copybind *b, char *err) {
    idx_t n = 0;
    duckdb_v2_copy_to_bind_get_option_count(info, &n, NULL);
    for (idx_t i = 0; i < n; i++) {
        duckdb_v2_identifier_t name = {NULL, 0};
        duckdb_v2_value_handle v = NULL;
        if (duckdb_v2_copy_to_bind_get_option_name(info, i, &name, NULL) != V2_OK ||
            duckdb_v2_copy_to_bind_get_option_value(info, i, &v, NULL) != V2_OK) {
            snprintf(err, ERRLEN, "COPY ... TO (FORMAT tfrecord): cannot read option %llu",
                     (unsigned long long)i);
            return -1;
        }
        char *key = xstrndup(name.ptr, name.len);
        char *text = option_text(v);
        duckdb_v2_value_destroy(&v);
        int rc = key == NULL ? -1 : read_copy_option(&b->c.set, key, text, err);
        if (key == NULL) {
            snprintf(err, ERRLEN, "out of memory");
        }
        free(key);
        free(text);
        if (rc) {
            return -1;
        }
    }
    return copy_settings_check(&b->c.set, err);
}

/* The v1 binding's form, one STRUCT column whose fields are the features (COPY (SELECT t
 * FROM t) TO ...; partition columns are DuckDB's): its fields planned as the columns. */
static int plan_struct_fields(copybind *b, char *err) {
    duckdb_v2_logical_type_handle row = b->types[0];
    idx_t n = 0;
    duckdb_v2_logical_type_get_param_count(row, &n, NULL);
    copy_plan_free(&b->c.plan);
    if (copy_plan_start(&b->c.plan, &b->c.set, (int)n, err)) {
        return -1;
    }
    b->c.row_struct = 1;
    for (idx_t i = 0; i < n; i++) {
        duckdb_v2_identifier_t name = {NULL, 0};
        duckdb_v2_value_handle v = NULL;
        duckdb_v2_logical_type_handle t = NULL;
        if (duckdb_v2_logical_type_get_param(row, i, &name, &v, NULL) != V2_OK ||
            duckdb_v2_value_get_type(v, &t, NULL) != V2_OK) {
            duckdb_v2_value_destroy(&v);
            snprintf(err, ERRLEN, "COPY ... TO (FORMAT tfrecord): cannot read field %llu of the "
                                  "STRUCT column", (unsigned long long)i);
            return -1;
        }
        char *feature = xstrndup(name.ptr, name.len);
        duckdb_v2_value_destroy(&v);
        copy_type ct;
        v2_describe_type(t, &ct);
        duckdb_v2_logical_type_destroy(&t);
        int rc = feature == NULL ? -1 : copy_plan_column(&b->c.plan, (int)i, feature, &ct, err);
        free(feature);
        if (rc) {
            return -1;
        }
    }
    return 0;
}

static int plan_columns(duckdb_v2_copy_to_bind_info_handle info, copybind *b, char *err) {
    idx_t n = 0;
    duckdb_v2_copy_to_bind_get_column_count(info, &n, NULL);
    b->types = (duckdb_v2_logical_type_handle *)calloc(n + 1, sizeof(duckdb_v2_logical_type_handle));
    if (b->types == NULL || copy_plan_start(&b->c.plan, &b->c.set, (int)n, err)) {
        snprintf(err, ERRLEN, "out of memory");
        return -1;
    }
    for (idx_t i = 0; i < n; i++) {
        duckdb_v2_identifier_t name = {NULL, 0};
        if (duckdb_v2_copy_to_bind_get_column_name(info, i, &name, NULL) != V2_OK ||
            duckdb_v2_copy_to_bind_get_column_type(info, i, &b->types[i], NULL) != V2_OK) {
            snprintf(err, ERRLEN, "COPY ... TO (FORMAT tfrecord): cannot read column %llu",
                     (unsigned long long)i);
            return -1;
        }
        b->ntypes = (int)i + 1;
        char *feature = xstrndup(name.ptr, name.len);
        copy_type t;
        v2_describe_type(b->types[i], &t);
        int one_struct = n == 1 && type_id(b->types[0]) == DUCKDB_V2_LOGICAL_TYPE_ID_STRUCT;
        int rc = feature == NULL ? -1 : one_struct ? 0 : copy_plan_column(&b->c.plan, (int)i, feature, &t, err);
        free(feature);
        if (rc) {
            return -1;
        }
    }
    if (n == 1 && type_id(b->types[0]) == DUCKDB_V2_LOGICAL_TYPE_ID_STRUCT && b->c.set.record_type != RAW &&
        plan_struct_fields(b, err)) {
        return -1;
    }
    return copy_plan_finish(&b->c.plan, err);
}

static void copy_to_bind(duckdb_v2_copy_to_bind_info_handle info, v2_ctx context, v2_err *err) {
    char msg[ERRLEN] = "";
    copybind *b = (copybind *)calloc(1, sizeof(copybind));
    duckdb_v2_str path = {NULL, 0};
    if (b == NULL || duckdb_v2_copy_to_bind_get_file_path(info, &path, err) != V2_OK) {
        free(b);
        v2_fail(err, DUCKDB_V2_ERROR_INPUT_INVALID, "out of memory");
        return;
    }
    char *written = xstrndup(path.ptr, path.len);
    v2_files_enter(context); /* '~' as DuckDB expands it in the paths it gives init */
    char *root = written != NULL ? fs_expand(written, msg) : NULL;
    v2_files_leave();
    free(written);
    copy_common_start(&b->c, root);
    int expanded = root != NULL; /* else msg says why (or it is out of memory) */
    free(root);
    b->c.target.compress_named = 1;
    if (!expanded || read_options(info, b, msg) || plan_columns(info, b, msg)) {
        copybind_free(b);
        v2_fail(err, DUCKDB_V2_ERROR_QUERY_BINDER, msg[0] ? msg : "out of memory"); /* a BinderException, as v1's */
        return;
    }
    v2_files_enter(context);
    int locked = copy_target_lock_early(&b->c.target, msg); /* before DuckDB's OVERWRITE */
    v2_files_leave();
    if (locked) {
        copybind_free(b);
        v2_fail(err, DUCKDB_V2_ERROR_IO_GENERAL, msg);
        return;
    }
    duckdb_v2_opaque o = {b, copybind_free, NULL};
    duckdb_v2_copy_to_bind_set_bind_data(info, &o, err);
}

/* ------------------------------------------------------------------------------------ */
/* Files: init, batch, flush, finalize, statistics                                      */
/* ------------------------------------------------------------------------------------ */

typedef struct {
    copyfile *file;
    uint64_t rows;
} v2file;

static void v2file_free(void *p) {
    v2file *f = (v2file *)p;
    if (f != NULL) {
        copyfile_free(f->file);
        free(f);
    }
}

static void copy_to_init(duckdb_v2_copy_to_init_info_handle info, v2_ctx context, v2_err *err) {
    copybind *b = NULL;
    duckdb_v2_str path = {NULL, 0};
    if (duckdb_v2_copy_to_init_get_bind_data(info, (void **)&b, err) != V2_OK ||
        duckdb_v2_copy_to_init_get_file_path(info, &path, err) != V2_OK) {
        return;
    }
    char msg[ERRLEN] = "";
    char *name = xstrndup(path.ptr, path.len);
    v2file *f = (v2file *)calloc(1, sizeof(v2file));
    if (name == NULL || f == NULL) {
        free(name);
        free(f);
        v2_fail(err, DUCKDB_V2_ERROR_INPUT_INVALID, "out of memory");
        return;
    }
    int io_error = 0;
    v2_files_enter(context); /* a URL target goes to DuckDB's file system (files.c) */
    f->file = copyfile_open(&b->c.target, &b->c.set, name, msg, &io_error);
    v2_files_leave();
    free(name);
    if (f->file == NULL) {
        free(f);
        v2_fail(err, io_error ? DUCKDB_V2_ERROR_IO_GENERAL : DUCKDB_V2_ERROR_INPUT_INVALID, msg);
        return;
    }
    duckdb_v2_opaque o = {f, v2file_free, NULL};
    duckdb_v2_copy_to_init_set_init_data(info, &o, err);
}

/* A batch's records, framed (the flush writes them). */
typedef struct {
    tbuf framed, ends; /* ends: each record's end offset in framed */
    uint64_t n;
} v2batch;

static void v2batch_free(void *p) {
    v2batch *r = (v2batch *)p;
    if (r != NULL) {
        tbuf_free(&r->framed);
        tbuf_free(&r->ends);
        free(r);
    }
}

static int view_vector(void *vector, copy_view *out, char *err) {
    duckdb_v2_vector_handle v = (duckdb_v2_vector_handle)vector;
    DUCKDB_V2_VECTOR_TYPE kind = DUCKDB_V2_VECTOR_TYPE_OTHER;
    duckdb_v2_vector_get_vector_type(v, &kind, NULL);
    if (kind != DUCKDB_V2_VECTOR_TYPE_FLAT && duckdb_v2_vector_flatten(v, NULL) != V2_OK) {
        snprintf(err, ERRLEN, "COPY ... TO (FORMAT tfrecord): cannot read a vector of the batch");
        return -1;
    }
    duckdb_v2_vector_view view;
    memset(&view, 0, sizeof(view));
    if (duckdb_v2_vector_get_view(v, &view, NULL) != V2_OK) {
        snprintf(err, ERRLEN, "COPY ... TO (FORMAT tfrecord): cannot read a vector of the batch");
        return -1;
    }
    out->vector = vector;
    out->data = view.data;
    out->validity = view.validity;
    return 0;
}

static void *child_vector(void *vector, int is_array) {
    (void)is_array; /* LIST and ARRAY: child 0 is the elements */
    duckdb_v2_vector_handle child = NULL;
    duckdb_v2_vector_get_child((duckdb_v2_vector_handle)vector, 0, &child, NULL);
    return child;
}

static const copy_vector_ops V2_VECTORS = {view_vector, child_vector};

/* Append the encoder's records (e->framed, e->ends: n of them) to the batch's. */
static int append_records(v2batch *r, const copy_encoder *e, uint64_t n) {
    uint64_t base = r->framed.len;
    if (tbuf_reserve(&r->framed, e->framed.len)) {
        return -1;
    }
    memcpy(r->framed.data + r->framed.len, e->framed.data, e->framed.len);
    r->framed.len += e->framed.len;
    for (uint64_t i = 0; i < n; i++) {
        if (tbuf_put_u64(&r->ends, base + load_le64(e->ends.data + 8 * i))) {
            return -1;
        }
    }
    r->n += n;
    return 0;
}

/* Encode every chunk of `rows` into r; -1 with msg set. */
static int encode_batch(const copybind *b, duckdb_v2_column_data_collection_handle rows,
                        v2_ctx context, v2batch *r, char *msg) {
    duckdb_v2_factory_handle factory = NULL;
    duckdb_v2_column_data_collection_shared_scan_state_handle shared = NULL;
    duckdb_v2_column_data_collection_worker_scan_state_handle worker = NULL;
    duckdb_v2_data_chunk_handle chunk = NULL;
    copy_encoder enc;
    void **vectors = (void **)calloc((size_t)b->ntypes + 1, sizeof(void *));
    void **fields = (void **)calloc((size_t)b->c.plan.ncols + 1, sizeof(void *));
    int rc = copy_encoder_init(&enc, &b->c.plan) || vectors == NULL || fields == NULL ? -1 : 0;
    if (rc == 0 && (duckdb_v2_context_get_factory(context, &factory, NULL) != V2_OK ||
                    duckdb_v2_column_data_collection_shared_scan_state_create(rows, &shared, NULL) != V2_OK ||
                    duckdb_v2_column_data_collection_worker_scan_state_create(rows, &worker, NULL) != V2_OK ||
                    duckdb_v2_data_chunk_create(factory, b->types, (idx_t)b->ntypes, &chunk, NULL) != V2_OK)) {
        rc = -1;
    }
    if (rc) {
        snprintf(msg, ERRLEN, "COPY ... TO (FORMAT tfrecord): cannot read a batch (out of memory?)");
    }
    bool more = true;
    while (rc == 0 && duckdb_v2_column_data_collection_scan(rows, shared, worker, chunk, &more, NULL) == V2_OK &&
           more) {
        idx_t n = 0;
        duckdb_v2_data_chunk_get_size(chunk, &n, NULL);
        if (n == 0) {
            continue;
        }
        const uint64_t *row_validity = NULL;
        for (int i = 0; i < b->ntypes; i++) {
            duckdb_v2_vector_handle v = NULL;
            duckdb_v2_data_chunk_get_vector(chunk, (idx_t)i, &v, NULL);
            vectors[i] = v;
        }
        if (b->c.row_struct) {
            copy_view row;
            rc = view_vector(vectors[0], &row, msg);
            row_validity = row.validity;
            for (int i = 0; i < b->c.plan.ncols && rc == 0; i++) {
                duckdb_v2_vector_handle field = NULL;
                duckdb_v2_vector_get_child((duckdb_v2_vector_handle)row.vector, (idx_t)i, &field, NULL);
                fields[i] = field;
            }
        }
        if (rc == 0) {
            rc = copy_encode_rows(&enc, &b->c.plan, &V2_VECTORS, b->c.row_struct ? fields : vectors, row_validity,
                                  n, msg);
        }
        if (rc == 0 && append_records(r, &enc, n)) {
            snprintf(msg, ERRLEN, "out of memory");
            rc = -1;
        }
    }
    duckdb_v2_data_chunk_destroy(&chunk);
    duckdb_v2_column_data_collection_worker_scan_state_destroy(&worker);
    duckdb_v2_column_data_collection_shared_scan_state_destroy(&shared);
    copy_encoder_free(&enc);
    free(vectors);
    free(fields);
    return rc;
}

static void copy_to_batch(duckdb_v2_copy_to_batch_info_handle info, v2_ctx context, v2_err *err) {
    copybind *b = NULL;
    duckdb_v2_column_data_collection_handle rows = NULL;
    if (duckdb_v2_copy_to_batch_get_bind_data(info, (void **)&b, err) != V2_OK ||
        duckdb_v2_copy_to_batch_take_input(info, &rows, err) != V2_OK) {
        return;
    }
    char msg[ERRLEN] = "";
    v2batch *r = (v2batch *)calloc(1, sizeof(v2batch));
    int rc = r == NULL ? -1 : encode_batch(b, rows, context, r, msg);
    duckdb_v2_column_data_collection_destroy(&rows);
    if (rc) {
        v2batch_free(r);
        v2_fail(err, DUCKDB_V2_ERROR_INPUT_INVALID, msg[0] ? msg : "out of memory");
        return;
    }
    duckdb_v2_opaque o = {r, v2batch_free, NULL};
    duckdb_v2_copy_to_batch_set_batch_data(info, &o, err);
}

static void copy_to_flush(duckdb_v2_copy_to_flush_info_handle info, v2_ctx context, v2_err *err) {
    v2file *f = NULL;
    v2batch *r = NULL;
    if (duckdb_v2_copy_to_flush_get_init_data(info, (void **)&f, err) != V2_OK ||
        duckdb_v2_copy_to_flush_get_batch_data(info, (void **)&r, err) != V2_OK || r == NULL) {
        return;
    }
    char msg[ERRLEN] = "";
    pthread_mutex_lock(&f->file->lock);
    v2_files_enter(context);
    int rc = copyfile_put(f->file, &r->framed, &r->ends, (size_t)r->n, msg);
    v2_files_leave();
    f->rows += r->n;
    pthread_mutex_unlock(&f->file->lock);
    if (rc) {
        v2_fail(err, DUCKDB_V2_ERROR_IO_GENERAL, msg);
    }
}

static void copy_to_finalize(duckdb_v2_copy_to_finalize_info_handle info, v2_ctx context, v2_err *err) {
    copybind *b = NULL;
    v2file *f = NULL;
    if (duckdb_v2_copy_to_finalize_get_bind_data(info, (void **)&b, err) != V2_OK ||
        duckdb_v2_copy_to_finalize_get_init_data(info, (void **)&f, err) != V2_OK) {
        return;
    }
    char msg[ERRLEN] = "";
    pthread_mutex_lock(&f->file->lock);
    v2_files_enter(context);
    int rc = copyfile_commit(&b->c.target, f->file, msg);
    v2_files_leave();
    pthread_mutex_unlock(&f->file->lock);
    if (rc) {
        v2_fail(err, DUCKDB_V2_ERROR_INPUT_INVALID, msg);
    }
}

/* RETURN_STATS: the file's rows and its size on disk. */
static void copy_to_statistics(duckdb_v2_copy_to_statistics_info_handle info, v2_ctx context, v2_err *err) {
    (void)context;
    v2file *f = NULL;
    if (duckdb_v2_copy_to_statistics_get_init_data(info, (void **)&f, err) != V2_OK || f == NULL) {
        return;
    }
    duckdb_v2_copy_to_statistics_set_row_count(info, (idx_t)f->rows, err);
    /* the bytes written (a URL's file cannot be stat'ed) */
    duckdb_v2_copy_to_statistics_set_file_size(info, (idx_t)f->file->written, err);
}

/* ------------------------------------------------------------------------------------ */
/* Registration                                                                         */
/* ------------------------------------------------------------------------------------ */

DUCKDB_V2_ERROR register_copy(duckdb_v2_extension_handle ext, duckdb_v2_factory_handle factory, v2_err *err) {
    duckdb_v2_copy_function_handle f = NULL;
    duckdb_v2_identifier_t name = v2_str("tfrecord");
    duckdb_v2_str extension = v2_str("tfrecord");
    DUCKDB_V2_ERROR rc = duckdb_v2_copy_function_create(factory, &f, err);
    if (rc == V2_OK) {
        rc = duckdb_v2_copy_function_set_name(f, &name, err);
    }
    if (rc == V2_OK) {
        rc = duckdb_v2_copy_function_set_file_extension(f, &extension, err);
    }
    if (rc == V2_OK) {
        rc = duckdb_v2_copy_to_set_bind_callback(f, copy_to_bind, err);
    }
    if (rc == V2_OK) {
        rc = duckdb_v2_copy_to_set_init_callback(f, copy_to_init, err);
    }
    if (rc == V2_OK) {
        rc = duckdb_v2_copy_to_set_batch_callback(f, copy_to_batch, err);
    }
    if (rc == V2_OK) {
        rc = duckdb_v2_copy_to_set_flush_callback(f, copy_to_flush, err);
    }
    if (rc == V2_OK) {
        rc = duckdb_v2_copy_to_set_finalize_callback(f, copy_to_finalize, err);
    }
    if (rc == V2_OK) {
        rc = duckdb_v2_copy_to_set_statistics_callback(f, copy_to_statistics, err);
    }
    if (rc == V2_OK) {
        rc = register_copy_from(f, err);
    }
    if (rc == V2_OK) {
        rc = duckdb_v2_extension_register_copy_function(ext, f, err);
    }
    duckdb_v2_copy_function_destroy(&f);
    return rc;
}
