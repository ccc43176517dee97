/*
 * tfsql/_duckdb_ext.c -- the DuckDB extension `tfsql.duckdb_extension`.
 *
 * It compiles the same C core as the Python module tfsql._native (framing, CRC-32C,
 * decoder, summaries: tfsql/_native.c built with TFSQL_NO_PYTHON) and binds it to
 * DuckDB's stable C extension API (C API v1.2.0, so one file loads in DuckDB 1.4.x and
 * 2.x). It registers:
 *
 *   tfrecord_scan(path | [paths], option := value, ...)   and its alias read_tfrecord
 *   a replacement scan: FROM 'x.tfrecord' / '.tfrecords' / '.tfrecord.gz' / globs
 *
 * Layout (one job per section):
 *
 *   1. Strings and lists    small growable helpers
 *   2. zlib                 inflate through the system's libz, loaded at run time
 *   3. Files                reading a file whole (decompressed), compression detection
 *   4. Discovery            paths, directories, globs, hidden-file rules (tfsql.discovery)
 *   5. Partitions           hive key=value directories and their types (tfsql.partitioning)
 *   6. Inference            the sampled summary -> columns (tfsql.inference / schema)
 *   7. Bind                 parameters -> options, files, columns
 *   8. Scan                 parallel per-file scan, projection, decoded buffers -> vectors
 *   9. Entry point          function registration, replacement scan
 *
 * The rules are those of the Python reader, so `tfrecord_scan` gives the same columns,
 * types and values as `tfsql.read_tfrecord`; tests/integration/test_duckdb_extension*.py
 * compare the two.
 */

#define TFSQL_NO_PYTHON 1
#define _GNU_SOURCE 1
#include "_native.c"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define DUCKDB_EXTENSION_NAME tfsql
#include "duckdb_extension.h"
DUCKDB_EXTENSION_EXTERN

/* ======================================================================== */
/* 1. Strings and lists                                                     */
/* ======================================================================== */

#define ERRLEN 4096
/* tfsql.inference.DEFAULT_INFER_BYTES: a file's inference sample ends once its records
 * hold this many bytes (unless every record is sampled). */
#define INFER_BYTES (4LL << 20)

static char *xstrndup(const char *s, size_t n) {
    char *r = (char *)malloc(n + 1);
    if (r != NULL) {
        memcpy(r, s, n);
        r[n] = 0;
    }
    return r;
}

static char *xstrdup(const char *s) { return xstrndup(s, strlen(s)); }

static char *xprintf(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *r = (char *)malloc((size_t)n + 1);
    if (r != NULL) {
        va_start(ap, fmt);
        vsnprintf(r, (size_t)n + 1, fmt, ap);
        va_end(ap);
    }
    return r;
}

typedef struct {
    char **items;
    size_t n, cap;
} strlist;

/* Append s (owned; NULL is kept: a null partition value); -1 when out of memory. */
static int strlist_push(strlist *l, char *s) {
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 16;
        char **items = (char **)realloc(l->items, cap * sizeof(char *));
        if (items == NULL) {
            free(s);
            return -1;
        }
        l->items = items;
        l->cap = cap;
    }
    l->items[l->n++] = s;
    return 0;
}

static int strlist_add(strlist *l, char *s) { /* takes ownership of s; NULL: out of memory */
    if (s == NULL) {
        return -1;
    }
    return strlist_push(l, s);
}

static void strlist_free(strlist *l) {
    for (size_t i = 0; i < l->n; i++) {
        free(l->items[i]);
    }
    free(l->items);
    memset(l, 0, sizeof(*l));
}

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int ends_with(const char *s, const char *suffix) {
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

static int ends_with_ci(const char *s, const char *suffix) {
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcasecmp(s + n - m, suffix) == 0;
}

/* ======================================================================== */
/* 2. zlib, loaded at run time                                              */
/* ======================================================================== */

/* The z_stream layout of zlib's ABI (stable since zlib 1.0). */
typedef struct {
    const uint8_t *next_in;
    unsigned avail_in;
    unsigned long total_in;
    uint8_t *next_out;
    unsigned avail_out;
    unsigned long total_out;
    const char *msg;
    void *state;
    void *zalloc, *zfree, *opaque;
    int data_type;
    unsigned long adler, reserved;
} zstream;

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

enum { COMP_NONE = 0, COMP_GZIP = 1, COMP_ZLIB = 2, COMP_INFER = 3 };

/* A gzip (members concatenated; trailing zero padding ignored) or zlib stream being
 * inflated, a step at a time: inference inflates only the start of a file. The z_stream
 * must stay where it is while active (zlib keeps a pointer back to it). */
typedef struct {
    const uint8_t *in;
    size_t n, pos;
    int comp, active, finished, members;
    zstream z;
} inflater;

static void inflater_end(inflater *f) {
    if (f->active) {
        zl.end(&f->z);
        f->active = 0;
    }
}

/* Inflate into `out` until it holds at least `want` bytes or the stream ends
 * (f->finished). */
static int inflater_run(inflater *f, tbuf *out, size_t want, char *err) {
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

static int inflater_start(inflater *f, const uint8_t *in, size_t n, int comp, char *err) {
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

/* ======================================================================== */
/* 3. Files                                                                 */
/* ======================================================================== */

/* A file's bytes, decompressed: mapped when plain, else inflated into `owned`. */
typedef struct {
    const uint8_t *data;
    size_t size;
    void *map;
    size_t map_size;
    tbuf owned;
} filebytes;

static void filebytes_free(filebytes *f) {
    if (f->map != NULL) {
        munmap(f->map, f->map_size);
    }
    tbuf_free(&f->owned);
    memset(f, 0, sizeof(*f));
}

static int detect_compression(const uint8_t *h, size_t n) {
    if (n >= 12 && masked_crc(h, 8) == load_le32(h + 8)) {
        return COMP_NONE;
    }
    if (n >= 2 && h[0] == 0x1f && h[1] == 0x8b) {
        return COMP_GZIP;
    }
    if (n >= 2 && (h[0] & 0x0f) == 8 && (h[0] >> 4) <= 7 && ((unsigned)h[0] * 256 + h[1]) % 31 == 0) {
        return COMP_ZLIB;
    }
    return COMP_NONE;
}

/* Open `path` (compression `comp`, or COMP_INFER). Plain bytes are mapped. Compressed
 * ones are inflated whole, or, when `inf` is given, not yet: the caller inflates them
 * with inflater_run(inf, &f->owned, ...) and file_inflated(f), then inflater_end. */
static int file_open(const char *path, int comp, filebytes *f, inflater *inf, char *err) {
    memset(f, 0, sizeof(*f));
    if (inf != NULL) {
        memset(inf, 0, sizeof(*inf));
        inf->finished = 1;
    }
    int fd = open(path, O_RDONLY);
    if (fd < 0) {
        snprintf(err, ERRLEN, "cannot open %s: %s", path, strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        snprintf(err, ERRLEN, "cannot stat %s: %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    size_t size = (size_t)st.st_size;
    if (size == 0) {
        close(fd);
        f->data = (const uint8_t *)"";
        return 0;
    }
    void *map = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (map == MAP_FAILED) {
        snprintf(err, ERRLEN, "cannot map %s: %s", path, strerror(errno));
        return -1;
    }
    f->map = map;
    f->map_size = size;
    if (comp == COMP_INFER) {
        comp = detect_compression((const uint8_t *)map, size);
    }
    if (comp == COMP_NONE) {
        f->data = (const uint8_t *)map;
        f->size = size;
        return 0;
    }
    char why[ERRLEN];
    inflater whole, *z = inf != NULL ? inf : &whole;
    if (inflater_start(z, (const uint8_t *)map, size, comp, why) ||
        (inf == NULL && inflater_run(z, &f->owned, SIZE_MAX, why))) {
        snprintf(err, ERRLEN, "%s: %s", path, why);
        filebytes_free(f);
        return -1;
    }
    f->data = (const uint8_t *)"";
    f->size = 0;
    if (inf == NULL) {
        munmap(f->map, f->map_size);
        f->map = NULL;
        f->data = f->owned.data ? f->owned.data : (const uint8_t *)"";
        f->size = f->owned.len;
    }
    return 0;
}

/* After inflater_run: the bytes inflated so far are the file's bytes. */
static void file_inflated(filebytes *f) {
    f->data = f->owned.data ? f->owned.data : (const uint8_t *)"";
    f->size = f->owned.len;
}

static int file_read(const char *path, int comp, filebytes *f, char *err) {
    return file_open(path, comp, f, NULL, err);
}

/* ======================================================================== */
/* 4. Discovery                                                             */
/* ======================================================================== */

typedef struct {
    char *path;    /* absolute, normalised */
    char *root;    /* the directory hive directories are parsed below; NULL when named */
    int64_t size;
    char **parts;  /* raw (unescaped) partition values, NULL for null; one per key */
} tfile;

typedef struct {
    tfile *items;
    size_t n, cap;
} filelist;

static int filelist_add(filelist *l, char *path, const char *root, int64_t size) {
    if (path == NULL) {
        return -1;
    }
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 16;
        tfile *items = (tfile *)realloc(l->items, cap * sizeof(tfile));
        if (items == NULL) {
            free(path);
            return -1;
        }
        l->items = items;
        l->cap = cap;
    }
    tfile *f = &l->items[l->n++];
    memset(f, 0, sizeof(*f));
    f->path = path;
    f->root = root ? xstrdup(root) : NULL;
    f->size = size;
    return 0;
}

static void filelist_free(filelist *l, int nparts) {
    for (size_t i = 0; i < l->n; i++) {
        free(l->items[i].path);
        free(l->items[i].root);
        if (l->items[i].parts != NULL) {
            for (int k = 0; k < nparts; k++) {
                free(l->items[i].parts[k]);
            }
            free(l->items[i].parts);
        }
    }
    free(l->items);
    memset(l, 0, sizeof(*l));
}

static int has_glob_magic(const char *s) { return strpbrk(s, "*?[") != NULL; }

/* Spark's shouldFilterOutPathName, as tfsql.discovery.is_hidden_name. */
static int is_hidden_name(const char *name, size_t n) {
    if (n > 0 && name[0] == '.') {
        return 1;
    }
    if (n > 0 && name[0] == '_' && memchr(name, '=', n) == NULL) {
        return 1;
    }
    return (n >= 4 && memcmp(name + n - 4, ".crc", 4) == 0) ||
           (n >= 10 && memcmp(name + n - 10, "._COPYING_", 10) == 0);
}

/* The next '/'-separated component of *s, leading slashes skipped: its start, its length
 * in *len (0 at the end of the string); *s moves past it. */
static const char *next_component(const char **s, size_t *len) {
    const char *p = *s;
    while (*p == '/') {
        p++;
    }
    const char *e = p;
    while (*e && *e != '/') {
        e++;
    }
    *len = (size_t)(e - p);
    *s = e;
    return p;
}

/* os.path.abspath: absolute, without ".", ".." and repeated "/". */
static char *abs_path(const char *p) {
    if (strncmp(p, "file://", 7) == 0) {
        p += 7;
    }
    char *joined;
    if (p[0] == '/') {
        joined = xstrdup(p);
    } else {
        char cwd[4096];
        if (getcwd(cwd, sizeof(cwd)) == NULL) {
            return NULL;
        }
        joined = xprintf("%s/%s", cwd, p);
    }
    if (joined == NULL) {
        return NULL;
    }
    size_t n = strlen(joined);
    char *out = (char *)malloc(n + 2);
    if (out == NULL) {
        free(joined);
        return NULL;
    }
    size_t o = 0;
    const char *s = joined;
    while (*s) {
        size_t len;
        const char *c = next_component(&s, &len);
        if (len == 0 || (len == 1 && c[0] == '.')) {
            /* skip */
        } else if (len == 2 && c[0] == '.' && c[1] == '.') {
            while (o > 0 && out[o - 1] != '/') {
                o--;
            }
            if (o > 0) {
                o--;
            }
        } else {
            out[o++] = '/';
            memcpy(out + o, c, len);
            o += len;
        }
    }
    if (o == 0) {
        out[o++] = '/';
    }
    out[o] = 0;
    free(joined);
    return out;
}

/* Components of `path` below `root` (root "" or "/" means the whole path). */
static const char *relative_to(const char *path, const char *root) {
    size_t n = strlen(root);
    if (n == 0 || strcmp(root, "/") == 0) {
        while (*path == '/') {
            path++;
        }
        return path;
    }
    if (strncmp(path, root, n) == 0 && path[n] == '/') {
        return path + n + 1;
    }
    return path;
}

/* tfsql.discovery._keep: no hidden component below the root, unless a glob component
 * that itself starts with "." or "_" (in `exempt`) matches it. */
static int keep_path(const char *path, const char *root, const strlist *exempt) {
    const char *s = relative_to(path, root);
    while (*s) {
        const char *e = strchr(s, '/');
        size_t len = e ? (size_t)(e - s) : strlen(s);
        if (len > 0 && is_hidden_name(s, len)) {
            char part[1024];
            int ok = 0;
            if (len < sizeof(part)) {
                memcpy(part, s, len);
                part[len] = 0;
                for (size_t k = 0; exempt && k < exempt->n && !ok; k++) {
                    ok = fnmatch(exempt->items[k], part, 0) == 0;
                }
            }
            if (!ok) {
                return 0;
            }
        }
        if (!e) {
            break;
        }
        s = e + 1;
    }
    return 1;
}

/* The entries of directory `dir` whose names match `pattern` (all when NULL), as paths;
 * "." and ".." are left out, and a directory that cannot be read has none. */
static int dir_children(const char *dir, const char *pattern, strlist *out) {
    DIR *d = opendir(dir);
    if (d == NULL) {
        return 0;
    }
    struct dirent *ent;
    int rc = 0;
    while (rc == 0 && (ent = readdir(d)) != NULL) {
        if (strcmp(ent->d_name, ".") == 0 || strcmp(ent->d_name, "..") == 0 ||
            (pattern != NULL && fnmatch(pattern, ent->d_name, 0) != 0)) {
            continue;
        }
        rc = strlist_add(out, strcmp(dir, "/") == 0 ? xprintf("/%s", ent->d_name)
                                                    : xprintf("%s/%s", dir, ent->d_name));
    }
    closedir(d);
    return rc;
}

static int is_dir(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Every regular file below `dir` (recursively), as paths. */
static int walk_dir(const char *dir, strlist *out) {
    strlist children = {0};
    int rc = dir_children(dir, NULL, &children);
    for (size_t i = 0; i < children.n && rc == 0; i++) {
        struct stat st;
        if (stat(children.items[i], &st) != 0) {
            continue;
        }
        if (S_ISDIR(st.st_mode)) {
            rc = walk_dir(children.items[i], out);
        } else if (S_ISREG(st.st_mode)) {
            rc = strlist_add(out, children.items[i]);
            children.items[i] = NULL;
        }
    }
    strlist_free(&children);
    return rc;
}

static int64_t file_size(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 ? (int64_t)st.st_size : 0;
}

/* Add the kept files below directory `dir` (sorted), parsed against `root`. */
static int list_directory(const char *dir, const char *root, const strlist *exempt,
                          int exclude_hidden, strlist *out) {
    strlist found = {0};
    if (walk_dir(dir, &found)) {
        strlist_free(&found);
        return -1;
    }
    qsort(found.items, found.n, sizeof(char *), cmp_str);
    for (size_t i = 0; i < found.n; i++) {
        if (!exclude_hidden || keep_path(found.items[i], root, exempt)) {
            if (strlist_add(out, found.items[i])) {
                found.items[i] = NULL;
                strlist_free(&found);
                return -1;
            }
            found.items[i] = NULL;
        }
    }
    strlist_free(&found);
    return 0;
}

/* Expand glob components comps[k..] below `dir`; matches (files and directories) go to
 * `out`. `**` is a whole component matching zero or more directory levels. */
static int glob_walk(const char *dir, char **comps, int ncomps, int k, strlist *out) {
    if (k == ncomps) {
        return strlist_add(out, xstrdup(dir));
    }
    const char *c = comps[k];
    int last = k + 1 == ncomps, rc = 0;
    if (!has_glob_magic(c)) {
        char *child = strcmp(dir, "/") == 0 ? xprintf("/%s", c) : xprintf("%s/%s", dir, c);
        struct stat st;
        if (child != NULL && stat(child, &st) == 0 && (last || S_ISDIR(st.st_mode))) {
            rc = glob_walk(child, comps, ncomps, k + 1, out);
        }
        free(child);
        return rc;
    }
    int globstar = strcmp(c, "**") == 0;
    if (globstar && glob_walk(dir, comps, ncomps, k + 1, out)) {
        return -1;
    }
    strlist children = {0};
    rc = dir_children(dir, globstar ? NULL : c, &children);
    for (size_t i = 0; i < children.n && rc == 0; i++) {
        const char *child = children.items[i];
        if (globstar) {  /* one level deeper, still matching "**"; or a file it ends on */
            rc = is_dir(child) ? glob_walk(child, comps, ncomps, k, out)
                 : last        ? strlist_add(out, xstrdup(child))
                               : 0;
        } else if (last || is_dir(child)) {
            rc = glob_walk(child, comps, ncomps, k + 1, out);
        }
    }
    strlist_free(&children);
    return rc;
}

static int cmp_len(const void *a, const void *b) {
    size_t x = strlen(*(char *const *)a), y = strlen(*(char *const *)b);
    return x < y ? -1 : x > y;
}

/* One source item -> files (sorted). 1 when nothing matched (err set), -1 on error. */
static int list_item(const char *item, int glob, filelist *files, char *err) {
    char *path = abs_path(item);
    if (path == NULL) {
        snprintf(err, ERRLEN, "out of memory");
        return -1;
    }
    if (glob && has_glob_magic(path)) {
        /* split into components */
        strlist comps = {0};
        const char *s = path;
        while (*s) {
            size_t len;
            const char *c = next_component(&s, &len);
            if (len > 0) {
                strlist_add(&comps, xstrndup(c, len));
            }
        }
        /* the root: the longest directory prefix without glob characters */
        int nroot = 0;
        while (nroot < (int)comps.n - 1 && !has_glob_magic(comps.items[nroot])) {
            nroot++;
        }
        char *root = xstrdup("");
        for (int k = 0; k < nroot; k++) {
            char *r = xprintf("%s/%s", root, comps.items[k]);
            free(root);
            root = r;
        }
        if (root[0] == 0) {
            free(root);
            root = xstrdup("/");
        }
        strlist exempt = {0};
        for (size_t k = (size_t)nroot; k < comps.n; k++) {
            const char *c = comps.items[k];
            if (strcmp(c, "**") != 0 && (c[0] == '_' || c[0] == '.')) {
                strlist_add(&exempt, xstrdup(c));
            }
        }
        strlist matches = {0};
        int rc = glob_walk(root, comps.items + nroot, (int)comps.n - nroot, 0, &matches);
        if (rc == 0 && matches.n > 0) {
            qsort(matches.items, matches.n, sizeof(char *), cmp_len);
            strlist listed_dirs = {0};
            strlist kept = {0};
            for (size_t i = 0; i < matches.n && rc == 0; i++) {
                const char *m = matches.items[i];
                struct stat st;
                if (stat(m, &st) != 0) {
                    continue;
                }
                if (S_ISDIR(st.st_mode)) {
                    int covered = 0;
                    for (size_t j = 0; j < listed_dirs.n && !covered; j++) {
                        size_t ln = strlen(listed_dirs.items[j]);
                        covered = strncmp(m, listed_dirs.items[j], ln) == 0 && m[ln] == '/';
                    }
                    if (covered) {
                        continue;
                    }
                    strlist_add(&listed_dirs, xstrdup(m));
                    rc = list_directory(m, root, &exempt, 1, &kept);
                } else if (keep_path(m, root, &exempt)) {
                    rc = strlist_add(&kept, xstrdup(m));
                }
            }
            qsort(kept.items, kept.n, sizeof(char *), cmp_str);
            for (size_t i = 0; i < kept.n && rc == 0; i++) {
                if (i + 1 < kept.n && strcmp(kept.items[i], kept.items[i + 1]) == 0) {
                    continue; /* a duplicate: keep the last copy */
                }
                rc = filelist_add(files, kept.items[i], root, file_size(kept.items[i]));
                kept.items[i] = NULL;
            }
            strlist_free(&kept);
            strlist_free(&listed_dirs);
            strlist_free(&matches);
            strlist_free(&exempt);
            strlist_free(&comps);
            free(root);
            free(path);
            if (rc) {
                snprintf(err, ERRLEN, "out of memory");
            }
            return rc;
        }
        strlist_free(&matches);
        strlist_free(&exempt);
        strlist_free(&comps);
        free(root);
        struct stat st;
        if (stat(path, &st) != 0) {
            free(path);
            snprintf(err, ERRLEN, "no files match the pattern '%s'; check the pattern (pass "
                                  "glob := false to read a path containing *, ? or [ literally)",
                     item);
            return 1;
        }
    }
    struct stat st;
    if (stat(path, &st) != 0) {
        free(path);
        snprintf(err, ERRLEN, "no such file or directory: '%s'; check the path", item);
        return 1;
    }
    if (S_ISDIR(st.st_mode)) {
        strlist found = {0};
        int rc = list_directory(path, path, NULL, 1, &found);
        for (size_t i = 0; i < found.n && rc == 0; i++) {
            rc = filelist_add(files, found.items[i], path, file_size(found.items[i]));
            found.items[i] = NULL;
        }
        strlist_free(&found);
        free(path);
        return rc;
    }
    return filelist_add(files, path, NULL, (int64_t)st.st_size);
}

/* ======================================================================== */
/* 5. Partitions                                                            */
/* ======================================================================== */

static int hexval(char c) {
    if (c >= '0' && c <= '9') {
        return c - '0';
    }
    if (c >= 'a' && c <= 'f') {
        return c - 'a' + 10;
    }
    if (c >= 'A' && c <= 'F') {
        return c - 'A' + 10;
    }
    return -1;
}

/* tfsql.partitioning.unescape_partition_value: %XX -> the character (code point XX). */
static char *unescape(const char *s, size_t n) {
    char *out = (char *)malloc(2 * n + 1);
    if (out == NULL) {
        return NULL;
    }
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '%' && i + 2 < n + 0 && i + 2 <= n - 1 && hexval(s[i + 1]) >= 0 &&
            hexval(s[i + 2]) >= 0) {
            unsigned v = (unsigned)(hexval(s[i + 1]) * 16 + hexval(s[i + 2]));
            if (v < 0x80) {
                out[o++] = (char)v;
            } else { /* chr(v) encoded as UTF-8 */
                out[o++] = (char)(0xc0 | (v >> 6));
                out[o++] = (char)(0x80 | (v & 0x3f));
            }
            i += 2;
        } else {
            out[o++] = s[i];
        }
    }
    out[o] = 0;
    return out;
}

#define HIVE_DEFAULT "__HIVE_DEFAULT_PARTITION__"

/* key=value directory segments of a file below its root. */
static int file_segments(const tfile *f, strlist *keys, strlist *values, strlist *nulls) {
    (void)nulls;
    if (f->root == NULL) {
        return 0;
    }
    const char *rel = relative_to(f->path, f->root);
    const char *slash = strrchr(rel, '/');
    if (slash == NULL) {
        return 0;
    }
    const char *s = rel;
    while (s < slash) {
        const char *e = memchr(s, '/', (size_t)(slash - s));
        if (e == NULL) {
            e = slash;
        }
        const char *eq = memchr(s, '=', (size_t)(e - s));
        if (eq != NULL && eq > s) {
            size_t vlen = (size_t)(e - eq - 1);
            char *key = unescape(s, (size_t)(eq - s));
            char *val = (vlen == strlen(HIVE_DEFAULT) && memcmp(eq + 1, HIVE_DEFAULT, vlen) == 0)
                            ? NULL
                            : unescape(eq + 1, vlen);
            if (strlist_add(keys, key)) {
                free(val);
                return -1;
            }
            if (strlist_push(values, val)) { /* val may be NULL */
                return -1;
            }
        }
        s = e + 1;
    }
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
    const char *p = s;
    if (*p == '-') {
        p++;
    }
    if (*p == 0) {
        return 0;
    }
    for (const char *q = p; *q; q++) {
        if (*q < '0' || *q > '9') {
            return 0;
        }
    }
    errno = 0;
    char *end;
    (void)strtoll(s, &end, 10);
    return errno == 0 && *end == 0;
}

/* ======================================================================== */
/* 6-7. Bind: options, files, partitions, inferred columns                  */
/* ======================================================================== */

enum { HIVE_AUTO = -1, HIVE_OFF = 0, HIVE_ON = 1 };

typedef struct {
    /* options */
    int record_type, compression, verify, hive, lists_always, skip_corrupt, glob;
    long long infer_sample, infer_files;
    char *filename_col;
    /* files and partitions */
    filelist files;
    int npart;
    char **part_names;
    int *part_is_int;
    /* a TFDS / TFX layout (tfsql.layouts): each file's split, and the TFDS shards'
     * directory when they share one */
    int layout;
    char **splits;
    char *tfds_dir;
    /* data columns (the decoder's schema) and their output types */
    schema sc;
    int *utf8;
    int ndata;
    int64_t total_bytes;
} tfbind;

static void tfbind_free(void *p) {
    tfbind *b = (tfbind *)p;
    if (b == NULL) {
        return;
    }
    if (b->splits != NULL) {
        for (size_t i = 0; i < b->files.n; i++) {
            free(b->splits[i]);
        }
        free(b->splits);
    }
    free(b->tfds_dir);
    filelist_free(&b->files, b->npart);
    for (int k = 0; k < b->npart; k++) {
        free(b->part_names[k]);
    }
    free(b->part_names);
    free(b->part_is_int);
    schema_free(&b->sc);
    free(b->utf8);
    free(b->filename_col);
    free(b);
}

static const char *kind_sql[4] = {"", "bytes_list", "float_list", "int64_list"};

/* tfsql.inference.sample_indices */
static size_t sample_indices(size_t n, long long want, size_t *out) {
    if (want < 0 || (size_t)want >= n) {
        for (size_t i = 0; i < n; i++) {
            out[i] = i;
        }
        return n;
    }
    if (want <= 1) {
        if (want == 1 && n > 0) {
            out[0] = 0;
            return 1;
        }
        return 0;
    }
    double step = (double)(n - 1) / (double)(want - 1);
    size_t m = 0;
    for (long long i = 0; i < want; i++) {
        double x = (double)i * step;
        /* Python's round(): half to even */
        double fl = (double)(long long)x, frac = x - fl;
        size_t v = (size_t)fl;
        if (frac > 0.5 || (frac == 0.5 && ((long long)fl % 2) == 1)) {
            v++;
        }
        if (m == 0 || out[m - 1] != v) {
            out[m++] = v;
        }
    }
    return m;
}

static void frame_error(char *err, const char *path, int status, size_t index, size_t at,
                        size_t size) {
    if (status == FRAME_TRUNCATED) {
        snprintf(err, ERRLEN, "truncated record in %s, record %zu at byte %zu: the file ends "
                              "%zu bytes into it%s (pass ignore_errors := true to skip it and "
                              "the rest of the file)", path, index, at, size - at,
                 at == 0 ? "; it does not look like a TFRecord file" : "");
    } else if (status == FRAME_BAD_LENGTH_CRC) {
        snprintf(err, ERRLEN, "length CRC mismatch in %s, record %zu at byte %zu: the file is "
                              "corrupt%s (pass ignore_errors := true to skip it and the rest of "
                              "the file)", path, index, at,
                 at == 0 ? "; it does not look like a TFRecord file (check the path, or "
                           "compression := 'gzip' / 'zlib')" : "");
    } else {
        snprintf(err, ERRLEN, "data CRC mismatch in %s, record %zu at byte %zu: the record is "
                              "corrupt (pass ignore_errors := true to skip it)", path, index, at);
    }
}

/* The records a sample of `count` framed ones keeps under tfsql.inference's byte rule:
 * up to the one whose payload brings the total to `limit` bytes (all when the total
 * stays below). *reached: whether it did. */
static size_t within_bytes(const tbuf *lens, size_t count, long long limit, int *reached) {
    uint64_t total = 0;
    *reached = 0;
    if (limit < 0) {
        return count;
    }
    for (size_t i = 0; i < count; i++) {
        total += load_u64(lens->data + 8 * i);
        if (total >= (uint64_t)limit) {
            *reached = 1;
            return i + 1;
        }
    }
    return count;
}

/* Read the inference sample of one file (tfsql.inference): its first infer_sample
 * records, ending once their payloads hold INFER_BYTES bytes (unless every record is
 * sampled). A compressed file is inflated only as far as the sample reaches. The
 * sampled records are framed in offs / lens (n of them); *end is where framing stopped. */
static int sample_file(const tfbind *b, const char *path, filebytes *fb, tbuf *offs,
                       tbuf *lens, size_t *n, size_t *end, char *err) {
    inflater inf;
    if (file_open(path, b->compression, fb, &inf, err)) {
        return -1;
    }
    long long limit = b->infer_sample < 0 ? -1 : INFER_BYTES;
    size_t want = limit < 0 ? SIZE_MAX : (size_t)limit + (1u << 20);
    for (;;) {
        char why[ERRLEN];
        if (!inf.finished) {
            if (inflater_run(&inf, &fb->owned, want, why)) {
                snprintf(err, ERRLEN, "%s: %s", path, why);
                inflater_end(&inf);
                return -1;
            }
            file_inflated(fb);
        }
        int status, reached;
        offs->len = lens->len = 0;
        if (scan_core(fb->data, fb->size, 0, b->infer_sample, -1, b->verify, offs, lens, end,
                      &status)) {
            inflater_end(&inf);
            snprintf(err, ERRLEN, "out of memory");
            return -1;
        }
        size_t framed = offs->len / 8;
        *n = within_bytes(lens, framed, limit, &reached);
        /* more bytes are needed while the records framed so far ran into the end of what
         * is inflated: a CRC mismatch is damage, which ends the sample as in a plain file */
        int complete = inf.finished || reached ||
                       (b->infer_sample >= 0 && framed >= (size_t)b->infer_sample) ||
                       status == FRAME_BAD_LENGTH_CRC || status == FRAME_BAD_DATA_CRC;
        if (complete) {
            inflater_end(&inf);
            if (*n < framed) {
                *end = (size_t)load_u64(offs->data + 8 * *n) - 12;
                offs->len = lens->len = 8 * *n;
            }
            return 0;
        }
        want = fb->size > SIZE_MAX / 2 ? SIZE_MAX : 2 * fb->size;
    }
}

/* Infer the data columns from the sampled files (tfsql.inference + schema rules). */
static int infer_columns(tfbind *b, char *err, idx_t *cardinality) {
    *cardinality = 0;
    if (b->record_type == RAW) {
        b->sc.record_type = RAW;
        b->sc.ncols = 1;
        b->sc.cols = (colspec *)calloc(1, sizeof(colspec));
        b->utf8 = (int *)calloc(1, sizeof(int));
        if (b->sc.cols == NULL || b->utf8 == NULL) {
            return -1;
        }
        b->sc.cols[0].name = (uint8_t *)xstrdup("record");
        b->sc.cols[0].name_len = 6;
        b->sc.cols[0].kind = KIND_BYTES;
        b->sc.cols[0].shape = SCALAR;
        b->ndata = 1;
        return 0;
    }
    size_t nonempty = 0;
    size_t *idx = (size_t *)malloc((b->files.n + 1) * sizeof(size_t));
    size_t *pick = (size_t *)malloc((b->files.n + 1) * sizeof(size_t));
    filebytes *bufs = (filebytes *)calloc(b->files.n + 1, sizeof(filebytes));
    int **first_file = NULL; /* per stat: file index where each kind was first seen */
    size_t nfirst = 0;
    int rc = -1;
    sctx s;
    memset(&s, 0, sizeof(s));
    tbuf offs = {0}, lens = {0};
    if (idx == NULL || pick == NULL || bufs == NULL) {
        snprintf(err, ERRLEN, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < b->files.n; i++) {
        if (b->files.items[i].size > 0) {
            idx[nonempty++] = i;
        }
    }
    size_t npick = sample_indices(nonempty, b->infer_files, pick);
    uint64_t sampled_records = 0, sampled_bytes = 0;
    for (size_t j = 0; j < npick; j++) {
        const tfile *f = &b->files.items[idx[pick[j]]];
        size_t end, n;
        if (sample_file(b, f->path, &bufs[j], &offs, &lens, &n, &end, err)) {
            goto done;
        }
        /* A damaged record ends the file's sample; the scan reports it (as a data error,
         * with its file, record and offset) unless ignore_errors skips it. */
        size_t bad = 0;
        int e = summarize_core(&s, b->record_type, bufs[j].data, bufs[j].size, offs.data,
                               lens.data, n, &bad);
        if (e == E_NOMEM) {
            snprintf(err, ERRLEN, "out of memory");
            goto done;
        }
        sampled_records += n;
        sampled_bytes += end;
        size_t nstats = s.stats.len / sizeof(sstat);
        if (nstats > nfirst) {
            int **grown = (int **)realloc(first_file, nstats * sizeof(int *));
            if (grown == NULL) {
                snprintf(err, ERRLEN, "out of memory");
                goto done;
            }
            first_file = grown;
            for (size_t k = nfirst; k < nstats; k++) {
                first_file[k] = (int *)malloc(4 * sizeof(int));
                for (int q = 0; q < 4; q++) {
                    first_file[k][q] = -1;
                }
            }
            nfirst = nstats;
        }
        for (size_t k = 0; k < nstats; k++) {
            sstat *st = sctx_stat(&s, (int32_t)k);
            st->stamp = 0; /* stamps restart with the next file's records */
            for (int q = 0; q < 4; q++) {
                if ((st->kinds >> q) & 1 && first_file[k][q] < 0) {
                    first_file[k][q] = (int)idx[pick[j]];
                }
            }
        }
    }
    if (sampled_records > 0 && sampled_bytes > 0) {
        *cardinality = (idx_t)((double)b->total_bytes * (double)sampled_records /
                               (double)sampled_bytes);
    }
    size_t nstats = s.stats.len / sizeof(sstat);
    b->sc.record_type = b->record_type;
    b->sc.cols = (colspec *)calloc(nstats ? nstats : 1, sizeof(colspec));
    b->utf8 = (int *)calloc(nstats ? nstats : 1, sizeof(int));
    if (b->sc.cols == NULL || b->utf8 == NULL) {
        snprintf(err, ERRLEN, "out of memory");
        goto done;
    }
    int n = 0;
    for (size_t k = 0; k < nstats; k++) {
        sstat *st = sctx_stat(&s, (int32_t)k);
        uint64_t kinds = st->kinds & ~(uint64_t)1;
        int kind = KIND_NONE, count = 0;
        for (int q = 1; q < 4; q++) {
            if ((kinds >> q) & 1) {
                kind = q;
                count++;
            }
        }
        if (count > 1) {
            char described[ERRLEN] = "";
            size_t used = 0;
            for (int q = 1; q < 4; q++) {
                if ((kinds >> q) & 1) {
                    used += (size_t)snprintf(described + used, ERRLEN - used, "%s%s (first in %s)",
                                             used ? " and " : "", kind_sql[q],
                                             b->files.items[first_file[k][q]].path);
                    if (used >= ERRLEN) {
                        break;
                    }
                }
            }
            snprintf(err, ERRLEN, "feature '%.*s' holds two kinds in the inference sample: %s; "
                                  "pass columns := {'%.*s': 'TYPE'} with the type to read it as, "
                                  "or fix the data (this needs tfsql.connect() for now)",
                     (int)st->name_len, (const char *)st->name, described, (int)st->name_len,
                     (const char *)st->name);
            goto done;
        }
        if (count == 0) {
            continue; /* never has a kind: left out, as the Python reader does */
        }
        if (!utf8_valid(st->name, st->name_len)) {
            char shown[200];
            size_t o = 0;
            for (size_t q = 0; q < st->name_len && o + 5 < sizeof(shown); q++) {
                uint8_t ch = st->name[q];
                o += (size_t)snprintf(shown + o, sizeof(shown) - o, ch >= 0x20 && ch < 0x7f ? "%c" : "\\x%02x", ch);
            }
            snprintf(err, ERRLEN, "a feature name in the inference sample is not valid UTF-8 "
                                  "('%s'), so it cannot be a column name; the files are damaged "
                                  "or hold other records than %s (check record_type :=, or read "
                                  "them with record_type := 'bytes')", shown,
                     b->record_type == EXAMPLE ? "tf.train.Example" : "tf.train.SequenceExample");
            goto done;
        }
        colspec *c = &b->sc.cols[n];
        c->name = (uint8_t *)xstrndup((const char *)st->name, st->name_len);
        c->name_len = st->name_len;
        c->location = st->location;
        c->kind = kind;
        if (st->location == FEATURE_LISTS) {
            c->shape = LIST_OF_LIST;
        } else if (b->lists_always || st->max_len != 1) {
            c->shape = LIST;
        } else {
            c->shape = SCALAR;
        }
        b->utf8[n] = kind == KIND_BYTES && st->utf8;
        n++;
        b->sc.ncols = n;
    }
    b->ndata = n;
    rc = 0;
done:
    if (bufs != NULL) {
        for (size_t j = 0; j <= b->files.n; j++) {
            filebytes_free(&bufs[j]);
        }
    }
    for (size_t k = 0; k < nfirst; k++) {
        free(first_file[k]);
    }
    free(first_file);
    free(bufs);
    free(idx);
    free(pick);
    tbuf_free(&offs);
    tbuf_free(&lens);
    tbuf_free(&s.stats);
    tbuf_free(&s.touched);
    free(s.table);
    return rc;
}

/* -- column names (tfsql.schema) -------------------------------------------------
 * A SequenceExample feature list that shares its name with a context column is the
 * column N__feature_list (FEATURE_LIST_SUFFIX); the context column keeps the name. */

#define FEATURE_LIST_SUFFIX "__feature_list"

static int context_column(const tfbind *b, const uint8_t *name, size_t len) {
    for (int k = 0; k < b->ndata; k++) {
        const colspec *cs = &b->sc.cols[k];
        if (cs->location != FEATURE_LISTS && cs->name_len == len && memcmp(cs->name, name, len) == 0) {
            return 1;
        }
    }
    return 0;
}

static int renamed_list(const tfbind *b, int c) {
    const colspec *cs = &b->sc.cols[c];
    return cs->location == FEATURE_LISTS && context_column(b, cs->name, cs->name_len);
}

/* The name of data column c (a new string). */
static char *column_name(const tfbind *b, int c) {
    const colspec *cs = &b->sc.cols[c];
    return xprintf("%.*s%s", (int)cs->name_len, (const char *)cs->name,
                   renamed_list(b, c) ? FEATURE_LIST_SUFFIX : "");
}

static int is_column(const tfbind *b, const char *name) {
    for (int c = 0; c < b->ndata; c++) {
        char *own = column_name(b, c);
        int same = own != NULL && strcmp(own, name) == 0;
        free(own);
        if (same) {
            return 1;
        }
    }
    return 0;
}

/* tfsql.schema._name_columns over inferred columns: a renamed feature list must not
 * take another column's name, and a feature list literally named N__feature_list
 * beside a context column N is ambiguous. */
static int check_inferred_names(const tfbind *b, char *err) {
    size_t sl = strlen(FEATURE_LIST_SUFFIX);
    for (int c = 0; c < b->ndata; c++) {
        const colspec *cs = &b->sc.cols[c];
        if (cs->location != FEATURE_LISTS) {
            continue;
        }
        char *name = column_name(b, c);
        if (name == NULL) {
            snprintf(err, ERRLEN, "out of memory");
            return -1;
        }
        int bad = cs->name_len > sl &&
                  memcmp(cs->name + cs->name_len - sl, FEATURE_LIST_SUFFIX, sl) == 0 &&
                  context_column(b, cs->name, cs->name_len - sl);
        for (int k = 0; k < b->ndata && !bad; k++) {
            char *other = k == c ? NULL : column_name(b, k);
            bad = other != NULL && strcmp(other, name) == 0;
            free(other);
        }
        if (bad) {
            snprintf(err, ERRLEN, "feature list '%.*s' shares its name with a context feature, "
                                  "and its column name '%s' is taken by another feature; pass "
                                  "schema := {...} naming the columns to read",
                     (int)cs->name_len, (const char *)cs->name, name);
            free(name);
            return -1;
        }
        free(name);
    }
    return 0;
}

/* -- inference cache ----------------------------------------------------------
 * The columns inferred for a list of files, kept while the files are unchanged (paths,
 * sizes, modification times) and the options that shape inference are the same, as
 * tfsql.connect() does: a query over the same files does not sample them again. */

#define INFER_CACHE_SLOTS 16

typedef struct {
    uint64_t key;   /* hash of options + fingerprints; 0: empty */
    int ncols;
    colspec *cols;  /* owned names */
    int *utf8;
    idx_t cardinality;
} infer_entry;

static infer_entry infer_cache[INFER_CACHE_SLOTS];
static size_t infer_cache_next;
static pthread_mutex_t infer_lock = PTHREAD_MUTEX_INITIALIZER;

static uint64_t mix64(uint64_t h, uint64_t v) {
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdull;
}

static uint64_t infer_key(const tfbind *b) {
    uint64_t h = mix64(0x1234567ull, (uint64_t)b->record_type);
    h = mix64(h, (uint64_t)b->compression);
    h = mix64(h, (uint64_t)b->verify);
    h = mix64(h, (uint64_t)b->lists_always);
    h = mix64(h, (uint64_t)b->skip_corrupt);
    h = mix64(h, (uint64_t)b->infer_sample);
    h = mix64(h, (uint64_t)b->infer_files);
    for (size_t i = 0; i < b->files.n; i++) {
        struct stat st;
        if (stat(b->files.items[i].path, &st) != 0) {
            return 0;
        }
        for (const char *p = b->files.items[i].path; *p; p++) {
            h = mix64(h, (uint8_t)*p);
        }
        h = mix64(h, (uint64_t)st.st_size);
#if defined(__APPLE__)
        h = mix64(h, (uint64_t)st.st_mtimespec.tv_sec);
        h = mix64(h, (uint64_t)st.st_mtimespec.tv_nsec);
#else
        h = mix64(h, (uint64_t)st.st_mtim.tv_sec);
        h = mix64(h, (uint64_t)st.st_mtim.tv_nsec);
#endif
    }
    return h ? h : 1;
}

static int infer_cache_get(tfbind *b, uint64_t key, idx_t *cardinality) {
    int found = 0;
    pthread_mutex_lock(&infer_lock);
    for (int i = 0; i < INFER_CACHE_SLOTS && !found; i++) {
        infer_entry *e = &infer_cache[i];
        if (key == 0 || e->key != key) {
            continue;
        }
        int n = e->ncols;
        b->sc.cols = (colspec *)calloc(n ? (size_t)n : 1, sizeof(colspec));
        b->utf8 = (int *)calloc(n ? (size_t)n : 1, sizeof(int));
        if (b->sc.cols == NULL || b->utf8 == NULL) {
            break;
        }
        for (int c = 0; c < n; c++) {
            b->sc.cols[c] = e->cols[c];
            b->sc.cols[c].name = (uint8_t *)xstrndup((const char *)e->cols[c].name, e->cols[c].name_len);
            b->utf8[c] = e->utf8[c];
        }
        b->sc.record_type = b->record_type;
        b->sc.ncols = b->ndata = n;
        *cardinality = e->cardinality;
        found = 1;
    }
    pthread_mutex_unlock(&infer_lock);
    return found;
}

static void infer_cache_put(const tfbind *b, uint64_t key, idx_t cardinality) {
    if (key == 0) {
        return;
    }
    pthread_mutex_lock(&infer_lock);
    infer_entry *e = &infer_cache[infer_cache_next++ % INFER_CACHE_SLOTS];
    for (int c = 0; c < e->ncols; c++) {
        free(e->cols[c].name);
    }
    free(e->cols);
    free(e->utf8);
    memset(e, 0, sizeof(*e));
    int n = b->ndata;
    e->cols = (colspec *)calloc(n ? (size_t)n : 1, sizeof(colspec));
    e->utf8 = (int *)calloc(n ? (size_t)n : 1, sizeof(int));
    if (e->cols != NULL && e->utf8 != NULL) {
        for (int c = 0; c < n; c++) {
            e->cols[c] = b->sc.cols[c];
            e->cols[c].name = (uint8_t *)xstrndup((const char *)b->sc.cols[c].name, b->sc.cols[c].name_len);
            e->utf8[c] = b->utf8[c];
        }
        e->ncols = n;
        e->cardinality = cardinality;
        e->key = key;
    }
    pthread_mutex_unlock(&infer_lock);
}

/* Hive partition columns of the files (tfsql.partitioning.Partitioning.discover). */
static int find_partitions(tfbind *b, char *err) {
    if (b->hive == HIVE_OFF) {
        return 0;
    }
    strlist first_keys = {0};
    int have_first = 0;
    size_t first_index = 0;
    for (size_t i = 0; i < b->files.n; i++) {
        strlist keys = {0}, values = {0};
        if (file_segments(&b->files.items[i], &keys, &values, NULL)) {
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

/* -- dataset layouts with splits (tfsql.layouts) ---------------------------------
 * TFDS shards '{name}-{split}.tfrecord-{i}-of-{n}' and TFX 'Split-{split}/...' files get
 * a string partition column split, unless hive directories or the records already have
 * a column of that name. In a listed directory that holds dataset_info.json, the .json
 * and .txt files are TFDS metadata, not data. */

enum { LAYOUT_NONE = 0, LAYOUT_TFDS = 1, LAYOUT_TFX = 2 };
#define SPLIT_COLUMN "split"

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
static int drop_tfds_metadata(tfbind *b) {
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
static int detect_layout(tfbind *b) {
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
static int refuse_tfds_features(const tfbind *b, const char *fname, char *err) {
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
static int add_split_column(tfbind *b) {
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

/* -- parameters ------------------------------------------------------------- */

static char *value_text(duckdb_value v) {
    char *s = duckdb_get_varchar(v);
    char *r = xstrdup(s ? s : "");
    duckdb_free(s);
    return r;
}

static duckdb_type value_type_id(duckdb_value v) {
    duckdb_logical_type t = duckdb_get_value_type(v);
    return duckdb_get_type_id(t);
}

static int parse_options(duckdb_bind_info info, tfbind *b, const char *fname, char *err) {
    static const char *unsupported[] = {"hive_types", NULL};
    for (int i = 0; unsupported[i]; i++) {
        duckdb_value v = duckdb_bind_get_named_parameter(info, unsupported[i]);
        if (v != NULL) {
            duckdb_destroy_value(&v);
            snprintf(err, ERRLEN, "%s: the parameter %s is not supported by the DuckDB extension "
                                  "yet; run the query through tfsql.connect() (Python), which "
                                  "supports it", fname, unsupported[i]);
            return -1;
        }
    }
    duckdb_value v;
    if ((v = duckdb_bind_get_named_parameter(info, "hive_partitioning")) != NULL) {
        b->hive = duckdb_get_bool(v) ? HIVE_ON : HIVE_OFF;
        duckdb_destroy_value(&v);
    }
    if ((v = duckdb_bind_get_named_parameter(info, "verify_checksums")) != NULL) {
        b->verify = duckdb_get_bool(v);
        duckdb_destroy_value(&v);
    }
    if ((v = duckdb_bind_get_named_parameter(info, "glob")) != NULL) {
        b->glob = duckdb_get_bool(v);
        duckdb_destroy_value(&v);
    }
    if ((v = duckdb_bind_get_named_parameter(info, "ignore_errors")) != NULL) {
        b->skip_corrupt = duckdb_get_bool(v);
        duckdb_destroy_value(&v);
    }
    if ((v = duckdb_bind_get_named_parameter(info, "on_corrupt")) != NULL) {
        char *s = value_text(v);
        duckdb_destroy_value(&v);
        if (s && strcasecmp(s, "skip") == 0) {
            b->skip_corrupt = 1;
        } else if (s && strcasecmp(s, "raise") == 0) {
            b->skip_corrupt = 0;
        } else {
            snprintf(err, ERRLEN, "%s: on_corrupt must be 'raise' or 'skip', not '%s'", fname,
                     s ? s : "");
            free(s);
            return -1;
        }
        free(s);
    }
    if ((v = duckdb_bind_get_named_parameter(info, "filename")) != NULL) {
        if (duckdb_is_null_value(v)) {
            /* nothing */
        } else if (value_type_id(v) == DUCKDB_TYPE_BOOLEAN) {
            if (duckdb_get_bool(v)) {
                b->filename_col = xstrdup("filename");
            }
        } else if (value_type_id(v) == DUCKDB_TYPE_VARCHAR) {
            b->filename_col = value_text(v);
        } else {
            duckdb_destroy_value(&v);
            snprintf(err, ERRLEN, "%s: parameter filename expects BOOLEAN or VARCHAR", fname);
            return -1;
        }
        duckdb_destroy_value(&v);
    }
    if ((v = duckdb_bind_get_named_parameter(info, "record_type")) != NULL) {
        char *s = value_text(v);
        duckdb_destroy_value(&v);
        char norm[64] = "";
        size_t o = 0;
        for (const char *p = s ? s : ""; *p && o < sizeof(norm) - 1; p++) {
            if (*p != '_' && *p != '-' && *p != '.') {
                norm[o++] = (char)((*p >= 'A' && *p <= 'Z') ? *p + 32 : *p);
            }
        }
        norm[o] = 0;
        if (strcmp(norm, "example") == 0 || strcmp(norm, "tftrainexample") == 0) {
            b->record_type = EXAMPLE;
        } else if (strcmp(norm, "sequenceexample") == 0 ||
                   strcmp(norm, "tftrainsequenceexample") == 0) {
            b->record_type = SEQUENCE_EXAMPLE;
        } else if (strcmp(norm, "bytes") == 0 || strcmp(norm, "raw") == 0) {
            b->record_type = RAW;
        } else {
            snprintf(err, ERRLEN, "%s: unknown record_type '%s'; use 'example', "
                                  "'sequence_example' or 'bytes'", fname, s ? s : "");
            free(s);
            return -1;
        }
        free(s);
    }
    if ((v = duckdb_bind_get_named_parameter(info, "compression")) != NULL) {
        char *s = value_text(v);
        duckdb_destroy_value(&v);
        if (!strcasecmp(s, "auto") || !strcasecmp(s, "infer")) {
            b->compression = COMP_INFER;
        } else if (!strcasecmp(s, "none") || !strcasecmp(s, "uncompressed")) {
            b->compression = COMP_NONE;
        } else if (!strcasecmp(s, "gzip") || !strcasecmp(s, "gz")) {
            b->compression = COMP_GZIP;
        } else if (!strcasecmp(s, "zlib") || !strcasecmp(s, "deflate") || !strcasecmp(s, "zz")) {
            b->compression = COMP_ZLIB;
        } else {
            snprintf(err, ERRLEN, "%s: unknown compression '%s'; use 'infer', None, 'gzip' or "
                                  "'zlib'", fname, s);
            free(s);
            return -1;
        }
        free(s);
    }
    const char *counts[] = {"infer_sample", "sample_size", "infer_files", NULL};
    for (int i = 0; counts[i]; i++) {
        if ((v = duckdb_bind_get_named_parameter(info, counts[i])) != NULL) {
            int64_t x = duckdb_get_int64(v);
            duckdb_destroy_value(&v);
            if (i < 2) {
                b->infer_sample = x < 0 ? -1 : x;
            } else {
                b->infer_files = x < 0 ? -1 : x;
            }
        }
    }
    if ((v = duckdb_bind_get_named_parameter(info, "lists")) != NULL) {
        char *s = value_text(v);
        duckdb_destroy_value(&v);
        if (!strcmp(s, "always")) {
            b->lists_always = 1;
        } else if (strcmp(s, "auto") != 0) {
            snprintf(err, ERRLEN, "%s: lists must be 'auto' or 'always', not '%s'", fname, s);
            free(s);
            return -1;
        }
        free(s);
    }
    return 0;
}

static duckdb_logical_type leaf_type(int kind, int utf8) {
    return duckdb_create_logical_type(kind == KIND_INT64   ? DUCKDB_TYPE_BIGINT
                                      : kind == KIND_FLOAT ? DUCKDB_TYPE_FLOAT
                                      : utf8               ? DUCKDB_TYPE_VARCHAR
                                                           : DUCKDB_TYPE_BLOB);
}

static duckdb_logical_type column_type(int kind, int shape, int utf8) {
    duckdb_logical_type t = leaf_type(kind, utf8);
    for (int s = 0; s < shape; s++) {
        duckdb_logical_type l = duckdb_create_list_type(t);
        duckdb_destroy_logical_type(&t);
        t = l;
    }
    return t;
}

/* A column type of schema := {...}: the Arrow types the decoder produces without a cast
 * (BIGINT, FLOAT, VARCHAR, BLOB, and lists of them); 0 when supported. */
static int parse_type_name(const char *text, int *kind, int *shape, int *utf8) {
    char t[64];
    size_t o = 0;
    for (const char *p = text; *p && o < sizeof(t) - 1; p++) {
        if (*p != ' ') {
            t[o++] = (char)((*p >= 'a' && *p <= 'z') ? *p - 32 : *p);
        }
    }
    t[o] = 0;
    *shape = SCALAR;
    while (o >= 2 && t[o - 2] == '[' && t[o - 1] == ']' && *shape < LIST_OF_LIST) {
        o -= 2;
        t[o] = 0;
        (*shape)++;
    }
    static const char *ints[] = {"BIGINT", "INT8", "INT64", "LONG", NULL};
    static const char *floats[] = {"FLOAT", "FLOAT4", "REAL", NULL};
    static const char *texts[] = {"VARCHAR", "TEXT", "STRING", NULL};
    static const char *blobs[] = {"BLOB", "BYTEA", "BINARY", "VARBINARY", NULL};
    const char **groups[] = {ints, floats, texts, blobs};
    const int kinds[] = {KIND_INT64, KIND_FLOAT, KIND_BYTES, KIND_BYTES};
    for (int g = 0; g < 4; g++) {
        for (int i = 0; groups[g][i]; i++) {
            if (strcmp(t, groups[g][i]) == 0) {
                *kind = kinds[g];
                *utf8 = g == 2;
                return 0;
            }
        }
    }
    return -1;
}

/* schema := {'name': 'TYPE', ...} (or columns :=): the columns to read, no inference. */
static int user_columns(tfbind *b, duckdb_value v, const char *fname, const char *param,
                        char *err) {
    duckdb_logical_type t = duckdb_get_value_type(v);
    idx_t n = duckdb_get_type_id(t) == DUCKDB_TYPE_STRUCT ? duckdb_struct_type_child_count(t) : 0;
    if (n == 0) {
        snprintf(err, ERRLEN, "%s: parameter %s expects a STRUCT of column name -> type name, "
                              "e.g. %s := {'label': 'BIGINT', 'emb': 'FLOAT[]'}", fname, param,
                 param);
        return -1;
    }
    b->sc.cols = (colspec *)calloc((size_t)n, sizeof(colspec));
    b->utf8 = (int *)calloc((size_t)n, sizeof(int));
    if (b->sc.cols == NULL || b->utf8 == NULL) {
        snprintf(err, ERRLEN, "out of memory");
        return -1;
    }
    b->sc.record_type = b->record_type;
    for (idx_t i = 0; i < n; i++) {
        char *name = duckdb_struct_type_child_name(t, i);
        duckdb_value child = duckdb_get_struct_child(v, i);
        char *type = value_text(child);
        duckdb_destroy_value(&child);
        colspec *c = &b->sc.cols[i];
        c->name = (uint8_t *)xstrdup(name ? name : "");
        c->name_len = strlen((const char *)c->name);
        duckdb_free(name);
        int bad = parse_type_name(type, &c->kind, &c->shape, &b->utf8[i]);
        c->location = c->shape == LIST_OF_LIST ? FEATURE_LISTS : FEATURES;
        b->sc.ncols = b->ndata = (int)i + 1;
        if (bad || (c->shape == LIST_OF_LIST && b->record_type != SEQUENCE_EXAMPLE)) {
            snprintf(err, ERRLEN, "%s: column '%s' of %s has type '%s', which the DuckDB extension "
                                  "does not read yet (it reads BIGINT, FLOAT, VARCHAR, BLOB, their "
                                  "lists, and X[][] feature lists of a sequence_example); run the "
                                  "query through tfsql.connect(), which casts to any type", fname,
                     (const char *)c->name, param, type);
            free(type);
            return -1;
        }
        free(type);
    }
    /* tfsql.schema.feature_list_name: X[][] column N__feature_list beside a context
     * column N reads the feature list N */
    size_t sl = strlen(FEATURE_LIST_SUFFIX);
    for (idx_t i = 0; i < n; i++) {
        colspec *c = &b->sc.cols[i];
        if (c->location == FEATURE_LISTS && c->name_len > sl &&
            memcmp(c->name + c->name_len - sl, FEATURE_LIST_SUFFIX, sl) == 0 &&
            context_column(b, c->name, c->name_len - sl)) {
            c->name_len -= sl;
            c->name[c->name_len] = 0;
        }
    }
    return 0;
}

static void tf_bind(duckdb_bind_info info) {
    const char *fname = (const char *)duckdb_bind_get_extra_info(info);
    char err[ERRLEN] = "";
    tfbind *b = (tfbind *)calloc(1, sizeof(tfbind));
    if (b == NULL) {
        duckdb_bind_set_error(info, "out of memory");
        return;
    }
    b->record_type = EXAMPLE;
    b->compression = COMP_INFER;
    b->verify = 1;
    b->hive = HIVE_AUTO;
    b->glob = 1;
    b->infer_sample = 1000;
    b->infer_files = 16;
    if (parse_options(info, b, fname, err)) {
        goto fail;
    }
    duckdb_value src = duckdb_bind_get_parameter(info, 0);
    duckdb_type tid = value_type_id(src);
    int nfound = 0;
    if (tid == DUCKDB_TYPE_VARCHAR) {
        char *s = value_text(src);
        int rc = list_item(s, b->glob, &b->files, err);
        free(s);
        if (rc) {
            duckdb_destroy_value(&src);
            goto fail;
        }
        nfound = 1;
    } else if (tid == DUCKDB_TYPE_LIST && !duckdb_is_null_value(src)) {
        idx_t n = duckdb_get_list_size(src);
        for (idx_t i = 0; i < n; i++) {
            duckdb_value item = duckdb_get_list_child(src, i);
            if (value_type_id(item) != DUCKDB_TYPE_VARCHAR || duckdb_is_null_value(item)) {
                duckdb_destroy_value(&item);
                duckdb_destroy_value(&src);
                snprintf(err, ERRLEN, "%s: the source must be a VARCHAR path or glob, or a "
                                      "VARCHAR[] of them", fname);
                goto fail;
            }
            char *s = value_text(item);
            duckdb_destroy_value(&item);
            size_t before = b->files.n;
            int rc = list_item(s, b->glob, &b->files, err);
            free(s);
            if (rc) {
                duckdb_destroy_value(&src);
                goto fail;
            }
            /* a file named by two items is kept once, at its first place */
            for (size_t k = before; k < b->files.n; k++) {
                for (size_t j = 0; j < before; j++) {
                    if (strcmp(b->files.items[j].path, b->files.items[k].path) == 0) {
                        free(b->files.items[k].path);
                        free(b->files.items[k].root);
                        memmove(&b->files.items[k], &b->files.items[k + 1],
                                (b->files.n - k - 1) * sizeof(tfile));
                        b->files.n--;
                        k--;
                        break;
                    }
                }
            }
            nfound++;
        }
    }
    duckdb_destroy_value(&src);
    if (nfound == 0) {
        snprintf(err, ERRLEN, "%s: the source must be a VARCHAR path or glob, or a non-empty "
                              "VARCHAR[] of them, e.g. %s('data/*.tfrecord')", fname, fname);
        goto fail;
    }
    if (drop_tfds_metadata(b) || detect_layout(b)) {
        snprintf(err, ERRLEN, "out of memory");
        goto fail;
    }
    for (size_t i = 0; i < b->files.n; i++) {
        b->total_bytes += b->files.items[i].size;
    }
    idx_t cardinality = 0;
    duckdb_value schema_value = duckdb_bind_get_named_parameter(info, "schema");
    duckdb_value columns_value = duckdb_bind_get_named_parameter(info, "columns");
    if (schema_value != NULL && columns_value != NULL) {
        duckdb_destroy_value(&schema_value);
        duckdb_destroy_value(&columns_value);
        snprintf(err, ERRLEN, "%s: give either schema or columns, not both", fname);
        goto fail;
    }
    if (schema_value != NULL || columns_value != NULL) {
        duckdb_value given = schema_value != NULL ? schema_value : columns_value;
        int rc = b->record_type == RAW
                     ? infer_columns(b, err, &cardinality)
                     : user_columns(b, given, fname, schema_value ? "schema" : "columns", err);
        duckdb_destroy_value(&given);
        if (rc) {
            goto fail;
        }
    } else {
        if (b->record_type != RAW && refuse_tfds_features(b, fname, err)) {
            goto fail;
        }
        uint64_t key = b->record_type == RAW ? 0 : infer_key(b);
        if (!infer_cache_get(b, key, &cardinality)) {
            if (infer_columns(b, err, &cardinality)) {
                goto fail;
            }
            infer_cache_put(b, key, cardinality);
        }
        if (check_inferred_names(b, err)) {
            goto fail;
        }
    }
    if (find_partitions(b, err)) {
        goto fail;
    }
    if (add_split_column(b)) {
        snprintf(err, ERRLEN, "out of memory");
        goto fail;
    }
    if (b->ndata == 0 && b->files.n == 0) {
        snprintf(err, ERRLEN, "%s: no files found (hidden files such as _SUCCESS are skipped)",
                 fname);
        goto fail;
    }
    if (b->ndata == 0 && b->npart == 0 && b->filename_col == NULL) {
        /* DuckDB scans no table without columns: records that hold no features (or empty
         * files) get the filename column, as in tfsql.connect()'s Arrow path, so that
         * count(*) works. */
        b->filename_col = xstrdup("filename");
    }
    int dup = -1;
    int indexed = schema_index(&b->sc, &dup);
    if (indexed == -2) {
        snprintf(err, ERRLEN, "%s: column %d is listed twice", fname, dup);
        goto fail;
    }
    if (indexed != 0) {
        snprintf(err, ERRLEN, "out of memory");
        goto fail;
    }
    for (int c = 0; c < b->ndata; c++) {
        const colspec *cs = &b->sc.cols[c];
        char *name = column_name(b, c);
        duckdb_logical_type t = column_type(cs->kind, cs->shape, b->utf8[c]);
        duckdb_bind_add_result_column(info, name, t);
        duckdb_destroy_logical_type(&t);
        free(name);
    }
    for (int k = 0; k < b->npart; k++) {
        duckdb_logical_type t = duckdb_create_logical_type(b->part_is_int[k] ? DUCKDB_TYPE_BIGINT
                                                                             : DUCKDB_TYPE_VARCHAR);
        duckdb_bind_add_result_column(info, b->part_names[k], t);
        duckdb_destroy_logical_type(&t);
    }
    if (b->filename_col != NULL) {
        int clash = is_column(b, b->filename_col);
        for (int k = 0; k < b->npart; k++) {
            clash |= strcmp(b->part_names[k], b->filename_col) == 0;
        }
        if (clash) {
            snprintf(err, ERRLEN, "%s: filename := '%s' collides with an existing column", fname,
                     b->filename_col);
            goto fail;
        }
        duckdb_logical_type t = duckdb_create_logical_type(DUCKDB_TYPE_VARCHAR);
        duckdb_bind_add_result_column(info, b->filename_col, t);
        duckdb_destroy_logical_type(&t);
    }
    if (cardinality > 0) {
        duckdb_bind_set_cardinality(info, cardinality, false);
    }
    duckdb_bind_set_bind_data(info, b, tfbind_free);
    return;
fail:
    tfbind_free(b);
    duckdb_bind_set_error(info, err);
}

/* ======================================================================== */
/* 8. Scan                                                                  */
/* ======================================================================== */

typedef struct {
    size_t next_file; /* claimed with an atomic add */
    int nproj;
    int *proj;        /* output column index per projected position */
    schema sc;        /* the projected data columns */
    int *dcol;        /* projected position -> index into sc.cols (or -1) */
} tfglobal;

static void tfglobal_free(void *p) {
    tfglobal *g = (tfglobal *)p;
    if (g == NULL) {
        return;
    }
    free(g->proj);
    free(g->dcol);
    /* sc.cols names are borrowed from the bind data */
    free(g->sc.cols);
    free(g->sc.tables[0].slots);
    free(g->sc.tables[1].slots);
    free(g);
}

/* A thread's scan state. The open file is framed one output chunk at a time, right
 * before the chunk is decoded, so its bytes are read from memory once while they are
 * still in the CPU's cache (framing the whole file first read it twice). A compressed
 * file is inflated as the scan goes, into a window that drops the bytes of records
 * already emitted: `base` is the file offset of the window's first byte. */
typedef struct {
    int have_file;
    size_t file;
    filebytes fb;
    inflater inf;      /* finished for a plain (mapped) file */
    size_t base;
    tbuf offs, lens;   /* the framed records of the current chunk */
    size_t nrec, pos;  /* records in the chunk, records already emitted */
    size_t first;      /* the chunk's first record: its index in the file */
    size_t frame_end;  /* where framing stopped: the next record, or the damaged one */
    int frame_status;
    slotstate *slots;
    colbuild *cb;
} tflocal;

/* Inflated bytes kept ahead of the scan: refilled to WINDOW_BYTES when fewer than
 * WINDOW_LOW are left (moving those few to the front), or to a whole record. */
#define WINDOW_BYTES ((size_t)8 << 20)
#define WINDOW_LOW ((size_t)1 << 20)

static void tflocal_close_file(tflocal *l) {
    inflater_end(&l->inf);
    filebytes_free(&l->fb);
    l->have_file = 0;
}

/* Make at least `need` bytes from frame_end available (fewer only at the end of the
 * stream). */
static int fill_window(tflocal *l, size_t need, const char *path, char *err) {
    size_t have = l->fb.size - l->frame_end;
    if (l->inf.finished || have >= need) {
        return 0;
    }
    if (l->frame_end > 0) {
        memmove(l->fb.owned.data, l->fb.owned.data + l->frame_end, have);
        l->fb.owned.len = have;
        l->base += l->frame_end;
        l->frame_end = 0;
    }
    char why[ERRLEN];
    if (inflater_run(&l->inf, &l->fb.owned, need > WINDOW_BYTES ? need : WINDOW_BYTES, why)) {
        snprintf(err, ERRLEN, "%s: %s", path, why);
        return -1;
    }
    file_inflated(&l->fb);
    return 0;
}

static void tflocal_free(void *p) {
    tflocal *l = (tflocal *)p;
    if (l == NULL) {
        return;
    }
    tflocal_close_file(l);
    tbuf_free(&l->offs);
    tbuf_free(&l->lens);
    free(l->slots);
    free(l->cb);
    free(l);
}

static void tf_init(duckdb_init_info info) {
    tfbind *b = (tfbind *)duckdb_init_get_bind_data(info);
    tfglobal *g = (tfglobal *)calloc(1, sizeof(tfglobal));
    if (g == NULL) {
        duckdb_init_set_error(info, "out of memory");
        return;
    }
    idx_t n = duckdb_init_get_column_count(info);
    g->nproj = (int)n;
    g->proj = (int *)calloc(n ? n : 1, sizeof(int));
    g->dcol = (int *)calloc(n ? n : 1, sizeof(int));
    g->sc.cols = (colspec *)calloc(n ? n : 1, sizeof(colspec));
    if (g->proj == NULL || g->dcol == NULL || g->sc.cols == NULL) {
        tfglobal_free(g);
        duckdb_init_set_error(info, "out of memory");
        return;
    }
    g->sc.record_type = b->record_type;
    int ndec = 0;
    for (idx_t i = 0; i < n; i++) {
        idx_t c = duckdb_init_get_column_index(info, i);
        g->proj[i] = (int)c;
        g->dcol[i] = -1;
        if (c < (idx_t)b->ndata) {
            g->sc.cols[ndec] = b->sc.cols[c];
            g->dcol[i] = ndec++;
        }
    }
    g->sc.ncols = ndec;
    if (b->record_type == RAW) {
        g->sc.ncols = ndec; /* 0 or 1: the record column */
    } else if (schema_index(&g->sc, &(int){-1}) != 0) {
        tfglobal_free(g);
        duckdb_init_set_error(info, "out of memory");
        return;
    }
    size_t threads = b->files.n ? b->files.n : 1;
    duckdb_init_set_max_threads(info, threads);
    duckdb_init_set_init_data(info, g, tfglobal_free);
}

static void tf_local_init(duckdb_init_info info) {
    tflocal *l = (tflocal *)calloc(1, sizeof(tflocal));
    if (l == NULL) {
        duckdb_init_set_error(info, "out of memory");
        return;
    }
    duckdb_init_set_init_data(info, l, tflocal_free);
}

/* -- decoded buffers -> DuckDB vectors -------------------------------------- */

static inline int bit_get(const uint8_t *bits, size_t i) { return (bits[i >> 3] >> (i & 7)) & 1; }

static int fill_leaf(duckdb_vector vec, const colbuild *cb, int64_t from, int64_t to, int utf8,
                     idx_t at, char *err, const char *col) {
    int64_t n = to - from;
    if (cb->kind == KIND_INT64) {
        int64_t *dst = (int64_t *)duckdb_vector_get_data(vec);
        memcpy(dst + at, cb->values.data + 8 * from, (size_t)n * 8);
    } else if (cb->kind == KIND_FLOAT) {
        float *dst = (float *)duckdb_vector_get_data(vec);
        memcpy(dst + at, cb->values.data + 4 * from, (size_t)n * 4);
    } else {
        const int32_t *vo = (const int32_t *)cb->voffs.data;
        for (int64_t i = 0; i < n; i++) {
            const char *p = (const char *)cb->values.data + vo[from + i];
            size_t len = (size_t)(vo[from + i + 1] - vo[from + i]);
            if (utf8 && !utf8_valid((const uint8_t *)p, len)) {
                snprintf(err, ERRLEN, "feature '%s' holds bytes that are not valid UTF-8 but "
                                      "column '%s' is VARCHAR (inferred from the sample)", col,
                         col);
                return -1;
            }
            duckdb_vector_assign_string_element_len(vec, at + (idx_t)i, p, len);
        }
    }
    return 0;
}

static void set_validity(duckdb_vector vec, const uint8_t *bits, int64_t nulls, size_t n) {
    if (nulls == 0) {
        return;
    }
    duckdb_vector_ensure_validity_writable(vec);
    uint64_t *validity = duckdb_vector_get_validity(vec);
    for (size_t r = 0; r < n; r++) {
        if (!bit_get(bits, r)) {
            duckdb_validity_set_row_invalid(validity, r);
        }
    }
}

static int fill_column(duckdb_vector vec, const colbuild *cb, size_t n, int utf8, char *err,
                       const char *col) {
    if (cb->shape == SCALAR) {
        if (cb->kind == KIND_BYTES) {
            /* assign valid rows only */
            const int32_t *vo = (const int32_t *)cb->voffs.data;
            for (size_t r = 0; r < n; r++) {
                if (cb->null_count && !bit_get(cb->validity.data, r)) {
                    continue;
                }
                const char *p = (const char *)cb->values.data + vo[r];
                size_t len = (size_t)(vo[r + 1] - vo[r]);
                if (utf8 && !utf8_valid((const uint8_t *)p, len)) {
                    snprintf(err, ERRLEN, "feature '%s' holds bytes that are not valid UTF-8 "
                                          "but column '%s' is VARCHAR (inferred from the "
                                          "sample)", col, col);
                    return -1;
                }
                duckdb_vector_assign_string_element_len(vec, r, p, len);
            }
        } else if (fill_leaf(vec, cb, 0, (int64_t)n, utf8, 0, err, col)) {
            return -1;
        }
        set_validity(vec, cb->validity.data, cb->null_count, n);
        return 0;
    }
    const int32_t *outer = (const int32_t *)cb->outer.data;
    duckdb_list_entry *entries = (duckdb_list_entry *)duckdb_vector_get_data(vec);
    for (size_t r = 0; r < n; r++) {
        entries[r].offset = (uint64_t)outer[r];
        entries[r].length = (uint64_t)(outer[r + 1] - outer[r]);
    }
    set_validity(vec, cb->validity.data, cb->null_count, n);
    duckdb_vector child = duckdb_list_vector_get_child(vec);
    if (cb->shape == LIST) {
        idx_t nv = (idx_t)cb->nvalues;
        duckdb_list_vector_reserve(vec, nv);
        duckdb_list_vector_set_size(vec, nv);
        child = duckdb_list_vector_get_child(vec);
        return fill_leaf(child, cb, 0, cb->nvalues, utf8, 0, err, col);
    }
    /* LIST_OF_LIST: the outer list's child holds the inner lists */
    idx_t ninner = (idx_t)cb->ninner;
    duckdb_list_vector_reserve(vec, ninner);
    duckdb_list_vector_set_size(vec, ninner);
    child = duckdb_list_vector_get_child(vec);
    const int32_t *inner = (const int32_t *)cb->inner.data;
    duckdb_list_entry *ie = (duckdb_list_entry *)duckdb_vector_get_data(child);
    for (idx_t k = 0; k < ninner; k++) {
        ie[k].offset = (uint64_t)inner[k];
        ie[k].length = (uint64_t)(inner[k + 1] - inner[k]);
    }
    set_validity(child, cb->inner_validity.data, cb->inner_null_count, ninner);
    idx_t nv = (idx_t)cb->nvalues;
    duckdb_list_vector_reserve(child, nv);
    duckdb_list_vector_set_size(child, nv);
    duckdb_vector leaf = duckdb_list_vector_get_child(child);
    return fill_leaf(leaf, cb, 0, cb->nvalues, utf8, 0, err, col);
}

static void decode_error(char *err, const tfbind *b, const dctx *x, int rc, const char *path,
                         size_t record, size_t at) {
    const char *rt = b->record_type == SEQUENCE_EXAMPLE ? "tf.train.SequenceExample"
                                                        : "tf.train.Example";
    char col[256] = "";
    if (x->err_column >= 0 && x->err_column < x->sc->ncols) {
        snprintf(col, sizeof(col), "%.*s", (int)x->sc->cols[x->err_column].name_len,
                 (const char *)x->sc->cols[x->err_column].name);
    }
    if (rc == E_MALFORMED) {
        snprintf(err, ERRLEN, "record is not a valid %s protobuf in %s, record %zu at byte %zu; "
                              "check record_type := (use 'bytes' to read the raw records)", rt,
                 path, record, at);
    } else if (rc == E_KIND_MISMATCH) {
        snprintf(err, ERRLEN, "feature '%s' holds %s in %s, record %zu at byte %zu, but column "
                              "'%s' is read from %s; infer the schema from more records "
                              "(sample_size := -1) or pass the type with tfsql.connect()",
                 col, kind_names[x->err_found_kind & 3], path, record, at, col,
                 kind_names[x->sc->cols[x->err_column].kind]);
    } else if (rc == E_NOT_SCALAR) {
        snprintf(err, ERRLEN, "feature '%s' holds several values in %s, record %zu at byte %zu, "
                              "but column '%s' is a scalar because no sampled record had more "
                              "than one; pass lists := 'always' or a larger sample_size", col,
                 path, record, at, col);
    } else if (rc == E_NOMEM) {
        snprintf(err, ERRLEN, "out of memory decoding %s", path);
    } else {
        snprintf(err, ERRLEN, "cannot decode %s, record %zu at byte %zu (error %d)", path, record,
                 at, rc);
    }
}

/* Claim and open the next file; 0 when none is left, -1 on error. */
static int open_next_file(tfbind *b, tfglobal *g, tflocal *l, char *err) {
    for (;;) {
        size_t i = __atomic_fetch_add(&g->next_file, 1, __ATOMIC_RELAXED);
        if (i >= b->files.n) {
            return 0;
        }
        const tfile *f = &b->files.items[i];
        if (f->size == 0) {
            continue;
        }
        if (file_open(f->path, b->compression, &l->fb, &l->inf, err)) {
            return -1;
        }
        l->base = 0;
        l->offs.len = l->lens.len = 0;
        l->nrec = l->pos = l->first = 0;
        l->frame_end = 0;
        l->frame_status = FRAME_OK;
        l->file = i;
        l->have_file = 1;
        return 1;
    }
}

/* Frame the open file's next chunk (up to `cap` records; CRCs are checked even when no
 * data column is needed). 1: records framed; 0: the file is done; -1: error in `err`. */
static int frame_chunk(const tfbind *b, tflocal *l, size_t cap, char *err) {
    const tfile *f = &b->files.items[l->file];
    for (;;) {
        l->first += l->nrec;
        l->nrec = l->pos = 0;
        if (l->frame_status != FRAME_OK) {
            if (!b->skip_corrupt) {
                frame_error(err, f->path, l->frame_status, l->first, l->base + l->frame_end,
                            l->base + l->fb.size);
                return -1;
            }
            if (l->frame_status != FRAME_BAD_DATA_CRC) {
                return 0; /* ignore_errors: a damaged length or a truncated tail ends the file */
            }
            /* step over the bad record and go on framing the rest of the file */
            uint64_t length = load_le64(l->fb.data + l->frame_end);
            l->frame_end += 12 + (size_t)length + 4;
            l->frame_status = FRAME_OK;
            l->first += 1;
        }
        if (fill_window(l, WINDOW_LOW, f->path, err)) {
            return -1;
        }
        if (l->frame_end >= l->fb.size) {
            return 0;
        }
        l->offs.len = l->lens.len = 0;
        if (scan_core(l->fb.data, l->fb.size, l->frame_end, (long long)cap, -1, b->verify,
                      &l->offs, &l->lens, &l->frame_end, &l->frame_status)) {
            snprintf(err, ERRLEN, "out of memory");
            return -1;
        }
        l->nrec = l->offs.len / 8;
        if (l->frame_status == FRAME_TRUNCATED && !l->inf.finished) {
            /* the window ends inside a record: emit what is framed, then inflate on */
            size_t have = l->fb.size - l->frame_end, need = 12;
            if (have >= 12) {
                uint64_t length = load_le64(l->fb.data + l->frame_end);
                need = length > SIZE_MAX - 16 ? SIZE_MAX : (size_t)length + 16;
            }
            l->frame_status = FRAME_OK;
            if (l->nrec > 0) {
                return 1;
            }
            if (fill_window(l, need, f->path, err)) {
                return -1;
            }
            continue;
        }
        if (l->nrec > 0) {
            return 1;
        }
    }
}

static void tf_scan(duckdb_function_info info, duckdb_data_chunk output) {
    tfbind *b = (tfbind *)duckdb_function_get_bind_data(info);
    tfglobal *g = (tfglobal *)duckdb_function_get_init_data(info);
    tflocal *l = (tflocal *)duckdb_function_get_local_init_data(info);
    char err[ERRLEN] = "";
    idx_t cap = duckdb_vector_size();
    for (;;) {
        if (!l->have_file) {
            int rc = open_next_file(b, g, l, err);
            if (rc < 0) {
                duckdb_function_set_error(info, err);
                return;
            }
            if (rc == 0) {
                duckdb_data_chunk_set_size(output, 0);
                return;
            }
        }
        if (l->pos >= l->nrec) {
            int rc = frame_chunk(b, l, cap, err);
            if (rc < 0) {
                tflocal_close_file(l);
                duckdb_function_set_error(info, err);
                return;
            }
            if (rc == 0) {
                tflocal_close_file(l);
                continue;
            }
        }
        size_t n = l->nrec - l->pos;
        if (n > cap) {
            n = cap;
        }
        const uint8_t *offs = l->offs.data + 8 * l->pos, *lens = l->lens.data + 8 * l->pos;
        if (g->sc.ncols > 0 && l->cb == NULL) {
            l->slots = (slotstate *)calloc((size_t)g->sc.ncols, sizeof(slotstate));
            l->cb = (colbuild *)calloc((size_t)g->sc.ncols, sizeof(colbuild));
            if (l->slots == NULL || l->cb == NULL) {
                duckdb_function_set_error(info, "out of memory");
                return;
            }
        }
        if (g->sc.ncols > 0) {
            dctx x;
            memset(&x, 0, sizeof(x));
            x.sc = &g->sc;
            x.slots = l->slots;
            x.cb = l->cb;
            memset(l->slots, 0, (size_t)g->sc.ncols * sizeof(slotstate));
            int rc = 0;
            size_t payload = records_payload((const uint8_t *)lens, n, l->fb.size);
            size_t lists = list_reserve(&g->sc, payload);
            for (int c = 0; c < g->sc.ncols && rc == 0; c++) {
                if (colbuild_init(&l->cb[c], g->sc.cols[c].kind, g->sc.cols[c].shape, n,
                                  payload, lists)) {
                    rc = E_NOMEM;
                }
            }
            if (rc == 0) {
                rc = decode_core(&x, l->fb.data, l->fb.size, offs, lens, n);
            }
            if (rc) {
                size_t rec = l->first + l->pos + x.err_record;
                size_t at = l->base + (size_t)load_u64(offs + 8 * x.err_record) - 12;
                decode_error(err, b, &x, rc, b->files.items[l->file].path, rec, at);
            }
            for (int i = 0; i < g->nproj && rc == 0; i++) {
                int d = g->dcol[i];
                if (d < 0) {
                    continue;
                }
                int out = g->proj[i];
                char col[256];
                snprintf(col, sizeof(col), "%.*s", (int)g->sc.cols[d].name_len,
                         (const char *)g->sc.cols[d].name);
                if (fill_column(duckdb_data_chunk_get_vector(output, (idx_t)i), &l->cb[d], n,
                                b->utf8[out], err, col)) {
                    char tmp[ERRLEN];
                    snprintf(tmp, ERRLEN, "%s, in %s near record %zu", err,
                             b->files.items[l->file].path, l->first + l->pos);
                    memcpy(err, tmp, ERRLEN);
                    rc = -1;
                }
            }
            for (int c = 0; c < g->sc.ncols; c++) {
                colbuild_free(&l->cb[c]);
            }
            if (rc) {
                duckdb_function_set_error(info, err);
                return;
            }
        }
        /* partition and filename columns: constant within the file */
        const tfile *f = &b->files.items[l->file];
        for (int i = 0; i < g->nproj; i++) {
            int out = g->proj[i];
            if (out < b->ndata) {
                continue;
            }
            duckdb_vector vec = duckdb_data_chunk_get_vector(output, (idx_t)i);
            int k = out - b->ndata;
            const char *text = k < b->npart ? f->parts[k] : f->path;
            if (text == NULL) {
                duckdb_vector_ensure_validity_writable(vec);
                uint64_t *validity = duckdb_vector_get_validity(vec);
                for (size_t r = 0; r < n; r++) {
                    duckdb_validity_set_row_invalid(validity, r);
                }
            } else if (k < b->npart && b->part_is_int[k]) {
                int64_t v = strtoll(text, NULL, 10);
                int64_t *dst = (int64_t *)duckdb_vector_get_data(vec);
                for (size_t r = 0; r < n; r++) {
                    dst[r] = v;
                }
            } else {
                size_t len = strlen(text);
                for (size_t r = 0; r < n; r++) {
                    duckdb_vector_assign_string_element_len(vec, r, text, len);
                }
            }
        }
        l->pos += n;
        duckdb_data_chunk_set_size(output, n);
        return;
    }
}

/* ======================================================================== */
/* 9. Entry point                                                           */
/* ======================================================================== */

static int is_tfrecord_name(const char *name) {
    static const char *suffixes[] = {".tfrecord",     ".tfrecords",     ".tfrecord.gz",
                                     ".tfrecords.gz", ".tfrecord.gzip", ".tfrecord.zlib",
                                     ".tfrecord.zz",  ".tfrec",         NULL};
    for (int i = 0; suffixes[i]; i++) {
        if (ends_with_ci(name, suffixes[i])) {
            return 1;
        }
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

static void tf_replacement(duckdb_replacement_scan_info info, const char *table_name, void *data) {
    (void)data;
    if (!is_tfrecord_name(table_name)) {
        return;
    }
    duckdb_replacement_scan_set_function_name(info, "tfrecord_scan");
    duckdb_value v = duckdb_create_varchar(table_name);
    duckdb_replacement_scan_add_parameter(info, v);
    duckdb_destroy_value(&v);
}

static int register_scan(duckdb_connection con, const char *name) {
    duckdb_table_function f = duckdb_create_table_function();
    duckdb_table_function_set_name(f, name);
    duckdb_logical_type any = duckdb_create_logical_type(DUCKDB_TYPE_ANY);
    duckdb_logical_type boolean = duckdb_create_logical_type(DUCKDB_TYPE_BOOLEAN);
    duckdb_logical_type varchar = duckdb_create_logical_type(DUCKDB_TYPE_VARCHAR);
    duckdb_logical_type bigint = duckdb_create_logical_type(DUCKDB_TYPE_BIGINT);
    duckdb_table_function_add_parameter(f, any);
    static const char *bools[] = {"hive_partitioning", "verify_checksums", "ignore_errors",
                                  "union_by_name", "glob", NULL};
    static const char *texts[] = {"record_type", "compression", "on_corrupt", "lists", NULL};
    static const char *ints[] = {"infer_sample", "sample_size", "infer_files", "batch_size",
                                 "threads", NULL};
    static const char *anys[] = {"filename", "schema", "columns", "hive_types", NULL};
    for (int i = 0; bools[i]; i++) {
        duckdb_table_function_add_named_parameter(f, bools[i], boolean);
    }
    for (int i = 0; texts[i]; i++) {
        duckdb_table_function_add_named_parameter(f, texts[i], varchar);
    }
    for (int i = 0; ints[i]; i++) {
        duckdb_table_function_add_named_parameter(f, ints[i], bigint);
    }
    for (int i = 0; anys[i]; i++) {
        duckdb_table_function_add_named_parameter(f, anys[i], any);
    }
    duckdb_destroy_logical_type(&any);
    duckdb_destroy_logical_type(&boolean);
    duckdb_destroy_logical_type(&varchar);
    duckdb_destroy_logical_type(&bigint);
    duckdb_table_function_set_extra_info(f, (void *)name, NULL);
    duckdb_table_function_set_bind(f, tf_bind);
    duckdb_table_function_set_init(f, tf_init);
    duckdb_table_function_set_local_init(f, tf_local_init);
    duckdb_table_function_set_function(f, tf_scan);
    duckdb_table_function_supports_projection_pushdown(f, true);
    duckdb_state st = duckdb_register_table_function(con, f);
    duckdb_destroy_table_function(&f);
    return st == DuckDBSuccess ? 0 : -1;
}

DUCKDB_EXTENSION_ENTRYPOINT_CUSTOM(duckdb_extension_info info, struct duckdb_extension_access *access) {
    crc_init();
    duckdb_database *db = access->get_database(info);
    duckdb_connection con;
    if (db == NULL || duckdb_connect(*db, &con) == DuckDBError) {
        access->set_error(info, "tfsql: cannot open a connection to register its functions");
        return false;
    }
    int rc = register_scan(con, "tfrecord_scan") | register_scan(con, "read_tfrecord");
    duckdb_disconnect(&con);
    if (rc) {
        access->set_error(info, "tfsql: cannot register tfrecord_scan / read_tfrecord");
        return false;
    }
    duckdb_add_replacement_scan(*db, tf_replacement, NULL, NULL);
    return true;
}
