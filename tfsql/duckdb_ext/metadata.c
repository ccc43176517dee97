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

/* The type of output column c (a new type) and its name (a new string in *name). */
duckdb_logical_type scan_output_type(const tfbind *b, int c, char **name) {
    return logical_type(scan_output_tftype(b, c, name));
}

/* -- shared bind --------------------------------------------------------------------- */

static void add_columns(duckdb_bind_info info, const tfcolumn *columns) {
    for (; columns->name != NULL; columns++) {
        duckdb_logical_type t = logical_type(columns->type);
        duckdb_bind_add_result_column(info, columns->name, t);
        duckdb_destroy_logical_type(&t);
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
    m->b = v1_resolve(info, fname, NULL, 0, &cardinality, err);
    if (m->b == NULL) {
        free(m);
        duckdb_bind_set_error(info, err);
        return NULL;
    }
    return m;
}

typedef struct {
    size_t next;
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

/* -- tfrecord_schema ----------------------------------------------------------------- */

static void schema_bind(duckdb_bind_info info) {
    metabind *m = meta_resolve(info, "tfrecord_schema");
    if (m == NULL) {
        return;
    }
    add_columns(info, schema_columns);
    duckdb_bind_set_bind_data(info, m, metabind_free);
}

static void schema_scan(duckdb_function_info info, duckdb_data_chunk out) {
    const metabind *m = (const metabind *)duckdb_function_get_bind_data(info);
    metastate *s = (metastate *)duckdb_function_get_init_data(info);
    void *vecs[6];
    for (int i = 0; i < 6; i++) {
        vecs[i] = duckdb_data_chunk_get_vector(out, (idx_t)i);
    }
    size_t rows = 0;
    char err[ERRLEN] = "";
    if (schema_rows(m->b, &s->next, &v1_vecops, vecs, duckdb_vector_size(), &rows, err)) {
        duckdb_function_set_error(info, err);
        return;
    }
    duckdb_data_chunk_set_size(out, rows);
}

/* -- tfrecord_metadata --------------------------------------------------------------- */

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
    add_columns(info, metadata_columns);
    duckdb_bind_set_bind_data(info, m, metabind_free);
}

static void metadata_scan(duckdb_function_info info, duckdb_data_chunk out) {
    const metabind *m = (const metabind *)duckdb_function_get_bind_data(info);
    metastate *s = (metastate *)duckdb_function_get_init_data(info);
    void *vecs[7];
    for (int i = 0; i < 7; i++) {
        vecs[i] = duckdb_data_chunk_get_vector(out, (idx_t)i);
    }
    size_t rows = 0;
    char err[ERRLEN] = "";
    if (metadata_rows(m->b, m->count, &s->next, &v1_vecops, vecs, duckdb_vector_size(), &rows,
                      err)) {
        duckdb_function_set_error(info, err);
        return;
    }
    duckdb_data_chunk_set_size(out, rows);
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
