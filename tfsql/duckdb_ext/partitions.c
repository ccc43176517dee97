/*
 * tfsql/duckdb_ext/partitions.c -- hive key=value directories and the types of
 * their columns (tfsql.partitioning).
 */

#include "duckdb_ext.h"



/* A partition key or value, unescaped by the core (a new string). */
static char *unescaped(const char *s, size_t n) {
    char *out = (char *)malloc(2 * n + 1);
    if (out != NULL) {
        out[tfsql_hive_unescape(s, n, out)] = 0;
    }
    return out;
}

/* key=value directory segments of a file, by DuckDB's read_parquet rule (every
 * directory of its path: tfsql_hive_directory with TFSQL_HIVE_WHOLE_PATH). */
static int file_segments(const tfile *f, strlist *keys, strlist *values) {
    size_t start, len;
    tfsql_hive_directory(f->path, f->root, TFSQL_HIVE_WHOLE_PATH, &start, &len);
    const char *dir = f->path + start;
    size_t count = tfsql_hive_segments(dir, len, NULL, 0);
    tfsql_hive_segment *segs = (tfsql_hive_segment *)malloc((count + 1) * sizeof(*segs));
    if (segs == NULL) {
        return -1;
    }
    tfsql_hive_segments(dir, len, segs, count);
    for (size_t i = 0; i < count; i++) {
        char *key = unescaped(dir + segs[i].key_start, segs[i].key_len);
        char *val = segs[i].is_null ? NULL : unescaped(dir + segs[i].value_start, segs[i].value_len);
        if (strlist_add(keys, key) || (val == NULL && !segs[i].is_null)) {
            free(val);
            free(segs);
            return -1;
        }
        if (strlist_push(values, val)) { /* val is NULL for a null value; freed on failure */
            free(segs);
            return -1;
        }
    }
    free(segs);
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
    int64_t value;
    return tfsql_hive_int64(s, strlen(s), &value);
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
        if (file_segments(&b->files.items[i], &keys, &values)) {
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

/* hive_types := {'key': 'VARCHAR', ...} (tfsql.partitioning's hive_schema): the types of
 * the partition columns it names, over the inferred ones. The extension reads VARCHAR
 * (the values as they are); another type is refused with a message naming it (the
 * Arrow path of tfsql.connect() casts). A `split` entry is left to a TFDS / TFX layout
 * (tfsql.layouts.Layout.without_split). 0, or -1 with err. */
int apply_hive_types(tfbind *b, duckdb_value v, const char *fname, char *err) {
    duckdb_logical_type t = duckdb_get_value_type(v);
    idx_t n = duckdb_get_type_id(t) == DUCKDB_TYPE_STRUCT ? duckdb_struct_type_child_count(t) : 0;
    if (n == 0) {
        snprintf(err, ERRLEN, "%s: parameter hive_types expects a STRUCT of partition column "
                              "-> type name, e.g. hive_types := {'p': 'VARCHAR'}", fname);
        return -1;
    }
    if (b->hive == HIVE_OFF) {
        snprintf(err, ERRLEN, "%s: hive_types was given but hive_partitioning := false; drop "
                              "one of them", fname);
        return -1;
    }
    for (idx_t i = 0; i < n; i++) {
        char *name = duckdb_struct_type_child_name(t, i);
        duckdb_value child = duckdb_get_struct_child(v, i);
        char *type = child == NULL || duckdb_is_null_value(child) ? NULL : value_text(child);
        duckdb_destroy_value(&child);
        int kind = KIND_NONE, shape = SCALAR, utf8 = 0;
        int rc = 0;
        int k = 0;
        while (name != NULL && k < b->npart && strcmp(b->part_names[k], name) != 0) {
            k++;
        }
        if (name == NULL) {
            snprintf(err, ERRLEN, "out of memory");
            rc = -1;
        } else if (b->layout != LAYOUT_NONE && strcmp(name, SPLIT_COLUMN) == 0) {
            rc = 0;
        } else if (type == NULL || parse_type_name(type, &kind, &shape, &utf8) ||
                   kind != KIND_BYTES || shape != SCALAR || !utf8) {
            snprintf(err, ERRLEN, "%s: hive_types gives partition column '%s' type '%s', which "
                                  "the DuckDB extension does not read yet (it reads VARCHAR); "
                                  "run the query through tfsql.connect(), which casts to any "
                                  "type", fname, name, type != NULL ? type : "NULL");
            rc = -1;
        } else if (k == b->npart) {
            char keys[512] = "";
            size_t used = 0;
            for (int q = 0; q < b->npart && used < sizeof(keys); q++) {
                used += (size_t)snprintf(keys + used, sizeof(keys) - used, "%s%s",
                                         q ? ", " : "", b->part_names[q]);
            }
            snprintf(err, ERRLEN, "%s: hive_types names '%s', which is not a partition key "
                                  "(the partition keys are (%s))", fname, name, keys);
            rc = -1;
        } else {
            b->part_is_int[k] = 0;
        }
        duckdb_free(name);
        free(type);
        if (rc) {
            return -1;
        }
    }
    return 0;
}
