/*
 * tfsql/duckdb_ext/copy.h -- the extension's COPY functions and its dataset table
 * functions (private to the extension): COPY ... TO / FROM (FORMAT tfrecord),
 * tfrecord_schema(...) and tfrecord_metadata(...), and the gzip / zlib deflater they
 * write through.
 */
#ifndef TFSQL_DUCKDB_EXT_COPY_H
#define TFSQL_DUCKDB_EXT_COPY_H

/* -- api_version.c: the C API function table, filled for the engine that loads us ----- */

/* Fill the function table: the v1.2.0 part always, everything up to v1.5.6 (COPY
 * functions, result column types of a COPY FROM bind) only when the engine is at least
 * DuckDB 1.5.6. 0, or -1 (with `err` set) when the engine gives no v1.2.0 table. */
int capi_load(duckdb_extension_info info, struct duckdb_extension_access *access, char *err);
/* 1 when the engine's C API has the v1.5.6 functions (after capi_load). */
int capi_has_copy(void);
/* The engine's version as reported ("v2.0.1"). */
const char *capi_engine_version(void);

/* -- deflate.c ------------------------------------------------------------------------ */

/* A gzip or zlib stream being written. The z_stream must stay where it is while active. */
typedef struct {
    zstream z;
    int active;
} deflater;

/* Start a COMP_GZIP or COMP_ZLIB stream at `level` (-1: zlib's default); -1 with `err`
 * set when libz cannot be loaded or refuses. */
int deflater_start(deflater *d, int comp, int level, char *err);
/* Compress n bytes into `out` (appended); with `finish`, end the stream. */
int deflater_run(deflater *d, const uint8_t *in, size_t n, int finish, tbuf *out, char *err);
void deflater_end(deflater *d);

/* -- copy_to.c ----------------------------------------------------------------------- */

/* BOOLEAN and the integer types (int64_list features). */
int integer_type(duckdb_type t);

/* -- registration ------------------------------------------------------------------- */

/* COPY ... TO / FROM (FORMAT tfrecord); on engines without copy functions, nothing. */
int register_copy(duckdb_connection con);
/* tfrecord_schema(...) and tfrecord_metadata(...). */
int register_dataset_functions(duckdb_connection con);

#endif
