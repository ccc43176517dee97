/*
 * tfsql/duckdb_ext/inference.c -- the sampled summary -> columns
 * (tfsql.inference / tfsql.schema): sample plan, type resolution, column names, and
 * the process-wide cache of inferred schemas.
 */

#include "ext_common.h"

/* err = the core's refusal of the sample (a kind conflict, a name that cannot be a
 * column...), kept with its fields as the pending data error: a SchemaError of reason
 * infer_reason(code), the feature, and the file, record and offset when known
 * (tfrecord_last_error(), whose fields are those of tfsql's Python errors). */
static void infer_refusal(char *err, const infer_error *e) {
    if (e->code == INFER_NOMEM) {
        snprintf(err, ERRLEN, "out of memory");
        return;
    }
    tferror t;
    tferror_init(&t, TFERR_SCHEMA, infer_reason(e->code), e->path[0] ? e->path : NULL);
    t.feature = e->feature[0] ? e->feature : NULL;
    t.record_index = e->record;
    t.offset = e->record >= 0 ? (long long)e->offset : -1;
    tferror_raise_worded(err, &t, e->message);
}

/* Fold the inference sample of one file into `st` through the core's sample loop
 * (infer_sample_file: which records, which damage ends it or is an error) over the
 * core's record reader (reading.c's window): a compressed file is inflated only as far
 * as the sample reaches. Its errors are worded as the scan words them. */
static int sample_file(const tfbind *b, infer_state *st, const tfile *f, int tolerant,
                       char *err) {
    window w;
    if (window_open(&w, f->path, f->size, b->compression, err)) {
        window_close(&w);
        return -1;
    }
    infer_sample_options o = {(uint64_t)b->max_record_bytes, b->verify, b->skip_corrupt, tolerant};
    int sampled, hint;
    infer_error e;
    int rc = infer_sample_file(st, &w.r, &o, &sampled, &hint, &e, err);
    if (hint) { /* its feature lists are dropped: say so (tfsql.inference's warning) */
        char text[ERRLEN];
        sequence_hint_message(text, sizeof text, TFILE_SHOWN(f));
        reports_warning(text);
    }
    if (rc == INFER_SAMPLE_DAMAGE) {
        damage_error(&w, err);
    } else if (rc == INFER_SAMPLE_REFUSED && e.code == INFER_MALFORMED) {
        malformed_error(err, b->record_type, f->path, (size_t)e.record, e.offset, NULL);
    } else if (rc == INFER_SAMPLE_REFUSED) {
        infer_refusal(err, &e);
    }
    window_close(&w);
    return rc == INFER_SAMPLE_OK ? 0 : -1;
}

/* The core's inference over the sample of the listed files (b->picks: the plan's);
 * `tolerant`: a record that does not decode ends its file's sample, unreported. */
static infer_state *sample_files(const tfbind *b, int tolerant, char *err) {
    infer_state *st = infer_new(b->record_type, b->infer_sample, b->infer_bytes);
    if (st == NULL) {
        snprintf(err, ERRLEN, "out of memory");
        return NULL;
    }
    for (size_t j = 0; j < b->npicks; j++) {
        const tfile *f = &b->files.items[b->picks[j]];
        if (infer_begin_file(st, f->path) != INFER_OK) {
            snprintf(err, ERRLEN, "out of memory");
            infer_free(st);
            return NULL;
        }
        if (sample_file(b, st, f, tolerant, err)) {
            infer_free(st);
            return NULL;
        }
    }
    return st;
}

/* Infer the data columns (tfsql/core/infer.c resolves the sample's summaries). */
int infer_columns(tfbind *b, char *err, uint64_t *cardinality) {
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
    infer_state *st = sample_files(b, 0, err);
    if (st == NULL) {
        return -1;
    }
    uint64_t records = infer_sampled_records(st);
    uint64_t framed_bytes = infer_sampled_bytes(st) + 16 * records;
    if (records > 0 && framed_bytes > 0) {
        *cardinality = (uint64_t)((double)b->total_bytes * (double)records / (double)framed_bytes);
    }
    infer_column *cols = NULL;
    size_t n = 0;
    infer_error e;
    memset(&e, 0, sizeof(e));
    int rc = infer_resolve(st, b->lists_always, sql_phrase("schema_option"), &cols, &n, &e);
    infer_free(st);
    if (rc != INFER_OK) {
        infer_refusal(err, &e);
        return -1;
    }
    b->sc.record_type = b->record_type;
    b->sc.cols = (colspec *)calloc(n ? n : 1, sizeof(colspec));
    b->utf8 = (int *)calloc(n ? n : 1, sizeof(int));
    if (b->sc.cols == NULL || b->utf8 == NULL) {
        infer_columns_free(cols, n);
        snprintf(err, ERRLEN, "out of memory");
        return -1;
    }
    int used = 0;
    for (size_t k = 0; k < n; k++) {
        if (cols[k].kind == KIND_NONE) {
            continue; /* never has a kind: left out, as the Python reader does */
        }
        colspec *c = &b->sc.cols[used];
        c->name = (uint8_t *)xstrndup(cols[k].name, cols[k].name_len);
        c->name_len = cols[k].name_len;
        c->location = cols[k].location;
        c->kind = cols[k].kind;
        c->shape = cols[k].shape;
        b->utf8[used] = cols[k].utf8;
        b->sc.ncols = ++used;
    }
    b->ndata = used;
    infer_columns_free(cols, n);
    return 0;
}

/* The columns the dataset's own description names (`written`: a tfsql writer's, else
 * a TFDS directory's features.json), added to `names`; 0, or -1 when out of memory. */
static int described_names(const tfbind *b, const tfsql_column *written, size_t nwritten,
                           strlist *names) {
    tfsql_tfds_feature *tfds = NULL;
    size_t ntfds = 0;
    if (written == NULL && read_tfds_features(b, &tfds, &ntfds) != 0) {
        ntfds = 0;
    }
    int bad = 0;
    for (size_t i = 0; !bad && i < nwritten; i++) {
        bad = !written[i].partition &&
              strlist_add(names, xstrndup(written[i].name, written[i].name_len));
    }
    for (size_t i = 0; !bad && i < ntfds; i++) {
        bad = strlist_add(names, xstrndup(tfds[i].name, tfds[i].name_len));
    }
    tfsql_tfds_features_free(tfds, ntfds);
    return bad ? -1 : 0;
}

/* missing_columns := 'raise': a schema := column that no sampled record holds, and the
 * dataset's description (`written`, or a TFDS features.json) does not name, is an error
 * naming it (judged by the core, as in every front end). */
int check_missing_columns(const tfbind *b, const tfsql_column *written, size_t nwritten,
                          char *err) {
    if (b->record_type == RAW || b->missing_insert) {
        return 0;
    }
    infer_state *st = sample_files(b, 1, err);
    if (st == NULL) {
        return -1;
    }
    strlist names = {0}, described = {0};
    size_t *lens = NULL;
    int rc = column_names(b, 0, &names, &lens) || described_names(b, written, nwritten, &described) ? -1 : 0;
    if (rc) {
        snprintf(err, ERRLEN, "out of memory");
    } else {
        infer_error e;
        memset(&e, 0, sizeof(e));
        if (infer_check_missing(st, (const char *const *)names.items, names.n,
                                (const char *const *)described.items, described.n,
                                sql_phrase("schema_option"), sql_phrase("missing_insert"),
                                &e) != INFER_OK) {
            infer_refusal(err, &e);
            rc = -1;
        }
    }
    strlist_free(&names);
    free(lens);
    strlist_free(&described);
    infer_free(st);
    return rc;
}

/* -- column names (tfsql.schema) -------------------------------------------------
 * A SequenceExample feature list that shares its name with a context column is the
 * column N__feature_list (TFSQL_FEATURE_LIST_SUFFIX); the context column keeps the name. */

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
                   renamed_list(b, c) ? TFSQL_FEATURE_LIST_SUFFIX : "");
}

int column_names(const tfbind *b, int hive, strlist *names, size_t **lens) {
    int n = b->ndata + (hive ? b->npart : 0);
    *lens = (size_t *)malloc(((size_t)n + 1) * sizeof(size_t));
    int bad = *lens == NULL;
    for (int c = 0; !bad && c < n; c++) {
        bad = strlist_add(names, c < b->ndata ? column_name(b, c) : xstrdup(b->part_names[c - b->ndata]));
        (*lens)[c] = bad ? 0 : strlen(names->items[c]);
    }
    return bad ? -1 : 0;
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

/* -- inference cache ----------------------------------------------------------
 * The columns inferred for a list of files, kept while the files are unchanged (paths,
 * sizes, modification times) and the options that shape inference are the same, as
 * tfsql.dataset does: a query over the same files does not sample them again. */

#define INFER_CACHE_SLOTS 16

typedef struct {
    uint64_t key;   /* hash of options + fingerprints; 0: empty */
    int ncols;
    colspec *cols;  /* owned names */
    int *utf8;
    uint64_t cardinality;
} infer_entry;

static infer_entry infer_cache[INFER_CACHE_SLOTS];
static size_t infer_cache_next;
static pthread_mutex_t infer_lock = PTHREAD_MUTEX_INITIALIZER;

/* The key of the call's options and files (tfsql_listing_key: paths, sizes, mtimes), 0
 * when a file cannot be stat'ed (then nothing is cached). */
uint64_t infer_key(const tfbind *b) {
    const long long options[] = {b->record_type, b->compression, b->verify, b->lists_always,
                                 b->skip_corrupt, b->infer_sample, b->infer_files,
                                 b->infer_bytes};
    uint64_t seed = 0;
    for (size_t k = 0; k < sizeof(options) / sizeof(options[0]); k++) {
        seed = tfsql_key_mix(seed, (uint64_t)options[k]);
    }
    tfsql_stamp *stamps = (tfsql_stamp *)calloc(b->files.n + 1, sizeof(*stamps));
    if (stamps == NULL) {
        return 0;
    }
    for (size_t i = 0; i < b->files.n; i++) {
        struct stat st;
        if (stat(b->files.items[i].path, &st) != 0) {
            free(stamps);
            return 0;
        }
        stamps[i].path = b->files.items[i].path;
        stamps[i].path_len = strlen(b->files.items[i].path);
        stamps[i].size = (uint64_t)st.st_size;
        stamps[i].mtime_ns = (uint64_t)stat_mtime_ns(&st);
    }
    uint64_t h = tfsql_listing_key(seed, stamps, b->files.n);
    free(stamps);
    return h ? h : 1;
}

int infer_cache_get(tfbind *b, uint64_t key, uint64_t *cardinality) {
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

void infer_cache_put(const tfbind *b, uint64_t key, uint64_t cardinality) {
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
