/*
 * tfsql/duckdb_ext/routed.c -- the paths a binding routes to its engine's file system
 * (the fsops table of ext_common.h): which file system takes a path, '~', small files
 * read whole, and a routed glob's paths spelled as the user spelled the pattern.
 *
 * A local path never comes here: reading.c, discovery.c and copy_files.c read, list and
 * write it with the C library. On V2, fs_routed("s3://b/x.tfrecord") is DuckDB's file
 * system (tfsql/duckdb_v2/files.c), which reaches httpfs when it is loaded and otherwise
 * fails with DuckDB's message naming it; on v1 it is NULL, so such a path is read as a
 * local one and is "no such file or directory".
 *
 *     const fsops *fs = fs_routed(path);        // NULL: a local path, use the C library
 *     uint64_t size;
 *     void *h = fs->open(path, FS_READ, &size, err);
 *     fs->read_at(h, 0, buf, 12, err);          // exactly 12 bytes at offset 0, or err
 *     fs->close(h);
 */

#include "ext_common.h"

const fsops *fs_routed(const char *path) {
    const fsops *fs = binding_fs != NULL ? binding_fs() : NULL;
    return fs != NULL && path != NULL && fs->routes(path) ? fs : NULL;
}

char *fs_expand(const char *item, char *err) {
    const fsops *fs = binding_fs != NULL ? binding_fs() : NULL;
    if (fs == NULL || item[0] != '~') {
        char *r = xstrdup(item);
        if (r == NULL) {
            snprintf(err, ERRLEN, "out of memory");
        }
        return r;
    }
    return fs->expand(item, err);
}

int fs_read_whole(const fsops *fs, const char *path, size_t max, char **data, size_t *n) {
    char err[ERRLEN];
    uint64_t size = 0;
    *data = NULL;
    *n = 0;
    void *h = fs->open(path, FS_READ, &size, err);
    if (h == NULL) {
        return 1;
    }
    int rc = 1;
    if (size <= max) {
        *data = (char *)malloc((size_t)size + 1);
        rc = *data == NULL || (size > 0 && fs->read_at(h, 0, *data, (size_t)size, err)) ? 1 : 0;
    }
    fs->close(h);
    if (rc) {
        free(*data);
        *data = NULL;
    } else {
        *n = (size_t)size;
    }
    return rc;
}

/* The slashes after "scheme://" in p: their count, *rest past them. */
static size_t slashes_after_scheme(const char *p, const char **rest) {
    const char *s = strstr(p, "://");
    const char *r = s != NULL ? s + 3 : p;
    size_t k = 0;
    while (r[k] == '/') {
        k++;
    }
    *rest = r + k;
    return s != NULL ? k : 0;
}

char *fs_same_spelling(const char *asked, const char *got) {
    const char *arest = NULL, *grest = NULL;
    size_t a = slashes_after_scheme(asked, &arest), g = slashes_after_scheme(got, &grest);
    const char *scheme_end = strstr(got, "://");
    if (scheme_end == NULL || a == g) {
        return xstrdup(got);
    }
    /* the same scheme, the user's slashes, then the path the file system gave */
    return xprintf("%.*s%.*s%s", (int)(scheme_end + 3 - got), got, (int)(a > 8 ? 8 : a), "////////", grest);
}
