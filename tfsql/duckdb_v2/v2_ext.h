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
 *   entry.c     the entry point: registers every function of the files below;
 *               v2_str, v2_fail, v2_setting
 *   copy_to.c   COPY ... TO (FORMAT tfrecord): columns -> features (copy_encode.c), the
 *               files (copy_files.c)
 *   copy_from.c COPY t FROM (FORMAT tfrecord): the V2 scan (scanning.c) into the table's
 *               columns, cast by copy_cast.c
 *   scan.c      tfrecord_scan, read_tfrecord, the replacement scan (resolve.c and
 *               scanning.c do the work; this file reads values and fills vectors)
 *   tables.c    what the table functions share: registration, bind and exec plumbing
 *   dataset.c   tfrecord_schema, tfrecord_metadata (rows: dataset_rows.c)
 *   filters.c   filter pushdown: predicates on partition, split and filename columns
 *               prune files before they are opened
 *   files.c     URLs (s3://, memory://, ...) listed, read and written through DuckDB's
 *               file system (routed.c's fsops); '~' expanded as DuckDB does
 *   reports.c   the reports (report_book.c) per connection, skipped damage to DuckDB's
 *               log, tfrecord_last_error(), tfrecord_rejects()
 *
 * Traps of the V2 headers (measured against DuckDB 2.0.1): a file includes
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
/* Fail the callback: `text` (copied) with `code` in the error slot (entry.c); e.g.
 * DUCKDB_V2_ERROR_IO_GENERAL for DuckDB's IOException, ..._QUERY_BINDER for a Binder Error. */
void v2_fail(v2_err *err, DUCKDB_V2_ERROR code, const char *text);
/* The value of setting `name` for the context's connection (destroy it), or NULL when it
 * cannot be read. */
duckdb_v2_value_handle v2_setting(v2_ctx context, const char *name);

/* -- entry.c ------------------------------------------------------------------------- */

/* Each group of functions registers itself on `ext`; V2_OK, or an error in *err. */
typedef DUCKDB_V2_ERROR (*v2_registrar)(duckdb_v2_extension_handle ext, duckdb_v2_factory_handle f,
                                        v2_err *err);

/* -- copy_to.c ----------------------------------------------------------------------- */

/* COPY (FORMAT tfrecord), both directions. */
DUCKDB_V2_ERROR register_copy(duckdb_v2_extension_handle ext, duckdb_v2_factory_handle f, v2_err *err);
/* `t` as copy_encode.c's copy_type: its leaf below at most two LIST / ARRAY levels. */
void v2_describe_type(duckdb_v2_logical_type_handle t, copy_type *out);

/* -- copy_from.c --------------------------------------------------------------------- */

/* Add the COPY ... FROM side to the copy function `f` (before it is registered). */
DUCKDB_V2_ERROR register_copy_from(duckdb_v2_copy_function_handle f, v2_err *err);
/* -- scan.c ------------------------------------------------------------------------- */
/* A V2 value as a tfval; -1 when out of memory. */
int v2_tfval(duckdb_v2_value_handle v, tfval *out);
/* The call's arguments: the source first, then the named ones the call gives (an
 * explicit NULL kept, to be refused); -1 with err set. */
int v2_bind_args(duckdb_v2_function_bind_info_handle info, tfargs *a, v2_err *err);
/* The V2 type of a neutral type (owned), NULL on failure. */
duckdb_v2_logical_type_handle v2_type(duckdb_v2_factory_handle f, tftype t);
/* The types one call has made, by their text: DuckDB 2 makes a type from its text by
 * parsing SQL (about 90 us), which a record of a million features cannot pay per column;
 * v2_type_cached returns a copy (owned) of the kept one. Start as {.n = 0}; free once. */
#define V2_TYPE_TEXT 96
#define V2_TYPES_KEPT 32
typedef struct {
    int n;
    char text[V2_TYPES_KEPT][V2_TYPE_TEXT];
    duckdb_v2_logical_type_handle type[V2_TYPES_KEPT];
} v2_types;
duckdb_v2_logical_type_handle v2_type_cached(v2_types *cache, duckdb_v2_factory_handle f, tftype t);
void v2_types_free(v2_types *cache);
/* Declare the scan's output columns of b; -1 with err set. */
int v2_declare_columns(const tfbind *b, duckdb_v2_table_function_bind_info_handle result,
                       duckdb_v2_factory_handle f, v2_err *err);
/* The neutral files' operations on V2 vectors. */
extern const vecops v2_vecops;
/* How a table function's and COPY ... FROM's init callbacks hand DuckDB the scan's
 * states: each API family's setter on its info handle (passed as void *). */
typedef struct {
    DUCKDB_V2_ERROR (*set_global)(void *info, duckdb_v2_opaque *state, v2_err *err);
    DUCKDB_V2_ERROR (*set_threads)(void *info, idx_t n, v2_err *err);
    DUCKDB_V2_ERROR (*set_local)(void *info, duckdb_v2_opaque *state, v2_err *err);
} v2_scan_states;
/* Set the scan's global state over output columns `columns` (NULL: out of memory; files
 * pruned by b's predicates) and its threads (one per file) on `info`; err set on failure. */
void v2_scan_init_global(const tfbind *b, const size_t *columns, size_t n, const v2_scan_states *s,
                         void *info, v2_err *err);
/* Set a thread's scan state on `info`; err set on failure. */
void v2_scan_init_local(const v2_scan_states *s, void *info, v2_err *err);
/* The next rows (at most cap) into vecs (scan_next over V2 vectors, skips logged for
 * `context`); 1 with *rows set, 0 at the end, -1 with err set (the scan's message, as
 * function `fname`'s). */
int v2_scan_rows(const tfbind *b, tfglobal *g, tflocal *l, void *const *vecs, size_t cap,
                 v2_ctx context, const char *fname, size_t *rows, v2_err *err);
DUCKDB_V2_ERROR register_scans(duckdb_v2_extension_handle ext, duckdb_v2_factory_handle f,
                               v2_err *err);

/* -- tables.c -------------------------------------------------------------------------- */
/* A table function of the extension. */
typedef struct {
    const char *name;    /* a static string */
    int scan_parameters; /* tfrecord_scan's source and named parameters */
    int count_parameter; /* count := (tfrecord_metadata) */
    int pushdown;        /* projection and filter pushdown */
    duckdb_v2_table_function_bind_callback_fn bind;
    duckdb_v2_table_function_init_global_callback_fn init_global;
    duckdb_v2_table_function_init_local_callback_fn init_local; /* or NULL */
    duckdb_v2_table_function_exec_callback_fn exec;
    duckdb_v2_table_function_progress_callback_fn progress; /* or NULL */
} v2_table;
DUCKDB_V2_ERROR v2_register_table(duckdb_v2_extension_handle ext, duckdb_v2_factory_handle f,
                                  const v2_table *t, v2_err *err);
/* tfrecord_scan's parameters on `sig`. */
DUCKDB_V2_ERROR v2_add_scan_parameters(duckdb_v2_function_signature_handle sig,
                                       duckdb_v2_factory_handle f, v2_err *err);
/* A table function `name` (a static string) with its fninfo; NULL with err set. */
duckdb_v2_table_function_handle v2_new_table_function(duckdb_v2_factory_handle f, const char *name,
                                                      v2_err *err);
/* Named argument `name`'s value v as a tfval: 0, 1 when the call left the parameter
 * out (its registered default), -1 with err set (a value that is not a BOOLEAN). */
int v2_named_arg(duckdb_v2_value_handle v, const char *name, tfval *tv, v2_err *err);
/* A bind's function (its fninfo) and factory; -1 with err set. */
int v2_bind_start(duckdb_v2_function_bind_info_handle info, v2_ctx context, fninfo **fi,
                  duckdb_v2_factory_handle *f, v2_err *err);
/* Declare result columns `columns` (ending with a NULL name); -1 with err set. */
int v2_add_columns(duckdb_v2_table_function_bind_info_handle result, duckdb_v2_factory_handle f,
                   const tfcolumn *columns, v2_err *err);
/* An exec's bind data and global state (each unless NULL), its output's first nvecs
 * vectors and capacity; -1 with err set. */
int v2_exec_start(duckdb_v2_table_function_exec_info_handle info, void **bind, void **global,
                  void **vecs, size_t nvecs, size_t *cap, v2_err *err);
/* A global state that is a row cursor (size_t), one thread. */
void v2_cursor_init(duckdb_v2_table_function_init_global_info_handle info, v2_ctx context,
                    v2_err *err);

/* -- dataset.c ------------------------------------------------------------------------- */
DUCKDB_V2_ERROR register_dataset_functions(duckdb_v2_extension_handle ext,
                                           duckdb_v2_factory_handle f, v2_err *err);

/* -- filters.c ------------------------------------------------------------------------- */
/* Offer tf's predicates to the file pruning. */
DUCKDB_V2_ERROR v2_set_filter_pushdown(duckdb_v2_table_function_handle tf, v2_err *err);
/* Mark the files the accepted predicates rule out (g->skip). */
void v2_prune_files(const tfbind *b, tfglobal *g);

/* -- files.c --------------------------------------------------------------------------- */
/* The callback on this thread runs for `context`: routed paths (routed.c) go to its file
 * system until leave. */
void v2_files_enter(v2_ctx context);
void v2_files_leave(void);

/* -- reports.c ------------------------------------------------------------------------- */
/* The connection a callback runs for (its reports). */
connref v2_connection(v2_ctx context);
/* The scan on this thread runs for `context` (skips are logged through it) until leave. */
void v2_reports_enter(v2_ctx context);
void v2_reports_leave(void);
/* tfrecord_last_error() and tfrecord_rejects(). */
DUCKDB_V2_ERROR register_report_functions(duckdb_v2_extension_handle ext,
                                          duckdb_v2_factory_handle f, v2_err *err);

#endif /* TFSQL_DUCKDB_V2_EXT_H */
