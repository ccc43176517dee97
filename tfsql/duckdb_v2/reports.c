/*
 * tfsql/duckdb_v2/reports.c -- what the engine-neutral files report through the V2
 * binding (ext_common.h: reports_*): a stretch skipped under on_corrupt := 'skip' is
 * written to DuckDB's log (duckdb_logs, type 'tfsql', level WARNING) through the context
 * of the scan that met it. The connection's last error and its rejects
 * (tfrecord_last_error(), tfrecord_rejects()) are not kept yet on V2.
 */
#include "v2_ext.h"

static __thread v2_ctx scan_context;

void reports_new_database(void) {}

connref v2_connection(v2_ctx context) {
    (void)context;
    connref c = {0, 0, 0};
    return c;
}

void v2_reports_enter(v2_ctx context) { scan_context = context; }

void v2_reports_leave(void) { scan_context = NULL; }

void reports_begin_scan(connref c, int skipping) {
    (void)c;
    (void)skipping;
}

void reports_scan_failed(connref c, const char *message) {
    (void)c;
    (void)message;
}

void reports_skipped(connref c, const tferror *e) {
    (void)c;
    if (scan_context == NULL) {
        return;
    }
    char text[ERRLEN];
    tferror_skipped_message(text, sizeof text, e);
    duckdb_v2_str type = v2_str("tfsql"), message = v2_str(text);
    duckdb_v2_context_log(scan_context, DUCKDB_V2_LOG_LEVEL_WARNING, &type, &message, NULL);
}
