/* The crash-recovery intent record (tfsql/commit.py): parse it and say how a reader
 * sees a directory that holds a prepared (not yet committed) one.
 *
 * The record is small JSON written by json.dumps: an object with "tfsql_intent" (1),
 * "state" ("prepared" or "committed"), "job", "trash" (a "_trash-..." directory),
 * "replaced" and "created" (lists of paths) and "new" (a list of [staged, final] path
 * pairs), every path relative to the directory and inside it. The parser below reads
 * exactly that shape with the JSON reader of json.c (other keys are skipped, strings
 * have their escapes undone) and refuses anything else, as tfsql.commit refuses a
 * record it did not write. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core_internal.h"

typedef struct {
    json_str *items;
    size_t n, cap;
} istrs;

struct tfsql_intent {
    int prepared;
    json_str job, trash;
    istrs replaced, created;
    istrs new_staged, new_final; /* in the same order */
};

static void istrs_free(istrs *l) {
    for (size_t i = 0; i < l->n; i++) {
        free(l->items[i].s);
    }
    free(l->items);
    memset(l, 0, sizeof(*l));
}

static int istrs_push(json_reader *r, istrs *l, json_str s) {
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 16;
        json_str *items = (json_str *)realloc(l->items, cap * sizeof(json_str));
        if (items == NULL) {
            free(s.s);
            return json_fail(r, "out of memory");
        }
        l->items = items;
        l->cap = cap;
    }
    l->items[l->n++] = s;
    return 0;
}

/* _is_inner: a normalized relative path below the target. */
static int is_inner(const json_str *s) {
    if (s->n == 0 || memchr(s->s, 0, s->n) != NULL) {
        return 0;
    }
    size_t i = 0;
    while (i <= s->n) {
        size_t j = i;
        while (j < s->n && s->s[j] != '/') {
            j++;
        }
        size_t len = j - i;
        if (len == 0 || (len == 1 && s->s[i] == '.') ||
            (len == 2 && s->s[i] == '.' && s->s[i + 1] == '.')) {
            return 0;
        }
        i = j + 1;
    }
    return 1;
}

static int path_element(json_reader *r, void *ctx) {
    json_str s = {0};
    if (json_read_string(r, &s)) {
        return -1;
    }
    if (!is_inner(&s)) {
        free(s.s);
        return json_fail(r, "a path leaves the target");
    }
    return istrs_push(r, (istrs *)ctx, s);
}

static int pair_element(json_reader *r, void *ctx) {
    struct tfsql_intent *it = (struct tfsql_intent *)ctx;
    json_str staged = {0}, final = {0};
    if (json_expect(r, '[') || json_read_string(r, &staged)) {
        return -1;
    }
    if (json_expect(r, ',') || json_read_string(r, &final)) {
        free(staged.s);
        return -1;
    }
    if (json_expect(r, ']')) {
        free(staged.s);
        free(final.s);
        return -1;
    }
    if (!is_inner(&staged) || !is_inner(&final)) {
        free(staged.s);
        free(final.s);
        return json_fail(r, "a path leaves the target");
    }
    if (istrs_push(r, &it->new_staged, staged)) {
        free(final.s);
        return -1;
    }
    return istrs_push(r, &it->new_final, final);
}

static int key_is(const json_str *k, const char *name) {
    return k->n == strlen(name) && memcmp(k->s, name, k->n) == 0;
}

void tfsql_intent_free(tfsql_intent *it) {
    if (it == NULL) {
        return;
    }
    free(it->job.s);
    free(it->trash.s);
    istrs_free(&it->replaced);
    istrs_free(&it->created);
    istrs_free(&it->new_staged);
    istrs_free(&it->new_final);
    free(it);
}

tfsql_intent *tfsql_intent_parse(const char *data, size_t n, char *err, size_t errlen) {
    json_reader r = {data, data + n, NULL};
    struct tfsql_intent *it = (struct tfsql_intent *)calloc(1, sizeof(*it));
    enum { F_FORMAT = 1, F_STATE = 2, F_JOB = 4, F_TRASH = 8, F_REPLACED = 16, F_NEW = 32,
           F_CREATED = 64, F_ALL = 127 };
    int seen = 0;
    if (it == NULL) {
        r.why = "out of memory";
        goto bad;
    }
    if (n > TFSQL_INTENT_MAX_BYTES) {
        r.why = "larger than any record tfsql writes";
        goto bad;
    }
    if (json_expect(&r, '{')) {
        goto bad;
    }
    json_skip_ws(&r);
    if (r.p < r.end && *r.p == '}') {
        r.p++;
    } else {
        for (;;) {
            json_str key = {0};
            if (json_read_string(&r, &key) || json_expect(&r, ':')) {
                free(key.s);
                goto bad;
            }
            int rc = 0;
            json_skip_ws(&r);
            if (key_is(&key, "tfsql_intent")) {
                const char *start = r.p;
                rc = json_skip_value(&r, 1);
                /* json.loads reads 1, 1.0 and 1e0 as equal to 1; tfsql writes 1 */
                if (rc == 0 && !(r.p - start == 1 && *start == '1')) {
                    rc = json_fail(&r, "unknown format or state");
                }
                seen |= F_FORMAT;
            } else if (key_is(&key, "state")) {
                json_str state = {0};
                rc = json_read_string(&r, &state);
                if (rc == 0) {
                    if (key_is(&state, "prepared")) {
                        it->prepared = 1;
                    } else if (key_is(&state, "committed")) {
                        it->prepared = 0;
                    } else {
                        rc = json_fail(&r, "unknown format or state");
                    }
                    free(state.s);
                }
                seen |= F_STATE;
            } else if (key_is(&key, "job")) {
                free(it->job.s);
                it->job.s = NULL;
                rc = json_read_string(&r, &it->job);
                seen |= F_JOB;
            } else if (key_is(&key, "trash")) {
                free(it->trash.s);
                it->trash.s = NULL;
                rc = json_read_string(&r, &it->trash);
                /* one entry of the target: "_trash-<job>" */
                if (rc == 0 && (it->trash.n < 7 || memcmp(it->trash.s, "_trash-", 7) != 0 ||
                                !is_inner(&it->trash) || memchr(it->trash.s, '/', it->trash.n))) {
                    rc = json_fail(&r, "a path leaves the target");
                }
                seen |= F_TRASH;
            } else if (key_is(&key, "replaced") || key_is(&key, "created")) {
                istrs *list = key_is(&key, "replaced") ? &it->replaced : &it->created;
                istrs_free(list);
                rc = json_read_array(&r, path_element, list);
                seen |= key_is(&key, "replaced") ? F_REPLACED : F_CREATED;
            } else if (key_is(&key, "new")) {
                istrs_free(&it->new_staged);
                istrs_free(&it->new_final);
                rc = json_read_array(&r, pair_element, it);
                seen |= F_NEW;
            } else {
                rc = json_skip_value(&r, 1);
            }
            free(key.s);
            if (rc) {
                goto bad;
            }
            json_skip_ws(&r);
            if (r.p < r.end && *r.p == ',') {
                r.p++;
                continue;
            }
            if (json_expect(&r, '}')) {
                goto bad;
            }
            break;
        }
    }
    json_skip_ws(&r);
    if (r.p != r.end) {
        json_fail(&r, "malformed JSON");
        goto bad;
    }
    if ((seen & (F_FORMAT)) == 0) {
        json_fail(&r, "unknown format or state");
        goto bad;
    }
    if (seen != F_ALL) {
        json_fail(&r, "a key is missing");
        goto bad;
    }
    return it;
bad:
    if (err != NULL && errlen > 0) {
        snprintf(err, errlen, "%s", r.why ? r.why : "malformed JSON");
    }
    tfsql_intent_free(it);
    return NULL;
}

int tfsql_intent_prepared(const tfsql_intent *it) { return it->prepared; }

static const istrs *intent_list(const tfsql_intent *it, int which) {
    switch (which) {
    case TFSQL_INTENT_REPLACED:
        return &it->replaced;
    case TFSQL_INTENT_CREATED:
        return &it->created;
    case TFSQL_INTENT_NEW_STAGED:
        return &it->new_staged;
    case TFSQL_INTENT_NEW_FINAL:
        return &it->new_final;
    default:
        return NULL;
    }
}

size_t tfsql_intent_count(const tfsql_intent *it, int which) {
    const istrs *list = intent_list(it, which);
    return list != NULL ? list->n : (which == TFSQL_INTENT_JOB || which == TFSQL_INTENT_TRASH);
}

const char *tfsql_intent_path(const tfsql_intent *it, int which, size_t index, size_t *len) {
    const json_str *s = which == TFSQL_INTENT_JOB     ? &it->job
                        : which == TFSQL_INTENT_TRASH ? &it->trash
                                                      : NULL;
    const istrs *list = intent_list(it, which);
    if (list != NULL && index < list->n) {
        s = &list->items[index];
    } else if (s == NULL || index != 0) {
        *len = 0;
        return NULL;
    }
    *len = s->n;
    return s->s;
}

typedef struct {
    const char *s;
    size_t n;
    size_t index;
} keyed;

static int cmp_keyed(const void *a, const void *b) {
    const keyed *x = (const keyed *)a, *y = (const keyed *)b;
    size_t m = x->n < y->n ? x->n : y->n;
    int c = memcmp(x->s, y->s, m);
    return c != 0 ? c : (x->n > y->n) - (x->n < y->n);
}

static const keyed *find(const keyed *sorted, size_t n, const json_str *s) {
    keyed probe = {s->s, s->n, 0};
    return (const keyed *)bsearch(&probe, sorted, n, sizeof(keyed), cmp_keyed);
}

int tfsql_intent_view(const tfsql_intent *it, const char *const *rels, size_t n, int *actions,
                      size_t *old_start) {
    for (size_t i = 0; i < n; i++) {
        actions[i] = TFSQL_VIEW_AS_IS;
        old_start[i] = 0;
    }
    if (!it->prepared || n == 0) {
        return 0;
    }
    keyed *sorted = (keyed *)malloc(n * sizeof(keyed));
    if (sorted == NULL) {
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        sorted[i].s = rels[i];
        sorted[i].n = strlen(rels[i]);
        sorted[i].index = i;
    }
    qsort(sorted, n, sizeof(keyed), cmp_keyed);
    /* a new file already moved into place (its staged copy gone) is left out */
    for (size_t k = 0; k < it->new_staged.n; k++) {
        if (find(sorted, n, &it->new_staged.items[k]) != NULL) {
            continue;
        }
        const keyed *placed = find(sorted, n, &it->new_final.items[k]);
        if (placed != NULL) {
            actions[placed->index] = TFSQL_VIEW_LEAVE_OUT;
        }
    }
    /* an old file in the trash reads as at its old place */
    size_t t = it->trash.n;
    for (size_t i = 0; i < n; i++) {
        if (sorted[i].n > t + 1 && memcmp(sorted[i].s, it->trash.s, t) == 0 &&
            sorted[i].s[t] == '/') {
            actions[sorted[i].index] = TFSQL_VIEW_MOVED;
            old_start[sorted[i].index] = t + 1;
        }
    }
    free(sorted);
    return 0;
}
