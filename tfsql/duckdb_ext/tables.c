/*
 * tfsql/duckdb_ext/tables.c -- the scan's output columns and what tfrecord_metadata
 * counts (index sidecars, walked headers), for both bindings.
 */

#include "ext_common.h"

int scan_output_count(const tfbind *b) {
    return b->ndata + b->npart + (b->filename_col != NULL ? 1 : 0);
}

tftype scan_output_tftype(const tfbind *b, int c, char **name) {
    tftype t = TFTYPE_OF(TT_VARCHAR);
    if (c < b->ndata) {
        const colspec *cs = &b->sc.cols[c];
        *name = column_name(b, c);
        t.leaf = cs->kind == KIND_INT64   ? TT_BIGINT
                 : cs->kind == KIND_FLOAT ? TT_FLOAT
                 : b->utf8[c]             ? TT_VARCHAR
                                          : TT_BLOB;
        t.lists = cs->shape;
        if (b->leaf != NULL && b->leaf[c] != 0) { /* a described type (layouts.c) */
            t.leaf = b->leaf[c];
        }
        if (b->array_size != NULL && b->array_size[c] > 0) {
            t.lists = 0;
            t.array = b->array_size[c];
        }
        if (b->described != NULL) { /* a DECIMAL's width and scale, nested ARRAYs' sizes */
            const tftype *d = &b->described[c];
            t.width = d->width;
            t.scale = d->scale;
            memcpy(t.inner, d->inner, sizeof(t.inner));
            if (d->array > 0) {
                t.array = d->array;
            }
        }
        return t;
    }
    c -= b->ndata;
    if (c < b->npart) {
        *name = xstrdup(b->part_names[c]);
        t.leaf = b->part_is_int[c] ? TT_BIGINT : TT_VARCHAR;
        return t;
    }
    *name = xstrdup(b->filename_col);
    return t;
}

const char *tt_name(int leaf) {
    static const char *const names[TT_COUNT] = {
        "BIGINT",   "FLOAT",     "VARCHAR",  "BLOB",         "BOOLEAN",      "MAP(VARCHAR, VARCHAR)",
        "UBIGINT",  "TINYINT",   "SMALLINT", "INTEGER",      "UTINYINT",     "USMALLINT",
        "UINTEGER", "DATE",      "DOUBLE",   "TIME",         "TIMESTAMP_S",  "TIMESTAMP_MS",
        "TIMESTAMP", "TIMESTAMP_NS", "TIMESTAMP WITH TIME ZONE", "INTERVAL", "DECIMAL", "NULL", "TIME_NS",
    };
    return leaf >= 0 && leaf < TT_COUNT ? names[leaf] : "ANY";
}

const char *tftype_text(tftype t, char *buf, size_t cap) {
    char leaf[32];
    if (t.leaf == TT_DECIMAL) {
        snprintf(leaf, sizeof leaf, "DECIMAL(%d,%d)", t.width, t.scale);
    } else {
        snprintf(leaf, sizeof leaf, "%s", tt_name(t.leaf));
    }
    if (t.array > 0) { /* innermost size first: BIGINT[3][2] holds 2 ARRAYs of 3 */
        size_t o = (size_t)snprintf(buf, cap, "%s", leaf);
        for (int i = TT_MAX_INNER - 1; i >= 0 && o < cap; i--) {
            if (t.inner[i] > 0) {
                o += (size_t)snprintf(buf + o, cap - o, "[%llu]", (unsigned long long)t.inner[i]);
            }
        }
        if (o < cap) {
            snprintf(buf + o, cap - o, "[%llu]", (unsigned long long)t.array);
        }
    } else {
        snprintf(buf, cap, "%s%s", leaf, t.lists == 2 ? "[][]" : t.lists == 1 ? "[]" : "");
    }
    return buf;
}

static int64_t fd_read_at(void *ctx, uint64_t offset, uint8_t *buf, size_t n) {
    ssize_t got = pread(*(int *)ctx, buf, n, (off_t)offset);
    return got < 0 ? -1 : (int64_t)got;
}

char *index_sidecar(const char *path) {
    size_t n = strlen(path);
    char *out = (char *)malloc(n + TFSQL_INDEX_SIDECAR_EXTRA);
    if (out != NULL) {
        (void)tfsql_index_sidecar_path(path, n, out);
    }
    return out;
}

/* The record count an index sidecar gives for `path` (size `size`), or -1 when there is
 * none or it does not match the file: it is not older than the file (tfsql_index_fresh,
 * in nanoseconds as tfsql.record_index judges it), and the core's one
 * validator (tfsql_index_check, which tfsql.record_index uses too) accepts it whole. */
long long indexed_count(const char *path, int64_t size) {
    char *index = index_sidecar(path);
    struct stat st_index, st_file;
    window w;
    char err[ERRLEN];
    long long count = -1;
    memset(&w, 0, sizeof(w));
    if (index == NULL || stat(index, &st_index) != 0 || stat(path, &st_file) != 0 ||
        !tfsql_index_fresh(stat_mtime_ns(&st_index), stat_mtime_ns(&st_file)) ||
        window_open(&w, index, st_index.st_size, COMP_NONE, err) != 0 ||
        window_fill(&w, 0, (size_t)st_index.st_size, err) != 0) {
        free(index);
        window_close(&w);
        return -1;
    }
    free(index);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd >= 0 && w.r.buf.len == (size_t)st_index.st_size) {
        count = (long long)tfsql_index_check((const char *)w.r.buf.data, w.r.buf.len, (uint64_t)size,
                                             fd_read_at, &fd, NULL, NULL, err, sizeof(err));
    }
    if (fd >= 0) {
        close(fd);
    }
    window_close(&w);
    return count;
}

/* Count the records of `path` by walking its headers (inflating it when compressed),
 * through a bounded window, stopping once `stop` (>= 0) are counted; -1 with `err` set
 * when it cannot be read or is damaged. */
long long walked_count(const tfbind *b, const tfile *f, int comp, long long stop, char *err) {
    window fr;
    if (window_open(&fr, f->path, f->size, comp, err) != 0) {
        window_close(&fr);
        return -1;
    }
    framing o = {-1, -1, (uint64_t)b->max_record_bytes, 0, 0, {0, 0, 0}}; /* headers only, damage an error */
    long long count = 0;
    int rc = 0;
    while ((stop < 0 || count < stop) && (rc = window_next(&fr, &o, err)) == 1) {
        count += (long long)fr.r.n;
    }
    window_close(&fr);
    return rc < 0 ? -1 : count;
}


/* Whether the replacement scan reads table `name` as TFRecord: a TFRecord suffix, or a
 * glob over such files. */
int is_tfrecord_name(const char *name) {
    if (is_tfrecord_suffix(name)) { /* tfsql.naming's suffixes (options_gen.h) */
        return 1;
    }
    /* a glob over such files, such as 'data/part-?.tfrecord.gz' */
    if (has_glob_magic(name)) {
        for (const char *p = name; *p; p++) {
            if (strncasecmp(p, ".tfrecord", 9) == 0) {
                return 1;
            }
        }
    }
    return 0;
}

