/*
 * tfsql/duckdb_v2/dataset.c -- the V2 binding of tfrecord_schema(...) and
 * tfrecord_metadata(...): their bind (resolve.c) and rows (dataset_rows.c).
 */
#include "v2_ext.h"

typedef struct {
    tfbind *b;
    int count; /* tfrecord_metadata's count := true */
    int metadata;
} metabind;

static void metabind_free(void *p) {
    metabind *m = (metabind *)p;
    if (m != NULL) {
        tfbind_free(m->b);
        free(m);
    }
}

static void meta_bind(duckdb_v2_function_bind_info_handle info,
                      duckdb_v2_table_function_bind_info_handle result, v2_ctx context, v2_err *err) {
    fninfo *fi = NULL;
    duckdb_v2_factory_handle f = NULL;
    duckdb_v2_function_bind_get_user_data(info, (void **)&fi, NULL);
    if (duckdb_v2_context_get_factory(context, &f, err) != V2_OK) {
        return;
    }
    metabind *m = (metabind *)calloc(1, sizeof(metabind));
    char message[ERRLEN] = "out of memory";
    uint64_t cardinality = 0;
    tfargs a;
    if (m != NULL && v2_bind_args(info, &a) == 0) {
        const tfval *count = tfargs_get(&a, "count");
        m->count = count != NULL && count->kind == TFV_BOOL && count->i != 0;
        m->metadata = strcmp(fi->name, "tfrecord_metadata") == 0;
        m->b = scan_resolve(&a, fi->name, v2_connection(context), &cardinality, message);
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
    for (const tfcolumn *c = m->metadata ? metadata_columns : schema_columns; c->name != NULL; c++) {
        duckdb_v2_logical_type_handle t = v2_type(f, c->type);
        duckdb_v2_str name = v2_str(c->name);
        DUCKDB_V2_ERROR rc = duckdb_v2_table_function_bind_add_result_column(result, &name, t, err);
        duckdb_v2_logical_type_destroy(&t);
        if (rc != V2_OK) {
            return;
        }
    }
}

static void meta_init(duckdb_v2_table_function_init_global_info_handle info, v2_ctx context,
                      v2_err *err) {
    (void)context;
    size_t *next = (size_t *)calloc(1, sizeof(size_t));
    duckdb_v2_opaque state = {next, free, NULL};
    if (next == NULL) {
        v2_fail(err, DUCKDB_V2_ERROR_RESOURCE_OUT_OF_MEMORY, "out of memory");
        return;
    }
    if (duckdb_v2_table_function_init_global_set_global_state(info, &state, err) != V2_OK) {
        free(next);
        return;
    }
    duckdb_v2_table_function_init_global_set_max_threads(info, 1, NULL);
}

static void meta_exec(duckdb_v2_table_function_exec_info_handle info, v2_ctx context, v2_err *err) {
    (void)context;
    metabind *m = NULL;
    size_t *next = NULL;
    duckdb_v2_data_chunk_handle out = NULL;
    idx_t cap = 0;
    if (duckdb_v2_table_function_exec_get_bind_data(info, (void **)&m, err) != V2_OK ||
        duckdb_v2_table_function_exec_get_global_state(info, (void **)&next, err) != V2_OK ||
        duckdb_v2_table_function_exec_get_output_chunk(info, &out, err) != V2_OK ||
        duckdb_v2_data_chunk_get_capacity(out, &cap, err) != V2_OK) {
        return;
    }
    void *vecs[7];
    int ncols = m->metadata ? 7 : 6;
    for (int i = 0; i < ncols; i++) {
        duckdb_v2_vector_handle vec = NULL;
        duckdb_v2_data_chunk_get_vector(out, (idx_t)i, &vec, NULL);
        vecs[i] = vec;
    }
    char message[ERRLEN] = "";
    size_t rows = 0;
    int rc = m->metadata ? metadata_rows(m->b, m->count, next, &v2_vecops, vecs, (size_t)cap, &rows,
                                         message)
                         : schema_rows(m->b, next, &v2_vecops, vecs, (size_t)cap, &rows, message);
    if (rc) {
        v2_fail(err, DUCKDB_V2_ERROR_INPUT_INVALID, message);
    }
}

static DUCKDB_V2_ERROR register_one(duckdb_v2_extension_handle ext, duckdb_v2_factory_handle f,
                                    const char *name, int with_count, v2_err *err) {
    duckdb_v2_table_function_handle tf = v2_new_table_function(f, name, err);
    duckdb_v2_function_signature_handle sig = NULL;
    if (tf == NULL) {
        return DUCKDB_V2_ERROR_API;
    }
    DUCKDB_V2_ERROR rc = duckdb_v2_table_function_get_signature(tf, &sig, err);
    if (rc == V2_OK) {
        rc = v2_add_scan_parameters(sig, f, err);
    }
    if (rc == V2_OK && with_count) {
        tftype boolean = {TT_BOOLEAN, 0};
        duckdb_v2_logical_type_handle t = v2_type(f, boolean);
        duckdb_v2_value_handle none = NULL;
        duckdb_v2_str count = v2_str("count");
        rc = duckdb_v2_value_create_null(f, t, &none, err);
        if (rc == V2_OK) {
            rc = duckdb_v2_function_signature_add_parameter(
                sig, &count, t, none, DUCKDB_V2_FUNCTION_PARAMETER_KIND_NAMED_ONLY, err);
        }
        duckdb_v2_value_destroy(&none);
        duckdb_v2_logical_type_destroy(&t);
    }
    if (rc == V2_OK) {
        rc = duckdb_v2_table_function_set_bind_callback(tf, meta_bind, err);
    }
    if (rc == V2_OK) {
        rc = duckdb_v2_table_function_set_init_global_callback(tf, meta_init, err);
    }
    if (rc == V2_OK) {
        rc = duckdb_v2_table_function_set_exec_callback(tf, meta_exec, err);
    }
    if (rc == V2_OK) {
        rc = duckdb_v2_extension_register_table_function(ext, tf, err);
    }
    duckdb_v2_table_function_destroy(&tf);
    return rc;
}

DUCKDB_V2_ERROR register_dataset_functions(duckdb_v2_extension_handle ext,
                                           duckdb_v2_factory_handle f, v2_err *err) {
    DUCKDB_V2_ERROR rc = register_one(ext, f, "tfrecord_schema", 0, err);
    return rc == V2_OK ? register_one(ext, f, "tfrecord_metadata", 1, err) : rc;
}
