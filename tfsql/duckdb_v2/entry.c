/*
 * tfsql/duckdb_v2/entry.c -- the V2 extension's entry point (tfsql_init_c_api_v2): it
 * registers every function group the extension has, in the order of `registrars`.
 */
#include "v2_ext.h"

duckdb_v2_str v2_str(const char *s) {
    duckdb_v2_str r = {s, strlen(s)};
    return r;
}

/* The function groups; each file that registers functions adds its registrar here. */
static const v2_registrar registrars[] = {register_scans, register_dataset_functions,
                                              register_report_functions, NULL};

DUCKDB_EXTENSION_ENTRYPOINT(duckdb_v2_extension_handle extension, duckdb_v2_context_handle context,
                            duckdb_v2_error_info_handle *err) {
    duckdb_v2_factory_handle f = NULL;
    if (duckdb_v2_context_get_factory(context, &f, err) != V2_OK) {
        return;
    }
    crc_init();
    reports_new_database();
    for (size_t i = 0; registrars[i] != NULL; i++) {
        if (registrars[i](extension, f, err) != V2_OK) {
            return;
        }
    }
}
