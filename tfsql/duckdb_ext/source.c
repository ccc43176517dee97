/*
 * tfsql/duckdb_ext/source.c -- a file's (decompressed) bytes, read through a bounded
 * window with positioned reads.
 *
 * Nothing is mapped: a mapping of a file that another process truncates faults
 * (SIGBUS) on the first page past the new end, which kills the whole database process.
 * A file is read with pread() into a window of at most WINDOW_READ (or one record,
 * which the caller bounds by max_record_bytes); a compressed file is read in
 * COMPRESSED_CHUNK pieces and inflated as the scan goes, never whole.
 *
 * A file that changes while it is read is an error naming the file and the change, as
 * tfsql.file_guard does for the Python reader: at open its size must be the one the
 * bind listed (else it grew, shrank or was replaced since), and after every read the
 * open file's size and modification time must be those of the open (else it was
 * truncated, extended or rewritten in place). A file deleted or renamed over after the
 * open still reads completely: the open descriptor holds its old content.
 *
 * zlib is loaded at run time (libz.so.1): the extension links nothing beyond libc.
 */

#include "duckdb_ext.h"

/* -- zlib, loaded at run time ----------------------------------------------- */

typedef int (*inflate_init2_fn)(zstream *, int, const char *, int);
typedef int (*inflate_fn)(zstream *, int);
typedef int (*inflate_end_fn)(zstream *);
typedef const char *(*zlib_version_fn)(void);

static pthread_mutex_t zl_lock = PTHREAD_MUTEX_INITIALIZER;

void *zlib_library(void) {
    static int tried;
    static void *handle;
    pthread_mutex_lock(&zl_lock);
    if (!tried) {
        tried = 1;
        const char *names[] = {"libz.so.1", "libz.so", "libz.1.dylib", "libz.dylib", NULL};
        for (int i = 0; names[i] != NULL && handle == NULL; i++) {
            handle = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        }
    }
    pthread_mutex_unlock(&zl_lock);
    return handle;
}

static struct {
    inflate_init2_fn init2;
    inflate_fn inflate;
    inflate_end_fn end;
    zlib_version_fn version;
} zl;

static pthread_once_t zl_once = PTHREAD_ONCE_INIT;

static void zlib_resolve(void) {
    void *handle = zlib_library();
    if (handle != NULL) {
        zl.init2 = (inflate_init2_fn)dlsym(handle, "inflateInit2_");
        zl.inflate = (inflate_fn)dlsym(handle, "inflate");
        zl.end = (inflate_end_fn)dlsym(handle, "inflateEnd");
        zl.version = (zlib_version_fn)dlsym(handle, "zlibVersion");
    }
}

static int zlib_load(void) {
    pthread_once(&zl_once, zlib_resolve);
    return zl.init2 != NULL && zl.inflate != NULL && zl.end != NULL && zl.version != NULL ? 0
                                                                                         : -1;
}

enum { Z_OK_ = 0, Z_STREAM_END_ = 1, Z_BUF_ERROR_ = -5 };

/* -- the open file and its checks ------------------------------------------ */

static int64_t mtime_ns(const struct stat *st) {
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
    if (mtime_ns(&st) != s->mtime_ns) {
        changed(err, s->path, "modified", -1, -1);
        return -1;
    }
    return 0;
}

/* Read file bytes [at, at + n) into dst (a short read is a change of the file). */
static int read_at(source *s, uint8_t *dst, size_t n, uint64_t at, char *err) {
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

int source_open(source *s, const char *path, int64_t listed_size, int comp, char *err) {
    memset(s, 0, sizeof(*s));
    s->path = path;
    s->fd = open(path, O_RDONLY | O_CLOEXEC);
    if (s->fd < 0) {
        if (errno == ENOENT) {
            changed(err, path, "deleted", -1, -1);
        } else {
            snprintf(err, ERRLEN, "cannot open %s: %s", path, strerror(errno));
        }
        return -1;
    }
    struct stat st;
    if (fstat(s->fd, &st) != 0) {
        snprintf(err, ERRLEN, "cannot stat %s: %s", path, strerror(errno));
        source_close(s);
        return -1;
    }
    if (!S_ISREG(st.st_mode)) {
        snprintf(err, ERRLEN, "%s is not a regular file (a TFRecord file must be one)", path);
        source_close(s);
        return -1;
    }
    s->file_size = (uint64_t)st.st_size;
    s->mtime_ns = mtime_ns(&st);
    if (listed_size >= 0 && (uint64_t)listed_size != s->file_size) {
        changed_size(err, path, (uint64_t)listed_size, s->file_size);
        source_close(s);
        return -1;
    }
    if (comp == COMP_INFER) {
        uint8_t head[12];
        size_t n = s->file_size < 12 ? (size_t)s->file_size : 12;
        if (read_at(s, head, n, 0, err)) {
            source_close(s);
            return -1;
        }
        comp = tfsql_detect_compression(head, n); /* COMP_* = TFSQL_DETECT_* */
    }
    s->comp = comp;
    if (comp != COMP_NONE && zlib_load()) {
        snprintf(err, ERRLEN, "%s: reading compressed files needs the zlib library (libz.so.1), "
                              "which was not found", path);
        source_close(s);
        return -1;
    }
    return 0;
}

void source_close(source *s) {
    if (s->z_active) {
        zl.end(&s->z);
        s->z_active = 0;
    }
    if (s->path != NULL && s->fd >= 0) { /* a zeroed source was never opened */
        close(s->fd);
    }
    s->fd = -1;
    tbuf_free(&s->in);
}

/* -- reading the stream ---------------------------------------------------- */

/* Append up to `want` bytes of a plain file to `out`. */
static int plain_read(source *s, tbuf *out, size_t want, char *err) {
    uint64_t left = s->file_size - s->file_pos;
    size_t n = left < (uint64_t)want ? (size_t)left : want;
    if (n == 0) {
        s->eof = 1;
        return 0;
    }
    if (tbuf_reserve(out, n)) {
        snprintf(err, ERRLEN, "out of memory reading %s", s->path);
        return -1;
    }
    if (read_at(s, out->data + out->len, n, s->file_pos, err)) {
        return -1;
    }
    out->len += n;
    s->file_pos += n;
    s->eof = s->file_pos == s->file_size;
    return 0;
}

/* Refill the compressed input buffer (it is empty). 0 and no bytes at the end. */
static int refill_input(source *s, char *err) {
    uint64_t left = s->file_size - s->file_pos;
    size_t n = left < COMPRESSED_CHUNK ? (size_t)left : COMPRESSED_CHUNK;
    s->in.len = 0;
    s->in_pos = 0;
    if (n == 0) {
        return 0;
    }
    if (tbuf_reserve(&s->in, n)) {
        snprintf(err, ERRLEN, "out of memory reading %s", s->path);
        return -1;
    }
    if (read_at(s, s->in.data, n, s->file_pos, err)) {
        return -1;
    }
    s->in.len = n;
    s->file_pos += n;
    return 0;
}

/* After a gzip member: whether only zero padding follows (the stream's end). */
static int only_padding_left(source *s, int *padding, char *err) {
    for (;;) {
        while (s->in_pos < s->in.len && s->in.data[s->in_pos] == 0) {
            s->in_pos++;
        }
        if (s->in_pos < s->in.len) {
            *padding = 0;
            return 0;
        }
        if (s->file_pos == s->file_size) {
            *padding = 1;
            return 0;
        }
        if (refill_input(s, err)) {
            return -1;
        }
    }
}

/* Append up to `want` inflated bytes to `out` (fewer at the end of the stream). */
static int inflate_read(source *s, tbuf *out, size_t want, char *err) {
    const char *what = s->comp == COMP_GZIP ? "gzip" : "zlib";
    size_t goal = out->len + want;
    while (!s->eof && out->len < goal) {
        if (s->in_pos == s->in.len && refill_input(s, err)) {
            return -1;
        }
        if (!s->z_active) {
            if (s->members > 0) { /* zlib: one stream; gzip: another member or padding */
                int padding = s->comp == COMP_ZLIB;
                if (!padding && only_padding_left(s, &padding, err)) {
                    return -1;
                }
                if (padding) {
                    s->eof = 1;
                    break;
                }
            }
            memset(&s->z, 0, sizeof(s->z));
            if (zl.init2(&s->z, s->comp == COMP_GZIP ? 31 : 15, zl.version(),
                         (int)sizeof(zstream)) != Z_OK_) {
                snprintf(err, ERRLEN, "%s: cannot start zlib", s->path);
                return -1;
            }
            s->z_active = 1;
        }
        size_t room = goal - out->len;
        if (room > INFLATE_STEP) {
            room = INFLATE_STEP;
        }
        if (tbuf_reserve(out, room)) {
            snprintf(err, ERRLEN, "out of memory inflating %s", s->path);
            return -1;
        }
        s->z.next_in = s->in.data + s->in_pos;
        s->z.avail_in = (unsigned)(s->in.len - s->in_pos);
        s->z.next_out = out->data + out->len;
        s->z.avail_out = (unsigned)room;
        int rc = zl.inflate(&s->z, 0);
        out->len += room - s->z.avail_out;
        s->in_pos = s->in.len - s->z.avail_in;
        uint64_t at = s->file_pos - (s->in.len - s->in_pos); /* compressed bytes consumed */
        if (rc == Z_STREAM_END_) {
            zl.end(&s->z);
            s->z_active = 0;
            s->members++;
            continue;
        }
        if (rc != Z_OK_ && rc != Z_BUF_ERROR_) {
            /* the detail as Python's zlib module gives it */
            char detail[300];
            snprintf(detail, sizeof(detail), "Error %d while decompressing data: %.200s", rc,
                     s->z.msg ? s->z.msg : "invalid compressed data");
            (void)at;
            tferror e;
            tferror_init(&e, TFERR_CORRUPT, "stream_corrupt", s->path);
            e.compression = what;
            e.detail = detail;
            tferror_raise(err, &e);
            return -1;
        }
        if (s->in_pos == s->in.len && s->file_pos == s->file_size && s->z.avail_out > 0) {
            tferror e;
            tferror_init(&e, TFERR_CORRUPT, "stream_truncated", s->path);
            e.compression = what;
            tferror_raise(err, &e);
            return -1;
        }
    }
    return 0;
}

int source_read(source *s, tbuf *out, size_t want, char *err) {
    if (s->eof) {
        return 0;
    }
    return s->comp == COMP_NONE ? plain_read(s, out, want, err) : inflate_read(s, out, want, err);
}

/* -- the window -------------------------------------------------------------- */

int window_open(window *w, const char *path, int64_t listed_size, int comp, char *err) {
    memset(w, 0, sizeof(*w));
    return source_open(&w->src, path, listed_size, comp, err);
}

void window_close(window *w) {
    source_close(&w->src);
    tbuf_free(&w->buf);
    w->base = 0;
}

int window_fill(window *w, uint64_t from, size_t need, char *err) {
    if (from < w->base || from > w->base + w->buf.len) {
        snprintf(err, ERRLEN, "internal error: window position %llu outside [%llu, %llu]",
                 (unsigned long long)from, (unsigned long long)w->base,
                 (unsigned long long)(w->base + w->buf.len));
        return -1;
    }
    size_t at = (size_t)(from - w->base);
    size_t have = w->buf.len - at;
    if (have >= need || w->src.eof) {
        return 0;
    }
    if (at > 0) { /* drop the bytes before `from` */
        memmove(w->buf.data, w->buf.data + at, have);
        w->buf.len = have;
        w->base = from;
    }
    size_t goal = need > WINDOW_READ ? need : WINDOW_READ;
    while (w->buf.len < goal && !w->src.eof) {
        if (source_read(&w->src, &w->buf, goal - w->buf.len, err)) {
            return -1;
        }
    }
    return 0;
}
