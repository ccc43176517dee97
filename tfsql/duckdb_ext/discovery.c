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
    size_t n = strlen(path);
    if (!utf8_valid((const uint8_t *)path, n)) {
        f->shown = (char *)malloc(4 * n + 1);
        if (f->shown == NULL) {
            return -1;
        }
        tfsql_path_display(path, n, f->shown);
    }
    f->size = size;
    return 0;
}

void filelist_free(filelist *l, int nparts) {
    for (size_t i = 0; i < l->n; i++) {
        free(l->items[i].path);
        free(l->items[i].root);
        free(l->items[i].shown);
        free(l->items[i].part_lens);
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

int has_glob_magic(const char *s) { return tfsql_has_glob_magic(s, strlen(s)); }


/* The kind of the entry at `path` (tfsql_walk_action's ENTRY_*), links resolved. */
static int entry_kind(const char *path) {
    struct stat st;
    if (lstat(path, &st) != 0) {
        return TFSQL_ENTRY_MISSING;
    }
    int link = S_ISLNK(st.st_mode);
    if (link && stat(path, &st) != 0) {
        return TFSQL_ENTRY_MISSING;
    }
    if (S_ISDIR(st.st_mode)) {
        return link ? TFSQL_ENTRY_DIR_LINK : TFSQL_ENTRY_DIR;
    }
    return S_ISREG(st.st_mode) ? TFSQL_ENTRY_FILE : TFSQL_ENTRY_OTHER;
}

/* The core's rule for the entry at `path` met in `context`; a refused one (a FIFO, socket
 * or device) sets err. */
static int walk_action(const char *path, int context, char *err) {
    int action = tfsql_walk_action(entry_kind(path), context);
    if (action == TFSQL_WALK_REFUSE) {
        snprintf(err, ERRLEN, "%s is not a regular file (a FIFO, socket or device); tfsql reads "
                              "regular files only: copy its content to a file and read that", path);
    }
    return action;
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

/* A writer's column description (features.json, the core's name rule): metadata, never
 * data, below a root, whether hidden files are skipped or not (tfsql.discovery._keep). */
static int is_description_path(const char *path) {
    const char *base = strrchr(path, '/');
    base = base != NULL ? base + 1 : path;
    return tfsql_is_description_name(base, strlen(base));
}

/* The core's rule (tfsql.discovery._keep): no hidden component below the root, unless a
 * glob component that itself starts with "." or "_" (in `exempt`) matches it. */
static int keep_path(const char *path, const char *root, const strlist *exempt) {
    const char *rel = relative_to(path, root);
    return tfsql_keep_listed(rel, strlen(rel), (const char *const *)(exempt ? exempt->items : NULL),
                             exempt ? exempt->n : 0);
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
            (pattern != NULL && !tfsql_glob_match(pattern, ent->d_name, strlen(ent->d_name)))) {
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

/* Every file below `dir` (recursively), as paths, by the core's walk rule: links to
 * directories are not entered (a link loop is listed once), FIFOs and devices refused. */
static int walk_dir(const char *dir, strlist *out, char *err) {
    strlist children = {0};
    int rc = dir_children(dir, NULL, &children);
    for (size_t i = 0; i < children.n && rc == 0; i++) {
        int action = walk_action(children.items[i], TFSQL_IN_WALK, err);
        if (action == TFSQL_WALK_REFUSE) {
            rc = -1;
        } else if (action == TFSQL_WALK_DESCEND) {
            rc = walk_dir(children.items[i], out, err);
        } else if (action == TFSQL_WALK_READ) {
            rc = strlist_add(out, children.items[i]);
            children.items[i] = NULL;
        }
    }
    strlist_free(&children);
    return rc;
}

/* The content of the intent record at `path` (at most TFSQL_INTENT_MAX_BYTES), or NULL. */
static char *read_small_file(const char *path, size_t *size) {
    int fd = open(path, O_RDONLY | O_NONBLOCK);
    if (fd < 0) {
        return NULL;
    }
    struct stat st;
    char *data = NULL;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (size_t)st.st_size <= TFSQL_INTENT_MAX_BYTES) {
        size_t want = (size_t)st.st_size, have = 0;
        data = (char *)malloc(want + 1);
        while (data != NULL && have < want) {
            ssize_t got = read(fd, data + have, want - have);
            if (got <= 0) {
                free(data);
                data = NULL;
            } else {
                have += (size_t)got;
            }
        }
        *size = have;
    }
    close(fd);
    return data;
}

/* tfsql.commit.pending_view: a directory holding a prepared intent record (a commit cut
 * before its commit point) is listed as its rollback will leave it. `found` holds every
 * file below a directory (hidden ones too); the new files already moved into place are
 * dropped, and views[i] gets the old path of a file in the trash (NULL: as found). The
 * record is read and judged by the core (tfsql_intent_parse / tfsql_intent_view). */
static int apply_intents(strlist *found, char **views, char *err) {
    static const char suffix[] = "/" TFSQL_INTENT_NAME;
    size_t ls = sizeof(suffix) - 1;
    for (size_t r = 0; r < found->n; r++) {
        const char *record = found->items[r];
        size_t n = record ? strlen(record) : 0;
        if (n <= ls || strcmp(record + n - ls, suffix) != 0) {
            continue;
        }
        size_t size = 0;
        char *data = read_small_file(record, &size);
        tfsql_intent *intent = data ? tfsql_intent_parse(data, size, NULL, 0) : NULL;
        free(data);
        if (intent == NULL || !tfsql_intent_prepared(intent)) {
            tfsql_intent_free(intent);
            continue; /* unreadable, not tfsql's, or committed: read the files as they are */
        }
        size_t plen = n - ls + 1; /* the record's directory and its '/' */
        size_t *index = (size_t *)malloc((found->n + 1) * sizeof(size_t));
        const char **rels = (const char **)malloc((found->n + 1) * sizeof(char *));
        int *actions = (int *)malloc((found->n + 1) * sizeof(int));
        size_t *old = (size_t *)malloc((found->n + 1) * sizeof(size_t));
        size_t m = 0;
        int rc = index && rels && actions && old ? 0 : -1;
        for (size_t i = 0; rc == 0 && i < found->n; i++) {
            const char *p = found->items[i];
            if (p != NULL && strncmp(p, record, plen) == 0) {
                index[m] = i;
                rels[m++] = p + plen;
            }
        }
        rc = rc ? rc : tfsql_intent_view(intent, rels, m, actions, old);
        for (size_t k = 0; rc == 0 && k < m; k++) {
            size_t i = index[k];
            if (actions[k] == TFSQL_VIEW_LEAVE_OUT) {
                free(found->items[i]);
                found->items[i] = NULL;
            } else if (actions[k] == TFSQL_VIEW_MOVED) {
                free(views[i]);
                views[i] = xprintf("%.*s%s", (int)plen, found->items[i], rels[k] + old[k]);
                rc = views[i] == NULL ? -1 : 0;
            }
        }
        free(index);
        free(rels);
        free(actions);
        free(old);
        tfsql_intent_free(intent);
        if (rc) {
            snprintf(err, ERRLEN, "out of memory");
            return -1;
        }
    }
    return 0;
}

static int64_t file_size(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 ? (int64_t)st.st_size : 0;
}

typedef struct {
    char *path; /* where the file is */
    char *view; /* where the rules see it (its old place, for a file in a trash), or NULL */
} viewed;

static int cmp_viewed(const void *a, const void *b) {
    const viewed *x = (const viewed *)a, *y = (const viewed *)b;
    const char *p = x->view ? x->view : x->path, *q = y->view ? y->view : y->path;
    return tfsql_path_compare(p, strlen(p), q, strlen(q));
}

/* The listing in the plan's order (tfsql_plan_order: by bytes, repeats dropped), moved
 * into `out`; 0, or -1 out of memory. */
static int plan_order(strlist *listing, strlist *out) {
    size_t n = listing->n;
    size_t *lens = (size_t *)malloc((n + 1) * sizeof(size_t));
    size_t *order = (size_t *)malloc((n + 1) * sizeof(size_t));
    long k = lens == NULL || order == NULL ? -1 : 0;
    for (size_t i = 0; k == 0 && i < n; i++) {
        lens[i] = strlen(listing->items[i]);
    }
    if (k == 0) {
        k = tfsql_plan_order((const char *const *)listing->items, lens, n, order);
    }
    for (long i = 0; i < k; i++) {
        out->items[i] = listing->items[order[i]];
        listing->items[order[i]] = NULL;
    }
    out->n = k > 0 ? (size_t)k : 0;
    free(lens);
    free(order);
    return k < 0 ? -1 : 0;
}

/* Add the kept files below directory `dir` (sorted), parsed against `root`. */
static int list_directory(const char *dir, const char *root, const strlist *exempt,
                          int exclude_hidden, strlist *out, char *err) {
    strlist found = {0};
    char **views = NULL;
    viewed *order = NULL;
    int rc = walk_dir(dir, &found, err);
    if (rc == 0 && exclude_hidden) {
        views = (char **)calloc(found.n + 1, sizeof(char *));
        rc = views == NULL ? -1 : apply_intents(&found, views, err);
    }
    if (rc == 0) {
        order = (viewed *)malloc((found.n + 1) * sizeof(viewed));
        rc = order == NULL ? -1 : 0;
    }
    size_t n = 0;
    for (size_t i = 0; rc == 0 && i < found.n; i++) {
        if (found.items[i] != NULL) {
            order[n].path = found.items[i];
            order[n++].view = views ? views[i] : NULL;
            found.items[i] = NULL;
            if (views) {
                views[i] = NULL;
            }
        }
    }
    if (rc == 0) {
        qsort(order, n, sizeof(viewed), cmp_viewed);
    }
    for (size_t i = 0; i < n; i++) {
        const char *seen_as = order[i].view ? order[i].view : order[i].path;
        if (rc == 0 && !is_description_path(seen_as) &&
            (!exclude_hidden || keep_path(seen_as, root, exempt))) {
            rc = strlist_add(out, order[i].path);
            order[i].path = NULL;
        }
        free(order[i].path);
        free(order[i].view);
    }
    for (size_t i = 0; views && i < found.n; i++) {
        free(views[i]);
    }
    free(views);
    free(order);
    strlist_free(&found);
    if (rc && err[0] == 0) {
        snprintf(err, ERRLEN, "out of memory");
    }
    return rc;
}

/* Expand glob components comps[k..] below `dir`; matches (files and directories) go to
 * `out`. `**` is a whole component matching zero or more directory levels; it does not
 * enter links to directories, and neither does a glob component before the last (both
 * walk, as fsspec's glob does); a literal component is followed as the system resolves it. */
static int glob_walk(const char *dir, char **comps, int ncomps, int k, strlist *out) {
    if (k == ncomps) {
        return strlist_add(out, xstrdup(dir));
    }
    const char *c = comps[k];
    int last = k + 1 == ncomps, rc = 0;
    if (!has_glob_magic(c)) {
        char *child = strcmp(dir, "/") == 0 ? xprintf("/%s", c) : xprintf("%s/%s", dir, c);
        struct stat st;
        if (child != NULL && lstat(child, &st) == 0 && (last || is_dir(child))) {
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
        int kind = entry_kind(child);
        if (globstar) { /* one level deeper, still matching "**"; or an entry it ends on */
            rc = kind == TFSQL_ENTRY_DIR ? glob_walk(child, comps, ncomps, k, out)
                 : last                  ? strlist_add(out, xstrdup(child))
                                         : 0;
        } else if (last || kind == TFSQL_ENTRY_DIR) {
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

/* One source item -> files (sorted). 1 when it names no data file (err set), -1 on
 * another error (err set). */
int list_item(const char *item, int glob, filelist *files, char *err) {
    char *path = abs_path(item);
    if (path == NULL) {
        snprintf(err, ERRLEN, "out of memory");
        return -1;
    }
    int rc = 0;
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
        /* the root (tfsql_glob_root; the path is absolute and normalised, so the root is
         * "/" or its first nroot components) */
        char *root = xstrndup(path, tfsql_glob_root(path, strlen(path)));
        int nroot = 0;
        for (const char *r = root; r != NULL && *r; r++) {
            nroot += *r == '/' && r[1] != 0;
        }
        strlist exempt = {0};
        int globstar = 0;
        for (size_t k = (size_t)nroot; k < comps.n; k++) {
            const char *c = comps.items[k];
            globstar |= strcmp(c, "**") == 0;
            if (tfsql_glob_exempts(c, strlen(c))) {
                strlist_add(&exempt, xstrdup(c));
            }
        }
        strlist matches = {0};
        strlist kept = {0};
        rc = glob_walk(root, comps.items + nroot, (int)comps.n - nroot, 0, &matches);
        if (rc == 0 && matches.n > 0) {
            qsort(matches.items, matches.n, sizeof(char *), cmp_len);
            strlist listed_dirs = {0};
            /* a match of ** was met walking; the last component matched the others */
            int context = globstar ? TFSQL_IN_WALK : TFSQL_MATCHED;
            for (size_t i = 0; i < matches.n && rc == 0; i++) {
                const char *m = matches.items[i];
                int action = walk_action(m, context, err);
                if (action == TFSQL_WALK_REFUSE) {
                    rc = -1;
                } else if (action == TFSQL_WALK_DESCEND) {
                    int covered = 0;
                    for (size_t j = 0; j < listed_dirs.n && !covered; j++) {
                        size_t ln = strlen(listed_dirs.items[j]);
                        covered = strncmp(m, listed_dirs.items[j], ln) == 0 && m[ln] == '/';
                    }
                    if (covered) {
                        continue;
                    }
                    strlist_add(&listed_dirs, xstrdup(m));
                    rc = list_directory(m, root, &exempt, 1, &kept, err);
                } else if (action == TFSQL_WALK_READ && !is_description_path(m) &&
                           keep_path(m, root, &exempt)) {
                    rc = strlist_add(&kept, xstrdup(m));
                }
            }
            strlist ordered = {(char **)calloc(kept.n + 1, sizeof(char *)), 0, kept.n + 1};
            rc = rc == 0 && ordered.items != NULL ? plan_order(&kept, &ordered) : -1;
            for (size_t i = 0; i < ordered.n && rc == 0; i++) {
                rc = filelist_add(files, ordered.items[i], root, file_size(ordered.items[i]));
                ordered.items[i] = NULL;
            }
            strlist_free(&ordered);
            strlist_free(&listed_dirs);
        }
        size_t nkept = kept.n;
        strlist_free(&kept);
        strlist_free(&matches);
        strlist_free(&exempt);
        strlist_free(&comps);
        free(root);
        if (rc || nkept > 0) {
            free(path);
            if (rc && err[0] == 0) {
                snprintf(err, ERRLEN, "out of memory");
            }
            return rc;
        }
        /* nothing matched, but a file literally named with glob characters may exist */
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
    int action = walk_action(path, TFSQL_NAMED, err);
    if (action == TFSQL_WALK_REFUSE) {
        free(path);
        return -1;
    }
    if (action == TFSQL_WALK_DESCEND) {
        strlist found = {0};
        rc = list_directory(path, path, NULL, 1, &found, err);
        for (size_t i = 0; i < found.n && rc == 0; i++) {
            rc = filelist_add(files, found.items[i], path, file_size(found.items[i]));
            found.items[i] = NULL;
        }
        size_t nfound = found.n;
        strlist_free(&found);
        free(path);
        if (rc == 0 && nfound == 0) {
            snprintf(err, ERRLEN, "no files found in the directory '%s': it is empty or holds only "
                                  "hidden files (names starting with . or _); check the path", item);
            return 1;
        }
        if (rc && err[0] == 0) {
            snprintf(err, ERRLEN, "out of memory");
        }
        return rc;
    }
    return filelist_add(files, path, NULL, (int64_t)st.st_size);
}
