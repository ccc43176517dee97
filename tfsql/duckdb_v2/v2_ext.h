/*
 * tfsql/duckdb_v2/v2_ext.h -- declarations shared by the V2 extension's files: the
 * binding of the C core (tfsql/core/) and of the engine-neutral extension files
 * (tfsql/duckdb_ext/ext_common.h) to DuckDB 2's V2 C API (duckdb_extension_v2.h).
 *
 * The V2 API is "unstable": the binary loads only in the exact DuckDB version whose
 * headers built it (its footer says C_STRUCT_UNSTABLE, vX.Y.Z; setup.py and
 * `tfsql build-extension` build it: tfsql/extension_build.py). Its entry symbol is
 * tfsql_init_c_api_v2, from the file name tfsql.duckdb_extension. Files:
 *
 *   entry.c     the entry point: registers every function of the files below
 *   copy_to.c   COPY ... TO (FORMAT tfrecord): columns -> features (copy_encode.c), the
 *               files (copy_files.c); v2_set_error
 *   copy_from.c COPY t FROM (FORMAT tfrecord): not yet (needs the V2 scan)
 *
 * Traps of the V2 headers (measured; ../shared/design/duckdb-v2-probe): a file includes
 * either this header or duckdb_ext.h, never both; DUCKDB_EXTENSION_EXTERN comes before
 * any API use; a value's type is duckdb_v2_value_get_logical_type (value_get_type reads a
 * TYPE-typed value); duckdb_v2_vector_set_size comes before duckdb_v2_vector_set_value.
 */
#ifndef TFSQL_DUCKDB_V2_EXT_H
#define TFSQL_DUCKDB_V2_EXT_H

#include "ext_common.h"

#define DUCKDB_V2_API_ALLOW_UNSTABLE 1
#define DUCKDB_EXTENSION_NAME tfsql
#include "duckdb_extension_v2.h"
/* The API table is defined once, by the entry point (entry.c); every other file uses it. */
DUCKDB_EXTENSION_EXTERN

typedef duckdb_v2_error_info_handle v2_err;
typedef duckdb_v2_context_handle v2_ctx;
#define V2_OK DUCKDB_V2_ERROR_NONE

/* A duckdb_v2_str over a C string (borrowed). */
duckdb_v2_str v2_str(const char *s);

/* -- entry.c ------------------------------------------------------------------------- */

/* Each group of functions registers itself on `ext`; V2_OK, or an error in *err. */
typedef DUCKDB_V2_ERROR (*v2_registrar)(duckdb_v2_extension_handle ext, duckdb_v2_factory_handle f,
                                        v2_err *err);

/* -- copy_to.c ----------------------------------------------------------------------- */

/* Fail a callback: its live error slot `err` gets `text`. */
void v2_set_error(v2_err *err, const char *text);
/* The same with an error code (DUCKDB_V2_ERROR_IO_GENERAL: DuckDB's IOException). */
void v2_set_error_code(v2_err *err, DUCKDB_V2_ERROR code, const char *text);
/* COPY (FORMAT tfrecord), both directions. */
DUCKDB_V2_ERROR register_copy(duckdb_v2_extension_handle ext, duckdb_v2_factory_handle f, v2_err *err);

/* -- copy_from.c --------------------------------------------------------------------- */

/* Add the COPY ... FROM side to the copy function `f` (before it is registered). */
DUCKDB_V2_ERROR register_copy_from(duckdb_v2_copy_function_handle f, v2_err *err);

#endif /* TFSQL_DUCKDB_V2_EXT_H */
