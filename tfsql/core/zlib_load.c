/*
 * tfsql/core/zlib_load.c -- zlib's functions for the bindings, loaded at run time
 * (libz.so.1): neither binary links zlib, and the reader's code calls zlib only through
 * the reader_zlib table a binding hands it. Both bindings (the Python module and the
 * DuckDB extension) get the inflate table here; the extension's COPY gets its deflate
 * functions from the same library handle. On Windows nothing is loaded (NULL): the
 * Python reader then reads compressed files through the reference reader.
 */

#include "tfsql_core.h"

#if defined(_WIN32)

void *tfsql_zlib_library(void) { return NULL; }

const reader_zlib *tfsql_inflate_zlib(void) { return NULL; }

#else

#include <dlfcn.h>
#include <pthread.h>

static pthread_mutex_t zl_lock = PTHREAD_MUTEX_INITIALIZER;

void *tfsql_zlib_library(void) {
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

static reader_zlib zl;
static pthread_once_t zl_once = PTHREAD_ONCE_INIT;

static void zlib_resolve(void) {
    void *handle = tfsql_zlib_library();
    if (handle != NULL) {
        zl.init2 = (int (*)(reader_zstream *, int, const char *, int))dlsym(handle, "inflateInit2_");
        zl.inflate = (int (*)(reader_zstream *, int))dlsym(handle, "inflate");
        zl.end = (int (*)(reader_zstream *))dlsym(handle, "inflateEnd");
        zl.version = (const char *(*)(void))dlsym(handle, "zlibVersion");
    }
}

const reader_zlib *tfsql_inflate_zlib(void) {
    pthread_once(&zl_once, zlib_resolve);
    return zl.init2 != NULL && zl.inflate != NULL && zl.end != NULL && zl.version != NULL ? &zl
                                                                                         : NULL;
}

#endif
