/*
 * tfsql/duckdb_ext/duckdb_ext.h -- declarations shared by the DuckDB extension's
 * files (private to tfsql/duckdb_ext/): its structs (files, binds, windows) and the
 * functions one file calls in another.
 *
 * The extension binds the C core (tfsql/core/tfsql_core.h) to DuckDB's stable C
 * extension API: compiled against the C API v1.5.6 headers, it declares v1.2.0, so one
 * file loads in DuckDB 1.2 and later, and uses the v1.5.6 functions (COPY) only on
 * engines that give them (api_version.c). The files that call no DuckDB function share
 * ext_common.h (the V2 extension, tfsql/duckdb_v2/, compiles them too); these are the
 * v1 binding's own:
 *
 *   options.c      DuckDB values -> tfargs (read by option_rules.c, resolve.c); types
 *   bind.c         the bind of tfrecord_scan (resolve.c) -> the result's columns
 *   scan.c         the scan (scanning.c) over DuckDB's vectors (vecops)
 *   metadata.c     tfrecord_schema(...) and tfrecord_metadata(...)
 *   copy_to.c      COPY ... TO ... (FORMAT tfrecord) (DuckDB >= 1.5.6): its v1 API calls
 *                  (the shared rules: copy_encode.c, copy_files.c, copy_cast.c)
 *   copy_from.c    COPY t FROM ... (FORMAT tfrecord) (DuckDB >= 1.5.6)
 *   api_version.c  the C API table: v1.2.0, and v1.5.6 on engines that have it
 *   reports.c      each connection's last data error and skipped byte ranges, and the
 *                  table functions tfrecord_last_error() and tfrecord_rejects()
 *   entry.c        the entry point: function registration, replacement scan
 *
 * The rules are those of the Python reader, so `tfrecord_scan` gives the same columns,
 * types and values as `tfsql.read_tfrecord`; tests/integration/test_duckdb_extension*.py
 * compare the two.
 */
#ifndef TFSQL_DUCKDB_EXT_H
#define TFSQL_DUCKDB_EXT_H

#include "ext_common.h"

#define DUCKDB_EXTENSION_NAME tfsql
#include "duckdb_extension.h"
/* The API table is defined once, by the entry point (entry.c); every other file uses it. */
DUCKDB_EXTENSION_EXTERN

/* -- reports.c ------------------------------------------------------------------- */
connref connection_of(duckdb_bind_info info);
/* sandbox.c: 1 (err set) when the connection's enable_external_access is false. */
int v1_external_access_refused(duckdb_bind_info info, const char *fname, char *err);
/* Give table function f its fninfo (`name`, the database being loaded). */
void set_function_info(duckdb_table_function f, const char *name);
/* tfrecord_last_error() and tfrecord_rejects(). */
int register_report_functions(duckdb_connection con);

/* -- options.c --------------------------------------------------------------- */
char *value_text(duckdb_value v);

duckdb_type value_type_id(duckdb_value v);

/* The DuckDB type of a neutral column type (a new type). */
duckdb_logical_type logical_type(tftype t);

/* Register the named parameters of the option spec's native options. */
void add_named_parameters(duckdb_table_function f);

/* The call's source and named parameters (the scan's, then the `extra` ones, a NULL-
 * ended list or NULL) as tfargs; -1 when out of memory. */
int bind_args(duckdb_bind_info info, const char *const *extra, tfargs *a);

/* -- bind.c ------------------------------------------------------------------ */
void tf_bind(duckdb_bind_info info);

/* The bind of the arguments in `info` (resolve.c) as function `fname`; `scanning`: the
 * connection's reports start over (scan_bind_resolve_args). NULL with err set. */
tfbind *v1_resolve(duckdb_bind_info info, const char *fname, const char *const *extra,
                   int scanning, idx_t *cardinality_out, char *err);

/* v1_resolve for a bind that scans (tfrecord_scan, COPY ... FROM). */
tfbind *scan_bind_resolve(duckdb_bind_info info, const char *fname, idx_t *cardinality_out,
                          char *err);

/* -- scan.c ------------------------------------------------------------------ */
void tf_init(duckdb_init_info info);

void tf_local_init(duckdb_init_info info);

void tf_scan(duckdb_function_info info, duckdb_data_chunk output);

/* The neutral files' operations on v1 vectors. */
extern const vecops v1_vecops;

/* -- entry.c (shared) ---------------------------------------------------------- */
void add_scan_parameters(duckdb_table_function f);
/* A table function `name` (its fninfo set) with these callbacks. */
duckdb_table_function new_table_function(const char *name, duckdb_table_function_bind_t bind,
                                          duckdb_table_function_init_t init,
                                          duckdb_table_function_t scan);
/* Register f on con and destroy it; 0, or -1 when DuckDB refuses it. */
int register_table_function(duckdb_connection con, duckdb_table_function f);

/* -- metadata.c ------------------------------------------------------------------ */
/* The type of output column c (a new type), its name a new string in *name. */
duckdb_logical_type scan_output_type(const tfbind *b, int c, char **name);

/* -- copy_from.c --------------------------------------------------------------- */

/* The table function DuckDB runs for COPY ... FROM (to be destroyed by the caller). */
duckdb_table_function copy_from_function(void);

/* -- api_version.c: the C API function table, filled for the engine that loads us ----- */

/* Fill the function table: the v1.2.0 part always, everything up to v1.5.6 (COPY
 * functions, result column types of a COPY FROM bind) only when the engine is at least
 * DuckDB 1.5.6. 0, or -1 (with `err` set) when the engine gives no v1.2.0 table. */
int capi_load(duckdb_extension_info info, struct duckdb_extension_access *access, char *err);
/* 1 when the engine's C API has the v1.5.6 functions (after capi_load). */
int capi_has_copy(void);
/* The same, for the other v1.5.6 functions (a table function's client context and its
 * connection id: reports.c). */
int capi_has_v156(void);
/* The engine's version as reported ("v2.0.1"). */
const char *capi_engine_version(void);

/* -- copy_to.c ----------------------------------------------------------------------- */

/* DuckDB's type id -> the engine-neutral COPY leaf (COPY_LEAF_*, ext_common.h). */
int copy_leaf_of(duckdb_type t);
/* `t` as the engine-neutral copy_type (its leaf below at most two LIST / ARRAY levels). */
void copy_describe_type(duckdb_logical_type t, copy_type *out);

/* -- registration (copy_to.c, metadata.c) ------------------------------------------------------------------- */

/* COPY ... TO / FROM (FORMAT tfrecord); on engines without copy functions, nothing. */
int register_copy(duckdb_connection con);
/* tfrecord_schema(...) and tfrecord_metadata(...). */
int register_dataset_functions(duckdb_connection con);

#endif /* TFSQL_DUCKDB_EXT_H */
