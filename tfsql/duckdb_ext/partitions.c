/*
 * tfsql/duckdb_ext/partitions.c -- hive key=value directories and the types of
 * their columns (tfsql.partitioning).
 */

#include "duckdb_ext.h"

static int hexval(char c) {
    if (c >= '0' && c <= '9') {
        return c - '0';
    }
    if (c >= 'a' && c <= 'f') {
        return c - 'a' + 10;
    }
    if (c >= 'A' && c <= 'F') {
        return c - 'A' + 10;
    }
    return -1;
}

/* tfsql.partitioning.unescape_partition_value: %XX -> the character (code point XX). */
static char *unescape(const char *s, size_t n) {
    char *out = (char *)malloc(2 * n + 1);
    if (out == NULL) {
        return NULL;
    }
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '%' && i + 2 < n + 0 && i + 2 <= n - 1 && hexval(s[i + 1]) >= 0 &&
            hexval(s[i + 2]) >= 0) {
            unsigned v = (unsigned)(hexval(s[i + 1]) * 16 + hexval(s[i + 2]));
            if (v < 0x80) {
                out[o++] = (char)v;
            } else { /* chr(v) encoded as UTF-8 */
                out[o++] = (char)(0xc0 | (v >> 6));
                out[o++] = (char)(0x80 | (v & 0x3f));
            }
            i += 2;
        } else {
            out[o++] = s[i];
        }
    }
    out[o] = 0;
    return out;
}

#define HIVE_DEFAULT "__HIVE_DEFAULT_PARTITION__"

/* key=value directory segments of a file below its root. */
static int file_segments(const tfile *f, strlist *keys, strlist *values, strlist *nulls) {
    (void)nulls;
    if (f->root == NULL) {
        return 0;
    }
    const char *rel = relative_to(f->path, f->root);
    const char *slash = strrchr(rel, '/');
    if (slash == NULL) {
        return 0;
    }
    const char *s = rel;
    while (s < slash) {
        const char *e = memchr(s, '/', (size_t)(slash - s));
        if (e == NULL) {
            e = slash;
        }
        const char *eq = memchr(s, '=', (size_t)(e - s));
        if (eq != NULL && eq > s) {
            size_t vlen = (size_t)(e - eq - 1);
            char *key = unescape(s, (size_t)(eq - s));
            char *val = (vlen == strlen(HIVE_DEFAULT) && memcmp(eq + 1, HIVE_DEFAULT, vlen) == 0)
                            ? NULL
                            : unescape(eq + 1, vlen);
            if (strlist_add(keys, key)) {
                free(val);
                return -1;
            }
            if (strlist_push(values, val)) { /* val may be NULL */
                return -1;
            }
        }
        s = e + 1;
    }
    return 0;
}

static void strlist_free_nullable(strlist *l) {
    for (size_t i = 0; i < l->n; i++) {
        free(l->items[i]);
    }
    free(l->items);
    memset(l, 0, sizeof(*l));
}

static int is_int64_text(const char *s) {
    const char *p = s;
    if (*p == '-') {
        p++;
    }
    if (*p == 0) {
        return 0;
    }
    for (const char *q = p; *q; q++) {
        if (*q < '0' || *q > '9') {
            return 0;
        }
    }
    errno = 0;
    char *end;
    (void)strtoll(s, &end, 10);
    return errno == 0 && *end == 0;
}

/* Hive partition columns of the files (tfsql.partitioning.Partitioning.discover). */
int find_partitions(tfbind *b, char *err) {
    if (b->hive == HIVE_OFF) {
        return 0;
    }
    strlist first_keys = {0};
    int have_first = 0;
    size_t first_index = 0;
    for (size_t i = 0; i < b->files.n; i++) {
        strlist keys = {0}, values = {0};
        if (file_segments(&b->files.items[i], &keys, &values, NULL)) {
            strlist_free(&keys);
            strlist_free_nullable(&values);
            snprintf(err, ERRLEN, "out of memory");
            strlist_free(&first_keys);
            return -1;
        }
        if (keys.n > 0 && !have_first) {
            have_first = 1;
            first_index = i;
            for (size_t k = 0; k < keys.n; k++) {
                for (size_t j = 0; j < k; j++) {
                    if (strcmp(keys.items[j], keys.items[k]) == 0) {
                        snprintf(err, ERRLEN, "partition key '%s' appears twice in the "
                                              "directories of %s; rename one of the key=value "
                                              "directories", keys.items[k],
                                 b->files.items[i].path);
                        strlist_free(&keys);
                        strlist_free_nullable(&values);
                        strlist_free(&first_keys);
                        return -1;
                    }
                }
                strlist_add(&first_keys, xstrdup(keys.items[k]));
            }
        }
        b->files.items[i].parts = values.items; /* ownership moves to the file */
        b->files.items[i].root = b->files.items[i].root;
        if (values.n == 0) {
            free(values.items);
            b->files.items[i].parts = NULL;
        }
        /* remember how many keys this file has in its parts array length via keys.n */
        if (have_first) {
            int same = keys.n == first_keys.n;
            for (size_t k = 0; same && k < keys.n; k++) {
                same = strcmp(keys.items[k], first_keys.items[k]) == 0;
            }
            if (!same) {
                char a[512] = "", c[512] = "";
                size_t ua = 0, uc = 0;
                for (size_t k = 0; k < first_keys.n && ua < sizeof(a); k++) {
                    ua += (size_t)snprintf(a + ua, sizeof(a) - ua, "%s%s", k ? ", " : "(",
                                           first_keys.items[k]);
                }
                for (size_t k = 0; k < keys.n && uc < sizeof(c); k++) {
                    uc += (size_t)snprintf(c + uc, sizeof(c) - uc, "%s%s", k ? ", " : "(",
                                           keys.items[k]);
                }
                snprintf(err, ERRLEN, "inconsistent hive partitioning: %s has partition keys "
                                      "%s) but %s has %s%s; every file must sit under the same "
                                      "key=value directories in the same order (pass "
                                      "hive_partitioning := false to read without partition "
                                      "columns)", b->files.items[first_index].path, a,
                         b->files.items[i].path, keys.n ? c : "none", keys.n ? ")" : "");
                /* free the parts of files not yet typed: count = keys.n of each */
                for (size_t q = 0; q <= i; q++) {
                    free(b->files.items[q].parts);
                    b->files.items[q].parts = NULL;
                }
                strlist_free(&keys);
                strlist_free(&first_keys);
                return -1;
            }
        }
        strlist_free(&keys);
    }
    if (!have_first) {
        if (b->hive == HIVE_ON) {
            snprintf(err, ERRLEN, "hive partitioning was requested but no key=value directories "
                                  "were found; point the source at the directory above the "
                                  "key=value directories or pass hive_partitioning := false");
            return -1;
        }
        return 0;
    }
    /* files before the first keyed one have no keys at all: inconsistent */
    for (size_t i = 0; i < first_index; i++) {
        snprintf(err, ERRLEN, "inconsistent hive partitioning: %s has partition keys (...) but "
                              "%s has none; every file must sit under the same key=value "
                              "directories in the same order (pass hive_partitioning := false "
                              "to read without partition columns)",
                 b->files.items[first_index].path, b->files.items[i].path);
        strlist_free(&first_keys);
        return -1;
    }
    b->npart = (int)first_keys.n;
    b->part_names = first_keys.items;
    b->part_is_int = (int *)calloc(first_keys.n ? first_keys.n : 1, sizeof(int));
    for (int k = 0; k < b->npart; k++) {
        int any = 0, all_int = 1;
        for (size_t i = 0; i < b->files.n && all_int; i++) {
            const char *v = b->files.items[i].parts[k];
            if (v != NULL) {
                any = 1;
                all_int = is_int64_text(v);
            }
        }
        b->part_is_int[k] = any && all_int;
        if (is_column(b, b->part_names[k])) {
            snprintf(err, ERRLEN, "partition column '%s' is also a feature in the records; "
                                  "rename the directory key or pass hive_partitioning := "
                                  "false", b->part_names[k]);
            return -1;
        }
    }
    return 0;
}
