/*
 * tfsql/duckdb_ext/inflate.c -- gzip / zlib inflation through the system's
 * libz, loaded at run time (dlopen), a step at a time.
 */

#include "duckdb_ext.h"

typedef int (*inflate_init2_fn)(zstream *, int, const char *, int);
typedef int (*inflate_fn)(zstream *, int);
typedef int (*inflate_end_fn)(zstream *);
typedef const char *(*zlib_version_fn)(void);

static struct {
    int tried;
    void *handle;
    inflate_init2_fn init2;
    inflate_fn inflate;
    inflate_end_fn end;
    zlib_version_fn version;
} zl;

static pthread_mutex_t zl_lock = PTHREAD_MUTEX_INITIALIZER;

static int zlib_load(void) {
    pthread_mutex_lock(&zl_lock);
    if (!zl.tried) {
        zl.tried = 1;
        const char *names[] = {"libz.so.1", "libz.so", "libz.1.dylib", "libz.dylib", NULL};
        for (int i = 0; names[i] != NULL && zl.handle == NULL; i++) {
            zl.handle = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        }
        if (zl.handle != NULL) {
            zl.init2 = (inflate_init2_fn)dlsym(zl.handle, "inflateInit2_");
            zl.inflate = (inflate_fn)dlsym(zl.handle, "inflate");
            zl.end = (inflate_end_fn)dlsym(zl.handle, "inflateEnd");
            zl.version = (zlib_version_fn)dlsym(zl.handle, "zlibVersion");
        }
    }
    int ok = zl.init2 != NULL && zl.inflate != NULL && zl.end != NULL && zl.version != NULL;
    pthread_mutex_unlock(&zl_lock);
    return ok ? 0 : -1;
}

void inflater_end(inflater *f) {
    if (f->active) {
        zl.end(&f->z);
        f->active = 0;
    }
}

/* Inflate into `out` until it holds at least `want` bytes or the stream ends
 * (f->finished). */
int inflater_run(inflater *f, tbuf *out, size_t want, char *err) {
    const char *what = f->comp == COMP_GZIP ? "gzip" : "zlib";
    while (!f->finished && out->len < want) {
        if (!f->active) {
            if (f->members > 0) { /* after a gzip member: another one, or zero padding */
                size_t rest = f->pos;
                while (rest < f->n && f->in[rest] == 0) {
                    rest++;
                }
                if (rest >= f->n) {
                    f->finished = 1;
                    break;
                }
            }
            memset(&f->z, 0, sizeof(f->z));
            if (zl.init2(&f->z, f->comp == COMP_GZIP ? 31 : 15, zl.version(),
                         (int)sizeof(zstream)) != 0) {
                snprintf(err, ERRLEN, "cannot start zlib");
                return -1;
            }
            f->active = 1;
            f->z.next_in = f->in + f->pos;
            size_t left = f->n - f->pos;
            f->z.avail_in = left > 0x40000000u ? 0x40000000u : (unsigned)left;
        }
        if (tbuf_reserve(out, 1 << 20)) {
            inflater_end(f);
            snprintf(err, ERRLEN, "out of memory while inflating");
            return -1;
        }
        f->z.next_out = out->data + out->len;
        f->z.avail_out = (unsigned)(out->cap - out->len > 0x40000000u ? 0x40000000u
                                                                       : out->cap - out->len);
        unsigned before_out = f->z.avail_out;
        const uint8_t *before_in = f->z.next_in;
        int rc = zl.inflate(&f->z, 0);
        out->len += before_out - f->z.avail_out;
        f->pos += (size_t)(f->z.next_in - before_in);
        if (f->z.avail_in == 0 && f->pos < f->n) {
            size_t left = f->n - f->pos;
            f->z.avail_in = left > 0x40000000u ? 0x40000000u : (unsigned)left;
        }
        if (rc == 1 /* Z_STREAM_END */) {
            inflater_end(f);
            f->members++;
            f->finished = f->comp == COMP_ZLIB;
            continue;
        }
        if (rc != 0 && rc != -5 /* Z_BUF_ERROR */) {
            const char *msg = f->z.msg ? f->z.msg : "invalid compressed data";
            snprintf(err, ERRLEN, "%s data is corrupt at compressed byte %zu (%s)", what, f->pos,
                     msg);
            inflater_end(f);
            return -1;
        }
        if (rc == -5 && f->z.avail_in == 0 && f->pos >= f->n) {
            inflater_end(f);
            snprintf(err, ERRLEN, "the %s stream is truncated (copy the file again from its "
                                  "source)", what);
            return -1;
        }
    }
    return 0;
}

int inflater_start(inflater *f, const uint8_t *in, size_t n, int comp, char *err) {
    memset(f, 0, sizeof(*f));
    if (zlib_load()) {
        snprintf(err, ERRLEN, "reading compressed files needs the zlib library (libz.so.1), "
                              "which was not found");
        return -1;
    }
    f->in = in;
    f->n = n;
    f->comp = comp;
    return 0;
}
