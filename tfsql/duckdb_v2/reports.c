/*
 * tfsql/duckdb_v2/reports.c -- the V2 binding of the reports (report_book.c): the
 * connection a scan runs for, DuckDB's log, and the table functions tfrecord_last_error()
 * and tfrecord_rejects().
 *
 * The V2 API (2.0.1) gives a callback no connection identity: its client context handle
 * is a wrapper made for the call, and its internal pointer is the same for every
 * connection of the process (measured). But a context reaches its connection's session
 * settings, so the extension registers a setting of its own, tfsql_connection_id (a
 * BIGINT, SESSION scope only, 0 by default), and gives a connection a fresh id there on
 * its first tfsql call: the reports are then kept per connection as in the v1 build (a
 * Python cursor is a connection of its own). A SequenceExample file read as
 * Examples (inference.c: tfsql_looks_like_sequence_example) and a stretch skipped under
 * on_corrupt := 'skip' is also written to DuckDB's log
 * (duckdb_logs: type 'tfsql', level WARNING, when logging is enabled) through the context
 * of the scan that met it.
 */
#include "v2_ext.h"

static __thread v2_ctx scan_context;

void reports_new_database(void) {}

#define CONNECTION_OPTION "tfsql_connection_id"

static uint64_t connections; /* the last id given to a connection */

/* The connection's id: the session value of the extension's own option, given on first
 * use. 0 (the process-wide report) when it cannot be read or written. */
connref v2_connection(v2_ctx context) {
    connref c = {1, 0, 0};
    duckdb_v2_config_handle config = NULL;
    duckdb_v2_factory_handle f = NULL;
    duckdb_v2_identifier_t name = v2_str(CONNECTION_OPTION);
    duckdb_v2_value_handle value = v2_setting(context, CONNECTION_OPTION);
    int64_t id = 0;
    if (value == NULL || duckdb_v2_value_get_bigint(value, &id, NULL) != V2_OK) {
        id = 0;
    }
    duckdb_v2_value_destroy(&value);
    if (id <= 0 && duckdb_v2_context_get_config(context, &config, NULL) == V2_OK &&
        duckdb_v2_context_get_factory(context, &f, NULL) == V2_OK) {
        int64_t fresh = (int64_t)__atomic_add_fetch(&connections, 1, __ATOMIC_RELAXED);
        if (duckdb_v2_value_create_bigint(f, fresh, &value, NULL) == V2_OK &&
            duckdb_v2_config_set_option_value(config, &name, value, DUCKDB_V2_SETTING_SCOPE_SESSION, NULL) ==
                V2_OK) {
            id = fresh;
        }
        duckdb_v2_value_destroy(&value);
    }
    c.id = id > 0 ? (uint64_t)id : 0;
    return c;
}

/* tfsql_connection_id: a session option only the extension writes. */
static DUCKDB_V2_ERROR register_connection_option(duckdb_v2_extension_handle ext, duckdb_v2_factory_handle f,
                                                  v2_err *err) {
    duckdb_v2_custom_option_handle option = NULL;
    duckdb_v2_value_handle zero = NULL;
    duckdb_v2_identifier_t name = v2_str(CONNECTION_OPTION);
    duckdb_v2_str about = v2_str("set by the tfsql extension: the connection its tfrecord_last_error() and "
                                 "tfrecord_rejects() report on (0 until its first tfsql call)");
    DUCKDB_V2_ERROR rc = duckdb_v2_custom_option_create(f, &option, err);
    rc = rc == V2_OK ? duckdb_v2_custom_option_set_name(option, &name, err) : rc;
    rc = rc == V2_OK ? duckdb_v2_value_create_bigint(f, 0, &zero, err) : rc;
    rc = rc == V2_OK ? duckdb_v2_custom_option_set_default_value(option, zero, err) : rc;
    rc = rc == V2_OK ? duckdb_v2_custom_option_set_description(option, &about, err) : rc;
    rc = rc == V2_OK ? duckdb_v2_custom_option_set_supports_scope(option, DUCKDB_V2_SETTING_SCOPE_GLOBAL, false, err)
                     : rc;
    rc = rc == V2_OK ? duckdb_v2_custom_option_set_default_scope(option, DUCKDB_V2_SETTING_SCOPE_SESSION, err) : rc;
    rc = rc == V2_OK ? duckdb_v2_extension_register_custom_option(ext, option, err) : rc;
    duckdb_v2_value_destroy(&zero);
    duckdb_v2_custom_option_destroy(&option);
    return rc;
}

void v2_reports_enter(v2_ctx context) {
    scan_context = context;
    v2_files_enter(context); /* the scan's files: DuckDB's file system for URLs */
}

void v2_reports_leave(void) {
    scan_context = NULL;
    v2_files_leave();
}

void reports_log_skip(const char *text) { reports_warning(text); }

void reports_warning(const char *text) {
    if (scan_context == NULL) {
        return;
    }
    duckdb_v2_str type = v2_str("tfsql"), message = v2_str(text);
    duckdb_v2_context_log(scan_context, DUCKDB_V2_LOG_LEVEL_WARNING, &type, &message, NULL);
}

/* -- tfrecord_last_error() and tfrecord_rejects() ------------------------------------------ */

typedef struct {
    snapshot *s;
    int rejects;
} report_bind_data;

static void report_bind_free(void *p) {
    report_bind_data *d = (report_bind_data *)p;
    if (d != NULL) {
        snapshot_free(d->s);
        free(d);
    }
}

static void report_bind(duckdb_v2_function_bind_info_handle info,
                        duckdb_v2_table_function_bind_info_handle result, v2_ctx context, v2_err *err) {
    fninfo *fi = NULL;
    duckdb_v2_factory_handle f = NULL;
    if (v2_bind_start(info, context, &fi, &f, err) != 0) {
        return;
    }
    report_bind_data *d = (report_bind_data *)calloc(1, sizeof(report_bind_data));
    if (d != NULL) {
        d->rejects = strcmp(fi->name, "tfrecord_rejects") == 0;
        d->s = reports_snapshot(v2_connection(context), d->rejects);
    }
    if (d == NULL || d->s == NULL) {
        free(d);
        v2_fail(err, DUCKDB_V2_ERROR_RESOURCE_OUT_OF_MEMORY, "out of memory");
        return;
    }
    duckdb_v2_opaque data = {d, report_bind_free, NULL};
    if (duckdb_v2_function_bind_set_bind_data(info, &data, err) != V2_OK) {
        report_bind_free(d);
        return;
    }
    if (v2_add_columns(result, f, d->rejects ? rejects_columns : last_error_columns, err) == 0) {
        duckdb_v2_table_function_bind_set_cardinality(result, (idx_t)d->s->n, true, NULL);
    }
}

static void report_exec(duckdb_v2_table_function_exec_info_handle info, v2_ctx context, v2_err *err) {
    (void)context;
    report_bind_data *d = NULL;
    size_t *next = NULL, cap = 0, rows = 0;
    void *vecs[18];
    if (v2_exec_start(info, (void **)&d, (void **)&next, NULL, 0, &cap, err) != 0 ||
        v2_exec_start(info, NULL, NULL, vecs, d->rejects ? 8 : 18, &cap, err) != 0) {
        return;
    }
    if (report_rows(d->s, d->rejects, next, &v2_vecops, vecs, cap, &rows)) {
        v2_fail(err, DUCKDB_V2_ERROR_RESOURCE_OUT_OF_MEMORY, "out of memory");
    }
}

DUCKDB_V2_ERROR register_report_functions(duckdb_v2_extension_handle ext,
                                          duckdb_v2_factory_handle f, v2_err *err) {
    v2_table last = {"tfrecord_last_error", 0, 0, 0, report_bind, v2_cursor_init, NULL, report_exec, NULL};
    v2_table rejects = {"tfrecord_rejects", 0, 0, 0, report_bind, v2_cursor_init, NULL, report_exec, NULL};
    DUCKDB_V2_ERROR rc = register_connection_option(ext, f, err);
    rc = rc == V2_OK ? v2_register_table(ext, f, &last, err) : rc;
    return rc == V2_OK ? v2_register_table(ext, f, &rejects, err) : rc;
}
