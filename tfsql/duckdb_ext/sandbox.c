/*
 * tfsql/duckdb_ext/sandbox.c -- the v1 binding's answer to `SET enable_external_access =
 * false`: DuckDB's own readers then refuse every file outside allowed_directories /
 * allowed_paths, and so must the extension's table functions, which read files with the
 * C library rather than DuckDB's file system.
 *
 * The V2 build routes every path through DuckDB's file system in that case
 * (tfsql/duckdb_v2/files.c), so DuckDB's rules apply as they are. The v1 C API has no
 * file system, so this build cannot ask which paths DuckDB allows: it refuses every
 * tfsql read while external access is off, naming the setting. It reads the setting with
 * duckdb_client_context_get_config_option, a C API v1.5.6 slot: DuckDB 1.4 gives the
 * extension no way to see it (documented in docs/duckdb-extension.md).
 *
 *     SET enable_external_access = false;
 *     SELECT * FROM tfrecord_scan('x.tfrecord');   -- Permission Error: ... (v1 build)
 */
#include "duckdb_ext.h"

int v1_external_access_refused(duckdb_bind_info info, const char *fname, char *err) {
    if (!capi_has_v156()) {
        return 0;
    }
    duckdb_client_context context = NULL;
    duckdb_table_function_get_client_context(info, &context);
    if (context == NULL) {
        return 0;
    }
    duckdb_value value = duckdb_client_context_get_config_option(context, "enable_external_access", NULL);
    int refused = value != NULL && !duckdb_get_bool(value);
    duckdb_destroy_value(&value);
    duckdb_destroy_client_context(&context);
    if (refused) {
        snprintf(err, ERRLEN,
                 "Permission Error: %s cannot read files while enable_external_access is false: "
                 "this build of the tfsql extension (for DuckDB %s) cannot ask DuckDB which paths "
                 "allowed_directories allows; use DuckDB 2.x, whose tfsql build applies them",
                 fname, capi_engine_version());
    }
    return refused;
}
