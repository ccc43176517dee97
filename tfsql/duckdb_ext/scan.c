/*
 * tfsql/duckdb_ext/scan.c -- the v1 binding of tfrecord_scan's scan (scanning.c): the
 * projected columns, the per-thread states, DuckDB's vectors through vecops.
 */

#include "duckdb_ext.h"

void tf_init(duckdb_init_info info) {
    tfbind *b = (tfbind *)duckdb_init_get_bind_data(info);
    idx_t n = duckdb_init_get_column_count(info);
    size_t *columns = (size_t *)calloc(n ? n : 1, sizeof(size_t));
    char err[ERRLEN] = "out of memory";
    for (idx_t i = 0; columns != NULL && i < n; i++) {
        columns[i] = (size_t)duckdb_init_get_column_index(info, i);
    }
    tfglobal *g = columns != NULL ? scan_global_new(b, columns, (size_t)n, err) : NULL;
    free(columns);
    if (g != NULL && scan_plan_units(b, g, err)) {
        scan_global_free(g);
        g = NULL;
    }
    if (g == NULL) {
        duckdb_init_set_error(info, err);
        return;
    }
    duckdb_init_set_max_threads(info, g->nunits ? g->nunits : 1); /* a thread per unit at most */
    duckdb_init_set_init_data(info, g, scan_global_free);
}

void tf_local_init(duckdb_init_info info) {
    tflocal *l = scan_local_new();
    if (l == NULL) {
        duckdb_init_set_error(info, "out of memory");
        return;
    }
    duckdb_init_set_init_data(info, l, scan_local_free);
}

/* -- vecops over v1 vectors ------------------------------------------------------------- */

static void *v1_data(void *vec) { return duckdb_vector_get_data((duckdb_vector)vec); }

static uint64_t *v1_validity(void *vec) {
    duckdb_vector_ensure_validity_writable((duckdb_vector)vec);
    return duckdb_vector_get_validity((duckdb_vector)vec);
}

static int v1_set_text(void *vec, size_t row, const char *p, size_t len) {
    duckdb_vector_assign_string_element_len((duckdb_vector)vec, (idx_t)row, p, (idx_t)len);
    return 0;
}

static void *v1_list_resize(void *vec, size_t n) {
    if (duckdb_list_vector_reserve((duckdb_vector)vec, (idx_t)n) == DuckDBError ||
        duckdb_list_vector_set_size((duckdb_vector)vec, (idx_t)n) == DuckDBError) {
        return NULL;
    }
    return duckdb_list_vector_get_child((duckdb_vector)vec);
}

static void *v1_list_child(void *vec, size_t *count) {
    *count = (size_t)duckdb_list_vector_get_size((duckdb_vector)vec);
    return duckdb_list_vector_get_child((duckdb_vector)vec);
}

static void *v1_struct_child(void *vec, size_t i) {
    return duckdb_struct_vector_get_child((duckdb_vector)vec, (idx_t)i);
}

static void *v1_array_child(void *vec, size_t n) {
    (void)n; /* an ARRAY's child holds rows times its size already */
    return duckdb_array_vector_get_child((duckdb_vector)vec);
}

const vecops v1_vecops = {NULL,           v1_data,       v1_validity,     v1_set_text,
                          v1_list_resize, v1_list_child, v1_struct_child, v1_array_child};

void tf_scan(duckdb_function_info info, duckdb_data_chunk output) {
    tfbind *b = (tfbind *)duckdb_function_get_bind_data(info);
    tfglobal *g = (tfglobal *)duckdb_function_get_init_data(info);
    tflocal *l = (tflocal *)duckdb_function_get_local_init_data(info);
    char err[ERRLEN] = "";
    void *vecs[64];
    void **v = g->nproj <= 64 ? vecs : (void **)malloc((size_t)g->nproj * sizeof(void *));
    if (v == NULL) {
        duckdb_function_set_error(info, "out of memory");
        return;
    }
    for (int i = 0; i < g->nproj; i++) {
        v[i] = duckdb_data_chunk_get_vector(output, (idx_t)i);
    }
    size_t rows = 0;
    int rc = scan_next(b, g, l, &v1_vecops, v, duckdb_vector_size(), &rows, err);
    if (v != vecs) {
        free(v);
    }
    if (rc < 0) {
        const fninfo *fi = (const fninfo *)duckdb_function_get_extra_info(info);
        scan_failed_message(b, fi != NULL ? fi->name : "tfrecord_scan", err);
        duckdb_function_set_error(info, err);
        return;
    }
    duckdb_data_chunk_set_size(output, rows);
}
