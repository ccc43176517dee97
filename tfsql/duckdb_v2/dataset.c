/*
 * tfsql/duckdb_v2/dataset.c -- the V2 binding of tfrecord_schema(...) and
 * tfrecord_metadata(...): their bind (resolve.c) and rows (dataset_rows.c).
 */
#include "v2_ext.h"

static void meta_bind(duckdb_v2_function_bind_info_handle info,
                      duckdb_v2_table_function_bind_info_handle result, v2_ctx context, v2_err *err) {
    fninfo *fi = NULL;
    duckdb_v2_factory_handle f = NULL;
    if (v2_bind_start(info, context, &fi, &f, err) != 0) {
        return;
    }
    metabind *m = (metabind *)calloc(1, sizeof(metabind));
    char message[ERRLEN] = "out of memory";
    uint64_t cardinality = 0;
    tfargs a;
    memset(&a, 0, sizeof a);
    if (m != NULL && v2_bind_args(info, &a, err) != 0) {
        tfargs_free(&a);
        free(m);
        return;
    }
    if (m != NULL) {
        const tfval *count = tfargs_get(&a, "count");
        m->count = count != NULL && count->kind == TFV_BOOL && count->i != 0;
        v2_files_enter(context);
        m->b = scan_resolve(&a, fi->name, v2_connection(context), &cardinality, message);
        v2_files_leave();
    }
    tfargs_free(&a);
    if (m == NULL || m->b == NULL) {
        free(m);
        v2_fail(err, DUCKDB_V2_ERROR_QUERY_BINDER, message);
        return;
    }
    duckdb_v2_opaque data = {m, metabind_free, NULL};
    if (duckdb_v2_function_bind_set_bind_data(info, &data, err) != V2_OK) {
        metabind_free(m);
        return;
    }
    m->metadata = strcmp(fi->name, "tfrecord_metadata") == 0;
    v2_add_columns(result, f, m->metadata ? metadata_columns : schema_columns, err);
}

static void meta_exec(duckdb_v2_table_function_exec_info_handle info, v2_ctx context, v2_err *err) {
    metabind *m = NULL;
    size_t *next = NULL, cap = 0, rows = 0;
    void *vecs[7];
    if (v2_exec_start(info, (void **)&m, (void **)&next, NULL, 0, &cap, err) != 0 ||
        v2_exec_start(info, NULL, NULL, vecs, m->metadata ? 7 : 6, &cap, err) != 0) {
        return;
    }
    char message[ERRLEN] = "";
    v2_files_enter(context); /* count := true walks the files */
    int rc = m->metadata ? metadata_rows(m->b, m->count, next, &v2_vecops, vecs, cap, &rows, message)
                         : schema_rows(m->b, next, &v2_vecops, vecs, cap, &rows, message);
    v2_files_leave();
    if (rc) {
        v2_fail(err, DUCKDB_V2_ERROR_INPUT_INVALID, message);
    }
}

DUCKDB_V2_ERROR register_dataset_functions(duckdb_v2_extension_handle ext,
                                           duckdb_v2_factory_handle f, v2_err *err) {
    v2_table schema = {"tfrecord_schema", 1, 0, 0, meta_bind, v2_cursor_init, NULL, meta_exec, NULL};
    v2_table metadata = {"tfrecord_metadata", 1, 1, 0, meta_bind, v2_cursor_init, NULL, meta_exec, NULL};
    DUCKDB_V2_ERROR rc = v2_register_table(ext, f, &schema, err);
    return rc == V2_OK ? v2_register_table(ext, f, &metadata, err) : rc;
}
