/*
 * tfsql/duckdb_v2/entry.c -- the V2 extension's entry point (tfsql_init_c_api_v2): it
 * registers every function group the extension has, in the order of `registrars`.
 */
#include "v2_ext.h"

duckdb_v2_str v2_str(const char *s) {
    duckdb_v2_str r = {s, strlen(s)};
    return r;
}

void v2_fail(v2_err *err, DUCKDB_V2_ERROR code, const char *text) {
    if (err == NULL || *err == NULL) {
        return;
    }
    duckdb_v2_str t = v2_str(text);
    duckdb_v2_error_info_set_code(*err, code);
    duckdb_v2_error_info_set_text(*err, &t);
}

duckdb_v2_value_handle v2_setting(v2_ctx context, const char *name) {
    duckdb_v2_config_handle config = NULL;
    duckdb_v2_value_handle value = NULL;
    duckdb_v2_identifier_t id = v2_str(name);
    DUCKDB_V2_SETTING_SCOPE scope; /* required by the call, not used */
    if (duckdb_v2_context_get_config(context, &config, NULL) != V2_OK ||
        duckdb_v2_config_get_option_value(config, &id, &value, &scope, NULL) != V2_OK) {
        duckdb_v2_value_destroy(&value);
        return NULL;
    }
    return value;
}

/* The function groups; each file that registers functions adds its registrar here. */
static const v2_registrar registrars[] = {register_scans, register_dataset_functions,
                                          register_report_functions, register_copy, NULL};

DUCKDB_EXTENSION_ENTRYPOINT(duckdb_v2_extension_handle extension, duckdb_v2_context_handle context,
                            duckdb_v2_error_info_handle *err) {
    duckdb_v2_factory_handle f = NULL;
    if (duckdb_v2_context_get_factory(context, &f, err) != V2_OK) {
        return;
    }
    crc_init(); /* the core's CRC tables (framing, verify) */
    reports_new_database();
    for (size_t i = 0; registrars[i] != NULL; i++) {
        if (registrars[i](extension, f, err) != V2_OK) {
            return;
        }
    }
}
