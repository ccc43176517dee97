/*
 * tfsql/duckdb_v2/tables.c -- the plumbing every V2 table function of the extension
 * shares: registration (v2_table), its parameters, the start of its bind and exec
 * callbacks, result columns, a one-thread cursor.
 */
#include "v2_ext.h"

/* tfrecord_scan's parameters (the source and the named options) on signature `sig`;
 * tfrecord_schema, tfrecord_metadata take the same. */
DUCKDB_V2_ERROR v2_add_scan_parameters(duckdb_v2_function_signature_handle sig,
                                       duckdb_v2_factory_handle f, v2_err *err) {
    tftype any = TFTYPE_OF(TT_ANY);
    duckdb_v2_logical_type_handle t = v2_type(f, any);
    duckdb_v2_str source = v2_str("source");
    DUCKDB_V2_ERROR rc = duckdb_v2_function_signature_add_parameter(
        sig, &source, t, NULL, DUCKDB_V2_FUNCTION_PARAMETER_KIND_POSITIONAL_ONLY, err);
    duckdb_v2_logical_type_destroy(&t);
    for (const scan_param *p = scan_parameters(); rc == V2_OK && p->name != NULL; p++) {
        tftype pt = TFTYPE_OF(p->type);
        duckdb_v2_value_handle none = NULL;
        duckdb_v2_str name = v2_str(p->name);
        tftype nt = TFTYPE_OF(p->type == TT_ANY ? TT_VARCHAR : p->type); /* no ANY value */
        duckdb_v2_logical_type_handle null_type = v2_type(f, nt);
        t = v2_type(f, pt);
        rc = duckdb_v2_value_create_null(f, null_type, &none, err);
        duckdb_v2_logical_type_destroy(&null_type);
        if (rc == V2_OK) {
            rc = duckdb_v2_function_signature_add_parameter(
                sig, &name, t, none, DUCKDB_V2_FUNCTION_PARAMETER_KIND_NAMED_ONLY, err);
        }
        duckdb_v2_value_destroy(&none);
        duckdb_v2_logical_type_destroy(&t);
    }
    return rc;
}

duckdb_v2_table_function_handle v2_new_table_function(duckdb_v2_factory_handle f, const char *name,
                                                      v2_err *err) {
    duckdb_v2_table_function_handle tf = NULL;
    duckdb_v2_str n = v2_str(name);
    if (duckdb_v2_table_function_create(f, &tf, err) != V2_OK) {
        return NULL;
    }
    fninfo *fi = (fninfo *)malloc(sizeof(fninfo));
    if (fi != NULL) {
        fi->name = name;
        fi->database = 0;
    }
    duckdb_v2_opaque data = {fi, free, NULL};
    if (fi == NULL || duckdb_v2_table_function_set_name(tf, &n, err) != V2_OK ||
        duckdb_v2_table_function_set_user_data(tf, &data, err) != V2_OK) {
        if (fi == NULL) {
            v2_fail(err, DUCKDB_V2_ERROR_RESOURCE_OUT_OF_MEMORY, "out of memory");
        }
        duckdb_v2_table_function_destroy(&tf);
        return NULL;
    }
    return tf;
}

DUCKDB_V2_ERROR v2_register_table(duckdb_v2_extension_handle ext, duckdb_v2_factory_handle f,
                                  const v2_table *t, v2_err *err) {
    duckdb_v2_table_function_handle tf = v2_new_table_function(f, t->name, err);
    duckdb_v2_function_signature_handle sig = NULL;
    if (tf == NULL) {
        return DUCKDB_V2_ERROR_API;
    }
    DUCKDB_V2_ERROR rc = duckdb_v2_table_function_get_signature(tf, &sig, err);
    if (rc == V2_OK && t->scan_parameters) {
        rc = v2_add_scan_parameters(sig, f, err);
    }
    if (rc == V2_OK && t->count_parameter) {
        tftype boolean = TFTYPE_OF(TT_BOOLEAN);
        duckdb_v2_logical_type_handle type = v2_type(f, boolean);
        duckdb_v2_value_handle none = NULL;
        duckdb_v2_str count = v2_str("count");
        rc = duckdb_v2_value_create_null(f, type, &none, err);
        if (rc == V2_OK) {
            rc = duckdb_v2_function_signature_add_parameter(
                sig, &count, type, none, DUCKDB_V2_FUNCTION_PARAMETER_KIND_NAMED_ONLY, err);
        }
        duckdb_v2_value_destroy(&none);
        duckdb_v2_logical_type_destroy(&type);
    }
    if (rc == V2_OK && t->pushdown) {
        rc = duckdb_v2_table_function_set_projection_pushdown(tf, true, err);
        if (rc == V2_OK) {
            rc = v2_set_filter_pushdown(tf, err);
        }
    }
    if (rc == V2_OK) {
        rc = duckdb_v2_table_function_set_bind_callback(tf, t->bind, err);
    }
    if (rc == V2_OK) {
        rc = duckdb_v2_table_function_set_init_global_callback(tf, t->init_global, err);
    }
    if (rc == V2_OK && t->init_local != NULL) {
        rc = duckdb_v2_table_function_set_init_local_callback(tf, t->init_local, err);
    }
    if (rc == V2_OK) {
        rc = duckdb_v2_table_function_set_exec_callback(tf, t->exec, err);
    }
    if (rc == V2_OK) {
        rc = duckdb_v2_extension_register_table_function(ext, tf, err);
    }
    duckdb_v2_table_function_destroy(&tf);
    return rc;
}

int v2_bind_start(duckdb_v2_function_bind_info_handle info, v2_ctx context, fninfo **fi,
                  duckdb_v2_factory_handle *f, v2_err *err) {
    *fi = NULL;
    duckdb_v2_function_bind_get_user_data(info, (void **)fi, NULL);
    return *fi != NULL && duckdb_v2_context_get_factory(context, f, err) == V2_OK ? 0 : -1;
}

int v2_add_columns(duckdb_v2_table_function_bind_info_handle result, duckdb_v2_factory_handle f,
                   const tfcolumn *columns, v2_err *err) {
    for (; columns->name != NULL; columns++) {
        duckdb_v2_logical_type_handle t = v2_type(f, columns->type);
        duckdb_v2_str name = v2_str(columns->name);
        DUCKDB_V2_ERROR rc = duckdb_v2_table_function_bind_add_result_column(result, &name, t, err);
        duckdb_v2_logical_type_destroy(&t);
        if (rc != V2_OK) {
            return -1;
        }
    }
    return 0;
}

int v2_exec_start(duckdb_v2_table_function_exec_info_handle info, void **bind, void **global,
                  void **vecs, size_t nvecs, size_t *cap, v2_err *err) {
    duckdb_v2_data_chunk_handle out = NULL;
    idx_t capacity = 0;
    if ((bind != NULL && duckdb_v2_table_function_exec_get_bind_data(info, bind, err) != V2_OK) ||
        (global != NULL &&
         duckdb_v2_table_function_exec_get_global_state(info, global, err) != V2_OK) ||
        duckdb_v2_table_function_exec_get_output_chunk(info, &out, err) != V2_OK ||
        duckdb_v2_data_chunk_get_capacity(out, &capacity, err) != V2_OK) {
        return -1;
    }
    for (size_t i = 0; i < nvecs; i++) {
        duckdb_v2_vector_handle vec = NULL;
        if (duckdb_v2_data_chunk_get_vector(out, (idx_t)i, &vec, err) != V2_OK) {
            return -1;
        }
        vecs[i] = vec;
    }
    *cap = (size_t)capacity;
    return 0;
}

void v2_cursor_init(duckdb_v2_table_function_init_global_info_handle info, v2_ctx context,
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
