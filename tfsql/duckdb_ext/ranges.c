/*
 * tfsql/duckdb_ext/ranges.c -- the units of tfrecord_scan's parallel scan, for both
 * bindings: a whole file each, except a large uncompressed local file, which is cut
 * into byte ranges so that several of DuckDB's threads read it at once, cut by the
 * core's tfsql_range_at as the Python scanner's ranges are (tfsql.splits: a range owns
 * the records whose header starts in it; compressed files are read whole).
 *
 * Where a range's first record starts, and its record number (errors and skip reports
 * name records by their index in the file), are taken from the file's chain of record
 * positions, never guessed: range k starts at the first chain position at or after its
 * nominal start, and reads up to the first one at or after its stop, which is where
 * range k + 1 starts. The chain is what one reader of the whole file meets: the record
 * headers, and, where framing is lost, the damaged header and the offset the core's
 * resync (reader_skip) moves to. A range that finishes says where its chain ends (the
 * next range's start is then known, as it always is with one thread); a range claimed
 * before that is found by walking the chain's headers from where it is known (a core
 * record reader that checks no data CRCs), under the file's lock. So the rows, their
 * order with one thread, the damage raised or skipped and its record numbers are those
 * of a read of the whole file.
 *
 * TFSQL_DUCKDB_RANGE_BYTES (bytes; for tests) sets the range size.
 *
 * Example: a 5 MiB plain file is three units, [0, 2 MiB), [2 MiB, 4 MiB), [4 MiB, end);
 * a 5 MiB gzip file is one.
 */

#include "ext_common.h"

#include <pthread.h>

/* The size of a range: big enough that opening it costs nothing next to decoding it,
 * small enough that a partition's file of a few MiB gives each thread a share. */
#define RANGE_BYTES ((uint64_t)2 << 20)

struct fsplit {
    pthread_mutex_t lock;
    size_t file, nranges;
    uint64_t range_bytes, size;
    uint64_t *bound; /* per range, its first chain position (ranges [0, resolved) known) */
    size_t *index;   /* and that position's record index */
    size_t resolved;
    window walker; /* the chain walked past bound[resolved - 1] (walking: open) */
    int walking;
    /* how far the reader of range resolved - 1 has framed: a chain position the walk
     * may start from (range_progress) */
    uint64_t hint_at;
    size_t hint_index, hint_part;
};

static uint64_t range_bytes(void) {
    const char *env = getenv("TFSQL_DUCKDB_RANGE_BYTES");
    long long v = env != NULL ? atoll(env) : 0;
    return v > 0 ? (uint64_t)v : RANGE_BYTES;
}

uint64_t range_start(const fsplit *s, size_t k) {
    uint64_t from, to;
    tfsql_range_at(0, s->size, s->range_bytes, k, &from, &to);
    return from;
}

/* The nominal end of range k (the last: UINT64_MAX, the file's end). */
uint64_t range_stop(const fsplit *s, size_t k) {
    uint64_t from, to;
    tfsql_range_at(0, s->size, s->range_bytes, k, &from, &to);
    return k + 1 < s->nranges ? to : UINT64_MAX;
}

/* Whether file f is a local file read as plain bytes (a compressed file is never split;
 * a file on DuckDB's file system, routed.c, is read whole, one open per file). */
static int plain_file(const tfbind *b, const tfile *f) {
    if (fs_routed(f->path) != NULL) {
        return 0;
    }
    if (b->compression != COMP_INFER) {
        return b->compression == COMP_NONE;
    }
    window w;
    char err[ERRLEN];
    int plain = window_open(&w, f->path, f->size, COMP_INFER, err) == 0 && w.r.comp == READER_PLAIN;
    window_close(&w);
    return plain; /* a file that cannot be opened: one unit, whose read says why */
}

static void split_free(fsplit *s) {
    if (s->walking) {
        window_close(&s->walker);
    }
    pthread_mutex_destroy(&s->lock);
    free(s->bound);
    free(s->index);
}

void scan_units_free(tfglobal *g) {
    for (size_t i = 0; i < g->nsplits; i++) {
        split_free(&g->splits[i]);
    }
    free(g->splits);
    free(g->units);
    g->splits = NULL;
    g->units = NULL;
    g->nsplits = g->nunits = 0;
}

/* How scan_plan_units reads file i: not at all (empty, or ruled out), whole, or as
 * ranges. */
enum { UNIT_NONE = 0, UNIT_WHOLE = 1, UNIT_RANGES = 2 };

static int plan_failed(uint8_t *how, char *err) {
    free(how);
    snprintf(err, ERRLEN, "out of memory");
    return -1;
}

int scan_plan_units(const tfbind *b, tfglobal *g, char *err) {
    scan_units_free(g);
    uint64_t rb = range_bytes();
    size_t nunits = 0, nsplits = 0;
    uint8_t *how = (uint8_t *)calloc(b->files.n ? b->files.n : 1, 1);
    if (how == NULL) {
        return plan_failed(how, err);
    }
    for (size_t i = 0; i < b->files.n; i++) {
        const tfile *f = &b->files.items[i];
        if (f->size > 0 && (g->skip == NULL || !g->skip[i])) {
            how[i] = (uint64_t)f->size > rb && plain_file(b, f) ? UNIT_RANGES : UNIT_WHOLE;
        }
        nsplits += how[i] == UNIT_RANGES;
        nunits += how[i] == UNIT_RANGES ? tfsql_range_count(0, (uint64_t)f->size, rb) : how[i];
    }
    g->units = (scanunit *)calloc(nunits ? nunits : 1, sizeof(scanunit));
    g->splits = (fsplit *)calloc(nsplits ? nsplits : 1, sizeof(fsplit));
    if (g->units == NULL || g->splits == NULL) {
        return plan_failed(how, err);
    }
    for (size_t i = 0; i < b->files.n; i++) {
        if (how[i] == UNIT_WHOLE) {
            g->units[g->nunits++] = (scanunit){i, 0, NULL};
        }
        if (how[i] != UNIT_RANGES) {
            continue;
        }
        fsplit *s = &g->splits[g->nsplits];
        s->file = i;
        s->size = (uint64_t)b->files.items[i].size;
        s->range_bytes = rb;
        s->nranges = tfsql_range_count(0, s->size, rb);
        s->bound = (uint64_t *)calloc(s->nranges, sizeof(uint64_t));
        s->index = (size_t *)calloc(s->nranges, sizeof(size_t));
        if (s->bound == NULL || s->index == NULL) {
            free(s->bound);
            free(s->index);
            return plan_failed(how, err);
        }
        pthread_mutex_init(&s->lock, NULL);
        g->nsplits++;
        s->resolved = 1; /* range 0 starts at record 0, byte 0 */
        for (size_t k = 0; k < s->nranges; k++) {
            g->units[g->nunits++] = (scanunit){i, k, s};
        }
    }
    free(how);
    return 0;
}

/* The ranges whose nominal start is at or before chain position `at` (record `index`)
 * and not known yet start there. */
static void resolve_upto(fsplit *s, uint64_t at, size_t index) {
    while (s->resolved < s->nranges && range_start(s, s->resolved) <= at) {
        s->bound[s->resolved] = at;
        s->index[s->resolved] = index;
        s->resolved++;
    }
}

/* Walk the chain until range k's start is known (s locked). */
static int walk_to(const tfbind *b, fsplit *s, size_t k, char *err) {
    record_reader *r = &s->walker.r;
    uint64_t from = s->bound[s->resolved - 1];
    size_t index = s->index[s->resolved - 1];
    if (s->hint_part == s->resolved - 1 && s->hint_at > from) { /* the range's reader got here */
        from = s->hint_at;
        index = s->hint_index;
    }
    if (s->walking && r->next < from) { /* behind it: start again there */
        window_close(&s->walker);
        s->walking = 0;
    }
    if (!s->walking) {
        if (window_open(&s->walker, b->files.items[s->file].path, b->files.items[s->file].size,
                        COMP_NONE, err)) {
            window_close(&s->walker);
            return -1;
        }
        s->walking = 1;
        reader_start(r, from, index);
    }
    reader_limits limits = {-1, -1, (uint64_t)b->max_record_bytes, 0};
    while (s->resolved <= k) {
        int rc = reader_next(r, &limits, err);
        if (rc == 1) {
            for (size_t i = 0; i < r->n; i++) {
                resolve_upto(s, r->base + load_u64(r->offs.data + 8 * i) - 12, r->first + i);
            }
            resolve_upto(s, r->next, r->first + r->n); /* the chunk's end: the next header */
        } else if (rc == 0) {
            resolve_upto(s, s->size, r->index); /* the rest start at the end: empty */
        } else if (rc == READER_DAMAGE) {
            resolve_upto(s, r->next, r->index); /* the damaged header is a position */
            if ((rc = reader_skip(r, (uint64_t)b->max_record_bytes, err)) != 0) {
                return rc == READER_DAMAGE ? damage_error(&s->walker, err) : -1;
            }
            resolve_upto(s, r->next, r->index);
        } else {
            return -1;
        }
    }
    return 0;
}

int range_begin(const tfbind *b, fsplit *s, size_t k, uint64_t *at, size_t *index, char *err) {
    pthread_mutex_lock(&s->lock);
    int rc = s->resolved > k ? 0 : walk_to(b, s, k, err);
    if (rc == 0) {
        *at = s->bound[k];
        *index = s->index[k];
    }
    pthread_mutex_unlock(&s->lock);
    return rc;
}

void range_progress(fsplit *s, size_t k, uint64_t at, size_t index) {
    pthread_mutex_lock(&s->lock);
    if (k + 1 == s->resolved && at > s->hint_at) { /* the range before the first unknown */
        s->hint_part = k;
        s->hint_at = at;
        s->hint_index = index;
    }
    pthread_mutex_unlock(&s->lock);
}

void range_finished(fsplit *s, uint64_t at, size_t index) {
    pthread_mutex_lock(&s->lock);
    if (s->resolved < s->nranges && range_start(s, s->resolved) <= at) {
        resolve_upto(s, at, index);
        if (s->walking) { /* walk on from here next time */
            window_close(&s->walker);
            s->walking = 0;
        }
    }
    pthread_mutex_unlock(&s->lock);
}
