/*
 * tfsql/duckdb_ext/inference.c -- the sampled summary -> columns
 * (tfsql.inference / tfsql.schema): sample plan, type resolution, column names, and
 * the process-wide cache of inferred schemas.
 */

#include "duckdb_ext.h"

static const char *kind_sql[4] = {"", "bytes_list", "float_list", "int64_list"};

/* tfsql.inference.sample_indices */
static size_t sample_indices(size_t n, long long want, size_t *out) {
    if (want < 0 || (size_t)want >= n) {
        for (size_t i = 0; i < n; i++) {
            out[i] = i;
        }
        return n;
    }
    if (want <= 1) {
        if (want == 1 && n > 0) {
            out[0] = 0;
            return 1;
        }
        return 0;
    }
    double step = (double)(n - 1) / (double)(want - 1);
    size_t m = 0;
    for (long long i = 0; i < want; i++) {
        double x = (double)i * step;
        /* Python's round(): half to even */
        double fl = (double)(long long)x, frac = x - fl;
        size_t v = (size_t)fl;
        if (frac > 0.5 || (frac == 0.5 && ((long long)fl % 2) == 1)) {
            v++;
        }
        if (m == 0 || out[m - 1] != v) {
            out[m++] = v;
        }
    }
    return m;
}

/* The records a sample of `count` framed ones keeps under tfsql.inference's byte rule:
 * up to the one whose payload brings the total to `limit` bytes (all when the total
 * stays below). *reached: whether it did. */
static size_t within_bytes(const tbuf *lens, size_t count, long long limit, int *reached) {
    uint64_t total = 0;
    *reached = 0;
    if (limit < 0) {
        return count;
    }
    for (size_t i = 0; i < count; i++) {
        total += load_u64(lens->data + 8 * i);
        if (total >= (uint64_t)limit) {
            *reached = 1;
            return i + 1;
        }
    }
    return count;
}

/* Read the inference sample of one file (tfsql.inference): its first infer_sample
 * records, ending once their payloads hold INFER_BYTES bytes (unless every record is
 * sampled), read (and inflated) only as far as the sample reaches. The sampled records
 * are framed in offs / lens (n of them), over w->buf; *end is where framing stopped. A
 * record over max_record_bytes is an error unless on_corrupt := 'skip', which, as any
 * damage, ends the sample (the scan then reports or skips it). */
static int sample_file(const tfbind *b, const tfile *f, window *w, tbuf *offs, tbuf *lens,
                       size_t *n, size_t *end, char *err) {
    if (window_open(w, f->path, f->size, b->compression, err)) {
        return -1;
    }
    long long limit = b->infer_sample < 0 ? -1 : INFER_BYTES;
    size_t want = limit < 0 ? WINDOW_BYTES : (size_t)limit + (1u << 20);
    for (;;) {
        if (window_fill(w, 0, want, err)) {
            return -1;
        }
        int status, reached;
        offs->len = lens->len = 0;
        if (scan_core(w->buf.data, w->buf.len, 0, b->infer_sample, -1, b->verify, offs, lens,
                      end, &status)) {
            snprintf(err, ERRLEN, "out of memory");
            return -1;
        }
        size_t framed = offs->len / 8;
        for (size_t i = 0; i < framed; i++) { /* possible only in a larger window */
            if (load_u64(lens->data + 8 * i) > (uint64_t)b->max_record_bytes) {
                *end = (size_t)load_u64(offs->data + 8 * i) - 12;
                framed = i;
                status = FRAME_TOO_LONG;
                offs->len = lens->len = 8 * i;
                break;
            }
        }
        *n = within_bytes(lens, framed, limit, &reached);
        if (*n < framed) {
            *end = (size_t)load_u64(offs->data + 8 * *n) - 12;
            offs->len = lens->len = 8 * *n;
            return 0;
        }
        int at_end = *end == w->buf.len && !w->src.eof; /* more records may follow */
        if (reached || (b->infer_sample >= 0 && framed >= (size_t)b->infer_sample) ||
            (status == FRAME_OK && !at_end) || status == FRAME_BAD_LENGTH_CRC ||
            status == FRAME_BAD_DATA_CRC) {
            return 0; /* damage ends the sample: the scan reports (or skips) it */
        }
        uint64_t length, lim;
        int pending = pending_record(w, *end, (uint64_t)b->max_record_bytes, &length, &lim);
        if (pending == FRAME_TOO_LONG && !b->skip_corrupt) {
            frame_error(err, f->path, FRAME_TOO_LONG, framed, *end, length, lim);
            return -1;
        }
        if (pending != FRAME_OK) {
            return 0;
        }
        /* the records framed so far ran into the end of what is read: read on */
        size_t record = w->buf.len - *end < 12 ? 12 : (size_t)length + 16;
        want = 2 * w->buf.len > *end + record ? 2 * w->buf.len : *end + record;
    }
}

/* Infer the data columns from the sampled files (tfsql.inference + schema rules). */
int infer_columns(tfbind *b, char *err, idx_t *cardinality) {
    *cardinality = 0;
    if (b->record_type == RAW) {
        b->sc.record_type = RAW;
        b->sc.ncols = 1;
        b->sc.cols = (colspec *)calloc(1, sizeof(colspec));
        b->utf8 = (int *)calloc(1, sizeof(int));
        if (b->sc.cols == NULL || b->utf8 == NULL) {
            return -1;
        }
        b->sc.cols[0].name = (uint8_t *)xstrdup("record");
        b->sc.cols[0].name_len = 6;
        b->sc.cols[0].kind = KIND_BYTES;
        b->sc.cols[0].shape = SCALAR;
        b->ndata = 1;
        return 0;
    }
    size_t nonempty = 0;
    size_t *idx = (size_t *)malloc((b->files.n + 1) * sizeof(size_t));
    size_t *pick = (size_t *)malloc((b->files.n + 1) * sizeof(size_t));
    window *bufs = (window *)calloc(b->files.n + 1, sizeof(window));
    int **first_file = NULL; /* per stat: file index where each kind was first seen */
    size_t nfirst = 0;
    int rc = -1;
    sctx s;
    memset(&s, 0, sizeof(s));
    tbuf offs = {0}, lens = {0};
    strlist names = {0}; /* the feature names of the summary, owned */
    if (idx == NULL || pick == NULL || bufs == NULL) {
        snprintf(err, ERRLEN, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < b->files.n; i++) {
        if (b->files.items[i].size > 0) {
            idx[nonempty++] = i;
        }
    }
    size_t npick = sample_indices(nonempty, b->infer_files, pick);
    uint64_t sampled_records = 0, sampled_bytes = 0;
    for (size_t j = 0; j < npick; j++) {
        const tfile *f = &b->files.items[idx[pick[j]]];
        size_t end, n;
        if (sample_file(b, f, &bufs[j], &offs, &lens, &n, &end, err)) {
            goto done;
        }
        /* A damaged record ends the file's sample; the scan reports it (as a data error,
         * with its file, record and offset) unless ignore_errors skips it. */
        size_t bad = 0;
        int e = summarize_core(&s, b->record_type, bufs[j].buf.data, bufs[j].buf.len, offs.data,
                               lens.data, n, &bad);
        if (e == E_NOMEM) {
            snprintf(err, ERRLEN, "out of memory");
            goto done;
        }
        if (e == E_MALFORMED && !b->skip_corrupt) { /* as the Python reader's sample does */
            malformed_error(err, b->record_type, f->path, bad,
                            load_u64(offs.data + 8 * bad) - 12);
            goto done;
        }
        sampled_records += n;
        sampled_bytes += end;
        size_t nstats = s.stats.len / sizeof(sstat);
        if (nstats > nfirst) {
            int **grown = (int **)realloc(first_file, nstats * sizeof(int *));
            if (grown == NULL) {
                snprintf(err, ERRLEN, "out of memory");
                goto done;
            }
            first_file = grown;
            for (size_t k = nfirst; k < nstats; k++) {
                first_file[k] = (int *)malloc(4 * sizeof(int));
                for (int q = 0; q < 4; q++) {
                    first_file[k][q] = -1;
                }
            }
            nfirst = nstats;
        }
        const uint8_t *from = bufs[j].buf.data, *to = from + bufs[j].buf.len;
        for (size_t k = 0; k < nstats; k++) {
            sstat *st = sctx_stat(&s, (int32_t)k);
            st->stamp = 0; /* stamps restart with the next file's records */
            for (int q = 0; q < 4; q++) {
                if ((st->kinds >> q) & 1 && first_file[k][q] < 0) {
                    first_file[k][q] = (int)idx[pick[j]];
                }
            }
            if (st->name >= from && st->name < to) { /* a name first seen in this file */
                char *copy = xstrndup((const char *)st->name, st->name_len);
                if (copy == NULL || strlist_add(&names, copy)) {
                    snprintf(err, ERRLEN, "out of memory");
                    goto done;
                }
                st->name = (const uint8_t *)copy;
            }
        }
        window_close(&bufs[j]); /* its names copied: one file's sample in memory at once */
    }
    if (sampled_records > 0 && sampled_bytes > 0) {
        *cardinality = (idx_t)((double)b->total_bytes * (double)sampled_records /
                               (double)sampled_bytes);
    }
    size_t nstats = s.stats.len / sizeof(sstat);
    b->sc.record_type = b->record_type;
    b->sc.cols = (colspec *)calloc(nstats ? nstats : 1, sizeof(colspec));
    b->utf8 = (int *)calloc(nstats ? nstats : 1, sizeof(int));
    if (b->sc.cols == NULL || b->utf8 == NULL) {
        snprintf(err, ERRLEN, "out of memory");
        goto done;
    }
    int n = 0;
    for (size_t k = 0; k < nstats; k++) {
        sstat *st = sctx_stat(&s, (int32_t)k);
        uint64_t kinds = st->kinds & ~(uint64_t)1;
        int kind = KIND_NONE, count = 0;
        for (int q = 1; q < 4; q++) {
            if ((kinds >> q) & 1) {
                kind = q;
                count++;
            }
        }
        if (count > 1) {
            char described[ERRLEN] = "";
            size_t used = 0;
            for (int q = 1; q < 4; q++) {
                if ((kinds >> q) & 1) {
                    used += (size_t)snprintf(described + used, ERRLEN - used, "%s%s (first in %s)",
                                             used ? " and " : "", kind_sql[q],
                                             b->files.items[first_file[k][q]].path);
                    if (used >= ERRLEN) {
                        break;
                    }
                }
            }
            snprintf(err, ERRLEN, "feature '%.*s' holds two kinds in the inference sample: %s; "
                                  "pass columns := {'%.*s': 'TYPE'} with the type to read it as, "
                                  "or fix the data (this needs tfsql.connect() for now)",
                     (int)st->name_len, (const char *)st->name, described, (int)st->name_len,
                     (const char *)st->name);
            goto done;
        }
        if (count == 0) {
            continue; /* never has a kind: left out, as the Python reader does */
        }
        /* names are valid UTF-8: summarize_core refuses a record with another one */
        colspec *c = &b->sc.cols[n];
        c->name = (uint8_t *)xstrndup((const char *)st->name, st->name_len);
        c->name_len = st->name_len;
        c->location = st->location;
        c->kind = kind;
        if (st->location == FEATURE_LISTS) {
            c->shape = LIST_OF_LIST;
        } else if (b->lists_always || st->max_len != 1) {
            c->shape = LIST;
        } else {
            c->shape = SCALAR;
        }
        b->utf8[n] = kind == KIND_BYTES && st->utf8;
        n++;
        b->sc.ncols = n;
    }
    b->ndata = n;
    rc = 0;
done:
    if (bufs != NULL) {
        for (size_t j = 0; j <= b->files.n; j++) {
            window_close(&bufs[j]);
        }
    }
    for (size_t k = 0; k < nfirst; k++) {
        free(first_file[k]);
    }
    free(first_file);
    free(bufs);
    free(idx);
    free(pick);
    tbuf_free(&offs);
    tbuf_free(&lens);
    tbuf_free(&s.stats);
    tbuf_free(&s.touched);
    free(s.table);
    strlist_free(&names);
    return rc;
}

/* -- column names (tfsql.schema) -------------------------------------------------
 * A SequenceExample feature list that shares its name with a context column is the
 * column N__feature_list (FEATURE_LIST_SUFFIX); the context column keeps the name. */

int context_column(const tfbind *b, const uint8_t *name, size_t len) {
    for (int k = 0; k < b->ndata; k++) {
        const colspec *cs = &b->sc.cols[k];
        if (cs->location != FEATURE_LISTS && cs->name_len == len && memcmp(cs->name, name, len) == 0) {
            return 1;
        }
    }
    return 0;
}

static int renamed_list(const tfbind *b, int c) {
    const colspec *cs = &b->sc.cols[c];
    return cs->location == FEATURE_LISTS && context_column(b, cs->name, cs->name_len);
}

/* The name of data column c (a new string). */
char *column_name(const tfbind *b, int c) {
    const colspec *cs = &b->sc.cols[c];
    return xprintf("%.*s%s", (int)cs->name_len, (const char *)cs->name,
                   renamed_list(b, c) ? FEATURE_LIST_SUFFIX : "");
}

int is_column(const tfbind *b, const char *name) {
    for (int c = 0; c < b->ndata; c++) {
        char *own = column_name(b, c);
        int same = own != NULL && strcmp(own, name) == 0;
        free(own);
        if (same) {
            return 1;
        }
    }
    return 0;
}

/* tfsql.schema._name_columns over inferred columns: a renamed feature list must not
 * take another column's name, and a feature list literally named N__feature_list
 * beside a context column N is ambiguous. */
int check_inferred_names(const tfbind *b, char *err) {
    size_t sl = strlen(FEATURE_LIST_SUFFIX);
    for (int c = 0; c < b->ndata; c++) {
        const colspec *cs = &b->sc.cols[c];
        if (cs->location != FEATURE_LISTS) {
            continue;
        }
        char *name = column_name(b, c);
        if (name == NULL) {
            snprintf(err, ERRLEN, "out of memory");
            return -1;
        }
        int bad = cs->name_len > sl &&
                  memcmp(cs->name + cs->name_len - sl, FEATURE_LIST_SUFFIX, sl) == 0 &&
                  context_column(b, cs->name, cs->name_len - sl);
        for (int k = 0; k < b->ndata && !bad; k++) {
            char *other = k == c ? NULL : column_name(b, k);
            bad = other != NULL && strcmp(other, name) == 0;
            free(other);
        }
        if (bad) {
            snprintf(err, ERRLEN, "feature list '%.*s' shares its name with a context feature, "
                                  "and its column name '%s' is taken by another feature; pass "
                                  "schema := {...} naming the columns to read",
                     (int)cs->name_len, (const char *)cs->name, name);
            free(name);
            return -1;
        }
        free(name);
    }
    return 0;
}

/* -- inference cache ----------------------------------------------------------
 * The columns inferred for a list of files, kept while the files are unchanged (paths,
 * sizes, modification times) and the options that shape inference are the same, as
 * tfsql.connect() does: a query over the same files does not sample them again. */

#define INFER_CACHE_SLOTS 16

typedef struct {
    uint64_t key;   /* hash of options + fingerprints; 0: empty */
    int ncols;
    colspec *cols;  /* owned names */
    int *utf8;
    idx_t cardinality;
} infer_entry;

static infer_entry infer_cache[INFER_CACHE_SLOTS];
static size_t infer_cache_next;
static pthread_mutex_t infer_lock = PTHREAD_MUTEX_INITIALIZER;

static uint64_t mix64(uint64_t h, uint64_t v) {
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdull;
}

uint64_t infer_key(const tfbind *b) {
    uint64_t h = mix64(0x1234567ull, (uint64_t)b->record_type);
    h = mix64(h, (uint64_t)b->compression);
    h = mix64(h, (uint64_t)b->verify);
    h = mix64(h, (uint64_t)b->lists_always);
    h = mix64(h, (uint64_t)b->skip_corrupt);
    h = mix64(h, (uint64_t)b->max_record_bytes);
    h = mix64(h, (uint64_t)b->infer_sample);
    h = mix64(h, (uint64_t)b->infer_files);
    for (size_t i = 0; i < b->files.n; i++) {
        struct stat st;
        if (stat(b->files.items[i].path, &st) != 0) {
            return 0;
        }
        for (const char *p = b->files.items[i].path; *p; p++) {
            h = mix64(h, (uint8_t)*p);
        }
        h = mix64(h, (uint64_t)st.st_size);
#if defined(__APPLE__)
        h = mix64(h, (uint64_t)st.st_mtimespec.tv_sec);
        h = mix64(h, (uint64_t)st.st_mtimespec.tv_nsec);
#else
        h = mix64(h, (uint64_t)st.st_mtim.tv_sec);
        h = mix64(h, (uint64_t)st.st_mtim.tv_nsec);
#endif
    }
    return h ? h : 1;
}

int infer_cache_get(tfbind *b, uint64_t key, idx_t *cardinality) {
    int found = 0;
    pthread_mutex_lock(&infer_lock);
    for (int i = 0; i < INFER_CACHE_SLOTS && !found; i++) {
        infer_entry *e = &infer_cache[i];
        if (key == 0 || e->key != key) {
            continue;
        }
        int n = e->ncols;
        b->sc.cols = (colspec *)calloc(n ? (size_t)n : 1, sizeof(colspec));
        b->utf8 = (int *)calloc(n ? (size_t)n : 1, sizeof(int));
        if (b->sc.cols == NULL || b->utf8 == NULL) {
            break;
        }
        for (int c = 0; c < n; c++) {
            b->sc.cols[c] = e->cols[c];
            b->sc.cols[c].name = (uint8_t *)xstrndup((const char *)e->cols[c].name, e->cols[c].name_len);
            b->utf8[c] = e->utf8[c];
        }
        b->sc.record_type = b->record_type;
        b->sc.ncols = b->ndata = n;
        *cardinality = e->cardinality;
        found = 1;
    }
    pthread_mutex_unlock(&infer_lock);
    return found;
}

void infer_cache_put(const tfbind *b, uint64_t key, idx_t cardinality) {
    if (key == 0) {
        return;
    }
    pthread_mutex_lock(&infer_lock);
    infer_entry *e = &infer_cache[infer_cache_next++ % INFER_CACHE_SLOTS];
    for (int c = 0; c < e->ncols; c++) {
        free(e->cols[c].name);
    }
    free(e->cols);
    free(e->utf8);
    memset(e, 0, sizeof(*e));
    int n = b->ndata;
    e->cols = (colspec *)calloc(n ? (size_t)n : 1, sizeof(colspec));
    e->utf8 = (int *)calloc(n ? (size_t)n : 1, sizeof(int));
    if (e->cols != NULL && e->utf8 != NULL) {
        for (int c = 0; c < n; c++) {
            e->cols[c] = b->sc.cols[c];
            e->cols[c].name = (uint8_t *)xstrndup((const char *)b->sc.cols[c].name, b->sc.cols[c].name_len);
            e->utf8[c] = b->utf8[c];
        }
        e->ncols = n;
        e->cardinality = cardinality;
        e->key = key;
    }
    pthread_mutex_unlock(&infer_lock);
}
