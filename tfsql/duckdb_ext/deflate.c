/*
 * tfsql/duckdb_ext/deflate.c -- gzip and zlib streams for writing, through the system's
 * libz loaded at run time (as the reader inflates): the extension links no zlib, so a
 * machine without libz.so.1 still loads it and only COMPRESSION gzip / zlib fails, with
 * an error that says so.
 *
 * The streams are zlib's deflate with windowBits 31 (gzip: a header with no name and
 * mtime 0) or 15 (zlib), at the level asked for (-1: zlib's default, 6): the bytes
 * Python's zlib.compressobj(level, DEFLATED, 31 or 15) writes, so tfsql.write_tfrecord
 * and a native COPY produce the same compressed files.
 */
#include "ext_common.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

typedef int (*deflate_init2_fn)(zstream *, int, int, int, int, int, const char *, int);
typedef int (*deflate_fn)(zstream *, int);
typedef int (*deflate_end_fn)(zstream *);
typedef const char *(*deflate_version_fn)(void);

static struct {
    deflate_init2_fn init2;
    deflate_fn deflate;
    deflate_end_fn end;
    deflate_version_fn version;
} zd;

static pthread_once_t zd_once = PTHREAD_ONCE_INIT;

static void deflate_resolve(void) {
    void *handle = tfsql_zlib_library();
    if (handle != NULL) {
        zd.init2 = (deflate_init2_fn)dlsym(handle, "deflateInit2_");
        zd.deflate = (deflate_fn)dlsym(handle, "deflate");
        zd.end = (deflate_end_fn)dlsym(handle, "deflateEnd");
        zd.version = (deflate_version_fn)dlsym(handle, "zlibVersion");
    }
}

static int deflate_load(void) {
    pthread_once(&zd_once, deflate_resolve);
    return zd.init2 != NULL && zd.deflate != NULL && zd.end != NULL && zd.version != NULL ? 0
                                                                                         : -1;
}

int deflater_start(deflater *d, int comp, int level, char *err) {
    memset(d, 0, sizeof(*d));
    if (deflate_load()) {
        snprintf(err, ERRLEN, "COMPRESSION %s needs the zlib library (libz.so.1), which was not "
                              "found; install zlib or write uncompressed files",
                 comp == COMP_GZIP ? "gzip" : "zlib");
        return -1;
    }
    /* Z_DEFLATED = 8, memLevel 8 and Z_DEFAULT_STRATEGY = 0: zlib.compressobj's defaults */
    if (zd.init2(&d->z, level, 8, comp == COMP_GZIP ? 31 : 15, 8, 0, zd.version(),
                 (int)sizeof(zstream)) != 0) {
        snprintf(err, ERRLEN, "cannot start zlib's deflate (level %d)", level);
        return -1;
    }
    d->active = 1;
    return 0;
}

int deflater_run(deflater *d, const uint8_t *in, size_t n, int finish, tbuf *out, char *err) {
    d->z.next_in = in;
    for (;;) {
        unsigned chunk = n > 0x40000000u ? 0x40000000u : (unsigned)n;
        d->z.avail_in = chunk;
        if (tbuf_reserve(out, (size_t)chunk / 2 + (1 << 16))) {
            snprintf(err, ERRLEN, "out of memory while compressing");
            return -1;
        }
        size_t room = out->cap - out->len;
        d->z.next_out = out->data + out->len;
        d->z.avail_out = room > 0x40000000u ? 0x40000000u : (unsigned)room;
        unsigned before_out = d->z.avail_out;
        const uint8_t *before_in = d->z.next_in;
        int last = finish && chunk == n;
        int rc = zd.deflate(&d->z, last ? 4 /* Z_FINISH */ : 0 /* Z_NO_FLUSH */);
        out->len += before_out - d->z.avail_out;
        size_t used = (size_t)(d->z.next_in - before_in);
        n -= used;
        if (rc == 1 /* Z_STREAM_END */) {
            return 0;
        }
        if (rc != 0 && rc != -5 /* Z_BUF_ERROR: no progress possible, give more room */) {
            snprintf(err, ERRLEN, "zlib's deflate failed (%d: %s)", rc,
                     d->z.msg ? d->z.msg : "no message");
            return -1;
        }
        if (!last && n == 0 && d->z.avail_out != 0) {
            return 0; /* all input taken; the rest comes with later calls */
        }
    }
}

void deflater_end(deflater *d) {
    if (d->active) {
        zd.end(&d->z);
        d->active = 0;
    }
}
