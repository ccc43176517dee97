/*
 * tfsql/duckdb_ext/layouts.c -- TFDS / TFX directory layouts (tfsql.layouts):
 * detection, the `split` column, TFDS metadata files.
 */

#include "duckdb_ext.h"

/* -- dataset layouts with splits (tfsql.layouts) ---------------------------------
 * TFDS shards '{name}-{split}.tfrecord-{i}-of-{n}' and TFX 'Split-{split}/...' files get
 * a string partition column split, unless hive directories or the records already have
 * a column of that name. In a listed directory that holds dataset_info.json, the .json
 * and .txt files are TFDS metadata, not data. */

static int is_digit(char c) { return c >= '0' && c <= '9'; }

/* tfsql.layouts.tfds_split: the split of a TFDS shard name (a new string), or NULL. */
static char *tfds_split(const char *path) {
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    size_t e = strlen(base), end = e;
    while (e > 0 && is_digit(base[e - 1])) {
        e--;
    }
    if (e == end || e < 4 || memcmp(base + e - 4, "-of-", 4) != 0) {
        return NULL;
    }
    size_t i = e - 4, d = i;
    while (d > 0 && is_digit(base[d - 1])) {
        d--;
    }
    if (d == i || d < 10 || memcmp(base + d - 10, ".tfrecord-", 10) != 0) {
        return NULL;
    }
    size_t split_end = d - 10, k = split_end;
    while (k > 0 && base[k - 1] != '-' && base[k - 1] != '.') {
        k--;
    }
    /* the split is preceded by '-' and a non-empty dataset name */
    if (k == split_end || k < 2 || base[k - 1] != '-') {
        return NULL;
    }
    return xstrndup(base + k, split_end - k);
}

/* tfsql.layouts.tfx_split: the split of the nearest 'Split-{split}' directory above the
 * file (a new string), or NULL. */
static char *tfx_split(const char *path) {
    const char *slash = strrchr(path, '/');
    if (slash == NULL) {
        return NULL;
    }
    size_t end = (size_t)(slash - path);
    while (end > 0) {
        size_t start = end;
        while (start > 0 && path[start - 1] != '/') {
            start--;
        }
        if (end - start > 6 && memcmp(path + start, "Split-", 6) == 0) {
            return xstrndup(path + start + 6, end - start - 6);
        }
        if (start == 0) {
            break;
        }
        end = start - 1;
    }
    return NULL;
}

static char *dir_of(const char *path) {
    const char *slash = strrchr(path, '/');
    return slash == NULL ? xstrdup("") : xstrndup(path, (size_t)(slash - path));
}

/* Leave out the .json / .txt files of listed directories that hold dataset_info.json. */
int drop_tfds_metadata(tfbind *b) {
    strlist dirs = {0};
    for (size_t i = 0; i < b->files.n; i++) {
        const tfile *f = &b->files.items[i];
        const char *slash = strrchr(f->path, '/');
        if (f->root != NULL && strcmp(slash ? slash + 1 : f->path, "dataset_info.json") == 0 &&
            strlist_add(&dirs, dir_of(f->path))) {
            strlist_free(&dirs);
            return -1;
        }
    }
    size_t kept = 0;
    for (size_t i = 0; i < b->files.n; i++) {
        tfile *f = &b->files.items[i];
        int drop = 0;
        if (f->root != NULL && dirs.n > 0 &&
            (ends_with_ci(f->path, ".json") || ends_with_ci(f->path, ".txt"))) {
            char *dir = dir_of(f->path);
            for (size_t k = 0; dir != NULL && k < dirs.n && !drop; k++) {
                drop = strcmp(dirs.items[k], dir) == 0;
            }
            free(dir);
        }
        if (drop) {
            free(f->path);
            free(f->root);
        } else {
            b->files.items[kept++] = *f;
        }
    }
    b->files.n = kept;
    strlist_free(&dirs);
    return 0;
}

/* tfsql.layouts.detect_layout over the listed files: b->layout, b->splits, b->tfds_dir. */
int detect_layout(tfbind *b) {
    size_t n = b->files.n;
    if (n == 0) {
        return 0;
    }
    b->splits = (char **)calloc(n, sizeof(char *));
    if (b->splits == NULL) {
        return -1;
    }
    for (int kind = LAYOUT_TFDS; kind <= LAYOUT_TFX; kind++) {
        size_t i = 0;
        for (; i < n; i++) {
            const char *path = b->files.items[i].path;
            b->splits[i] = kind == LAYOUT_TFDS ? tfds_split(path) : tfx_split(path);
            if (b->splits[i] == NULL) {
                break;
            }
        }
        if (i == n) {
            b->layout = kind;
            break;
        }
        for (size_t k = 0; k < n; k++) {
            free(b->splits[k]);
            b->splits[k] = NULL;
        }
    }
    if (b->layout == LAYOUT_NONE) {
        free(b->splits);
        b->splits = NULL;
        return 0;
    }
    if (b->layout == LAYOUT_TFDS) {
        b->tfds_dir = dir_of(b->files.items[0].path);
        for (size_t i = 1; i < n && b->tfds_dir != NULL; i++) {
            char *dir = dir_of(b->files.items[i].path);
            if (dir == NULL || strcmp(dir, b->tfds_dir) != 0) {
                free(b->tfds_dir);
                b->tfds_dir = NULL;
            }
            free(dir);
        }
    }
    return 0;
}

/* A TFDS directory's features.json types the columns (tfsql.tfds), which the extension
 * does not read: such a scan, unless it names its columns, goes through tfsql.connect(). */
int refuse_tfds_features(const tfbind *b, const char *fname, char *err) {
    if (b->layout != LAYOUT_TFDS || b->tfds_dir == NULL) {
        return 0;
    }
    char *features = xprintf("%s/features.json", b->tfds_dir);
    struct stat st;
    int present = features != NULL && stat(features, &st) == 0 && S_ISREG(st.st_mode);
    if (present) {
        snprintf(err, ERRLEN, "%s: %s describes the columns of this TensorFlow Datasets "
                              "directory, which the DuckDB extension does not read yet; run "
                              "the query through tfsql.connect() (Python), which applies it, "
                              "or pass columns := {...}", fname, features);
    }
    free(features);
    return present ? -1 : 0;
}

/* Append the split column after the hive partition columns (tfsql.layouts.Layout
 * .add_split_column): its values move from b->splits to each file's parts. */
int add_split_column(tfbind *b) {
    if (b->layout == LAYOUT_NONE || is_column(b, SPLIT_COLUMN)) {
        return 0;
    }
    for (int k = 0; k < b->npart; k++) {
        if (strcmp(b->part_names[k], SPLIT_COLUMN) == 0) {
            return 0;
        }
    }
    int k = b->npart;
    char **names = (char **)realloc(b->part_names, (size_t)(k + 1) * sizeof(char *));
    if (names == NULL) {
        return -1;
    }
    b->part_names = names;
    int *is_int = (int *)realloc(b->part_is_int, (size_t)(k + 1) * sizeof(int));
    if (is_int == NULL) {
        return -1;
    }
    b->part_is_int = is_int;
    for (size_t i = 0; i < b->files.n; i++) {
        tfile *f = &b->files.items[i];
        char **parts = (char **)realloc(f->parts, (size_t)(k + 1) * sizeof(char *));
        if (parts == NULL) {
            return -1;
        }
        if (f->parts == NULL) {
            memset(parts, 0, (size_t)(k + 1) * sizeof(char *));
        }
        f->parts = parts;
        f->parts[k] = b->splits[i];
        b->splits[i] = NULL;
    }
    b->part_names[k] = xstrdup(SPLIT_COLUMN);
    b->part_is_int[k] = 0;
    b->npart = k + 1;
    return b->part_names[k] == NULL ? -1 : 0;
}
