/* The crash-recovery intent record (tfsql/commit.py): parse it and say how a reader
 * sees a directory that holds a prepared (not yet committed) one.
 *
 * The record is small JSON written by json.dumps: an object with "tfsql_intent" (1),
 * "state" ("prepared" or "committed"), "job", "trash" (a "_trash-..." directory),
 * "replaced" and "created" (lists of paths) and "new" (a list of [staged, final] path
 * pairs), every path relative to the directory and inside it. The parser below reads
 * exactly that shape (other keys are skipped, nesting at most 64 deep), copies strings
 * with their escapes undone (\uXXXX as UTF-8; a lone surrogate U+DC80..U+DCFF as the
 * byte it stands for, as Python's surrogateescape writes undecodable file names; other
 * lone surrogates as 3 bytes that match no file), and
 * refuses anything else, as tfsql.commit refuses a record it did not write. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tfsql_core.h"

#define MAX_DEPTH 64

typedef struct {
    char *s;
    size_t n;
} istr;

typedef struct {
    istr *items;
    size_t n, cap;
} istrs;

struct tfsql_intent {
    int prepared;
    istr trash;
    istrs new_staged, new_final; /* in the same order */
};

typedef struct {
    const char *p, *end;
    const char *why; /* the first error */
} reader;

static void skip_ws(reader *r) {
    while (r->p < r->end && (*r->p == ' ' || *r->p == '\t' || *r->p == '\n' || *r->p == '\r')) {
        r->p++;
    }
}

static int fail(reader *r, const char *why) {
    if (r->why == NULL) {
        r->why = why;
    }
    return -1;
}

static int expect(reader *r, char c) {
    skip_ws(r);
    if (r->p >= r->end || *r->p != c) {
        return fail(r, "malformed JSON");
    }
    r->p++;
    return 0;
}

static int hex4(reader *r, unsigned *v) {
    if (r->end - r->p < 4) {
        return fail(r, "malformed JSON string");
    }
    *v = 0;
    for (int i = 0; i < 4; i++) {
        char c = r->p[i];
        int d = c >= '0' && c <= '9' ? c - '0'
                : c >= 'a' && c <= 'f' ? c - 'a' + 10
                : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                       : -1;
        if (d < 0) {
            return fail(r, "malformed JSON string");
        }
        *v = *v * 16 + (unsigned)d;
    }
    r->p += 4;
    return 0;
}

static void put_utf8(char *out, size_t *o, unsigned cp) {
    if (cp < 0x80) {
        out[(*o)++] = (char)cp;
    } else if (cp < 0x800) {
        out[(*o)++] = (char)(0xc0 | (cp >> 6));
        out[(*o)++] = (char)(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
        out[(*o)++] = (char)(0xe0 | (cp >> 12));
        out[(*o)++] = (char)(0x80 | ((cp >> 6) & 0x3f));
        out[(*o)++] = (char)(0x80 | (cp & 0x3f));
    } else {
        out[(*o)++] = (char)(0xf0 | (cp >> 18));
        out[(*o)++] = (char)(0x80 | ((cp >> 12) & 0x3f));
        out[(*o)++] = (char)(0x80 | ((cp >> 6) & 0x3f));
        out[(*o)++] = (char)(0x80 | (cp & 0x3f));
    }
}

/* A JSON string at r->p; `out` (may be NULL to skip) gets a malloc'ed copy. */
static int read_string(reader *r, istr *out) {
    if (expect(r, '"')) {
        return -1;
    }
    const char *start = r->p;
    while (r->p < r->end && *r->p != '"') {
        r->p += *r->p == '\\' ? 2 : 1;
    }
    if (r->p >= r->end) {
        return fail(r, "malformed JSON string");
    }
    const char *stop = r->p;
    r->p = start;
    /* an escape never grows: \uXXXX (6 bytes) gives at most 3, a pair (12) gives 4 */
    char *s = out != NULL ? (char *)malloc((size_t)(stop - start) + 1) : NULL;
    if (out != NULL && s == NULL) {
        return fail(r, "out of memory");
    }
    char scratch[4];
    size_t o = 0;
    while (r->p < stop) {
        char c = *r->p++;
        if ((unsigned char)c < 0x20) {
            free(s);
            return fail(r, "malformed JSON string");
        }
        if (c != '\\') {
            if (s != NULL) {
                s[o] = c;
            }
            o++;
            continue;
        }
        char e = *r->p++;
        unsigned cp;
        switch (e) {
        case '"': case '\\': case '/': cp = (unsigned char)e; break;
        case 'b': cp = '\b'; break;
        case 'f': cp = '\f'; break;
        case 'n': cp = '\n'; break;
        case 'r': cp = '\r'; break;
        case 't': cp = '\t'; break;
        case 'u':
            if (hex4(r, &cp)) {
                free(s);
                return -1;
            }
            if (cp >= 0xd800 && cp < 0xdc00 && stop - r->p >= 6 && r->p[0] == '\\' &&
                r->p[1] == 'u') {
                const char *back = r->p;
                unsigned lo;
                r->p += 2;
                if (hex4(r, &lo)) {
                    free(s);
                    return -1;
                }
                if (lo >= 0xdc00 && lo < 0xe000) {
                    cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
                } else {
                    r->p = back;
                }
            }
            if (cp >= 0xdc80 && cp <= 0xdcff) { /* surrogateescape: the raw byte */
                if (s != NULL) {
                    s[o] = (char)(cp - 0xdc00);
                }
                o++;
                continue;
            }
            break; /* another lone surrogate: 3 bytes no file name holds, as in Python */
        default:
            free(s);
            return fail(r, "malformed JSON string");
        }
        size_t k = 0;
        put_utf8(scratch, &k, cp);
        if (s != NULL) {
            memcpy(s + o, scratch, k);
        }
        o += k;
    }
    r->p = stop + 1;
    if (s != NULL) {
        s[o] = 0;
        out->s = s;
        out->n = o;
    }
    return 0;
}

/* Skip any JSON value (for keys the record does not need). */
static int skip_value(reader *r, int depth) {
    if (depth > MAX_DEPTH) {
        return fail(r, "JSON nested too deeply");
    }
    skip_ws(r);
    if (r->p >= r->end) {
        return fail(r, "malformed JSON");
    }
    char c = *r->p;
    if (c == '"') {
        return read_string(r, NULL);
    }
    if (c == '{' || c == '[') {
        char close = c == '{' ? '}' : ']';
        r->p++;
        skip_ws(r);
        if (r->p < r->end && *r->p == close) {
            r->p++;
            return 0;
        }
        for (;;) {
            if (c == '{' && (read_string(r, NULL) || expect(r, ':'))) {
                return -1;
            }
            if (skip_value(r, depth + 1)) {
                return -1;
            }
            skip_ws(r);
            if (r->p < r->end && *r->p == ',') {
                r->p++;
                continue;
            }
            return expect(r, close);
        }
    }
    /* a number, true, false or null */
    const char *start = r->p;
    while (r->p < r->end && strchr("+-.0123456789eEtrufalsn", *r->p) != NULL) {
        r->p++;
    }
    return r->p > start ? 0 : fail(r, "malformed JSON");
}

static void istrs_free(istrs *l) {
    for (size_t i = 0; i < l->n; i++) {
        free(l->items[i].s);
    }
    free(l->items);
    memset(l, 0, sizeof(*l));
}

static int istrs_push(reader *r, istrs *l, istr s) {
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 16;
        istr *items = (istr *)realloc(l->items, cap * sizeof(istr));
        if (items == NULL) {
            free(s.s);
            return fail(r, "out of memory");
        }
        l->items = items;
        l->cap = cap;
    }
    l->items[l->n++] = s;
    return 0;
}

/* A JSON array; each element read by `element` (depth counted from the array). */
static int read_array(reader *r, int (*element)(reader *, void *), void *ctx) {
    if (expect(r, '[')) {
        return -1;
    }
    skip_ws(r);
    if (r->p < r->end && *r->p == ']') {
        r->p++;
        return 0;
    }
    for (;;) {
        if (element(r, ctx)) {
            return -1;
        }
        skip_ws(r);
        if (r->p < r->end && *r->p == ',') {
            r->p++;
            continue;
        }
        return expect(r, ']');
    }
}

/* _is_inner: a normalized relative path below the target. */
static int is_inner(const istr *s) {
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

static int path_element(reader *r, void *ctx) {
    (void)ctx;
    istr s = {0};
    if (read_string(r, &s)) {
        return -1;
    }
    int inner = is_inner(&s);
    free(s.s);
    return inner ? 0 : fail(r, "a path leaves the target");
}

static int pair_element(reader *r, void *ctx) {
    struct tfsql_intent *it = (struct tfsql_intent *)ctx;
    istr staged = {0}, final = {0};
    if (expect(r, '[') || read_string(r, &staged)) {
        return -1;
    }
    if (expect(r, ',') || read_string(r, &final)) {
        free(staged.s);
        return -1;
    }
    if (expect(r, ']')) {
        free(staged.s);
        free(final.s);
        return -1;
    }
    if (!is_inner(&staged) || !is_inner(&final)) {
        free(staged.s);
        free(final.s);
        return fail(r, "a path leaves the target");
    }
    if (istrs_push(r, &it->new_staged, staged)) {
        free(final.s);
        return -1;
    }
    return istrs_push(r, &it->new_final, final);
}

static int key_is(const istr *k, const char *name) {
    return k->n == strlen(name) && memcmp(k->s, name, k->n) == 0;
}

void tfsql_intent_free(tfsql_intent *it) {
    if (it == NULL) {
        return;
    }
    free(it->trash.s);
    istrs_free(&it->new_staged);
    istrs_free(&it->new_final);
    free(it);
}

tfsql_intent *tfsql_intent_parse(const char *data, size_t n, char *err, size_t errlen) {
    reader r = {data, data + n, NULL};
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
    if (expect(&r, '{')) {
        goto bad;
    }
    skip_ws(&r);
    if (r.p < r.end && *r.p == '}') {
        r.p++;
    } else {
        for (;;) {
            istr key = {0};
            if (read_string(&r, &key) || expect(&r, ':')) {
                free(key.s);
                goto bad;
            }
            int rc = 0;
            skip_ws(&r);
            if (key_is(&key, "tfsql_intent")) {
                const char *start = r.p;
                rc = skip_value(&r, 1);
                /* json.loads reads 1, 1.0 and 1e0 as equal to 1; tfsql writes 1 */
                if (rc == 0 && !(r.p - start == 1 && *start == '1')) {
                    rc = fail(&r, "unknown format or state");
                }
                seen |= F_FORMAT;
            } else if (key_is(&key, "state")) {
                istr state = {0};
                rc = read_string(&r, &state);
                if (rc == 0) {
                    if (key_is(&state, "prepared")) {
                        it->prepared = 1;
                    } else if (key_is(&state, "committed")) {
                        it->prepared = 0;
                    } else {
                        rc = fail(&r, "unknown format or state");
                    }
                    free(state.s);
                }
                seen |= F_STATE;
            } else if (key_is(&key, "job")) {
                rc = skip_value(&r, 1);
                seen |= F_JOB;
            } else if (key_is(&key, "trash")) {
                free(it->trash.s);
                it->trash.s = NULL;
                rc = read_string(&r, &it->trash);
                if (rc == 0 && (it->trash.n < 7 || memcmp(it->trash.s, "_trash-", 7) != 0 ||
                                !is_inner(&it->trash))) {
                    rc = fail(&r, "a path leaves the target");
                }
                seen |= F_TRASH;
            } else if (key_is(&key, "replaced") || key_is(&key, "created")) {
                rc = read_array(&r, path_element, it);
                seen |= key_is(&key, "replaced") ? F_REPLACED : F_CREATED;
            } else if (key_is(&key, "new")) {
                istrs_free(&it->new_staged);
                istrs_free(&it->new_final);
                rc = read_array(&r, pair_element, it);
                seen |= F_NEW;
            } else {
                rc = skip_value(&r, 1);
            }
            free(key.s);
            if (rc) {
                goto bad;
            }
            skip_ws(&r);
            if (r.p < r.end && *r.p == ',') {
                r.p++;
                continue;
            }
            if (expect(&r, '}')) {
                goto bad;
            }
            break;
        }
    }
    skip_ws(&r);
    if (r.p != r.end) {
        fail(&r, "malformed JSON");
        goto bad;
    }
    if ((seen & (F_FORMAT)) == 0) {
        fail(&r, "unknown format or state");
        goto bad;
    }
    if (seen != F_ALL) {
        fail(&r, "a key is missing");
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

static const keyed *find(const keyed *sorted, size_t n, const istr *s) {
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
