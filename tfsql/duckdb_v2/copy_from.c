/*
 * tfsql/duckdb_v2/copy_from.c -- COPY t FROM 'x.tfrecord' (FORMAT tfrecord) on the V2 API.
 *
 * NOT YET: it needs the V2 scan (tfrecord_scan's bind and exec on the V2 API, built on
 * the engine-neutral resolve / scanning files) to read the files, then copy_cast.c's
 * casts to the table's columns, as the v1 binding's copy_from.c does. Until then the
 * copy function has no COPY ... FROM side, and DuckDB says "COPY FROM is not supported
 * for FORMAT tfrecord" (load the v1 binary, or use INSERT INTO t SELECT * FROM
 * tfrecord_scan(...)).
 */
#include "v2_ext.h"

DUCKDB_V2_ERROR register_copy_from(duckdb_v2_copy_function_handle f, v2_err *err) {
    (void)f;
    (void)err;
    return V2_OK;
}
