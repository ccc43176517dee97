/*
 * tfsql/duckdb_v2/reports.c -- the V2 binding of the reports (report_book.c): the
 * connection a scan runs for, DuckDB's log, and the table functions tfrecord_last_error()
 * and tfrecord_rejects().
 *
 * The V2 API (2.0.1) gives a callback no connection identity: its client context handle
 * is a wrapper made for the call, and its internal pointer is the same for every
 * connection of the process (measured), and Python's duckdb binds statements on a
 * connection of its own. So the V2 extension keeps one report for the process: every
 * connection sees the last scan's error and rejects (each tfrecord_scan bind starts them
 * over), where the v1 extension keeps them per connection. A SequenceExample file read as
 * Examples (sequences.c) and a stretch skipped under on_corrupt := 'skip' is also written to DuckDB's log
 * (duckdb_logs: type 'tfsql', level WARNING, when logging is enabled) through the context
 * of the scan that met it.
 */
#include "v2_ext.h"

static __thread v2_ctx scan_context;

void reports_new_database(void) {}

connref v2_connection(v2_ctx context) {
    (void)context;
    connref c = {1, 0, 0}; /* one report for the process: see above */
    return c;
}

void v2_reports_enter(v2_ctx context) { scan_context = context; }

void v2_reports_leave(void) { scan_context = NULL; }

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
    duckdb_v2_function_bind_get_user_data(info, (void **)&fi, NULL);
    if (duckdb_v2_context_get_factory(context, &f, err) != V2_OK) {
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
    for (const tfcolumn *c = d->rejects ? rejects_columns : last_error_columns; c->name != NULL; c++) {
        duckdb_v2_logical_type_handle t = v2_type(f, c->type);
        duckdb_v2_str name = v2_str(c->name);
        DUCKDB_V2_ERROR rc = duckdb_v2_table_function_bind_add_result_column(result, &name, t, err);
        duckdb_v2_logical_type_destroy(&t);
        if (rc != V2_OK) {
            return;
        }
    }
    duckdb_v2_table_function_bind_set_cardinality(result, (idx_t)d->s->n, true, NULL);
}

static void report_init(duckdb_v2_table_function_init_global_info_handle info, v2_ctx context,
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
    }
}

static void report_exec(duckdb_v2_table_function_exec_info_handle info, v2_ctx context, v2_err *err) {
    (void)context;
    report_bind_data *d = NULL;
    size_t *next = NULL;
    duckdb_v2_data_chunk_handle out = NULL;
    idx_t cap = 0;
    if (duckdb_v2_table_function_exec_get_bind_data(info, (void **)&d, err) != V2_OK ||
        duckdb_v2_table_function_exec_get_global_state(info, (void **)&next, err) != V2_OK ||
        duckdb_v2_table_function_exec_get_output_chunk(info, &out, err) != V2_OK ||
        duckdb_v2_data_chunk_get_capacity(out, &cap, err) != V2_OK) {
        return;
    }
    void *vecs[18];
    for (int i = 0; i < (d->rejects ? 8 : 18); i++) {
        duckdb_v2_vector_handle vec = NULL;
        duckdb_v2_data_chunk_get_vector(out, (idx_t)i, &vec, NULL);
        vecs[i] = vec;
    }
    size_t rows = 0;
    if (report_rows(d->s, d->rejects, next, &v2_vecops, vecs, (size_t)cap, &rows)) {
        v2_fail(err, DUCKDB_V2_ERROR_RESOURCE_OUT_OF_MEMORY, "out of memory");
    }
}

static DUCKDB_V2_ERROR register_one(duckdb_v2_extension_handle ext, duckdb_v2_factory_handle f,
                                    const char *name, v2_err *err) {
    duckdb_v2_table_function_handle tf = v2_new_table_function(f, name, err);
    if (tf == NULL) {
        return DUCKDB_V2_ERROR_API;
    }
    DUCKDB_V2_ERROR rc = duckdb_v2_table_function_set_bind_callback(tf, report_bind, err);
    if (rc == V2_OK) {
        rc = duckdb_v2_table_function_set_init_global_callback(tf, report_init, err);
    }
    if (rc == V2_OK) {
        rc = duckdb_v2_table_function_set_exec_callback(tf, report_exec, err);
    }
    if (rc == V2_OK) {
        rc = duckdb_v2_extension_register_table_function(ext, tf, err);
    }
    duckdb_v2_table_function_destroy(&tf);
    return rc;
}

DUCKDB_V2_ERROR register_report_functions(duckdb_v2_extension_handle ext,
                                          duckdb_v2_factory_handle f, v2_err *err) {
    DUCKDB_V2_ERROR rc = register_one(ext, f, "tfrecord_last_error", err);
    return rc == V2_OK ? register_one(ext, f, "tfrecord_rejects", err) : rc;
}
