/*
 * tfsql/duckdb_ext/discovery.c -- paths, directories and globs -> the data files,
 * with the hidden-file rules of tfsql.discovery.
 */

#include "duckdb_ext.h"

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

void filelist_free(filelist *l, int nparts) {
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

int has_glob_magic(const char *s) { return strpbrk(s, "*?[") != NULL; }

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
const char *relative_to(const char *path, const char *root) {
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
int list_item(const char *item, int glob, filelist *files, char *err) {
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
