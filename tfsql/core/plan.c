/*
 * tfsql/core/plan.c -- the dataset plan over a binding's listing: the order of the data
 * files (by bytes, repeats dropped), how a path is shown, and the hive partition columns
 * of the files (their keys, each file's values and each column's type) with every hive
 * refusal, rendered from tfsql/messages.py's HIVE templates (plan_messages_gen.h).
 */

#include "core_internal.h"

#include <stdio.h>
#include <string.h>

#include "plan_messages_gen.h"

uint64_t tfsql_key_mix(uint64_t h, uint64_t v) {
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdull;
}

uint64_t tfsql_listing_key(uint64_t seed, const tfsql_stamp *files, size_t n) {
    uint64_t h = tfsql_key_mix(0x1234567ull, seed);
    for (size_t i = 0; i < n; i++) {
        h = tfsql_key_mix(h, (uint64_t)files[i].path_len);
        for (size_t j = 0; j < files[i].path_len; j++) {
            h = tfsql_key_mix(h, (uint8_t)files[i].path[j]);
        }
        h = tfsql_key_mix(h, files[i].size);
        h = tfsql_key_mix(h, files[i].mtime_ns);
    }
    return h;
}

int tfsql_path_compare(const char *a, size_t an, const char *b, size_t bn) {
    int c = memcmp(a, b, an < bn ? an : bn);
    if (c != 0) {
        return c;
    }
    return an < bn ? -1 : an > bn;
}

typedef struct {
    const char *p;
    size_t n, index;
} keyed_path;

static int compare_keyed(const void *x, const void *y) {
    const keyed_path *a = (const keyed_path *)x, *b = (const keyed_path *)y;
    int c = tfsql_path_compare(a->p, a->n, b->p, b->n);
    if (c != 0) {
        return c;
    }
    return a->index < b->index ? -1 : a->index > b->index;
}

long tfsql_plan_order(const char *const *paths, const size_t *lens, size_t n, size_t *order) {
    keyed_path *keyed = (keyed_path *)malloc((n ? n : 1) * sizeof(*keyed));
    if (keyed == NULL) {
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        keyed[i].p = paths[i];
        keyed[i].n = lens[i];
        keyed[i].index = i;
    }
    qsort(keyed, n, sizeof(*keyed), compare_keyed);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (k > 0 && tfsql_path_compare(keyed[i].p, keyed[i].n, paths[order[k - 1]],
                                        lens[order[k - 1]]) == 0) {
            continue; /* a repeat: the first listed is kept */
        }
        order[k++] = keyed[i].index;
    }
    free(keyed);
    return (long)k;
}

/* The length of the valid UTF-8 sequence starting at p[0] (at most n bytes), else 0. */
static size_t utf8_sequence(const uint8_t *p, size_t n) {
    size_t len = p[0] < 0x80 ? 1 : p[0] >= 0xc2 && p[0] <= 0xdf ? 2 : p[0] >= 0xe0 && p[0] <= 0xef ? 3
                                                                : p[0] >= 0xf0 && p[0] <= 0xf4 ? 4
                                                                                                : 0;
    return len > 0 && len <= n && utf8_valid(p, len) ? len : 0;
}

size_t tfsql_path_display(const char *path, size_t n, char *out) {
    static const char hex[] = "0123456789abcdef";
    const uint8_t *p = (const uint8_t *)path;
    size_t o = 0;
    for (size_t i = 0; i < n;) {
        size_t len = utf8_sequence(p + i, n - i);
        if (len > 0) {
            memcpy(out + o, p + i, len);
            o += len;
            i += len;
        } else {
            out[o++] = '\\';
            out[o++] = 'x';
            out[o++] = hex[p[i] >> 4];
            out[o++] = hex[p[i] & 15];
            i++;
        }
    }
    out[o] = '\0';
    return o;
}

/* -- hive ----------------------------------------------------------------------------- */

/* A file's key=value segments, unescaped: keys[k] / vals[k] (NULL for a null value),
 * each malloc'd and NUL-terminated, with their lengths. */
typedef struct {
    size_t n;
    char **keys, **vals;
    size_t *key_lens, *val_lens;
} file_segments;

static void segments_free(file_segments *s) {
    for (size_t k = 0; k < s->n; k++) {
        if (s->keys != NULL) {
            free(s->keys[k]);
        }
        if (s->vals != NULL) {
            free(s->vals[k]);
        }
    }
    free(s->keys);
    free(s->vals);
    free(s->key_lens);
    free(s->val_lens);
    memset(s, 0, sizeof(*s));
}

static char *unescape_new(const char *s, size_t n, size_t *len) {
    char *out = (char *)malloc(2 * n + 1);
    if (out != NULL) {
        *len = tfsql_hive_unescape(s, n, out);
        out[*len] = '\0';
    }
    return out;
}

static int read_segments(const tfsql_plan_file *f, int rule, file_segments *out) {
    memset(out, 0, sizeof(*out));
    size_t start = 0, len = 0;
    tfsql_hive_directory(f->path, f->root, rule, &start, &len);
    const char *dir = f->path + start;
    size_t count = tfsql_hive_segments(dir, len, NULL, 0);
    if (count == 0) {
        return 0;
    }
    tfsql_hive_segment *segs = (tfsql_hive_segment *)malloc(count * sizeof(*segs));
    out->keys = (char **)calloc(count, sizeof(char *));
    out->vals = (char **)calloc(count, sizeof(char *));
    out->key_lens = (size_t *)calloc(count, sizeof(size_t));
    out->val_lens = (size_t *)calloc(count, sizeof(size_t));
    if (segs == NULL || out->keys == NULL || out->vals == NULL || out->key_lens == NULL ||
        out->val_lens == NULL) {
        free(segs);
        segments_free(out);
        return -1;
    }
    out->n = count;
    tfsql_hive_segments(dir, len, segs, count);
    for (size_t k = 0; k < count; k++) {
        out->keys[k] = unescape_new(dir + segs[k].key_start, segs[k].key_len, &out->key_lens[k]);
        if (!segs[k].is_null) {
            out->vals[k] = unescape_new(dir + segs[k].value_start, segs[k].value_len,
                                        &out->val_lens[k]);
        }
        if (out->keys[k] == NULL || (!segs[k].is_null && out->vals[k] == NULL)) {
            free(segs);
            segments_free(out);
            return -1;
        }
    }
    free(segs);
    return 0;
}

static int same_key(const char *a, size_t an, const char *b, size_t bn) {
    return an == bn && memcmp(a, b, an) == 0;
}

/* The text of a string field of an error, shown as tfsql_path_display shows it. */
static char *shown(const char *s, size_t n) {
    char *out = (char *)malloc(4 * n + 1);
    if (out != NULL) {
        tfsql_path_display(s, n, out);
    }
    return out;
}

static char *file_shown(const tfsql_plan_file *f) {
    return f->display != NULL ? shown(f->display, f->display_len) : shown(f->path, f->path_len);
}

/* "(a, b)" or "none" */
static char *keys_text(char *const *keys, const size_t *lens, size_t n) {
    if (n == 0) {
        return shown("none", 4);
    }
    size_t total = 3;
    for (size_t k = 0; k < n; k++) {
        total += 4 * lens[k] + 2;
    }
    char *out = (char *)malloc(total);
    if (out == NULL) {
        return NULL;
    }
    size_t o = 0;
    out[o++] = '(';
    for (size_t k = 0; k < n; k++) {
        if (k > 0) {
            out[o++] = ',';
            out[o++] = ' ';
        }
        o += tfsql_path_display(keys[k], lens[k], out + o);
    }
    out[o++] = ')';
    out[o] = '\0';
    return out;
}

static const char *template_of(const tfsql_field *table, const char *reason) {
    for (const tfsql_field *t = table; t->name != NULL; t++) {
        if (strcmp(t->name, reason) == 0) {
            return t->text;
        }
    }
    return "";
}

/* Fill err: its reason, fields (owned strings, NULL allowed) and rendered message. */
static int refuse(tfsql_plan_error *err, const tfsql_field *phrases, const char *reason, const char *const *names,
                  char **texts, size_t n) {
    tfsql_field fields[TFSQL_PLAN_MAX_FIELDS];
    int nomem = 0;
    err->reason = reason;
    err->nfields = 0;
    for (size_t i = 0; i < n && i < TFSQL_PLAN_MAX_FIELDS; i++) {
        nomem |= texts[i] == NULL;
        err->field_names[i] = names[i];
        err->field_texts[i] = texts[i];
        fields[i].name = names[i];
        fields[i].text = texts[i] != NULL ? texts[i] : "";
        err->nfields++;
    }
    if (nomem) {
        err->reason = "nomem";
        snprintf(err->message, sizeof(err->message), "out of memory");
        return TFSQL_PLAN_NOMEM;
    }
    tfsql_text o = {err->message, sizeof(err->message), 0};
    err->message[0] = '\0';
    tfsql_render(&o, template_of(TFSQL_MSG_HIVE, reason), fields, err->nfields,
                 phrases);
    return TFSQL_PLAN_REFUSED;
}

void tfsql_plan_error_free(tfsql_plan_error *err) {
    for (size_t i = 0; i < err->nfields; i++) {
        free(err->field_texts[i]);
        err->field_texts[i] = NULL;
    }
    err->nfields = 0;
}

void tfsql_hive_plan_free(tfsql_hive_plan *plan) {
    for (size_t k = 0; k < plan->ncols; k++) {
        free(plan->names[k]);
    }
    for (size_t i = 0; plan->values != NULL && i < plan->nfiles * plan->ncols; i++) {
        free(plan->values[i]);
    }
    free(plan->names);
    free(plan->name_lens);
    free(plan->is_int64);
    free(plan->values);
    free(plan->value_lens);
    free(plan->ints);
    memset(plan, 0, sizeof(*plan));
}

static int none_found(const tfsql_plan_file *files, size_t n, const tfsql_field *phrases,
                      tfsql_plan_error *err) {
    /* the least root (by bytes) below which nothing was found, else "named" */
    const tfsql_plan_file *least = NULL;
    for (size_t i = 0; i < n; i++) {
        if (files[i].root != NULL &&
            (least == NULL || tfsql_path_compare(files[i].root, files[i].root_len, least->root,
                                                 least->root_len) < 0)) {
            least = &files[i];
        }
    }
    char where[8192];
    tfsql_text o = {where, sizeof(where), 0};
    where[0] = '\0';
    char *root = least != NULL ? shown(least->root, least->root_len) : NULL;
    tfsql_field field = {"root", root != NULL ? root : ""};
    tfsql_render(&o, template_of(TFSQL_MSG_HIVE_WHERE, least != NULL ? "root" : "named"), &field, 1,
                 NULL);
    free(root);
    static const char *const names[] = {"where"};
    char *texts[] = {shown(where, o.len)};
    return refuse(err, phrases, "none_found", names, texts, 1);
}

int tfsql_plan_hive(const tfsql_plan_file *files, size_t n, int rule, int required,
                    const char *const *typed, const size_t *typed_lens, size_t ntyped,
                    const tfsql_field *phrases,
                    tfsql_hive_plan *plan, tfsql_plan_error *err) {
    memset(plan, 0, sizeof(*plan));
    memset(err, 0, sizeof(*err));
    err->reason = "ok";
    required |= ntyped > 0; /* naming partition columns asks for them */
    file_segments first = {0};
    size_t first_index = n;
    int rc = TFSQL_PLAN_OK;
    /* the first file with keys names the columns */
    for (size_t i = 0; i < n && first_index == n; i++) {
        if (read_segments(&files[i], rule, &first)) {
            return TFSQL_PLAN_NOMEM;
        }
        if (first.n > 0) {
            first_index = i;
        } else {
            segments_free(&first);
        }
    }
    if (first_index == n) {
        return required ? none_found(files, n, phrases, err) : TFSQL_PLAN_OK;
    }
    for (size_t k = 0; k < first.n; k++) {
        for (size_t j = 0; j < k; j++) {
            if (same_key(first.keys[j], first.key_lens[j], first.keys[k], first.key_lens[k])) {
                static const char *const names[] = {"key", "path"};
                char *texts[] = {shown(first.keys[k], first.key_lens[k]), file_shown(&files[first_index])};
                segments_free(&first);
                return refuse(err, phrases, "repeated_key", names, texts, 2);
            }
        }
    }
    size_t ncols = first.n;
    plan->nfiles = n;
    plan->ncols = ncols;
    plan->names = first.keys;
    plan->name_lens = first.key_lens;
    first.keys = NULL;
    first.key_lens = NULL;
    plan->values = (char **)calloc(n * ncols, sizeof(char *));
    plan->value_lens = (size_t *)calloc(n * ncols, sizeof(size_t));
    plan->ints = (int64_t *)calloc(n * ncols, sizeof(int64_t));
    plan->is_int64 = (int *)calloc(ncols, sizeof(int));
    if (plan->values == NULL || plan->value_lens == NULL || plan->ints == NULL ||
        plan->is_int64 == NULL) {
        segments_free(&first);
        tfsql_hive_plan_free(plan);
        return TFSQL_PLAN_NOMEM;
    }
    for (size_t i = 0; i < n && rc == TFSQL_PLAN_OK; i++) {
        file_segments segs = {0};
        if (i == first_index) {
            segs = first; /* its keys moved to the plan: the names */
            memset(&first, 0, sizeof(first));
        } else if (read_segments(&files[i], rule, &segs)) {
            rc = TFSQL_PLAN_NOMEM;
            break;
        }
        int same = i == first_index || segs.n == ncols;
        for (size_t k = 0; same && i != first_index && k < ncols; k++) {
            same = same_key(segs.keys[k], segs.key_lens[k], plan->names[k], plan->name_lens[k]);
        }
        if (!same) {
            static const char *const names[] = {"first_path", "first_keys", "path", "keys"};
            char *texts[] = {file_shown(&files[first_index]),
                             keys_text(plan->names, plan->name_lens, ncols), file_shown(&files[i]),
                             keys_text(segs.keys, segs.key_lens, segs.n)};
            rc = refuse(err, phrases, "inconsistent", names, texts, 4);
        } else {
            for (size_t k = 0; k < ncols; k++) {
                plan->values[i * ncols + k] = segs.vals[k];
                plan->value_lens[i * ncols + k] = segs.val_lens[k];
                segs.vals[k] = NULL;
            }
        }
        segments_free(&segs);
    }
    segments_free(&first);
    for (size_t t = 0; t < ntyped && rc == TFSQL_PLAN_OK; t++) {
        size_t k = 0;
        while (k < ncols && !same_key(typed[t], typed_lens[t], plan->names[k], plan->name_lens[k])) {
            k++;
        }
        if (k == ncols) {
            static const char *const names[] = {"key", "keys"};
            char *texts[] = {shown(typed[t], typed_lens[t]), keys_text(plan->names, plan->name_lens, ncols)};
            rc = refuse(err, phrases, "unknown_key", names, texts, 2);
        }
    }
    if (rc != TFSQL_PLAN_OK) {
        tfsql_hive_plan_free(plan);
        return rc;
    }
    /* the typing rule: int64 when every non-null value is a decimal int64, else string */
    for (size_t k = 0; k < ncols; k++) {
        int any = 0, all_int = 1;
        for (size_t i = 0; i < n && all_int; i++) {
            const char *v = plan->values[i * ncols + k];
            if (v != NULL) {
                any = 1;
                all_int = tfsql_hive_int64(v, plan->value_lens[i * ncols + k], &plan->ints[i * ncols + k]);
            }
        }
        plan->is_int64[k] = any && all_int;
    }
    return TFSQL_PLAN_OK;
}
