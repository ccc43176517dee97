/*
 * tfsql/core/infer.c -- schema inference, once for every front end: which files and
 * records the sample holds (the plan), the feature summaries folded across them, and
 * the columns they resolve to (docs/format.md section 3):
 *
 * - int64_list -> int64, float_list -> float32, bytes_list -> string when every sampled
 *   value is valid UTF-8, else binary;
 * - scalar when no sampled record holds more than one value and some hold one, else a
 *   list (a feature whose sampled lists are all empty stays a list; lists_always forces
 *   lists); SequenceExample feature lists -> list<list<K>>;
 * - columns in the order features are first seen (files in order, each record's
 *   features in wire order);
 * - a feature seen with two kinds is an error naming both and the first file of each;
 * - a feature list sharing its name with a context feature becomes the column
 *   N__feature_list, an error when that name is taken.
 *
 * The Python module (tfsql/inference.py) and the DuckDB extension read the files their
 * own way and hand the framed records here.
 */

#include "core_internal.h"
#include "infer_messages_gen.h"

#include <stdio.h>


/* err->message: `template` (tfsql/messages.py's INFER) filled from `fields`. */
static void infer_message(infer_error *err, const char *template, const tfsql_field *fields,
                          size_t n) {
    tfsql_text o = {err->message, INFER_MESSAGE_LEN, 0};
    err->message[0] = 0;
    tfsql_render(&o, template, fields, n, NULL);
}

const char *infer_reason(int code) {
    static const char *const reasons[] = {"ok",           "nomem",      "malformed", "name_not_utf8",
                                          "kind_conflict", "name_taken", "missing"};
    return code >= 0 && code <= INFER_MISSING ? reasons[code] : "unknown";
}

struct infer_state {
    int record_type;
    long long infer_sample, infer_bytes;
    sctx summary;      /* the merged summaries; stat names are owned copies */
    size_t owned;      /* stats whose names are already copies */
    tbuf first_file;   /* int32[4] per stat: the file each kind was first seen in (-1) */
    char **paths;      /* the sampled files, in order */
    size_t npaths, cap_paths;
    /* the current file */
    long long file_records;
    uint64_t file_bytes;
    int file_done, file_counted;
    /* totals */
    uint64_t records, bytes;
    size_t files_with_records;
    /* the first feature name that is not UTF-8 (code 0: none), reported by resolve */
    infer_error bad_name;
};

/* -- the plan ----------------------------------------------------------------------- */

size_t infer_pick_files(const int64_t *sizes, size_t n, long long infer_files, size_t *out) {
    size_t nonempty = 0;
    for (size_t i = 0; i < n; i++) {
        if (sizes[i] != 0) {
            out[nonempty++] = i;
        }
    }
    if (infer_files < 0 || (unsigned long long)infer_files >= nonempty) {
        return nonempty;
    }
    if (infer_files <= 1) {
        return infer_files == 1 ? 1 : 0;
    }
    /* position j of `want` spread evenly over [0, nonempty - 1], rounded half to even,
     * in exact integer arithmetic; positions only grow, so out[] can be reused in place */
    size_t want = (size_t)infer_files, m = 0;
    uint64_t span = nonempty - 1, steps = want - 1;
    for (size_t j = 0; j < want; j++) {
        uint64_t num = (uint64_t)j * span, q = num / steps, r = num % steps;
        if (2 * r > steps || (2 * r == steps && (q & 1))) {
            q++;
        }
        if (m == 0 || out[m - 1] != out[q]) {
            out[m++] = out[q];
        }
    }
    return m;
}

/* -- the summaries ------------------------------------------------------------------- */

infer_state *infer_new(int record_type, long long infer_sample, long long infer_bytes) {
    infer_state *s = (infer_state *)calloc(1, sizeof(infer_state));
    if (s == NULL) {
        return NULL;
    }
    s->record_type = record_type;
    s->infer_sample = infer_sample < 0 ? -1 : infer_sample;
    /* every record sampled: the byte bound does not apply */
    s->infer_bytes = s->infer_sample < 0 || infer_bytes < 0 ? -1 : infer_bytes;
    s->file_done = 1;
    return s;
}

void infer_free(infer_state *s) {
    if (s == NULL) {
        return;
    }
    size_t n = s->summary.stats.len / sizeof(sstat);
    for (size_t i = 0; i < n && i < s->owned; i++) {
        free((void *)sctx_stat(&s->summary, (int32_t)i)->name);
    }
    tbuf_free(&s->summary.stats);
    tbuf_free(&s->summary.touched);
    free(s->summary.table);
    tbuf_free(&s->first_file);
    for (size_t i = 0; i < s->npaths; i++) {
        free(s->paths[i]);
    }
    free(s->paths);
    free(s);
}

int infer_begin_file(infer_state *s, const char *path) {
    if (s->npaths == s->cap_paths) {
        size_t cap = s->cap_paths ? 2 * s->cap_paths : 8;
        char **grown = (char **)realloc(s->paths, cap * sizeof(char *));
        if (grown == NULL) {
            return INFER_NOMEM;
        }
        s->paths = grown;
        s->cap_paths = cap;
    }
    size_t len = strlen(path);
    char *copy = (char *)malloc(len + 1);
    if (copy == NULL) {
        return INFER_NOMEM;
    }
    memcpy(copy, path, len + 1);
    s->paths[s->npaths++] = copy;
    s->file_records = 0;
    s->file_bytes = 0;
    s->file_done = s->record_type == RAW || s->infer_sample == 0;
    s->file_counted = 0;
    return INFER_OK;
}

long long infer_records_wanted(const infer_state *s) {
    if (s->file_done) {
        return 0;
    }
    return s->infer_sample < 0 ? -1 : s->infer_sample - s->file_records;
}

int infer_record_type(const infer_state *s) { return s->record_type; }

uint64_t infer_file_budget(const infer_state *s) {
    return s->infer_sample < 0 || s->infer_bytes < 0 ? UINT64_MAX : (uint64_t)s->infer_bytes;
}

uint64_t infer_sampled_records(const infer_state *s) { return s->records; }
uint64_t infer_sampled_bytes(const infer_state *s) { return s->bytes; }
size_t infer_sampled_files(const infer_state *s) { return s->files_with_records; }

/* The name as Python shows bytes: b'...' with \xNN for what is not printable ASCII. */
static void show_bytes(char *out, size_t cap, const uint8_t *p, size_t n) {
    size_t o = (size_t)snprintf(out, cap, "b'");
    for (size_t i = 0; i < n && o + 6 < cap; i++) {
        uint8_t c = p[i];
        if (c == '\\' || c == '\'') {
            o += (size_t)snprintf(out + o, cap - o, "\\%c", c);
        } else if (c >= 0x20 && c < 0x7f) {
            out[o++] = (char)c;
            out[o] = 0;
        } else {
            o += (size_t)snprintf(out + o, cap - o, "\\x%02x", c);
        }
    }
    snprintf(out + o, cap - o, "'");
}

/* Copy the names of the stats added by the last summary (they point into the caller's
 * block) and give them their first-file slots; a name that is not UTF-8 is reported. */
static int own_new_stats(infer_state *s, size_t *bad_stat) {
    size_t n = s->summary.stats.len / sizeof(sstat);
    *bad_stat = SIZE_MAX;
    for (; s->owned < n; s->owned++) {
        sstat *st = sctx_stat(&s->summary, (int32_t)s->owned);
        uint8_t *copy = (uint8_t *)malloc(st->name_len + 1);
        if (copy == NULL || tbuf_reserve(&s->first_file, 4 * sizeof(int32_t))) {
            free(copy);
            return INFER_NOMEM;
        }
        memcpy(copy, st->name, st->name_len);
        copy[st->name_len] = 0;
        st->name = copy;
        int32_t none[4] = {-1, -1, -1, -1};
        memcpy(s->first_file.data + s->first_file.len, none, sizeof(none));
        s->first_file.len += sizeof(none);
        if (*bad_stat == SIZE_MAX && !utf8_valid(st->name, st->name_len)) {
            *bad_stat = s->owned;
        }
    }
    return INFER_OK;
}

/* The first of the n records holding the feature name at `location` (n when none). */
static size_t record_holding(int record_type, const uint8_t *buf, size_t buflen,
                             const uint8_t *offs, const uint8_t *lens, size_t n,
                             const sstat *want) {
    for (size_t r = 0; r < n; r++) {
        sctx one;
        size_t bad = 0, found = 0;
        memset(&one, 0, sizeof(one));
        int rc = summarize_core(&one, record_type, buf, buflen, offs + 8 * r, lens + 8 * r, 1, &bad);
        size_t k = one.stats.len / sizeof(sstat);
        for (size_t i = 0; rc == 0 && i < k && !found; i++) {
            const sstat *st = sctx_stat(&one, (int32_t)i);
            found = st->location == want->location && st->name_len == want->name_len &&
                    memcmp(st->name, want->name, st->name_len) == 0;
        }
        tbuf_free(&one.stats);
        tbuf_free(&one.touched);
        free(one.table);
        if (found) {
            return r;
        }
    }
    return n;
}

int infer_add(infer_state *s, const uint8_t *buf, size_t buflen, const uint8_t *offs,
              const uint8_t *lens, size_t n, size_t first_index, uint64_t base, size_t *taken,
              int *done, infer_error *err) {
    *taken = 0;
    *done = s->file_done;
    if (s->file_done || n == 0) {
        return INFER_OK;
    }
    /* the records within the budget: up to infer_sample in all, and up to the one whose
     * payload brings the file's sample to infer_bytes */
    size_t keep = n;
    if (s->infer_sample >= 0 && (unsigned long long)(s->infer_sample - s->file_records) < keep) {
        keep = (size_t)(s->infer_sample - s->file_records);
    }
    uint64_t bytes = 0;
    for (size_t i = 0; i < keep; i++) {
        bytes += load_u64(lens + 8 * i);
        if (s->infer_bytes >= 0 && s->file_bytes + bytes >= (uint64_t)s->infer_bytes) {
            keep = i + 1;
            s->file_done = 1;
            break;
        }
    }
    size_t bad = 0;
    int rc = summarize_core(&s->summary, s->record_type, buf, buflen, offs, lens, keep, &bad);
    size_t bad_stat;
    int owned = own_new_stats(s, &bad_stat);
    /* stamps count records from each call's first: restart them */
    size_t nstats = s->summary.stats.len / sizeof(sstat);
    for (size_t k = 0; k < nstats; k++) {
        sctx_stat(&s->summary, (int32_t)k)->stamp = 0;
    }
    if (rc == E_NOMEM || owned == INFER_NOMEM) {
        err->code = INFER_NOMEM;
        snprintf(err->message, INFER_MESSAGE_LEN, "out of memory");
        return INFER_NOMEM;
    }
    const char *path = s->paths[s->npaths - 1];
    if (rc != 0) {
        err->code = INFER_MALFORMED;
        err->record = (long long)(first_index + bad);
        err->offset = base + load_u64(offs + 8 * bad) - 12;
        err->feature[0] = 0;
        snprintf(err->path, INFER_FEATURE_LEN, "%s", path);
        err->message[0] = 0; /* each binding words it from the fields, as its scans do */
        return INFER_MALFORMED;
    }
    if (bad_stat != SIZE_MAX && s->bad_name.code == 0) {
        /* it cannot name a column (resolve reports it); a given schema skips it */
        const sstat *st = sctx_stat(&s->summary, (int32_t)bad_stat);
        size_t r = record_holding(s->record_type, buf, buflen, offs, lens, keep, st);
        r = r < keep ? r : 0;
        infer_error *bad_name = &s->bad_name;
        bad_name->code = INFER_NAME_NOT_UTF8;
        bad_name->record = (long long)(first_index + r);
        bad_name->offset = base + load_u64(offs + 8 * r) - 12;
        show_bytes(bad_name->feature, INFER_FEATURE_LEN, st->name, st->name_len);
        snprintf(bad_name->path, INFER_FEATURE_LEN, "%s", path);
    }
    int32_t file = (int32_t)(s->npaths - 1);
    for (size_t k = 0; k < nstats; k++) {
        const sstat *st = sctx_stat(&s->summary, (int32_t)k);
        int32_t *first = (int32_t *)(void *)(s->first_file.data + 16 * k);
        for (int q = 0; q < 4; q++) {
            if ((st->kinds >> q) & 1 && first[q] < 0) {
                first[q] = file;
            }
        }
    }
    if (keep > 0 && !s->file_counted) {
        s->file_counted = 1;
        s->files_with_records++;
    }
    s->file_records += (long long)keep;
    s->file_bytes += bytes;
    s->records += keep;
    s->bytes += bytes;
    if (s->infer_sample >= 0 && s->file_records >= s->infer_sample) {
        s->file_done = 1;
    }
    *taken = keep;
    *done = s->file_done;
    return INFER_OK;
}

/* -- resolution ---------------------------------------------------------------------- */

void infer_columns_free(infer_column *cols, size_t n) {
    if (cols == NULL) {
        return;
    }
    for (size_t i = 0; i < n; i++) {
        free(cols[i].name);
        free(cols[i].column);
    }
    free(cols);
}

static int is_context_column(const infer_column *cols, size_t n, const char *name, size_t len) {
    for (size_t k = 0; k < n; k++) {
        if (cols[k].kind != KIND_NONE && cols[k].location != FEATURE_LISTS &&
            cols[k].name_len == len && memcmp(cols[k].name, name, len) == 0) {
            return 1;
        }
    }
    return 0;
}

/* Name the columns: a feature list sharing its name with a context feature becomes
 * N__feature_list; that name taken, or a literal N__feature_list beside a context N
 * (ambiguous), is an error. */
static int name_columns(infer_column *cols, size_t n, const char *hint, infer_error *err) {
    size_t sl = strlen(TFSQL_FEATURE_LIST_SUFFIX);
    for (size_t c = 0; c < n; c++) {
        infer_column *col = &cols[c];
        int renamed = col->location == FEATURE_LISTS && col->kind != KIND_NONE &&
                      is_context_column(cols, n, col->name, col->name_len);
        size_t len = col->name_len + (renamed ? sl : 0);
        col->column = (char *)malloc(len + 1);
        if (col->column == NULL) {
            err->code = INFER_NOMEM;
            snprintf(err->message, INFER_MESSAGE_LEN, "out of memory");
            return INFER_NOMEM;
        }
        memcpy(col->column, col->name, col->name_len);
        memcpy(col->column + col->name_len, TFSQL_FEATURE_LIST_SUFFIX, renamed ? sl : 0);
        col->column[len] = 0;
    }
    for (size_t c = 0; c < n; c++) {
        const infer_column *col = &cols[c];
        if (col->kind == KIND_NONE || col->location != FEATURE_LISTS) {
            continue;
        }
        int literal = col->name_len > sl &&
                      memcmp(col->name + col->name_len - sl, TFSQL_FEATURE_LIST_SUFFIX, sl) == 0 &&
                      is_context_column(cols, n, col->name, col->name_len - sl);
        int bad = literal;
        for (size_t k = 0; k < n && !bad; k++) {
            bad = k != c && cols[k].kind != KIND_NONE && strcmp(cols[k].column, col->column) == 0;
        }
        if (bad) {
            err->code = INFER_NAME_TAKEN;
            snprintf(err->feature, INFER_FEATURE_LEN, "%s", col->name);
            tfsql_field fields[] = {{"feature", col->name}, {"column", col->column},
                                    {"schema_hint", hint}};
            infer_message(err, TFSQL_MSG_INFER_NAME_TAKEN, fields, 3);
            return INFER_NAME_TAKEN;
        }
    }
    return INFER_OK;
}

int infer_resolve(const infer_state *s, int lists_always, const char *schema_hint,
                  infer_column **cols_out, size_t *ncols, infer_error *err) {
    size_t n = s->summary.stats.len / sizeof(sstat);
    *cols_out = NULL;
    *ncols = 0;
    err->record = -1; /* a refusal of the whole sample: no file, record or offset */
    err->offset = 0;
    err->path[0] = err->feature[0] = 0;
    if (s->bad_name.code != 0) {
        *err = s->bad_name;
        char where[INFER_MESSAGE_LEN / 2] = "", record[24], offset[24];
        tfsql_text w = {where, sizeof(where), 0};
        snprintf(record, sizeof(record), "%lld", err->record);
        snprintf(offset, sizeof(offset), "%llu", err->offset);
        tfsql_field at[] = {{"record_index", record}, {"offset", offset}};
        tfsql_put(&w, err->path, strlen(err->path));
        tfsql_render(&w, TFSQL_MSG_CORE_WHERE_RECORD, at, 2, NULL);
        tfsql_render(&w, TFSQL_MSG_CORE_WHERE_OFFSET, at, 2, NULL);
        tfsql_field fields[] = {{"feature", err->feature}, {"where", where},
                                {"schema_hint", schema_hint}};
        infer_message(err, TFSQL_MSG_INFER_NAME_NOT_UTF8, fields, 3);
        return INFER_NAME_NOT_UTF8;
    }
    infer_column *cols = (infer_column *)calloc(n ? n : 1, sizeof(infer_column));
    if (cols == NULL) {
        err->code = INFER_NOMEM;
        snprintf(err->message, INFER_MESSAGE_LEN, "out of memory");
        return INFER_NOMEM;
    }
    for (size_t k = 0; k < n; k++) {
        const sstat *st = sctx_stat((sctx *)&s->summary, (int32_t)k);
        const int32_t *first = (const int32_t *)(const void *)(s->first_file.data + 16 * k);
        infer_column *col = &cols[k];
        col->name = (char *)malloc(st->name_len + 1);
        if (col->name == NULL) {
            infer_columns_free(cols, n);
            err->code = INFER_NOMEM;
            snprintf(err->message, INFER_MESSAGE_LEN, "out of memory");
            return INFER_NOMEM;
        }
        memcpy(col->name, st->name, st->name_len);
        col->name[st->name_len] = 0;
        col->name_len = st->name_len;
        col->location = st->location;
        int count = 0;
        for (int q = KIND_BYTES; q <= KIND_INT64; q++) {
            if ((st->kinds >> q) & 1) {
                col->kind = q;
                count++;
            }
        }
        if (count > 1) {
            char described[INFER_MESSAGE_LEN / 2] = "";
            tfsql_text d = {described, sizeof(described), 0};
            for (int q = KIND_BYTES; q <= KIND_INT64; q++) {
                if ((st->kinds >> q) & 1) {
                    if (d.len > 0) {
                        tfsql_render(&d, TFSQL_MSG_CORE_INFER_KINDS_JOIN, NULL, 0, NULL);
                    }
                    tfsql_field kind[] = {{"kind", kind_names[q]}, {"path", s->paths[first[q]]}};
                    tfsql_render(&d, TFSQL_MSG_CORE_INFER_KIND_FIRST, kind, 2, NULL);
                }
            }
            err->code = INFER_KIND_CONFLICT;
            snprintf(err->feature, INFER_FEATURE_LEN, "%s", col->name);
            tfsql_field fields[] = {{"feature", col->name}, {"described", described},
                                    {"schema_hint", schema_hint}};
            infer_message(err, TFSQL_MSG_INFER_KIND_CONFLICT, fields, 3);
            infer_columns_free(cols, n);
            return INFER_KIND_CONFLICT;
        }
        if (st->location == FEATURE_LISTS) {
            col->shape = LIST_OF_LIST;
        } else if (lists_always || st->max_len != 1) { /* several values, or only empty lists */
            col->shape = LIST;
        } else {
            col->shape = SCALAR;
        }
        col->utf8 = col->kind == KIND_BYTES && st->utf8;
    }
    int rc = name_columns(cols, n, schema_hint, err);
    if (rc != INFER_OK) {
        infer_columns_free(cols, n);
        return rc;
    }
    *cols_out = cols;
    *ncols = n;
    return INFER_OK;
}

/* -- a list-of-lists column's feature list -------------------------------------------- */

size_t tfsql_feature_list_name(const char *column, size_t len,
                               int (*is_context)(void *ctx, const char *name, size_t len),
                               void *ctx) {
    size_t sl = strlen(TFSQL_FEATURE_LIST_SUFFIX);
    if (len > sl && memcmp(column + len - sl, TFSQL_FEATURE_LIST_SUFFIX, sl) == 0 &&
        is_context(ctx, column, len - sl)) {
        return len - sl; /* N__feature_list beside a context column N reads the list N */
    }
    return len;
}

/* -- missing_columns ----------------------------------------------------------------- */

static int sample_holds(const infer_state *s, const char *column) {
    size_t len = strlen(column), sl = strlen(TFSQL_FEATURE_LIST_SUFFIX);
    const uint8_t *name = (const uint8_t *)column;
    if (sctx_find(&s->summary, FEATURES, name, len) >= 0 ||
        sctx_find(&s->summary, FEATURE_LISTS, name, len) >= 0) {
        return 1;
    }
    /* a feature list renamed with the suffix (its name is also a context feature's) */
    return len >= sl && memcmp(column + len - sl, TFSQL_FEATURE_LIST_SUFFIX, sl) == 0 &&
           sctx_find(&s->summary, FEATURE_LISTS, name, len - sl) >= 0;
}

static int compare_names(const void *a, const void *b) {
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int infer_check_missing(const infer_state *s, const char *const *columns, size_t n,
                        const char *const *described, size_t ndescribed,
                        const char *schema_name, const char *hint, infer_error *err) {
    if (s->summary.stats.len == 0) {
        return INFER_OK;
    }
    /* the names a description gives, sorted: a column among them is not missing */
    const char **named = NULL;
    if (ndescribed > 0) {
        named = (const char **)malloc(ndescribed * sizeof(*named));
        if (named == NULL) {
            err->code = INFER_NOMEM;
            return INFER_NOMEM;
        }
        memcpy(named, described, ndescribed * sizeof(*named));
        qsort(named, ndescribed, sizeof(*named), compare_names);
    }
    char listed[INFER_MESSAGE_LEN / 2] = "";
    tfsql_text l = {listed, sizeof(listed), 0};
    size_t missing = 0;
    for (size_t i = 0; i < n; i++) {
        if (sample_holds(s, columns[i]) ||
            (named != NULL &&
             bsearch(&columns[i], named, ndescribed, sizeof(*named), compare_names) != NULL)) {
            continue;
        }
        if (missing++ == 0) {
            snprintf(err->feature, INFER_FEATURE_LEN, "%s", columns[i]);
        } else {
            tfsql_render(&l, TFSQL_MSG_CORE_INFER_NAMES_JOIN, NULL, 0, NULL);
        }
        tfsql_field name = {"name", columns[i]};
        tfsql_render(&l, TFSQL_MSG_CORE_INFER_NAME, &name, 1, NULL);
    }
    free(named);
    if (missing == 0) {
        return INFER_OK;
    }
    err->code = INFER_MISSING;
    err->record = -1;
    err->path[0] = 0;
    char count[24], files[64] = "", first[INFER_FEATURE_LEN + 8] = "";
    tfsql_text f = {files, sizeof(files), 0}, p = {first, sizeof(first), 0};
    snprintf(count, sizeof(count), "%zu", s->npaths);
    tfsql_field counted = {"count", count};
    tfsql_render(&f, s->npaths == 1 ? TFSQL_MSG_INFER_FILES_ONE : TFSQL_MSG_INFER_FILES_MANY,
                 &counted, 1, NULL);
    if (s->npaths > 0) {
        tfsql_put(&p, s->paths[0], strlen(s->paths[0]));
    }
    if (s->npaths > 1) {
        tfsql_render(&p, TFSQL_MSG_CORE_INFER_MORE_FILES, NULL, 0, NULL);
    }
    tfsql_field fields[] = {{"schema_name", schema_name}, {"listed", listed}, {"files", files},
                            {"first", first}, {"hint", hint}};
    infer_message(err,
                  missing == 1 ? TFSQL_MSG_INFER_MISSING : TFSQL_MSG_INFER_MISSING_SEVERAL,
                  fields, 5);
    return INFER_MISSING;
}
