/* Which listed paths are data: hidden and bookkeeping names, glob components. */
#include <string.h>

#include "tfsql_core.h"

static int ends_with(const char *s, size_t n, const char *suffix) {
    size_t k = strlen(suffix);
    return n >= k && memcmp(s + n - k, suffix, k) == 0;
}

int tfsql_is_hidden_name(const char *name, size_t n) {
    if (n > 0 && name[0] == '.') {
        return 1;
    }
    if (n > 0 && name[0] == '_' && memchr(name, '=', n) == NULL) {
        return 1;
    }
    return ends_with(name, n, ".crc") || ends_with(name, n, "._COPYING_");
}

int tfsql_glob_exempts(const char *c, size_t n) {
    return n > 0 && (c[0] == '_' || c[0] == '.'); /* so never "**" */
}

int tfsql_has_glob_magic(const char *s, size_t n) {
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '*' || s[i] == '?' || s[i] == '[') {
            return 1;
        }
    }
    return 0;
}

size_t tfsql_glob_root(const char *pattern, size_t n) {
    size_t root = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && pattern[j] != '/') {
            j++;
        }
        if (j == n || tfsql_has_glob_magic(pattern + i, j - i)) {
            break; /* the last component, or the first with glob characters */
        }
        root = j;
        i = j + 1;
    }
    return root == 0 && n > 0 && pattern[0] == '/' ? 1 : root;
}

int tfsql_path_has_nul(const char *path, size_t n) { return memchr(path, 0, n) != NULL; }

/* The class starting at p[0] == '[': its end (the byte after ']') in *end, 1 when c is
 * in it; -1 when the class has no closing ']' (the '[' is then a literal). */
static int class_match(const char *p, unsigned char c, const char **end) {
    const char *q = p + 1;
    int negate = *q == '!';
    if (negate) {
        q++;
    }
    int found = 0;
    int first = 1;
    while (*q != 0 && (first || *q != ']')) {
        unsigned char lo = (unsigned char)*q;
        if (q[1] == '-' && q[2] != 0 && q[2] != ']') {
            unsigned char hi = (unsigned char)q[2];
            found |= lo <= c && c <= hi;
            q += 3;
        } else {
            found |= lo == c;
            q++;
        }
        first = 0;
    }
    if (*q != ']') {
        return -1;
    }
    *end = q + 1;
    return found != negate;
}

int tfsql_glob_match(const char *pattern, const char *name, size_t n) {
    const char *p = pattern;
    size_t i = 0;
    const char *star_p = NULL; /* the pattern just after the last '*' */
    size_t star_i = 0;         /* where that '*' is matching up to */
    while (i < n || *p != 0) {
        if (*p == '*') {
            while (*p == '*') {
                p++;
            }
            star_p = p;
            star_i = i;
            continue;
        }
        if (i < n && *p != 0) {
            int ok;
            const char *next = p + 1;
            if (*p == '?') {
                ok = 1;
            } else if (*p == '[') {
                ok = class_match(p, (unsigned char)name[i], &next);
                if (ok < 0) { /* no ']': a literal '[' */
                    ok = name[i] == '[';
                    next = p + 1;
                }
            } else {
                ok = *p == name[i];
            }
            if (ok) {
                p = next;
                i++;
                continue;
            }
        }
        if (star_p != NULL && star_i < n) { /* let the last '*' take one more byte */
            p = star_p;
            i = ++star_i;
            continue;
        }
        return 0;
    }
    return 1;
}

int tfsql_keep_listed(const char *rel, size_t n, const char *const *exempt, size_t nexempt) {
    size_t i = 0;
    while (i < n) {
        size_t j = i;
        while (j < n && rel[j] != '/') {
            j++;
        }
        if (j > i && tfsql_is_hidden_name(rel + i, j - i)) {
            int opted_in = 0;
            for (size_t k = 0; k < nexempt && !opted_in; k++) {
                opted_in = tfsql_glob_match(exempt[k], rel + i, j - i);
            }
            if (!opted_in) {
                return 0;
            }
        }
        i = j + 1;
    }
    return 1;
}

int tfsql_walk_action(int kind, int context) {
    switch (kind) {
    case TFSQL_ENTRY_FILE:
        return TFSQL_WALK_READ;
    case TFSQL_ENTRY_DIR:
        return TFSQL_WALK_DESCEND;
    case TFSQL_ENTRY_DIR_LINK: /* entered where named or matched, never from a walk */
        return context == TFSQL_IN_WALK ? TFSQL_WALK_SKIP : TFSQL_WALK_DESCEND;
    case TFSQL_ENTRY_OTHER:
        return TFSQL_WALK_REFUSE;
    default: /* a link to nothing, or an entry gone since it was listed */
        return TFSQL_WALK_SKIP;
    }
}
