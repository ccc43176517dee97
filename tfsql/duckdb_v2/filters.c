/*
 * tfsql/duckdb_v2/filters.c -- filter pushdown of tfrecord_scan: predicates on the hive
 * partition columns, `split` and the filename column prune files before they are opened.
 * SKELETON: no predicate is accepted yet; DuckDB filters above the scan.
 */
#include "v2_ext.h"

DUCKDB_V2_ERROR v2_set_filter_pushdown(duckdb_v2_table_function_handle tf, v2_err *err) {
    (void)tf;
    (void)err;
    return V2_OK;
}

void v2_prune_files(const tfbind *b, tfglobal *g) {
    (void)b;
    (void)g;
}
