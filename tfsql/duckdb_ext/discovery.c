/*
 * tfsql/duckdb_ext/discovery.c -- paths, directories and globs -> the listing the core
 * plans (tfsql_plan: the data files, their order, layout and splits). Lists local paths
 * with opendir / stat; a path the binding routes (routed.c: on V2, DuckDB's file system
 * for s3://, memory://, ...) with its glob, a file being what opens. No DuckDB API.
 */

#include "ext_common.h"

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


/* The kind of the entry at `path` (tfsql_walk_action's ENTRY_*), links resolved, and its
 * stat (the target's for a link) in *st. */
static int entry_stat(const char *path, struct stat *st) {
    if (lstat(path, st) != 0) {
        return TFSQL_ENTRY_MISSING;
    }
    int link = S_ISLNK(st->st_mode);
    if (link && stat(path, st) != 0) {
        return TFSQL_ENTRY_MISSING;
    }
    if (S_ISDIR(st->st_mode)) {
        return link ? TFSQL_ENTRY_DIR_LINK : TFSQL_ENTRY_DIR;
    }
    return S_ISREG(st->st_mode) ? TFSQL_ENTRY_FILE : TFSQL_ENTRY_OTHER;
}

static int refuse(const char *path, char *err) {
    not_regular_message(err, path);
    return -1;
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

/* The content of the regular file at `path` when it holds at most `max` bytes (opened
 * without blocking: a FIFO never stalls the listing), malloc'ed with its size in *size;
 * else NULL. */
char *read_small_file(const char *path, size_t max, size_t *size) {
    int fd = path != NULL ? open(path, O_RDONLY | O_NONBLOCK) : -1;
    if (fd < 0) {
        return NULL;
    }
    struct stat st;
    char *data = NULL;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (uint64_t)st.st_size <= max) {
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
        struct stat st;
        int kind = entry_stat(child, &st);
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

/* The raw listing of every source item, for tfsql_plan: the entries and the strings
 * they point to (owned). */
typedef struct {
    tfsql_listed *items;
    size_t n, cap;
    strlist owned;
} listing;

static void listing_free(listing *l) {
    for (size_t i = 0; i < l->n; i++) {
        free((char *)l->items[i].path);
        free((char *)l->items[i].intent);
    }
    free(l->items);
    strlist_free(&l->owned);
    memset(l, 0, sizeof(*l));
}

/* A stat's size and modification time (whole seconds, as listed) for listing_add. */
#define STAT_SIZE_MTIME(st) (uint64_t)(st)->st_size, (uint64_t)(st)->st_mtime * 1000000000ull

/* Add the file `path` (taken) listed below `root` (NULL: named) from item `item`. */
static int listing_add(listing *l, char *path, const char *root, const char *pattern,
                       uint64_t size, uint64_t mtime_ns, size_t item, int fallback) {
    if (path == NULL) {
        return -1;
    }
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 64;
        tfsql_listed *items = (tfsql_listed *)realloc(l->items, cap * sizeof(tfsql_listed));
        if (items == NULL) {
            free(path);
            return -1;
        }
        l->items = items;
        l->cap = cap;
    }
    tfsql_listed *e = &l->items[l->n++];
    memset(e, 0, sizeof(*e));
    e->path = path;
    e->path_len = strlen(path);
    e->root = root;
    e->root_len = root ? strlen(root) : 0;
    e->pattern = pattern;
    e->pattern_len = pattern ? strlen(pattern) : 0;
    e->size = size;
    e->mtime_ns = mtime_ns;
    e->item = item;
    e->fallback = fallback;
    static const char suffix[] = "/" TFSQL_INTENT_NAME;
    size_t ls = sizeof(suffix) - 1, ilen = 0;
    if (root != NULL && e->path_len > ls && strcmp(path + e->path_len - ls, suffix) == 0) {
        const fsops *fs = fs_routed(path);
        char *data = NULL;
        if (fs != NULL) {
            fs_read_whole(fs, path, TFSQL_INTENT_MAX_BYTES, &data, &ilen);
        } else {
            data = read_small_file(path, TFSQL_INTENT_MAX_BYTES, &ilen);
        }
        e->intent = data; /* unreadable: the files as they are */
        e->intent_len = ilen;
    }
    return 0;
}

/* Every file below `dir` (recursively) into the listing, by the core's walk rule: links
 * to directories are not entered (a link loop is listed once), FIFOs and devices
 * refused. One stat per entry. */
static int walk_dir(const char *dir, const char *root, const char *pattern, size_t item, int fallback,
                    listing *out, char *err) {
    strlist children = {0};
    int rc = dir_children(dir, NULL, &children);
    for (size_t i = 0; i < children.n && rc == 0; i++) {
        struct stat st;
        int action = tfsql_walk_action(entry_stat(children.items[i], &st), TFSQL_IN_WALK);
        if (action == TFSQL_WALK_REFUSE) {
            rc = refuse(children.items[i], err);
        } else if (action == TFSQL_WALK_DESCEND) {
            rc = walk_dir(children.items[i], root, pattern, item, fallback, out, err);
        } else if (action == TFSQL_WALK_READ) {
            rc = listing_add(out, children.items[i], root, pattern, STAT_SIZE_MTIME(&st), item, fallback);
            children.items[i] = NULL;
        }
    }
    strlist_free(&children);
    return rc;
}

/* A path the user named (or a glob's literal path): a file, or a directory walked. */
static int list_named(const char *path, const char *item, size_t index, int fallback, listing *out,
                      char *err) {
    struct stat st;
    int action = tfsql_walk_action(entry_stat(path, &st), TFSQL_NAMED);
    if (action == TFSQL_WALK_REFUSE) {
        return refuse(path, err);
    }
    if (action == TFSQL_WALK_DESCEND) {
        return walk_dir(path, path, NULL, index, fallback, out, err);
    }
    if (action != TFSQL_WALK_READ) {
        no_such_path_message(err, item);
        return 1;
    }
    return listing_add(out, xstrdup(path), NULL, NULL, STAT_SIZE_MTIME(&st), index, fallback);
}

/* A glob's matches into the listing (the core says which directories to walk: one below
 * another walked match is listed with it), and its literal path as the fallback. */
static int list_glob(const char *path, const char *item, size_t index, listing *out, char *err) {
    strlist comps = {0};
    const char *s = path;
    while (*s) {
        size_t len;
        const char *c = next_component(&s, &len);
        if (len > 0 && strlist_add(&comps, xstrndup(c, len))) {
            strlist_free(&comps);
            return -1;
        }
    }
    /* the root (tfsql_glob_root; the path is absolute and normalised, so the root is
     * "/" or its first nroot components) */
    char *root = xstrndup(path, tfsql_glob_root(path, strlen(path)));
    int rc = strlist_add(&out->owned, root);
    char *pattern = rc == 0 ? xstrdup(path) : NULL;
    rc = rc ? rc : strlist_add(&out->owned, pattern);
    int nroot = 0, globstar = 0;
    for (const char *r = root; rc == 0 && *r; r++) {
        nroot += *r == '/' && r[1] != 0;
    }
    for (size_t k = (size_t)nroot; rc == 0 && k < comps.n; k++) {
        globstar |= strcmp(comps.items[k], "**") == 0;
    }
    strlist matches = {0};
    rc = rc ? rc : glob_walk(root, comps.items + nroot, (int)comps.n - nroot, 0, &matches);
    size_t *lens = (size_t *)malloc((matches.n + 1) * sizeof(size_t));
    int *kinds = (int *)malloc((matches.n + 1) * sizeof(int));
    int *actions = (int *)malloc((matches.n + 1) * sizeof(int));
    struct stat *sts = (struct stat *)malloc((matches.n + 1) * sizeof(struct stat));
    rc = rc == 0 && lens && kinds && actions && sts ? 0 : -1;
    for (size_t i = 0; rc == 0 && i < matches.n; i++) {
        lens[i] = strlen(matches.items[i]);
        kinds[i] = entry_stat(matches.items[i], &sts[i]);
    }
    rc = rc ? rc : tfsql_plan_matches((const char *const *)matches.items, lens, kinds, matches.n, globstar,
                                      actions);
    for (size_t i = 0; rc == 0 && i < matches.n; i++) {
        if (actions[i] == TFSQL_WALK_REFUSE) {
            rc = refuse(matches.items[i], err);
        } else if (actions[i] == TFSQL_WALK_DESCEND) {
            rc = walk_dir(matches.items[i], root, pattern, index, 0, out, err);
        } else if (actions[i] == TFSQL_WALK_READ) {
            rc = listing_add(out, matches.items[i], root, pattern, STAT_SIZE_MTIME(&sts[i]), index, 0);
            matches.items[i] = NULL;
        }
    }
    size_t nmatches = matches.n;
    free(lens);
    free(kinds);
    free(actions);
    free(sts);
    strlist_free(&matches);
    strlist_free(&comps);
    struct stat st;
    if (rc == 0 && stat(path, &st) == 0) {
        /* a file literally named with glob characters: read when the glob keeps none */
        rc = list_named(path, item, index, 1, out, err);
    } else if (rc == 0 && nmatches == 0) {
        rc = 1;
    }
    return rc;
}

/* Why source item `item` (its absolute form `path`) names no data file. */
static void empty_item_error(const char *item, const char *path, int glob, char *err) {
    no_data_message(err, ERRLEN, item, glob && has_glob_magic(path));
}

/* -- routed paths (routed.c): listed through the binding's file system ------------------- */

/* 1 with *size when the routed `path` is a file (it opens), else 0 (a directory, nothing,
 * or a file system that cannot be reached: its message in err). */
static int routed_file(const fsops *fs, const char *path, uint64_t *size, char *err) {
    void *h = fs->open(path, FS_READ, size, err);
    if (h == NULL) {
        return 0;
    }
    fs->close(h);
    return 1;
}

/* The paths the routed glob `pattern` matches, spelled as `pattern` is. */
static int routed_glob(const fsops *fs, const char *pattern, strlist *out, char *err) {
    strlist got = {0};
    int rc = fs->glob(pattern, &got, err);
    for (size_t i = 0; rc == 0 && i < got.n; i++) {
        rc = strlist_add(out, fs_same_spelling(pattern, got.items[i]));
    }
    strlist_free(&got);
    return rc;
}

/* Every file below the routed directory `dir` (its "**" glob: the entries that open as
 * files) into the listing; *seen: how many entries the glob gave (0: no such directory). */
static int routed_walk(const fsops *fs, const char *dir, const char *root, const char *pattern,
                       size_t item, listing *out, size_t *seen, char *err) {
    size_t n = strlen(dir);
    char *all = xprintf("%s%s**", dir, n > 0 && dir[n - 1] == '/' ? "" : "/");
    strlist entries = {0};
    int rc = all == NULL ? -1 : routed_glob(fs, all, &entries, err);
    *seen = entries.n;
    for (size_t i = 0; rc == 0 && i < entries.n; i++) {
        uint64_t size = 0;
        char why[ERRLEN];
        if (routed_file(fs, entries.items[i], &size, why)) {
            rc = listing_add(out, entries.items[i], root, pattern, size, 0, item, 0);
            entries.items[i] = NULL;
        }
    }
    strlist_free(&entries);
    free(all);
    return rc;
}

/* A routed glob's matches into the listing, as list_glob does for local ones: files
 * (those that open) read, directories walked where the core says. 1 when none match. */
static int routed_list_glob(const fsops *fs, const char *path, size_t index, listing *out, char *err) {
    char *root = xstrndup(path, tfsql_glob_root(path, strlen(path)));
    int rc = strlist_add(&out->owned, root);
    char *pattern = rc == 0 ? xstrdup(path) : NULL;
    rc = rc ? rc : strlist_add(&out->owned, pattern);
    int globstar = 0;
    for (const char *c = rc == 0 ? path + strlen(root) : ""; *c; c++) {
        globstar |= c[0] == '/' && c[1] == '*' && c[2] == '*' && (c[3] == '/' || c[3] == 0);
    }
    strlist matches = {0};
    rc = rc ? rc : routed_glob(fs, path, &matches, err);
    size_t n = matches.n;
    size_t *lens = (size_t *)malloc((n + 1) * sizeof(size_t));
    int *kinds = (int *)malloc((n + 1) * sizeof(int));
    int *actions = (int *)malloc((n + 1) * sizeof(int));
    uint64_t *sizes = (uint64_t *)calloc(n + 1, sizeof(uint64_t));
    rc = rc == 0 && lens && kinds && actions && sizes ? 0 : -1;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        char why[ERRLEN];
        lens[i] = strlen(matches.items[i]);
        kinds[i] = routed_file(fs, matches.items[i], &sizes[i], why) ? TFSQL_ENTRY_FILE : TFSQL_ENTRY_DIR;
    }
    rc = rc ? rc : tfsql_plan_matches((const char *const *)matches.items, lens, kinds, n, globstar, actions);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        size_t seen = 0;
        if (actions[i] == TFSQL_WALK_DESCEND) {
            rc = routed_walk(fs, matches.items[i], root, pattern, index, out, &seen, err);
        } else if (actions[i] == TFSQL_WALK_READ) {
            rc = listing_add(out, matches.items[i], root, pattern, sizes[i], 0, index, 0);
            matches.items[i] = NULL;
        }
    }
    free(lens);
    free(kinds);
    free(actions);
    free(sizes);
    strlist_free(&matches);
    return rc == 0 && n == 0 ? 1 : rc;
}

/* A routed source item: a glob, a file, or a directory walked. 1 when it names nothing. */
static int list_routed(const fsops *fs, const char *path, const char *item, size_t index, int glob,
                       listing *out, char *err) {
    if (glob && has_glob_magic(path)) {
        return routed_list_glob(fs, path, index, out, err);
    }
    uint64_t size = 0;
    char why[ERRLEN] = "";
    if (routed_file(fs, path, &size, why)) {
        return listing_add(out, xstrdup(path), NULL, NULL, size, 0, index, 0);
    }
    size_t seen = 0;
    int rc = routed_walk(fs, path, path, NULL, index, out, &seen, err);
    if (rc < 0 && why[0] != 0) { /* no directory either: the file's own error */
        snprintf(err, ERRLEN, "%s", why);
    }
    if (rc == 0 && seen == 0) {
        no_such_path_message(err, item);
        return 1;
    }
    return rc;
}

int list_sources(const char *const *items, size_t nitems, int glob, long long infer_files, tfbind *b,
                 char *err) {
    listing l = {0};
    strlist paths = {0};
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < nitems; i++) {
        char *expanded = fs_expand(items[i], err); /* '~' where the binding expands it */
        const fsops *fs = fs_routed(expanded);
        char *path = fs != NULL ? expanded : expanded != NULL ? abs_path(expanded) : NULL;
        if (fs == NULL) {
            free(expanded);
        }
        if (path == NULL || strlist_add(&paths, path)) {
            rc = -1;
            break;
        }
        if (fs != NULL) {
            rc = list_routed(fs, path, items[i], i, glob, &l, err);
            if (rc == 1 && glob && has_glob_magic(path)) {
                empty_item_error(items[i], path, glob, err);
            }
        } else if (glob && has_glob_magic(path)) {
            rc = list_glob(path, items[i], i, &l, err);
            if (rc == 1) {
                empty_item_error(items[i], path, glob, err);
            }
        } else {
            rc = list_named(path, items[i], i, 0, &l, err);
        }
    }
    tfsql_plan_result r;
    int planned = rc == 0 && tfsql_plan(l.items, l.n, nitems, NULL, 0, infer_files, &r) == TFSQL_PLAN_OK;
    rc = rc ? rc : planned ? 0 : -1;
    if (rc == 0 && r.empty_item >= 0) {
        empty_item_error(items[r.empty_item], paths.items[r.empty_item], glob, err);
        rc = 1;
    }
    for (size_t i = 0; rc == 0 && i < r.n; i++) {
        const tfsql_listed *e = &l.items[r.files[i]];
        rc = filelist_add(&b->files, xstrdup(e->path), e->root, (int64_t)e->size);
    }
    b->layout = rc == 0 ? r.layout : LAYOUT_NONE;
    if (rc == 0 && r.layout != TFSQL_LAYOUT_NONE) {
        b->splits = (char **)calloc(r.n + 1, sizeof(char *));
        rc = b->splits == NULL ? -1 : 0;
        for (size_t i = 0; rc == 0 && i < r.n; i++) {
            b->splits[i] = xstrndup(l.items[r.files[i]].path + r.split_start[i], r.split_len[i]);
            rc = b->splits[i] == NULL ? -1 : 0;
        }
    }
    if (rc == 0) {
        b->picks = (size_t *)malloc((r.npicks + 1) * sizeof(size_t));
        rc = b->picks == NULL ? -1 : 0;
        for (size_t i = 0; rc == 0 && i < r.npicks; i++) {
            b->picks[i] = r.picks[i];
        }
        b->npicks = rc == 0 ? r.npicks : 0;
    }
    if (rc == 0 && r.has_tfds_dir) {
        b->tfds_dir = xstrndup(l.items[r.files[0]].path, r.tfds_dir_len);
        rc = b->tfds_dir == NULL ? -1 : 0;
    }
    if (planned) {
        tfsql_plan_result_free(&r);
    }
    listing_free(&l);
    strlist_free(&paths);
    if (rc < 0 && err[0] == 0) {
        snprintf(err, ERRLEN, "out of memory");
    }
    return rc;
}
