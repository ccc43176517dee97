/*
 * tfsql/duckdb_ext/reports.c -- the v1 binding of the reports (report_book.c): the
 * connection a scan runs for, and the table functions tfrecord_last_error() and
 * tfrecord_rejects().
 *
 * DuckDB's C API passes an error on as text only and has no warnings, so the fields are
 * kept per connection: a scan's bind learns its connection's id
 * (duckdb_table_function_get_client_context, C API v1.5.6: DuckDB >= 1.5.6; on older
 * engines both functions refuse, saying so) and, as ids count per database, its
 * database (the extension's load that registered the function: fninfo).
 */
#include "duckdb_ext.h"

static uint64_t databases, loading;

void reports_new_database(void) {
    loading = __atomic_add_fetch(&databases, 1, __ATOMIC_RELAXED);
}

void set_function_info(duckdb_table_function f, const char *name) {
    fninfo *fi = (fninfo *)malloc(sizeof(fninfo));
    if (fi != NULL) {
        fi->name = name;
        fi->database = loading;
    }
    duckdb_table_function_set_extra_info(f, fi, free);
}

connref connection_of(duckdb_bind_info info) {
    connref c = {0, 0, 0};
    const fninfo *fi = (const fninfo *)duckdb_bind_get_extra_info(info);
    if (!capi_has_v156() || fi == NULL) { /* the client context functions are v1.5.6 slots */
        return c;
    }
    c.database = fi->database;
    duckdb_client_context context = NULL;
    duckdb_table_function_get_client_context(info, &context);
    if (context == NULL) {
        return c;
    }
    c.id = duckdb_client_context_get_connection_id(context);
    c.known = 1;
    duckdb_destroy_client_context(&context);
    return c;
}

void reports_log_skip(const char *message) { (void)message; }

void reports_warning(const char *message) { (void)message; }

typedef struct {
    size_t next;
} cursor;

/* The calling connection's rows (copies), or NULL with the bind's error set. */
static snapshot *take_snapshot(duckdb_bind_info info, const char *fname, int rejects) {
    connref c = connection_of(info);
    if (!c.known) {
        char err[ERRLEN];
        snprintf(err, ERRLEN, "%s: this DuckDB (%s) gives extensions no connection id (C API "
                              "v1.5.6, DuckDB 1.5.6 or later), so the extension keeps no "
                              "reports; read through a registered tfsql.dataset(...), whose "
                              "errors and warnings carry them, or use DuckDB 1.5.6 or later", fname, capi_engine_version());
        duckdb_bind_set_error(info, err);
        return NULL;
    }
    snapshot *s = reports_snapshot(c, rejects);
    if (s == NULL) {
        duckdb_bind_set_error(info, "out of memory");
    }
    return s;
}

/* The bind of a report function: the calling connection's rows and `columns`. */
static void report_bind(duckdb_bind_info info, const char *fname, int rejects,
                        const tfcolumn *columns) {
    snapshot *s = take_snapshot(info, fname, rejects);
    if (s == NULL) {
        return;
    }
    for (; columns->name != NULL; columns++) {
        duckdb_logical_type t = logical_type(columns->type);
        duckdb_bind_add_result_column(info, columns->name, t);
        duckdb_destroy_logical_type(&t);
    }
    duckdb_bind_set_cardinality(info, s->n, true);
    duckdb_bind_set_bind_data(info, s, snapshot_free);
}

static void last_error_bind(duckdb_bind_info info) {
    report_bind(info, "tfrecord_last_error", 0, last_error_columns);
}

static void rejects_bind(duckdb_bind_info info) {
    report_bind(info, "tfrecord_rejects", 1, rejects_columns);
}

/* The scan of a report function: the snapshot's rows, a chunk at a time. */
static void report_scan(duckdb_function_info info, duckdb_data_chunk out, int rejects) {
    const snapshot *s = (const snapshot *)duckdb_function_get_bind_data(info);
    cursor *k = (cursor *)duckdb_function_get_init_data(info);
    void *vecs[18];
    for (int i = 0; i < (rejects ? 8 : 18); i++) {
        vecs[i] = duckdb_data_chunk_get_vector(out, (idx_t)i);
    }
    size_t n = 0;
    if (report_rows(s, rejects, &k->next, &v1_vecops, vecs, duckdb_vector_size(), &n)) {
        duckdb_function_set_error(info, "out of memory");
        return;
    }
    duckdb_data_chunk_set_size(out, n);
}

static void last_error_scan(duckdb_function_info info, duckdb_data_chunk out) {
    report_scan(info, out, 0);
}

static void rejects_scan(duckdb_function_info info, duckdb_data_chunk out) {
    report_scan(info, out, 1);
}

static void cursor_init(duckdb_init_info info) {
    cursor *k = (cursor *)calloc(1, sizeof(cursor));
    if (k == NULL) {
        duckdb_init_set_error(info, "out of memory");
        return;
    }
    duckdb_init_set_init_data(info, k, free);
}

int register_report_functions(duckdb_connection con) {
    return register_table_function(con, new_table_function("tfrecord_last_error",
                                                           last_error_bind, cursor_init,
                                                           last_error_scan)) |
           register_table_function(con, new_table_function("tfrecord_rejects", rejects_bind,
                                                           cursor_init, rejects_scan));
}
