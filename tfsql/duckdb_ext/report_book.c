/*
 * tfsql/duckdb_ext/report_book.c -- what a connection's scans reported, kept for both
 * bindings (each names the connection a scan runs for: connref), and the rows of
 * tfrecord_last_error() and tfrecord_rejects() written through the binding's vecops:
 *
 *   tfrecord_last_error()  the data error that ended the connection's last failed scan
 *                          (or its bind: the schema inference's sample, or its refusal),
 *                          as the fields of tfsql's error classes (CorruptRecordError /
 *                          SchemaError / FileChangedError);
 *   tfrecord_rejects()     the stretches of damaged files that the connection's last
 *                          on_corrupt := 'skip' scans stepped over (read_csv's
 *                          store_rejects idea): file, record, byte range, reason, message.
 *
 * A tfrecord_scan bind forgets its connection's last error, and a skipping scan's bind
 * its rejects, so each statement reports its own. Memory is bounded: REPORT_CONNECTIONS
 * connections are kept (the least recently used is forgotten), each with at most
 * REPORT_REJECTS skipped stretches (later ones are counted in the last row's
 * `more_rejects`, not listed).
 */

#include "ext_common.h"

#define REPORT_CONNECTIONS 64
#define REPORT_REJECTS 10000

typedef struct {
    int used;
    uint64_t database;
    uint64_t id;
    uint64_t stamp;
    tferror_rec *last;
    tferror_rec **rejects;
    size_t nrejects, cap;
    uint64_t dropped;
} report;

static report reports[REPORT_CONNECTIONS];
static uint64_t clock_ticks;
static pthread_mutex_t reports_lock = PTHREAD_MUTEX_INITIALIZER;

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
    char message[ERRLEN];
    tferror_skipped_message(message, sizeof(message), e);
    reports_log_skip(message);
    if (!c.known) {
        return;
    }
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

void snapshot_free(void *p) {
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

snapshot *reports_snapshot(connref c, int rejects) {
    snapshot *s = (snapshot *)calloc(1, sizeof(snapshot));
    if (s == NULL) {
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
        return NULL;
    }
    qsort(s->rows, s->n, sizeof(tferror_rec *), by_file_and_offset);
    return s;
}

static int put_text(const vecops *o, void *v, size_t row, const char *text) {
    if (text == NULL) {
        set_row_invalid(o->validity(v), row);
        return 0;
    }
    return o->set_text(v, row, text, strlen(text));
}

static void put_number(const vecops *o, void *v, size_t row, long long value) {
    if (value < 0) {
        set_row_invalid(o->validity(v), row);
    } else {
        ((int64_t *)o->data(v))[row] = value;
    }
}

static void put_bool(const vecops *o, void *v, size_t row, int value) {
    ((uint8_t *)o->data(v))[row] = value != 0;
}

static const char *const class_names[] = {NULL, "CorruptRecordError", "SchemaError",
                                          "FileChangedError"};

const tfcolumn last_error_columns[] = {
    {"error_class", TFTYPE_OF(TT_VARCHAR)},  {"reason", TFTYPE_OF(TT_VARCHAR)},
    {"file", TFTYPE_OF(TT_VARCHAR)},         {"record_index", TFTYPE_OF(TT_BIGINT)},
    {"byte_offset", TFTYPE_OF(TT_BIGINT)},   {"length", TFTYPE_OF(TT_BIGINT)},
    {"limit_bytes", TFTYPE_OF(TT_BIGINT)},   {"rest_of_file", TFTYPE_OF(TT_BOOLEAN)},
    {"suggest_skip", TFTYPE_OF(TT_BOOLEAN)}, {"compression", TFTYPE_OF(TT_VARCHAR)},
    {"record_type", TFTYPE_OF(TT_VARCHAR)},  {"detail", TFTYPE_OF(TT_VARCHAR)},
    {"feature", TFTYPE_OF(TT_VARCHAR)},      {"found_kind", TFTYPE_OF(TT_VARCHAR)},
    {"expected_kind", TFTYPE_OF(TT_VARCHAR)}, {"size_before", TFTYPE_OF(TT_BIGINT)},
    {"size_after", TFTYPE_OF(TT_BIGINT)},    {"message", TFTYPE_OF(TT_VARCHAR)},
    {NULL, TFTYPE_OF(0)},
};

const tfcolumn rejects_columns[] = {
    {"file", TFTYPE_OF(TT_VARCHAR)},         {"record_index", TFTYPE_OF(TT_BIGINT)},
    {"start_offset", TFTYPE_OF(TT_BIGINT)},  {"end_offset", TFTYPE_OF(TT_BIGINT)},
    {"rest_of_file", TFTYPE_OF(TT_BOOLEAN)}, {"reason", TFTYPE_OF(TT_VARCHAR)},
    {"message", TFTYPE_OF(TT_VARCHAR)},      {"more_rejects", TFTYPE_OF(TT_UBIGINT)},
    {NULL, TFTYPE_OF(0)},
};

/* Row `n` of a tfrecord_last_error() chunk. */
static int last_error_row(const vecops *o, void *const *vecs, size_t n, const snapshot *s,
                          size_t i) {
    const tferror *e = &s->rows[i]->e;
    int rc = put_text(o, vecs[0], n, class_names[e->cls]) | put_text(o, vecs[1], n, e->reason) |
             put_text(o, vecs[2], n, e->path);
    put_number(o, vecs[3], n, e->record_index);
    put_number(o, vecs[4], n, e->offset);
    put_number(o, vecs[5], n, e->length);
    put_number(o, vecs[6], n, e->limit);
    put_bool(o, vecs[7], n, e->rest_of_file);
    put_bool(o, vecs[8], n, e->suggest_skip);
    rc |= put_text(o, vecs[9], n, e->compression) | put_text(o, vecs[10], n, e->record_type) |
          put_text(o, vecs[11], n, e->detail) | put_text(o, vecs[12], n, e->feature) |
          put_text(o, vecs[13], n, e->found) | put_text(o, vecs[14], n, e->expected);
    put_number(o, vecs[15], n, e->before);
    put_number(o, vecs[16], n, e->after);
    return rc | put_text(o, vecs[17], n, s->rows[i]->message);
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
static int rejects_row(const vecops *o, void *const *vecs, size_t n, const snapshot *s,
                       size_t i) {
    const tferror *e = &s->rows[i]->e;
    int rc = put_text(o, vecs[0], n, e->path);
    put_number(o, vecs[1], n, e->record_index);
    put_number(o, vecs[2], n, e->offset);
    put_number(o, vecs[3], n, stretch_end(e));
    put_bool(o, vecs[4], n, e->rest_of_file);
    rc |= put_text(o, vecs[5], n, e->reason) | put_text(o, vecs[6], n, s->rows[i]->message);
    ((uint64_t *)o->data(vecs[7]))[n] = i + 1 == s->n ? s->dropped : 0;
    return rc;
}

int report_rows(const snapshot *s, int rejects, size_t *next, const vecops *o, void *const *vecs,
                size_t cap, size_t *rows) {
    size_t n = 0, want = s->n - *next < cap ? s->n - *next : cap;
    int ncols = rejects ? 8 : 18;
    for (int i = 0; o->set_rows != NULL && i < ncols; i++) {
        if (o->set_rows(vecs[i], want)) {
            return -1;
        }
    }
    for (; *next < s->n && n < cap; (*next)++, n++) {
        if ((rejects ? rejects_row : last_error_row)(o, vecs, n, s, *next)) {
            return -1;
        }
    }
    *rows = n;
    return 0;
}
