/*
 * tfsql/duckdb_v2/reports.c -- what the engine-neutral files report through their
 * binding (ext_common.h: reports_*). SKELETON: nothing is kept yet; the V2 scan's
 * reports (DuckDB's log, tfrecord_rejects(), tfrecord_last_error()) replace these.
 */
#include "v2_ext.h"

void reports_new_database(void) {}

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
    (void)e;
}
