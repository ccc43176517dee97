/*
 * tfsql/duckdb_v2/copy_from.c -- COPY t FROM 'x.tfrecord' (FORMAT tfrecord) on the V2 API.
 */
#include "v2_ext.h"

DUCKDB_V2_ERROR register_copy_from(duckdb_v2_copy_function_handle f, v2_err *err) {
    (void)f;
    (void)err;
    return V2_OK;
}
