/*
 * tfsql/duckdb_ext/dataset_rows.c -- the rows of tfrecord_schema(...) and
 * tfrecord_metadata(...), for both bindings: their columns, and each chunk of rows
 * written through the binding's vecops.
 */

#include "ext_common.h"

void metabind_free(void *p) {
    metabind *m = (metabind *)p;
    if (m != NULL) {
        tfbind_free(m->b);
        free(m);
    }
}

const tfcolumn schema_columns[] = {
    {"column_name", TFTYPE_OF(TT_VARCHAR)}, {"column_type", TFTYPE_OF(TT_VARCHAR)},
    {"nullable", TFTYPE_OF(TT_BOOLEAN)},    {"feature_kind", TFTYPE_OF(TT_VARCHAR)},
    {"location", TFTYPE_OF(TT_VARCHAR)},    {"origin", TFTYPE_OF(TT_VARCHAR)},
    {NULL, TFTYPE_OF(0)},
};

const tfcolumn metadata_columns[] = {
    {"file", TFTYPE_OF(TT_VARCHAR)},        {"size", TFTYPE_OF(TT_BIGINT)},
    {"compression", TFTYPE_OF(TT_VARCHAR)}, {"partitions", TFTYPE_OF(TT_TEXT_MAP)},
    {"split", TFTYPE_OF(TT_VARCHAR)},       {"records", TFTYPE_OF(TT_BIGINT)},
    {"records_source", TFTYPE_OF(TT_VARCHAR)}, {NULL, TFTYPE_OF(0)},
};

static int set_text_len(const vecops *o, void *v, size_t row, const char *text, size_t len) {
    if (text == NULL) {
        set_row_invalid(o->validity(v), row);
        return 0;
    }
    return o->set_text(v, row, text, len);
}

static int set_text(const vecops *o, void *v, size_t row, const char *text) {
    return set_text_len(o, v, row, text, text != NULL ? strlen(text) : 0);
}

/* Announce n rows to each of the ncols vectors. */
static int set_rows(const vecops *o, void *const *vecs, int ncols, size_t n) {
    for (int i = 0; o->set_rows != NULL && i < ncols; i++) {
        if (o->set_rows(vecs[i], n)) {
            return -1;
        }
    }
    return 0;
}

int schema_rows(const tfbind *b, size_t *next, const vecops *o, void *const *vecs, size_t cap,
                size_t *rows, char *err) {
    size_t total = (size_t)scan_output_count(b), n = 0;
    size_t want = total - *next < cap ? total - *next : cap;
    if (set_rows(o, vecs, 6, want)) {
        snprintf(err, ERRLEN, "out of memory");
        return -1;
    }
    for (; *next < total && n < cap; (*next)++, n++) {
        int c = (int)*next;
        char *name = NULL;
        char spelled[96];
        const char *type = tftype_text(scan_output_tftype(b, c, &name), spelled, sizeof(spelled));
        const char *kind = NULL, *location = NULL, *origin;
        if (c < b->ndata) {
            const colspec *cs = &b->sc.cols[c];
            kind = kind_names[cs->kind];
            origin = b->record_type == RAW ? "record" : "feature";
            location = b->record_type == RAW             ? NULL
                       : b->record_type == EXAMPLE        ? "features"
                       : cs->location == FEATURE_LISTS    ? "feature_lists"
                                                          : "context";
        } else if (c < b->ndata + b->npart) {
            origin = c == b->ndata + b->npart - 1 && name != NULL &&
                             tfsql_layout_owns_column(b->layout, name, strlen(name))
                         ? "split"
                         : "partition";
        } else {
            origin = "filename";
        }
        int rc = set_text(o, vecs[0], n, name) | set_text(o, vecs[1], n, type);
        ((uint8_t *)o->data(vecs[2]))[n] =
            strcmp(origin, "filename") != 0 && strcmp(origin, "record") != 0;
        rc |= set_text(o, vecs[3], n, kind) | set_text(o, vecs[4], n, location) |
              set_text(o, vecs[5], n, origin);
        free(name);
        if (rc) {
            snprintf(err, ERRLEN, "out of memory");
            return -1;
        }
    }
    *rows = n;
    return 0;
}

/* The compression of a file: the option when given, else its first bytes'. */
static int file_compression(const tfbind *b, const char *path) {
    if (b->compression != COMP_INFER) {
        return b->compression;
    }
    uint8_t head[12];
    ssize_t n = 0;
    const fsops *fs = fs_routed(path);
    if (fs != NULL) { /* a routed file (routed.c) */
        char err[ERRLEN];
        uint64_t size = 0;
        void *h = fs->open(path, FS_READ, &size, err);
        n = size < sizeof(head) ? (ssize_t)size : (ssize_t)sizeof(head);
        n = h != NULL && fs->read_at(h, 0, head, (size_t)n, err) == 0 ? n : 0;
        if (h != NULL) {
            fs->close(h);
        }
        return tfsql_detect_compression(head, (size_t)n);
    }
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    n = fd >= 0 ? pread(fd, head, sizeof(head), 0) : 0;
    if (fd >= 0) {
        close(fd);
    }
    return tfsql_detect_compression(head, n > 0 ? (size_t)n : 0);
}

/* Row `row` of the MAP vector: the file's hive keys and values (not the split). */
static int set_partitions(const vecops *o, void *v, size_t row, const tfbind *b, const tfile *f,
                          int nhive) {
    size_t start = 0;
    (void)o->list_child(v, &start);
    void *entries = o->list_resize(v, start + (size_t)nhive);
    if (entries == NULL) {
        return -1;
    }
    void *keys = o->struct_child(entries, 0);
    void *values = o->struct_child(entries, 1);
    if (o->set_rows != NULL &&
        (o->set_rows(keys, start + (size_t)nhive) || o->set_rows(values, start + (size_t)nhive))) {
        return -1;
    }
    for (int k = 0; k < nhive; k++) {
        if (set_text(o, keys, start + (size_t)k, b->part_names[k]) ||
            set_text_len(o, values, start + (size_t)k, f->parts != NULL ? f->parts[k] : NULL,
                         f->parts != NULL ? f->part_lens[k] : 0)) {
            return -1;
        }
    }
    list_entry *e = &((list_entry *)o->data(v))[row];
    e->offset = start;
    e->length = (uint64_t)nhive;
    return 0;
}

int metadata_rows(const tfbind *b, int count, size_t *next, const vecops *o, void *const *vecs,
                  size_t cap, size_t *rows, char *err) {
    int has_split = b->npart > 0 && tfsql_layout_owns_column(b->layout, b->part_names[b->npart - 1],
                                                             strlen(b->part_names[b->npart - 1]));
    int nhive = b->npart - (has_split ? 1 : 0);
    size_t n = 0, want = b->files.n - *next < cap ? b->files.n - *next : cap;
    static const char *const comp_names[] = {"none", "gzip", "zlib"};
    if (set_rows(o, vecs, 7, want)) {
        snprintf(err, ERRLEN, "out of memory");
        return -1;
    }
    for (; *next < b->files.n && n < cap; (*next)++, n++) {
        const tfile *f = &b->files.items[*next];
        int comp = file_compression(b, f->path);
        long long records = comp == COMP_NONE ? indexed_count(f->path, f->size) : -1;
        const char *source = records >= 0 ? "index" : NULL;
        if (records < 0 && count) {
            records = walked_count(b, f, comp, -1, err);
            if (records < 0) {
                return -1;
            }
            source = "count";
        }
        int rc = set_text(o, vecs[0], n, TFILE_SHOWN(f));
        ((int64_t *)o->data(vecs[1]))[n] = f->size;
        rc |= set_text(o, vecs[2], n, comp_names[comp]);
        rc |= set_partitions(o, vecs[3], n, b, f, nhive);
        rc |= set_text(o, vecs[4], n, has_split && f->parts != NULL ? f->parts[b->npart - 1] : NULL);
        if (records >= 0) {
            ((int64_t *)o->data(vecs[5]))[n] = records;
        } else {
            set_row_invalid(o->validity(vecs[5]), n);
        }
        rc |= set_text(o, vecs[6], n, source);
        if (rc) {
            snprintf(err, ERRLEN, "out of memory");
            return -1;
        }
    }
    *rows = n;
    return 0;
}
