/*
 * tfsql/duckdb_ext/entry.c -- the DuckDB extension's entry point: it fills the C API
 * table (api_version.c), registers tfrecord_scan and its alias read_tfrecord,
 * tfrecord_schema, tfrecord_metadata, tfrecord_last_error, tfrecord_rejects, COPY (FORMAT
 * tfrecord) where the engine has copy functions, and the replacement scan for
 * FROM 'x.tfrecord' / globs.
 */

#include "duckdb_ext.h"

static void tf_replacement(duckdb_replacement_scan_info info, const char *table_name, void *data) {
    (void)data;
    if (!is_tfrecord_name(table_name)) {
        return;
    }
    duckdb_replacement_scan_set_function_name(info, "tfrecord_scan");
    duckdb_value v = duckdb_create_varchar(table_name);
    duckdb_replacement_scan_add_parameter(info, v);
    duckdb_destroy_value(&v);
}

/* tfrecord_scan's parameters: the source and its named options (tfrecord_schema,
 * tfrecord_metadata and COPY ... FROM take the same). */
void add_scan_parameters(duckdb_table_function f) {
    duckdb_logical_type any = duckdb_create_logical_type(DUCKDB_TYPE_ANY);
    duckdb_table_function_add_parameter(f, any);
    duckdb_destroy_logical_type(&any);
    add_named_parameters(f);
}

duckdb_table_function new_table_function(const char *name, duckdb_table_function_bind_t bind,
                                          duckdb_table_function_init_t init,
                                          duckdb_table_function_t scan) {
    duckdb_table_function f = duckdb_create_table_function();
    duckdb_table_function_set_name(f, name);
    set_function_info(f, name);
    duckdb_table_function_set_bind(f, bind);
    duckdb_table_function_set_init(f, init);
    duckdb_table_function_set_function(f, scan);
    return f;
}

int register_table_function(duckdb_connection con, duckdb_table_function f) {
    duckdb_state st = duckdb_register_table_function(con, f);
    duckdb_destroy_table_function(&f);
    return st == DuckDBSuccess ? 0 : -1;
}

static int register_scan(duckdb_connection con, const char *name) {
    duckdb_table_function f = new_table_function(name, tf_bind, tf_init, tf_scan);
    add_scan_parameters(f);
    duckdb_table_function_set_local_init(f, tf_local_init);
    duckdb_table_function_supports_projection_pushdown(f, true);
    return register_table_function(con, f);
}

/* The entry point. Not DUCKDB_EXTENSION_ENTRYPOINT_CUSTOM: that asks for the headers'
 * C API version (v1.5.6), which DuckDB 1.4 refuses; capi_load (api_version.c) asks for
 * v1.2.0 and, on DuckDB >= 1.5.6 only, for v1.5.6 (COPY functions). */
DUCKDB_EXTENSION_EXTERN_C_GUARD_OPEN DUCKDB_CAPI_ENTRY_VISIBILITY DUCKDB_EXTENSION_API bool
DUCKDB_EXTENSION_GLUE(DUCKDB_EXTENSION_NAME, _init_c_api)(duckdb_extension_info info,
                                                          struct duckdb_extension_access *access) {
    char err[ERRLEN];
    if (capi_load(info, access, err)) {
        access->set_error(info, err);
        return false;
    }
    crc_init();
    reports_new_database();
    duckdb_database *db = access->get_database(info);
    duckdb_connection con;
    if (db == NULL || duckdb_connect(*db, &con) == DuckDBError) {
        access->set_error(info, "tfsql: cannot open a connection to register its functions");
        return false;
    }
    int rc = register_scan(con, "tfrecord_scan") | register_scan(con, "read_tfrecord") |
             register_dataset_functions(con) | register_report_functions(con) | register_copy(con);
    duckdb_disconnect(&con);
    if (rc) {
        access->set_error(info, "tfsql: cannot register tfrecord_scan, read_tfrecord, "
                                "tfrecord_schema, tfrecord_metadata, tfrecord_last_error, "
                                "tfrecord_rejects or COPY (FORMAT tfrecord)");
        return false;
    }
    duckdb_add_replacement_scan(*db, tf_replacement, NULL, NULL);
    return true;
}
DUCKDB_EXTENSION_EXTERN_C_GUARD_CLOSE
