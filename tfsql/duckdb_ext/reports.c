/*
 * tfsql/duckdb_ext/reports.c -- what a connection's scans reported, as rows:
 *
 *   tfrecord_last_error()  the data error that ended the connection's last failed scan
 *                          (or its bind: the schema inference's sample, or its refusal),
 *                          as the fields of tfsql's error classes (tfsql.connect() builds
 *                          CorruptRecordError / SchemaError / FileChangedError from them);
 *   tfrecord_rejects()     the stretches of damaged files that the connection's last
 *                          on_corrupt := 'skip' scans stepped over (read_csv's
 *                          store_rejects idea): file, record, byte range, reason, message.
 *
 * DuckDB's C API passes an error on as text only and has no warnings, so the fields are
 * kept here, per connection: a scan's bind learns its connection's id
 * (duckdb_table_function_get_client_context, C API v1.5.6: DuckDB >= 1.5.6; on older
 * engines both functions refuse, saying so) and, as ids count per database, its
 * database (the extension's load that registered the function: fninfo). A tfrecord_scan bind forgets its
 * connection's last error, and a skipping scan's bind its rejects, so each statement
 * reports its own. Memory is bounded: REPORT_CONNECTIONS connections are kept (the
 * least recently used is forgotten), each with at most REPORT_REJECTS skipped stretches
 * (later ones are counted in the last row's `more_rejects`, not listed).
 */

#include "duckdb_ext.h"

#define REPORT_CONNECTIONS 64
#define REPORT_REJECTS 10000

typedef struct {
    int used;
    uint64_t database;
    idx_t id;
    uint64_t stamp;
    tferror_rec *last;
    tferror_rec **rejects;
    size_t nrejects, cap;
    uint64_t dropped;
} report;

static report reports[REPORT_CONNECTIONS];
static uint64_t clock_ticks;
static pthread_mutex_t reports_lock = PTHREAD_MUTEX_INITIALIZER;

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

static void forget_rejects(report *r) {
    for (size_t i = 0; i < r->nrejects; i++) {
        tferror_rec_free(r->rejects[i]);
    }
    r->nrejects = 0;
    r->dropped = 0;
}

/* The report of connection `id` (lock held); a new one, in place of the least recently
 * used, when it has none and `create`. */
static report *report_of(connref c, int create) {
    report *oldest = &reports[0];
    for (int i = 0; i < REPORT_CONNECTIONS; i++) {
        report *r = &reports[i];
        if (r->used && r->id == c.id && r->database == c.database) {
            r->stamp = ++clock_ticks;
            return r;
        }
        if (!r->used || (oldest->used && r->stamp < oldest->stamp)) {
            oldest = r;
        }
    }
    if (!create) {
        return NULL;
    }
    forget_rejects(oldest);
    tferror_rec_free(oldest->last);
    oldest->last = NULL;
    oldest->used = 1;
    oldest->id = c.id;
    oldest->database = c.database;
    oldest->stamp = ++clock_ticks;
    return oldest;
}

void reports_begin_scan(connref c, int skipping) {
    if (!c.known) {
        return;
    }
    pthread_mutex_lock(&reports_lock);
    report *r = report_of(c, 1);
    tferror_rec_free(r->last);
    r->last = NULL;
    if (skipping) {
        forget_rejects(r);
    }
    pthread_mutex_unlock(&reports_lock);
}

void reports_scan_failed(connref c, const char *message) {
    tferror_rec *rec = tferror_take();
    if (!c.known) {
        tferror_rec_free(rec);
        return;
    }
    if (rec == NULL) { /* not a data error: its message alone */
        tferror e;
        tferror_init(&e, TFERR_NONE, NULL, NULL);
        rec = tferror_copy(&e, message);
    }
    pthread_mutex_lock(&reports_lock);
    report *r = report_of(c, 1);
    if (r->last == NULL) { /* the first error of the statement is the one DuckDB shows */
        r->last = rec;
        rec = NULL;
    }
    pthread_mutex_unlock(&reports_lock);
    tferror_rec_free(rec);
}

void reports_skipped(connref c, const tferror *e) {
    if (!c.known) {
        return;
    }
    char message[ERRLEN];
    tferror_skipped_message(message, sizeof(message), e);
    tferror_rec *rec = tferror_copy(e, message);
    pthread_mutex_lock(&reports_lock);
    report *r = report_of(c, 1);
    if (rec != NULL && r->nrejects < REPORT_REJECTS && r->nrejects == r->cap) {
        size_t cap = r->cap ? 2 * r->cap : 16;
        tferror_rec **grown = (tferror_rec **)realloc(r->rejects, cap * sizeof(*grown));
        if (grown != NULL) {
            r->rejects = grown;
            r->cap = cap;
        }
    }
    if (rec != NULL && r->nrejects < r->cap && r->nrejects < REPORT_REJECTS) {
        r->rejects[r->nrejects++] = rec;
        rec = NULL;
    } else {
        r->dropped++;
    }
    pthread_mutex_unlock(&reports_lock);
    tferror_rec_free(rec);
}

/* -- the table functions ------------------------------------------------------------- */

typedef struct {
    tferror_rec **rows;
    size_t n;
    uint64_t dropped;
} snapshot;

typedef struct {
    size_t next;
} cursor;

static void snapshot_free(void *p) {
    snapshot *s = (snapshot *)p;
    if (s == NULL) {
        return;
    }
    for (size_t i = 0; i < s->n; i++) {
        tferror_rec_free(s->rows[i]);
    }
    free(s->rows);
    free(s);
}

static int by_file_and_offset(const void *a, const void *b) {
    const tferror *x = &(*(tferror_rec *const *)a)->e, *y = &(*(tferror_rec *const *)b)->e;
    int c = strcmp(x->path != NULL ? x->path : "", y->path != NULL ? y->path : "");
    if (c != 0) {
        return c;
    }
    return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* The calling connection's rows (copies), or NULL with the bind's error set. */
static snapshot *take_snapshot(duckdb_bind_info info, const char *fname, int rejects) {
    connref c = connection_of(info);
    if (!c.known) {
        char err[ERRLEN];
        snprintf(err, ERRLEN, "%s: this DuckDB (%s) gives extensions no connection id (C API "
                              "v1.5.6, DuckDB 1.5.6 or later), so the extension keeps no "
                              "reports; use tfsql.connect(), whose errors and warnings carry "
                              "them", fname, capi_engine_version());
        duckdb_bind_set_error(info, err);
        return NULL;
    }
    snapshot *s = (snapshot *)calloc(1, sizeof(snapshot));
    if (s == NULL) {
        duckdb_bind_set_error(info, "out of memory");
        return NULL;
    }
    pthread_mutex_lock(&reports_lock);
    report *r = report_of(c, 0);
    size_t n = r == NULL ? 0 : rejects ? r->nrejects : r->last != NULL;
    s->rows = (tferror_rec **)calloc(n ? n : 1, sizeof(tferror_rec *));
    for (size_t i = 0; s->rows != NULL && i < n; i++) {
        const tferror_rec *from = rejects ? r->rejects[i] : r->last;
        s->rows[i] = tferror_copy(&from->e, from->message);
        if (s->rows[i] == NULL) {
            break;
        }
        s->n++;
    }
    s->dropped = r != NULL && rejects ? r->dropped : 0;
    pthread_mutex_unlock(&reports_lock);
    if (s->n < n) {
        snapshot_free(s);
        duckdb_bind_set_error(info, "out of memory");
        return NULL;
    }
    qsort(s->rows, s->n, sizeof(tferror_rec *), by_file_and_offset);
    return s;
}

static void column(duckdb_bind_info info, const char *name, duckdb_type type) {
    duckdb_logical_type t = duckdb_create_logical_type(type);
    duckdb_bind_add_result_column(info, name, t);
    duckdb_destroy_logical_type(&t);
}

static void put_text(duckdb_vector v, idx_t row, const char *text) {
    if (text == NULL) {
        duckdb_vector_ensure_validity_writable(v);
        duckdb_validity_set_row_invalid(duckdb_vector_get_validity(v), row);
    } else {
        duckdb_vector_assign_string_element(v, row, text);
    }
}

static void put_number(duckdb_vector v, idx_t row, long long value) {
    if (value < 0) {
        duckdb_vector_ensure_validity_writable(v);
        duckdb_validity_set_row_invalid(duckdb_vector_get_validity(v), row);
    } else {
        ((int64_t *)duckdb_vector_get_data(v))[row] = value;
    }
}

static void put_bool(duckdb_vector v, idx_t row, int value) {
    ((bool *)duckdb_vector_get_data(v))[row] = value != 0;
}

static const char *const class_names[] = {NULL, "CorruptRecordError", "SchemaError",
                                          "FileChangedError"};

typedef struct {
    const char *name;
    duckdb_type type;
} report_column;

static const report_column last_error_columns[] = {
    {"error_class", DUCKDB_TYPE_VARCHAR},  {"reason", DUCKDB_TYPE_VARCHAR},
    {"file", DUCKDB_TYPE_VARCHAR},         {"record_index", DUCKDB_TYPE_BIGINT},
    {"byte_offset", DUCKDB_TYPE_BIGINT},   {"length", DUCKDB_TYPE_BIGINT},
    {"limit_bytes", DUCKDB_TYPE_BIGINT},   {"rest_of_file", DUCKDB_TYPE_BOOLEAN},
    {"suggest_skip", DUCKDB_TYPE_BOOLEAN}, {"compression", DUCKDB_TYPE_VARCHAR},
    {"record_type", DUCKDB_TYPE_VARCHAR},  {"detail", DUCKDB_TYPE_VARCHAR},
    {"feature", DUCKDB_TYPE_VARCHAR},      {"found_kind", DUCKDB_TYPE_VARCHAR},
    {"expected_kind", DUCKDB_TYPE_VARCHAR}, {"size_before", DUCKDB_TYPE_BIGINT},
    {"size_after", DUCKDB_TYPE_BIGINT},    {"message", DUCKDB_TYPE_VARCHAR},
    {NULL, DUCKDB_TYPE_INVALID},
};

static const report_column rejects_columns[] = {
    {"file", DUCKDB_TYPE_VARCHAR},        {"record_index", DUCKDB_TYPE_BIGINT},
    {"start_offset", DUCKDB_TYPE_BIGINT}, {"end_offset", DUCKDB_TYPE_BIGINT},
    {"rest_of_file", DUCKDB_TYPE_BOOLEAN}, {"reason", DUCKDB_TYPE_VARCHAR},
    {"message", DUCKDB_TYPE_VARCHAR},     {"more_rejects", DUCKDB_TYPE_UBIGINT},
    {NULL, DUCKDB_TYPE_INVALID},
};

/* The bind of a report function: the calling connection's rows and `columns`. */
static void report_bind(duckdb_bind_info info, const char *fname, int rejects,
                        const report_column *columns) {
    snapshot *s = take_snapshot(info, fname, rejects);
    if (s == NULL) {
        return;
    }
    for (; columns->name != NULL; columns++) {
        column(info, columns->name, columns->type);
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

/* Row `n` of a tfrecord_last_error() chunk. */
static void last_error_row(duckdb_data_chunk out, idx_t n, const snapshot *s, size_t i) {
    const tferror *e = &s->rows[i]->e;
    idx_t c = 0;
#define V() duckdb_data_chunk_get_vector(out, c++)
    put_text(V(), n, class_names[e->cls]);
    put_text(V(), n, e->reason);
    put_text(V(), n, e->path);
    put_number(V(), n, e->record_index);
    put_number(V(), n, e->offset);
    put_number(V(), n, e->length);
    put_number(V(), n, e->limit);
    put_bool(V(), n, e->rest_of_file);
    put_bool(V(), n, e->suggest_skip);
    put_text(V(), n, e->compression);
    put_text(V(), n, e->record_type);
    put_text(V(), n, e->detail);
    put_text(V(), n, e->feature);
    put_text(V(), n, e->found);
    put_text(V(), n, e->expected);
    put_number(V(), n, e->before);
    put_number(V(), n, e->after);
    put_text(V(), n, s->rows[i]->message);
#undef V
}

/* Where a skipped stretch ends: the record's end for a record stepped over, the next
 * intact record for a resynchronisation; unknown (NULL) for the rest of the file. */
static long long stretch_end(const tferror *e) {
    if (e->skipped_to >= 0) {
        return e->skipped_to;
    }
    if (!e->rest_of_file && e->length >= 0) {
        return e->offset + 16 + e->length;
    }
    return -1;
}

/* Row `n` of a tfrecord_rejects() chunk. */
static void rejects_row(duckdb_data_chunk out, idx_t n, const snapshot *s, size_t i) {
    const tferror *e = &s->rows[i]->e;
    put_text(duckdb_data_chunk_get_vector(out, 0), n, e->path);
    put_number(duckdb_data_chunk_get_vector(out, 1), n, e->record_index);
    put_number(duckdb_data_chunk_get_vector(out, 2), n, e->offset);
    put_number(duckdb_data_chunk_get_vector(out, 3), n, stretch_end(e));
    put_bool(duckdb_data_chunk_get_vector(out, 4), n, e->rest_of_file);
    put_text(duckdb_data_chunk_get_vector(out, 5), n, e->reason);
    put_text(duckdb_data_chunk_get_vector(out, 6), n, s->rows[i]->message);
    ((uint64_t *)duckdb_vector_get_data(duckdb_data_chunk_get_vector(out, 7)))[n] =
        i + 1 == s->n ? s->dropped : 0;
}

/* The scan of a report function: the snapshot's rows, a chunk at a time. */
static void report_scan(duckdb_function_info info, duckdb_data_chunk out,
                        void (*row)(duckdb_data_chunk, idx_t, const snapshot *, size_t)) {
    const snapshot *s = (const snapshot *)duckdb_function_get_bind_data(info);
    cursor *k = (cursor *)duckdb_function_get_init_data(info);
    idx_t n = 0;
    for (; k->next < s->n && n < duckdb_vector_size(); k->next++, n++) {
        row(out, n, s, k->next);
    }
    duckdb_data_chunk_set_size(out, n);
}

static void last_error_scan(duckdb_function_info info, duckdb_data_chunk out) {
    report_scan(info, out, last_error_row);
}

static void rejects_scan(duckdb_function_info info, duckdb_data_chunk out) {
    report_scan(info, out, rejects_row);
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
