/*
 * tfsql/duckdb_v2/files.c -- the V2 extension's routed file system (routed.c's fsops):
 * a path with a URL scheme (s3://, gs://, https://, memory://, hf://; not file://) is
 * listed, read and written through DuckDB's file system, the one of the callback's client
 * context, so it goes wherever DuckDB routes it: httpfs where it is loaded (and, where it
 * is not, DuckDB's own error naming it), a file system registered from Python
 * (con.register_filesystem), any extension's. A leading '~' is expanded as DuckDB
 * expands it (its home_directory setting).
 *
 * Local paths are not routed: the C library reads them (reading.c: pread, the walk's link
 * and FIFO rules, modification times, the target lock), as fast as the v1 build
 * (docs/duckdb-extension.md has the measurement). Except in a sandbox: when the context's
 * enable_external_access is false, every path is routed, so DuckDB's own rules decide
 * what may be read (allowed_directories, allowed_paths) and its own Permission Error
 * refuses the rest, as read_parquet would.
 *
 * The context is the thread's current callback's (v2_files_enter: every callback that
 * lists, reads or writes files enters it; reports.c's v2_reports_enter does for scans).
 */
#include "v2_ext.h"

#include <ctype.h>

static __thread v2_ctx fs_context;
static __thread int fs_sandboxed = -1; /* the context's enable_external_access is false; -1 unknown */

void v2_files_enter(v2_ctx context) {
    fs_context = context;
    fs_sandboxed = -1;
}

void v2_files_leave(void) {
    fs_context = NULL;
    fs_sandboxed = -1;
}

/* Whether the current context forbids external access (read once per callback). A
 * setting that cannot be read counts as forbidding: DuckDB's file system then decides. */
static int sandboxed(void) {
    if (fs_sandboxed < 0 && fs_context != NULL) {
        duckdb_v2_value_handle value = v2_setting(fs_context, "enable_external_access");
        bool allowed = false;
        if (value == NULL || duckdb_v2_value_get_bool(value, &allowed, NULL) != V2_OK) {
            allowed = false;
        }
        duckdb_v2_value_destroy(&value);
        fs_sandboxed = !allowed;
    }
    return fs_sandboxed > 0;
}

/* err = the error DuckDB reported (its text without the "IO Error: " prefix); destroys it. */
static void take_error(duckdb_v2_error_info_handle *e, const char *what, const char *path, char *err) {
    duckdb_v2_str t = {NULL, 0};
    if (*e != NULL && duckdb_v2_error_info_get_raw_text(*e, &t) == V2_OK && t.ptr != NULL && t.len > 0) {
        snprintf(err, ERRLEN, "%.*s", (int)(t.len < ERRLEN ? t.len : ERRLEN - 1), t.ptr);
    } else {
        snprintf(err, ERRLEN, "cannot %s %s", what, path);
    }
    duckdb_v2_error_info_destroy(e);
}

static duckdb_v2_file_system_handle file_system(char *err) {
    duckdb_v2_file_system_handle fs = NULL;
    duckdb_v2_error_info_handle e = NULL;
    if (fs_context == NULL) {
        snprintf(err, ERRLEN, "tfsql: DuckDB's file system is not reachable here (no client context)");
        return NULL;
    }
    if (duckdb_v2_context_get_file_system(fs_context, &fs, &e) != V2_OK) {
        take_error(&e, "reach", "DuckDB's file system", err);
        return NULL;
    }
    return fs;
}

/* A URL: "<scheme>://" with a scheme of letters, digits, '+', '-', '.'; file:// is local. */
static int is_url(const char *path) {
    const char *s = strstr(path, "://");
    if (s == NULL || s == path || (s - path == 4 && strncasecmp(path, "file", 4) == 0)) {
        return 0;
    }
    for (const char *p = path; p < s; p++) {
        if (!(isalnum((unsigned char)*p) || *p == '+' || *p == '-' || *p == '.')) {
            return 0;
        }
    }
    return 1;
}

static int routes(const char *path) { return is_url(path) || sandboxed(); }

static void keep_text(const duckdb_v2_str *text, void *user_data, duckdb_v2_error_info_handle *err) {
    (void)err;
    char **out = (char **)user_data;
    free(*out);
    *out = xstrndup(text->ptr != NULL ? text->ptr : "", (size_t)text->len);
}

static char *expand(const char *path, char *err) {
    duckdb_v2_file_system_handle fs = file_system(err);
    duckdb_v2_error_info_handle e = NULL;
    char *out = NULL;
    duckdb_v2_str p = v2_str(path);
    if (fs == NULL) {
        return NULL;
    }
    if (duckdb_v2_file_system_path_expand(fs, &p, keep_text, &out, &e) != V2_OK) {
        free(out);
        take_error(&e, "expand", path, err);
        return NULL;
    }
    if (out == NULL) {
        snprintf(err, ERRLEN, "out of memory");
    }
    return out;
}

typedef struct {
    strlist *out;
    int failed;
} glob_sink;

static void keep_match(const duckdb_v2_str *path, void *user_data, duckdb_v2_error_info_handle *err) {
    (void)err;
    glob_sink *g = (glob_sink *)user_data;
    if (!g->failed && strlist_add(g->out, xstrndup(path->ptr != NULL ? path->ptr : "", (size_t)path->len))) {
        g->failed = 1;
    }
}

static int glob(const char *pattern, strlist *out, char *err) {
    duckdb_v2_file_system_handle fs = file_system(err);
    duckdb_v2_error_info_handle e = NULL;
    duckdb_v2_str p = v2_str(pattern);
    glob_sink g = {out, 0};
    if (fs == NULL) {
        return -1;
    }
    if (duckdb_v2_file_system_path_glob(fs, &p, keep_match, &g, &e) != V2_OK) {
        take_error(&e, "list", pattern, err);
        return -1;
    }
    if (g.failed) {
        snprintf(err, ERRLEN, "out of memory");
        return -1;
    }
    return 0;
}

static void *open_file(const char *path, int mode, uint64_t *size, char *err) {
    duckdb_v2_file_system_handle fs = file_system(err);
    duckdb_v2_file_open_options_handle options = NULL;
    duckdb_v2_file_handle file = NULL;
    duckdb_v2_error_info_handle e = NULL;
    duckdb_v2_str p = v2_str(path);
    if (fs == NULL) {
        return NULL;
    }
    int ok = duckdb_v2_file_open_options_create(fs, &options, &e) == V2_OK;
    if (ok && mode == FS_READ) {
        ok = duckdb_v2_file_open_options_set_flag(options, DUCKDB_V2_FILE_FLAG_READ, &e) == V2_OK;
    } else if (ok) {
        ok = duckdb_v2_file_open_options_set_flag(options, DUCKDB_V2_FILE_FLAG_WRITE, &e) == V2_OK &&
             duckdb_v2_file_open_options_set_flag(options, DUCKDB_V2_FILE_FLAG_CREATE_NEW, &e) == V2_OK;
    }
    ok = ok && duckdb_v2_file_system_open(fs, &p, options, &file, &e) == V2_OK;
    idx_t n = 0;
    ok = ok && (mode != FS_READ || duckdb_v2_file_size(file, &n, &e) == V2_OK);
    duckdb_v2_file_open_options_destroy(&options);
    bool is_file = true; /* a local directory opens for reading too (a sandbox routes it) */
    if (ok && mode == FS_READ && !is_url(path) &&
        duckdb_v2_file_system_path_exists(fs, &p, &is_file, NULL) == V2_OK && !is_file) {
        duckdb_v2_file_destroy(&file);
        snprintf(err, ERRLEN, "%s: Is a directory", path);
        return NULL;
    }
    if (!ok) {
        duckdb_v2_file_destroy(&file);
        take_error(&e, mode == FS_READ ? "open" : "create", path, err);
        return NULL;
    }
    if (size != NULL) {
        *size = (uint64_t)n;
    }
    return file;
}

static int read_at(void *h, uint64_t at, void *dst, size_t n, char *err) {
    duckdb_v2_error_info_handle e = NULL;
    if (duckdb_v2_file_read_at((duckdb_v2_file_handle)h, dst, (idx_t)n, (idx_t)at, &e) != V2_OK) {
        take_error(&e, "read", "a file", err);
        return -1;
    }
    return 0;
}

static int write_file(void *h, const void *src, size_t n, char *err) {
    const uint8_t *p = (const uint8_t *)src;
    while (n > 0) {
        duckdb_v2_error_info_handle e = NULL;
        idx_t wrote = 0;
        if (duckdb_v2_file_write((duckdb_v2_file_handle)h, p, (idx_t)n, &wrote, &e) != V2_OK ||
            wrote == 0) {
            take_error(&e, "write", "a file", err);
            return -1;
        }
        p += wrote;
        n -= (size_t)wrote;
    }
    return 0;
}

static int sync_file(void *h, char *err) {
    duckdb_v2_error_info_handle e = NULL;
    if (duckdb_v2_file_sync((duckdb_v2_file_handle)h, &e) != V2_OK ||
        duckdb_v2_file_close((duckdb_v2_file_handle)h, &e) != V2_OK) {
        take_error(&e, "write", "a file", err);
        return -1;
    }
    return 0;
}

static void close_file(void *h) {
    duckdb_v2_file_handle f = (duckdb_v2_file_handle)h;
    duckdb_v2_file_destroy(&f);
}

static int move(const char *from, const char *to, char *err) {
    duckdb_v2_file_system_handle fs = file_system(err);
    duckdb_v2_error_info_handle e = NULL;
    duckdb_v2_str a = v2_str(from), b = v2_str(to);
    if (fs == NULL) {
        return -1;
    }
    if (duckdb_v2_file_system_path_move(fs, &a, &b, &e) != V2_OK) {
        take_error(&e, "rename", from, err);
        return -1;
    }
    return 0;
}

static void remove_file(const char *path) {
    char err[ERRLEN];
    duckdb_v2_file_system_handle fs = file_system(err);
    duckdb_v2_str p = v2_str(path);
    if (fs != NULL) {
        duckdb_v2_file_system_path_remove(fs, &p, NULL, NULL);
    }
}

static const fsops v2_fs = {routes, expand, glob, open_file, read_at, write_file, sync_file, close_file,
                            move, remove_file};

const fsops *binding_fs(void) { return &v2_fs; }
