/*
 * tfsql/duckdb_ext/metadata.c -- tfrecord_schema(...) and tfrecord_metadata(...), the
 * TFRecord counterparts of parquet_schema() / parquet_metadata().
 *
 * Both take tfrecord_scan's arguments (a path, glob or list, and its named options) and
 * resolve them through the scan's own bind (scan_resolve), so they show exactly the
 * columns and files the scan reads:
 *
 *   tfrecord_schema:   one row per column: column_name, column_type (DuckDB's),
 *                      nullable, feature_kind (bytes_list / float_list / int64_list,
 *                      NULL for a column that is no feature), location (features,
 *                      context or feature_lists) and origin (feature, record, partition,
 *                      split or filename).
 *   tfrecord_metadata: one row per file: file, size (bytes on disk), compression,
 *                      partitions (MAP of the hive key=value directories), split, and
 *                      records with records_source: 'index' when a valid index sidecar
 *                      gives the count (tfsql.record_index's checks), 'count' when
 *                      count := true walked the record headers, else NULL.
 */
#include "duckdb_ext.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* -- the scan's output columns ------------------------------------------------------- */

int scan_output_count(const tfbind *b) {
    return b->ndata + b->npart + (b->filename_col != NULL ? 1 : 0);
}

/* The type of output column c (a new type) and its name (a new string in *name). */
duckdb_logical_type scan_output_type(const tfbind *b, int c, char **name) {
    if (c < b->ndata) {
        *name = column_name(b, c);
        return data_column_type(b, c);
    }
    c -= b->ndata;
    if (c < b->npart) {
        *name = xstrdup(b->part_names[c]);
        return duckdb_create_logical_type(b->part_is_int[c] ? DUCKDB_TYPE_BIGINT
                                                            : DUCKDB_TYPE_VARCHAR);
    }
    *name = xstrdup(b->filename_col);
    return duckdb_create_logical_type(DUCKDB_TYPE_VARCHAR);
}

/* The SQL spelling of a scan column's type (`buf` holds an ARRAY's). */
static const char *type_text(const tfbind *b, int c, char *buf, size_t cap) {
    if (c < b->ndata && b->array_size != NULL && b->array_size[c] > 0) {
        duckdb_logical_type t = data_column_type(b, c);
        duckdb_logical_type child = duckdb_array_type_child_type(t);
        static const struct {
            duckdb_type id;
            const char *name;
        } names[] = {{DUCKDB_TYPE_BIGINT, "BIGINT"},       {DUCKDB_TYPE_FLOAT, "FLOAT"},
                     {DUCKDB_TYPE_DOUBLE, "DOUBLE"},       {DUCKDB_TYPE_VARCHAR, "VARCHAR"},
                     {DUCKDB_TYPE_BLOB, "BLOB"},           {DUCKDB_TYPE_BOOLEAN, "BOOLEAN"},
                     {DUCKDB_TYPE_TINYINT, "TINYINT"},     {DUCKDB_TYPE_SMALLINT, "SMALLINT"},
                     {DUCKDB_TYPE_INTEGER, "INTEGER"},     {DUCKDB_TYPE_UTINYINT, "UTINYINT"},
                     {DUCKDB_TYPE_USMALLINT, "USMALLINT"}, {DUCKDB_TYPE_UINTEGER, "UINTEGER"},
                     {DUCKDB_TYPE_UBIGINT, "UBIGINT"},     {DUCKDB_TYPE_DATE, "DATE"}};
        const char *name = "BIGINT";
        for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
            if (names[i].id == duckdb_get_type_id(child)) {
                name = names[i].name;
            }
        }
        snprintf(buf, cap, "%s[%llu]", name, (unsigned long long)b->array_size[c]);
        duckdb_destroy_logical_type(&child);
        duckdb_destroy_logical_type(&t);
        return buf;
    }
    static const char *const names[3][4] = {
        {"BLOB", "BLOB[]", "BLOB[][]", ""},
        {"FLOAT", "FLOAT[]", "FLOAT[][]", ""},
        {"BIGINT", "BIGINT[]", "BIGINT[][]", ""},
    };
    if (c < b->ndata && b->leaf != NULL && b->leaf[c] != DUCKDB_TYPE_INVALID) {
        static const struct {
            duckdb_type id;
            const char *spelled[3];
        } leaves[] = {
            {DUCKDB_TYPE_TIMESTAMP_S, {"TIMESTAMP_S", "TIMESTAMP_S[]", "TIMESTAMP_S[][]"}},
            {DUCKDB_TYPE_TIMESTAMP_MS, {"TIMESTAMP_MS", "TIMESTAMP_MS[]", "TIMESTAMP_MS[][]"}},
            {DUCKDB_TYPE_TIMESTAMP, {"TIMESTAMP", "TIMESTAMP[]", "TIMESTAMP[][]"}},
            {DUCKDB_TYPE_TIMESTAMP_NS, {"TIMESTAMP_NS", "TIMESTAMP_NS[]", "TIMESTAMP_NS[][]"}},
            {DUCKDB_TYPE_TIMESTAMP_TZ,
             {"TIMESTAMP WITH TIME ZONE", "TIMESTAMP WITH TIME ZONE[]", "TIMESTAMP WITH TIME ZONE[][]"}},
            {DUCKDB_TYPE_TIME, {"TIME", "TIME[]", "TIME[][]"}},
            {DUCKDB_TYPE_BOOLEAN, {"BOOLEAN", "BOOLEAN[]", "BOOLEAN[][]"}},
            {DUCKDB_TYPE_TINYINT, {"TINYINT", "TINYINT[]", "TINYINT[][]"}},
            {DUCKDB_TYPE_SMALLINT, {"SMALLINT", "SMALLINT[]", "SMALLINT[][]"}},
            {DUCKDB_TYPE_INTEGER, {"INTEGER", "INTEGER[]", "INTEGER[][]"}},
            {DUCKDB_TYPE_UTINYINT, {"UTINYINT", "UTINYINT[]", "UTINYINT[][]"}},
            {DUCKDB_TYPE_USMALLINT, {"USMALLINT", "USMALLINT[]", "USMALLINT[][]"}},
            {DUCKDB_TYPE_UINTEGER, {"UINTEGER", "UINTEGER[]", "UINTEGER[][]"}},
            {DUCKDB_TYPE_UBIGINT, {"UBIGINT", "UBIGINT[]", "UBIGINT[][]"}},
            {DUCKDB_TYPE_DATE, {"DATE", "DATE[]", "DATE[][]"}},
            {DUCKDB_TYPE_DOUBLE, {"DOUBLE", "DOUBLE[]", "DOUBLE[][]"}},
            {DUCKDB_TYPE_INTERVAL, {"INTERVAL", "INTERVAL[]", "INTERVAL[][]"}},
        };
        for (size_t i = 0; i < sizeof(leaves) / sizeof(leaves[0]); i++) {
            if (leaves[i].id == b->leaf[c]) {
                return leaves[i].spelled[b->sc.cols[c].shape];
            }
        }
    }
    if (c < b->ndata) {
        const colspec *cs = &b->sc.cols[c];
        if (cs->kind == KIND_BYTES && b->utf8[c]) {
            return cs->shape == SCALAR ? "VARCHAR" : cs->shape == LIST ? "VARCHAR[]" : "VARCHAR[][]";
        }
        int row = cs->kind == KIND_FLOAT ? 1 : cs->kind == KIND_INT64 ? 2 : 0;
        return names[row][cs->shape];
    }
    c -= b->ndata;
    return c < b->npart && b->part_is_int[c] ? "BIGINT" : "VARCHAR";
}

/* -- shared bind --------------------------------------------------------------------- */

static void add_column(duckdb_bind_info info, const char *name, duckdb_type id) {
    duckdb_logical_type t = duckdb_create_logical_type(id);
    duckdb_bind_add_result_column(info, name, t);
    duckdb_destroy_logical_type(&t);
}

/* A function's state: the resolved scan and the next row to emit. */
typedef struct {
    tfbind *b;
    int count; /* tfrecord_metadata's count := true */
} metabind;

static void metabind_free(void *p) {
    metabind *m = (metabind *)p;
    if (m != NULL) {
        tfbind_free(m->b);
        free(m);
    }
}

static metabind *meta_resolve(duckdb_bind_info info, const char *fname) {
    char err[ERRLEN] = "";
    idx_t cardinality = 0;
    metabind *m = (metabind *)calloc(1, sizeof(metabind));
    if (m == NULL) {
        duckdb_bind_set_error(info, "out of memory");
        return NULL;
    }
    m->b = scan_resolve(info, fname, &cardinality, err);
    if (m->b == NULL) {
        free(m);
        duckdb_bind_set_error(info, err);
        return NULL;
    }
    return m;
}

typedef struct {
    idx_t next;
} metastate;

static void meta_init(duckdb_init_info info) {
    metastate *s = (metastate *)calloc(1, sizeof(metastate));
    if (s == NULL) {
        duckdb_init_set_error(info, "out of memory");
        return;
    }
    duckdb_init_set_max_threads(info, 1);
    duckdb_init_set_init_data(info, s, free);
}

static void set_text_len(duckdb_vector v, idx_t row, const char *text, size_t len) {
    if (text == NULL) {
        duckdb_vector_ensure_validity_writable(v);
        duckdb_validity_set_row_invalid(duckdb_vector_get_validity(v), row);
        return;
    }
    duckdb_vector_assign_string_element_len(v, row, text, len);
}

static void set_text(duckdb_vector v, idx_t row, const char *text) {
    set_text_len(v, row, text, text != NULL ? strlen(text) : 0);
}

/* -- tfrecord_schema ----------------------------------------------------------------- */

static void schema_bind(duckdb_bind_info info) {
    metabind *m = meta_resolve(info, "tfrecord_schema");
    if (m == NULL) {
        return;
    }
    add_column(info, "column_name", DUCKDB_TYPE_VARCHAR);
    add_column(info, "column_type", DUCKDB_TYPE_VARCHAR);
    add_column(info, "nullable", DUCKDB_TYPE_BOOLEAN);
    add_column(info, "feature_kind", DUCKDB_TYPE_VARCHAR);
    add_column(info, "location", DUCKDB_TYPE_VARCHAR);
    add_column(info, "origin", DUCKDB_TYPE_VARCHAR);
    duckdb_bind_set_bind_data(info, m, metabind_free);
}

static void schema_scan(duckdb_function_info info, duckdb_data_chunk out) {
    const metabind *m = (const metabind *)duckdb_function_get_bind_data(info);
    metastate *s = (metastate *)duckdb_function_get_init_data(info);
    const tfbind *b = m->b;
    idx_t total = (idx_t)scan_output_count(b), n = 0;
    idx_t cap = duckdb_vector_size();
    for (; s->next < total && n < cap; s->next++, n++) {
        int c = (int)s->next;
        char *name = NULL;
        duckdb_logical_type t = scan_output_type(b, c, &name);
        duckdb_destroy_logical_type(&t);
        const char *kind = NULL, *location = NULL, *origin;
        if (c < b->ndata) {
            const colspec *cs = &b->sc.cols[c];
            kind = kind_names[cs->kind];
            origin = b->record_type == RAW ? "record" : "feature";
            location = b->record_type == RAW             ? NULL
                       : b->record_type == EXAMPLE        ? "features"
                       : cs->location == FEATURE_LISTS    ? "feature_lists"
                                                          : "context";
        } else if (c < b->ndata + b->npart) {
            origin = b->layout != LAYOUT_NONE && c == b->ndata + b->npart - 1 &&
                             strcmp(name, SPLIT_COLUMN) == 0
                         ? "split"
                         : "partition";
        } else {
            origin = "filename";
        }
        set_text(duckdb_data_chunk_get_vector(out, 0), n, name);
        char spelled[96];
        set_text(duckdb_data_chunk_get_vector(out, 1), n, type_text(b, c, spelled, sizeof(spelled)));
        ((bool *)duckdb_vector_get_data(duckdb_data_chunk_get_vector(out, 2)))[n] =
            strcmp(origin, "filename") != 0 && strcmp(origin, "record") != 0;
        set_text(duckdb_data_chunk_get_vector(out, 3), n, kind);
        set_text(duckdb_data_chunk_get_vector(out, 4), n, location);
        set_text(duckdb_data_chunk_get_vector(out, 5), n, origin);
        free(name);
    }
    duckdb_data_chunk_set_size(out, n);
}

/* -- tfrecord_metadata --------------------------------------------------------------- */

static int64_t fd_read_at(void *ctx, uint64_t offset, uint8_t *buf, size_t n) {
    ssize_t got = pread(*(int *)ctx, buf, n, (off_t)offset);
    return got < 0 ? -1 : (int64_t)got;
}

/* The record count an index sidecar gives for `path` (size `size`), or -1 when there is
 * none or it does not match the file: it is not older than the file, and the core's one
 * validator (tfsql_index_check, which tfsql.record_index uses too) accepts it whole. */
static long long indexed_count(const char *path, int64_t size) {
    const char *slash = strrchr(path, '/');
    char *index = xprintf("%.*s.%s.idx", slash ? (int)(slash - path + 1) : 0, path,
                          slash ? slash + 1 : path);
    struct stat st_index, st_file;
    window w;
    char err[ERRLEN];
    long long count = -1;
    memset(&w, 0, sizeof(w));
    if (index == NULL || stat(index, &st_index) != 0 || stat(path, &st_file) != 0 ||
        st_index.st_mtime < st_file.st_mtime ||
        window_open(&w, index, st_index.st_size, COMP_NONE, err) != 0 ||
        window_fill(&w, 0, (size_t)st_index.st_size, err) != 0) {
        free(index);
        window_close(&w);
        return -1;
    }
    free(index);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd >= 0 && w.r.buf.len == (size_t)st_index.st_size) {
        count = (long long)tfsql_index_check((const char *)w.r.buf.data, w.r.buf.len, (uint64_t)size,
                                             fd_read_at, &fd, NULL, NULL, err, sizeof(err));
    }
    if (fd >= 0) {
        close(fd);
    }
    window_close(&w);
    return count;
}

/* Count the records of `path` by walking its headers (inflating it when compressed),
 * through a bounded window, stopping once `stop` (>= 0) are counted; -1 with `err` set
 * when it cannot be read or is damaged. */
long long walked_count(const tfbind *b, const tfile *f, int comp, long long stop, char *err) {
    window fr;
    if (window_open(&fr, f->path, f->size, comp, err) != 0) {
        window_close(&fr);
        return -1;
    }
    framing o = {-1, -1, (uint64_t)b->max_record_bytes, 0, 0, {0, 0, 0}}; /* headers only, damage an error */
    long long count = 0;
    int rc = 0;
    while ((stop < 0 || count < stop) && (rc = window_next(&fr, &o, err)) == 1) {
        count += (long long)fr.r.n;
    }
    window_close(&fr);
    return rc < 0 ? -1 : count;
}

/* The compression of a file: the option when given, else its first bytes'. */
static int file_compression(const tfbind *b, const char *path) {
    if (b->compression != COMP_INFER) {
        return b->compression;
    }
    uint8_t head[12];
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? pread(fd, head, sizeof(head), 0) : 0;
    if (fd >= 0) {
        close(fd);
    }
    return tfsql_detect_compression(head, n > 0 ? (size_t)n : 0);
}

static void metadata_bind(duckdb_bind_info info) {
    metabind *m = meta_resolve(info, "tfrecord_metadata");
    if (m == NULL) {
        return;
    }
    duckdb_value count = duckdb_bind_get_named_parameter(info, "count");
    if (count != NULL) {
        m->count = !duckdb_is_null_value(count) && duckdb_get_bool(count);
        duckdb_destroy_value(&count);
    }
    add_column(info, "file", DUCKDB_TYPE_VARCHAR);
    add_column(info, "size", DUCKDB_TYPE_BIGINT);
    add_column(info, "compression", DUCKDB_TYPE_VARCHAR);
    duckdb_logical_type text = duckdb_create_logical_type(DUCKDB_TYPE_VARCHAR);
    duckdb_logical_type map = duckdb_create_map_type(text, text);
    duckdb_bind_add_result_column(info, "partitions", map);
    duckdb_destroy_logical_type(&map);
    duckdb_destroy_logical_type(&text);
    add_column(info, "split", DUCKDB_TYPE_VARCHAR);
    add_column(info, "records", DUCKDB_TYPE_BIGINT);
    add_column(info, "records_source", DUCKDB_TYPE_VARCHAR);
    duckdb_bind_set_bind_data(info, m, metabind_free);
}

/* Row `row` of the MAP vector: the file's hive keys and values (not the split). */
static int set_partitions(duckdb_vector v, idx_t row, const tfbind *b, const tfile *f,
                          int nhive) {
    idx_t start = duckdb_list_vector_get_size(v);
    if (duckdb_list_vector_reserve(v, start + (idx_t)nhive) == DuckDBError ||
        duckdb_list_vector_set_size(v, start + (idx_t)nhive) == DuckDBError) {
        return -1;
    }
    duckdb_vector entries = duckdb_list_vector_get_child(v);
    duckdb_vector keys = duckdb_struct_vector_get_child(entries, 0);
    duckdb_vector values = duckdb_struct_vector_get_child(entries, 1);
    for (int k = 0; k < nhive; k++) {
        duckdb_vector_assign_string_element(keys, start + (idx_t)k, b->part_names[k]);
        set_text_len(values, start + (idx_t)k, f->parts != NULL ? f->parts[k] : NULL,
                     f->parts != NULL ? f->part_lens[k] : 0);
    }
    duckdb_list_entry *e = &((duckdb_list_entry *)duckdb_vector_get_data(v))[row];
    e->offset = start;
    e->length = (idx_t)nhive;
    return 0;
}

static void metadata_scan(duckdb_function_info info, duckdb_data_chunk out) {
    const metabind *m = (const metabind *)duckdb_function_get_bind_data(info);
    metastate *s = (metastate *)duckdb_function_get_init_data(info);
    const tfbind *b = m->b;
    int has_split = b->layout != LAYOUT_NONE && b->npart > 0 &&
                    strcmp(b->part_names[b->npart - 1], SPLIT_COLUMN) == 0;
    int nhive = b->npart - (has_split ? 1 : 0);
    idx_t n = 0, cap = duckdb_vector_size();
    char err[ERRLEN] = "";
    static const char *const comp_names[] = {"none", "gzip", "zlib"};
    for (; s->next < (idx_t)b->files.n && n < cap; s->next++, n++) {
        const tfile *f = &b->files.items[s->next];
        int comp = file_compression(b, f->path);
        long long records = comp == COMP_NONE ? indexed_count(f->path, f->size) : -1;
        const char *source = records >= 0 ? "index" : NULL;
        if (records < 0 && m->count) {
            records = walked_count(m->b, f, comp, -1, err);
            if (records < 0) {
                duckdb_function_set_error(info, err);
                return;
            }
            source = "count";
        }
        set_text(duckdb_data_chunk_get_vector(out, 0), n, TFILE_SHOWN(f));
        ((int64_t *)duckdb_vector_get_data(duckdb_data_chunk_get_vector(out, 1)))[n] = f->size;
        set_text(duckdb_data_chunk_get_vector(out, 2), n, comp_names[comp]);
        if (set_partitions(duckdb_data_chunk_get_vector(out, 3), n, b, f, nhive)) {
            duckdb_function_set_error(info, "out of memory");
            return;
        }
        set_text(duckdb_data_chunk_get_vector(out, 4), n,
                 has_split && f->parts != NULL ? f->parts[b->npart - 1] : NULL);
        duckdb_vector rv = duckdb_data_chunk_get_vector(out, 5);
        if (records >= 0) {
            ((int64_t *)duckdb_vector_get_data(rv))[n] = records;
        } else {
            duckdb_vector_ensure_validity_writable(rv);
            duckdb_validity_set_row_invalid(duckdb_vector_get_validity(rv), n);
        }
        set_text(duckdb_data_chunk_get_vector(out, 6), n, source);
    }
    duckdb_data_chunk_set_size(out, n);
}

/* -- registration -------------------------------------------------------------------- */

static int register_one(duckdb_connection con, const char *name, duckdb_table_function_bind_t bind,
                        duckdb_table_function_t scan, int with_count) {
    duckdb_table_function f = new_table_function(name, bind, meta_init, scan);
    add_scan_parameters(f);
    if (with_count) {
        duckdb_logical_type boolean = duckdb_create_logical_type(DUCKDB_TYPE_BOOLEAN);
        duckdb_table_function_add_named_parameter(f, "count", boolean);
        duckdb_destroy_logical_type(&boolean);
    }
    return register_table_function(con, f);
}

int register_dataset_functions(duckdb_connection con) {
    return register_one(con, "tfrecord_schema", schema_bind, schema_scan, 0) |
           register_one(con, "tfrecord_metadata", metadata_bind, metadata_scan, 1);
}
