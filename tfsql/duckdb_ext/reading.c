/*
 * tfsql/duckdb_ext/reading.c -- the extension's side of the core's record reader
 * (tfsql/core/reader.c): its read callback (pread on the open file, checked for
 * changes), zlib loaded at run time, and the reader's damage as DuckDB errors or, under
 * on_corrupt := 'skip', as reported skips.
 *
 * Nothing is mapped: a mapping of a file that another process truncates faults (SIGBUS)
 * on the first page past the new end, which kills the whole database process; the core
 * reads through a bounded window filled with pread().
 *
 * A path the binding routes to its engine's file system (routed.c: on V2, DuckDB's, for
 * s3://, memory://, ...) is read through it instead, with positioned reads of exactly the
 * bytes asked for; its size at open is checked against the listing's.
 *
 * A file that changes while it is read is an error naming the file and the change, as
 * tfsql.file_guard does for the Python reader: at open its size must be the one the
 * bind listed (else it grew, shrank or was replaced since), and after every read the
 * open file's size and modification time must be those of the open (else it was
 * truncated, extended or rewritten in place). A file deleted or renamed over after the
 * open still reads completely: the open descriptor holds its old content.
 *
 * zlib is loaded at run time by the core's tfsql/core/zlib_load.c (libz.so.1): the
 * extension links nothing beyond libc.
 */

#include "ext_common.h"

/* -- the open file and its checks ------------------------------------------ */

int64_t stat_mtime_ns(const struct stat *st) {
#if defined(__APPLE__)
    return (int64_t)st->st_mtimespec.tv_sec * 1000000000 + st->st_mtimespec.tv_nsec;
#else
    return (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
#endif
}

/* A tfsql.errors.FileChangedError: `what` changed (its fields; "size": before, after). */
static void changed(char *err, const char *path, const char *what, long long before,
                    long long after) {
    tferror e;
    tferror_init(&e, TFERR_FILE_CHANGED, what, path);
    e.before = before;
    e.after = after;
    tferror_raise(err, &e);
}

static void changed_size(char *err, const char *path, uint64_t before, uint64_t after) {
    changed(err, path, "size", (long long)before, (long long)after);
}

/* The open file is still the version opened: same size, same modification time. */
static int check_unchanged(const source *s, char *err) {
    struct stat st;
    if (fstat(s->fd, &st) != 0) {
        snprintf(err, ERRLEN, "cannot stat %s: %s", s->path, strerror(errno));
        return -1;
    }
    if ((uint64_t)st.st_size != s->file_size) {
        changed_size(err, s->path, s->file_size, (uint64_t)st.st_size);
        return -1;
    }
    if (stat_mtime_ns(&st) != s->mtime_ns) {
        changed(err, s->path, "modified", -1, -1);
        return -1;
    }
    return 0;
}

/* The reader's read callback: file bytes [at, at + n) into dst (a short read is a
 * change of the file). */
static int read_at(void *ctx, uint64_t at, uint8_t *dst, size_t n, char *err) {
    source *s = (source *)ctx;
    if (s->fs != NULL) { /* a routed file: one positioned read of exactly n bytes */
        return n > 0 ? s->fs->read_at(s->h, at, dst, n, err) : 0;
    }
    size_t have = 0;
    while (have < n) {
        ssize_t got = pread(s->fd, dst + have, n - have, (off_t)(at + have));
        if (got < 0) {
            if (errno == EINTR) {
                continue;
            }
            snprintf(err, ERRLEN, "cannot read %s: %s", s->path, strerror(errno));
            return -1;
        }
        if (got == 0) {
            break;
        }
        have += (size_t)got;
    }
    if (check_unchanged(s, err)) {
        return -1;
    }
    if (have < n) { /* shorter than the size fstat still reports: shrank and grew back */
        changed_size(err, s->path, s->file_size, at + have);
        return -1;
    }
    return 0;
}

static void source_close(source *s) {
    if (s->fs != NULL && s->h != NULL) {
        s->fs->close(s->h);
        s->h = NULL;
    }
    if (s->path != NULL && s->fd >= 0) { /* a zeroed source was never opened */
        close(s->fd);
    }
    s->fd = -1;
}

/* Open `path` as `s`; the compression (COMP_INFER: detected from the first bytes) in
 * *comp. */
static int source_open(source *s, const char *path, int64_t listed_size, int *comp,
                       char *err) {
    memset(s, 0, sizeof(*s));
    s->path = path;
    s->fd = -1;
    s->fs = fs_routed(path);
    if (s->fs != NULL) { /* its size at open is checked against the listing's below */
        s->h = s->fs->open(path, FS_READ, &s->file_size, err);
        if (s->h == NULL) {
            return -1;
        }
    } else {
        s->fd = open(path, O_RDONLY | O_CLOEXEC);
    }
    if (s->fs == NULL && s->fd < 0) {
        if (errno == ENOENT) {
            changed(err, path, "deleted", -1, -1);
        } else {
            snprintf(err, ERRLEN, "cannot open %s: %s", path, strerror(errno));
        }
        return -1;
    }
    struct stat st;
    if (s->fs == NULL && fstat(s->fd, &st) != 0) {
        snprintf(err, ERRLEN, "cannot stat %s: %s", path, strerror(errno));
        return -1;
    }
    if (s->fs == NULL && !S_ISREG(st.st_mode)) {
        snprintf(err, ERRLEN, "%s is not a regular file (a TFRecord file must be one)", path);
        return -1;
    }
    if (s->fs == NULL) {
        s->file_size = (uint64_t)st.st_size;
        s->mtime_ns = stat_mtime_ns(&st);
    }
    if (listed_size >= 0 && (uint64_t)listed_size != s->file_size) {
        changed_size(err, path, (uint64_t)listed_size, s->file_size);
        return -1;
    }
    if (*comp == COMP_INFER) {
        uint8_t head[12];
        size_t n = s->file_size < 12 ? (size_t)s->file_size : 12;
        if (read_at(s, 0, head, n, err)) {
            return -1;
        }
        *comp = tfsql_detect_compression(head, n); /* COMP_* = TFSQL_DETECT_* */
    }
    if (*comp != COMP_NONE && tfsql_inflate_zlib() == NULL) {
        snprintf(err, ERRLEN, "%s: reading compressed files needs the zlib library (libz.so.1), "
                              "which was not found", path);
        return -1;
    }
    return 0;
}

int window_open(window *w, const char *path, int64_t listed_size, int comp, char *err) {
    memset(w, 0, sizeof(*w));
    w->src.fd = -1;
    if (source_open(&w->src, path, listed_size, &comp, err)) {
        source_close(&w->src);
        return -1;
    }
    reader_init(&w->r, read_at, &w->src, w->src.file_size, comp, tfsql_inflate_zlib(), path);
    return 0;
}

void window_close(window *w) {
    source_close(&w->src);
    reader_free(&w->r);
}

/* -- damage ----------------------------------------------------------------- */

/* e = the fields of the damage the reader met (file, record index, byte offset, what
 * is wrong; after reader_skip, what was skipped). */
static void damage_fields(tferror *e, const window *w) {
    static const char *const reasons[] = {"truncated", "past_end", "too_long", "length_crc",
                                          "data_crc"};
    const reader_damage *d = &w->r.damage;
    if (d->status == READER_STREAM_CORRUPT || d->status == READER_STREAM_TRUNCATED) {
        int corrupt = d->status == READER_STREAM_CORRUPT;
        tferror_init(e, TFERR_CORRUPT, corrupt ? "stream_corrupt" : "stream_truncated",
                     w->src.path);
        e->compression = w->r.comp == COMP_GZIP ? "gzip" : "zlib";
        e->detail = corrupt ? d->detail : NULL;
        return;
    }
    int k = d->status == FRAME_TRUNCATED        ? 0
            : d->status == FRAME_PAST_END       ? 1
            : d->status == FRAME_TOO_LONG       ? 2
            : d->status == FRAME_BAD_LENGTH_CRC ? 3
                                                : 4;
    tferror_init(e, TFERR_CORRUPT, reasons[k], w->src.path);
    e->record_index = (long long)d->index;
    e->offset = (long long)d->offset;
    e->rest_of_file = d->rest_of_file;
    if (k == 1 || k == 2 || k == 4) { /* the header's length (data_crc: where the record ends) */
        e->length = (long long)d->length;
    }
    if (k <= 2) {
        e->limit = (long long)d->limit;
    }
    if (k != 4 && !d->rest_of_file) {
        e->skipped_to = (long long)d->skipped_to; /* resynchronised there */
    }
}

int damage_error(const window *w, char *err) {
    tferror e;
    damage_fields(&e, w);
    int status = w->r.damage.status;
    e.suggest_skip = status != READER_STREAM_CORRUPT && status != READER_STREAM_TRUNCATED;
    tferror_raise(err, &e);
    return -1;
}

void malformed_error(char *err, int record_type, const char *path, size_t index, uint64_t at,
                     const char *feature) {
    char detail[512] = "";
    tferror e;
    tferror_init(&e, TFERR_CORRUPT, "malformed", path);
    e.record_type = record_type == SEQUENCE_EXAMPLE ? "sequence_example" : "example";
    e.record_index = (long long)index;
    e.offset = (long long)at;
    if (feature != NULL) {
        malformed_detail(detail, sizeof(detail), feature);
        e.detail = detail;
    }
    tferror_raise(err, &e);
}

int window_fill(window *w, uint64_t from, size_t need, char *err) {
    int rc = reader_fill(&w->r, from, need, err);
    return rc == READER_DAMAGE ? damage_error(w, err) : rc;
}

int window_next(window *w, const framing *o, char *err) {
    reader_limits limits = {o->max_records, o->max_bytes, o->max_record_bytes, o->verify};
    uint64_t stop = w->r.stop; /* a range of the scan (ranges.c): it ends at the first
                                * position of the file's chain at or past its stop */
    for (;;) {
        if (stop != UINT64_MAX && w->r.next >= stop) {
            return 0;
        }
        int rc = reader_next(&w->r, &limits, err);
        if (rc != READER_DAMAGE) {
            return rc;
        }
        int status = w->r.damage.status;
        if (!o->skip_corrupt || status == READER_STREAM_CORRUPT ||
            status == READER_STREAM_TRUNCATED) {
            return damage_error(w, err);
        }
        w->r.stop = UINT64_MAX; /* resync as a read of the whole file does */
        rc = reader_skip(&w->r, o->max_record_bytes, err);
        w->r.stop = stop;
        if (rc == READER_DAMAGE) {
            return damage_error(w, err);
        }
        if (rc < 0) {
            return -1;
        }
        tferror e; /* what is skipped, as the Python reader's warning names it */
        damage_fields(&e, w);
        reports_skipped(o->reports, &e);
    }
}
