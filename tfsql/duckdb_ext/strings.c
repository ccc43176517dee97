/*
 * tfsql/duckdb_ext/strings.c -- small growable helpers of the DuckDB extension:
 * string copies and formatting, string lists, suffix tests, error prefixes.
 */

#include "ext_common.h"

char *xstrndup(const char *s, size_t n) {
    char *r = (char *)malloc(n + 1);
    if (r != NULL) {
        memcpy(r, s, n);
        r[n] = 0;
    }
    return r;
}

char *xstrdup(const char *s) { return xstrndup(s, strlen(s)); }

char *xprintf(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *r = (char *)malloc((size_t)n + 1);
    if (r != NULL) {
        va_start(ap, fmt);
        vsnprintf(r, (size_t)n + 1, fmt, ap);
        va_end(ap);
    }
    return r;
}

/* Append s (owned; NULL is kept: a null partition value); -1 when out of memory. */
int strlist_push(strlist *l, char *s) {
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 16;
        char **items = (char **)realloc(l->items, cap * sizeof(char *));
        if (items == NULL) {
            free(s);
            return -1;
        }
        l->items = items;
        l->cap = cap;
    }
    l->items[l->n++] = s;
    return 0;
}

int strlist_add(strlist *l, char *s) { /* takes ownership of s; NULL: out of memory */
    if (s == NULL) {
        return -1;
    }
    return strlist_push(l, s);
}

void strlist_free(strlist *l) {
    for (size_t i = 0; i < l->n; i++) {
        free(l->items[i]);
    }
    free(l->items);
    memset(l, 0, sizeof(*l));
}

/* err = "<path>: <why>", cut to ERRLEN bytes. */
void error_at_path(char *err, const char *path, const char *why) {
    snprintf(err, ERRLEN, "%s: %s", path, why);
}

int ends_with_ci(const char *s, const char *suffix) {
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcasecmp(s + n - m, suffix) == 0;
}
