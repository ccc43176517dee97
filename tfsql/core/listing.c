/*
 * tfsql/core/listing.c -- the dataset plan over a binding's whole listing (tfsql_plan):
 * which glob matches a listing walks (a directory below another match is already
 * covered), then the data files (the intent view, the hidden rules, the hidden
 * prefixes), per source item by bytes, repeats dropped; a glob's literal fallback; the
 * TFDS / TFX layout (metadata dropped, the split of each file, the shards' directory);
 * the files inference samples. Both bindings list, this decides.
 */

#include "core_internal.h"

#include <string.h>

/* a and b compared as bytes with '/' below every other byte: a directory's descendants
 * ("a/...") follow it at once, before its siblings ("a-b"). */
static int compare_tree(const char *a, size_t an, const char *b, size_t bn) {
    size_t n = an < bn ? an : bn;
    for (size_t i = 0; i < n; i++) {
        unsigned x = (uint8_t)a[i], y = (uint8_t)b[i];
        if (x != y) {
            x = x == '/' ? 0 : x;
            y = y == '/' ? 0 : y;
            return x < y ? -1 : 1;
        }
    }
    return an < bn ? -1 : an > bn;
}

typedef struct {
    const char *p;
    size_t n, index;
} keyed;

static int keyed_tree_order(const void *x, const void *y) {
    const keyed *a = (const keyed *)x, *b = (const keyed *)y;
    int c = compare_tree(a->p, a->n, b->p, b->n);
    return c != 0 ? c : (a->index > b->index) - (a->index < b->index);
}

int tfsql_plan_matches(const char *const *paths, const size_t *lens, const int *kinds, size_t n,
                       int globstar, int *actions) {
    keyed *dirs = (keyed *)malloc((n ? n : 1) * sizeof(keyed));
    if (dirs == NULL) {
        return -1;
    }
    size_t nd = 0;
    for (size_t i = 0; i < n; i++) {
        /* a match of ** was met walking; a last component matched the others itself */
        actions[i] = tfsql_walk_action(kinds[i], globstar ? TFSQL_IN_WALK : TFSQL_MATCHED);
        size_t len = lens[i];
        while (len > 1 && paths[i][len - 1] == '/') {
            len--;
        }
        if (actions[i] == TFSQL_WALK_DESCEND) {
            dirs[nd].p = paths[i];
            dirs[nd].n = len;
            dirs[nd++].index = i;
        }
    }
    qsort(dirs, nd, sizeof(keyed), keyed_tree_order);
    const keyed *listed = NULL; /* the last directory walked: its descendants follow it */
    for (size_t k = 0; k < nd; k++) {
        const keyed *d = &dirs[k];
        size_t ln = listed ? listed->n : 0;
        int covered = listed != NULL && d->n > ln && memcmp(d->p, listed->p, ln) == 0 &&
                      (d->p[ln] == '/' || (ln == 1 && listed->p[0] == '/'));
        if (covered || (listed != NULL && d->n == ln && memcmp(d->p, listed->p, ln) == 0)) {
            actions[d->index] = TFSQL_WALK_SKIP; /* its files are listed with the walked one */
        } else {
            listed = d;
        }
    }
    free(dirs);
    return 0;
}

/* -- tfsql_plan -------------------------------------------------------------------- */

typedef struct {
    const tfsql_listed *e;
    char *view;      /* the path the rules see (an old file in a trash: its old place), owned */
    size_t view_len; /* or the entry's own path */
    size_t index;
    int dropped;
} planned;

static const char *view_of(const planned *f, size_t *len) {
    *len = f->view ? f->view_len : f->e->path_len;
    return f->view ? f->view : f->e->path;
}

/* The directory part of p[0..n) (without its last '/'), its length. */
static size_t dir_len(const char *p, size_t n) {
    while (n > 0 && p[n - 1] != '/') {
        n--;
    }
    return n > 0 ? n - 1 : 0;
}

static int is_below(const char *p, size_t n, const char *dir, size_t dn) {
    return n > dn && memcmp(p, dir, dn) == 0 && p[dn] == '/';
}

/* The intent view (tfsql.commit.pending_view): a prepared record's directory is read as
 * its rollback leaves it. Only listed files (root set) are judged. */
static int compare_rels(const void *x, const void *y) {
    const char *a = **(const char *const *const *)x, *b = **(const char *const *const *)y;
    int c = strcmp(a, b);
    return c != 0 ? c : (*(const char *const *const *)x > *(const char *const *const *)y) -
                            (*(const char *const *const *)x < *(const char *const *const *)y);
}

static int apply_intents(planned *fs, size_t n) {
    int rc = 0;
    for (size_t r = 0; r < n && rc == 0; r++) {
        const tfsql_listed *rec = fs[r].e;
        if (rec->intent == NULL || rec->root == NULL) {
            continue;
        }
        tfsql_intent *intent = tfsql_intent_parse(rec->intent, rec->intent_len, NULL, 0);
        if (intent == NULL || !tfsql_intent_prepared(intent)) {
            tfsql_intent_free(intent);
            continue; /* unreadable, not tfsql's, or committed: read the files as they are */
        }
        size_t dn = dir_len(rec->path, rec->path_len);
        /* the files below the record's directory, by relative path; a path listed twice
         * (a ** match inside a walked directory) is judged once and both follow */
        const char **rels = (const char **)malloc((n + 1) * sizeof(char *));
        const char ***by_rel = (const char ***)malloc((n + 1) * sizeof(char **));
        const char **unique = (const char **)malloc((n + 1) * sizeof(char *));
        int *actions = (int *)malloc((n + 1) * sizeof(int));
        size_t *old = (size_t *)malloc((n + 1) * sizeof(size_t));
        size_t m = 0, u = 0;
        rc = rels && by_rel && unique && actions && old ? 0 : -1;
        for (size_t i = 0; rc == 0 && i < n; i++) {
            const tfsql_listed *e = fs[i].e;
            rels[i] = NULL;
            if (e->root != NULL && e->item == rec->item && is_below(e->path, e->path_len, rec->path, dn)) {
                rels[i] = e->path + dn + 1;
                by_rel[m++] = &rels[i];
            }
        }
        if (rc == 0) {
            qsort(by_rel, m, sizeof(char **), compare_rels);
        }
        for (size_t k = 0; rc == 0 && k < m; k++) {
            if (u == 0 || strcmp(unique[u - 1], *by_rel[k]) != 0) {
                unique[u++] = *by_rel[k];
            }
        }
        rc = rc ? rc : tfsql_intent_view(intent, unique, u, actions, old);
        for (size_t k = 0, j = 0; rc == 0 && k < m; k++) {
            while (strcmp(unique[j], *by_rel[k]) != 0) {
                j++;
            }
            planned *f = &fs[by_rel[k] - rels];
            if (actions[j] == TFSQL_VIEW_LEAVE_OUT) {
                f->dropped = 1;
            } else if (actions[j] == TFSQL_VIEW_MOVED) {
                size_t tail = strlen(unique[j] + old[j]);
                free(f->view);
                f->view = (char *)malloc(dn + 2 + tail);
                rc = f->view == NULL ? -1 : 0;
                if (rc == 0) {
                    memcpy(f->view, rec->path, dn + 1);
                    memcpy(f->view + dn + 1, unique[j] + old[j], tail + 1);
                    f->view_len = dn + 1 + tail;
                }
            }
        }
        free(rels);
        free(by_rel);
        free(unique);
        free(actions);
        free(old);
        tfsql_intent_free(intent);
    }
    return rc;
}

static void free_list(char **list, size_t n) {
    for (size_t i = 0; list != NULL && i < n; i++) {
        free(list[i]);
    }
    free(list);
}

/* The glob components of `pattern` below its root that opt hidden names back in
 * (tfsql_glob_exempts), as NUL-terminated copies in *out. */
static int exempt_components(const char *pattern, size_t n, char ***out, size_t *count) {
    size_t root = tfsql_glob_root(pattern, n);
    char **list = (char **)calloc(n + 1, sizeof(char *));
    size_t k = 0;
    if (list == NULL) {
        return -1;
    }
    for (size_t i = root; i < n;) {
        while (i < n && pattern[i] == '/') {
            i++;
        }
        size_t j = i;
        while (j < n && pattern[j] != '/') {
            j++;
        }
        if (j > i && tfsql_glob_exempts(pattern + i, j - i)) {
            list[k] = (char *)malloc(j - i + 1);
            if (list[k] == NULL) {
                free_list(list, k);
                return -1;
            }
            memcpy(list[k], pattern + i, j - i);
            list[k++][j - i] = '\0';
        }
        i = j;
    }
    *out = list;
    *count = k;
    return 0;
}

/* The path of p below root (root "" or "/" is the whole path without leading '/'). */
static const char *below_root(const char *p, size_t n, const char *root, size_t rn, size_t *len) {
    if (rn == 0 || (rn == 1 && root[0] == '/')) {
        while (n > 0 && *p == '/') {
            p++;
            n--;
        }
    } else if (is_below(p, n, root, rn)) {
        p += rn + 1;
        n -= rn + 1;
    }
    *len = n;
    return p;
}

/* The exemptions of the last pattern seen (entries of one item share their pattern). */
typedef struct {
    const char *pattern;
    size_t pattern_len;
    char **exempt;
    size_t nexempt;
} exemptions;

/* 1 when the listed (not named) file f is data: not a writer's column description
 * (tfsql_is_description_name), the hidden rule below its root, with the exemptions of
 * its item's glob, and the hidden prefixes on its name. */
static int keep_file(const planned *f, const char *const *prefixes, size_t nprefixes, exemptions *ex,
                     int *nomem) {
    const tfsql_listed *e = f->e;
    if (e->root == NULL) {
        return 1; /* a file the user names is read whatever its name */
    }
    size_t name_start = e->path_len;
    while (name_start > 0 && e->path[name_start - 1] != '/') {
        name_start--;
    }
    if (tfsql_is_description_name(e->path + name_start, e->path_len - name_start)) {
        return 0;
    }
    for (size_t k = 0; k < nprefixes; k++) {
        size_t pn = strlen(prefixes[k]);
        if (e->path_len - name_start >= pn && memcmp(e->path + name_start, prefixes[k], pn) == 0) {
            return 0;
        }
    }
    int same = e->pattern == ex->pattern ||
               (e->pattern != NULL && ex->pattern != NULL && e->pattern_len == ex->pattern_len &&
                memcmp(e->pattern, ex->pattern, e->pattern_len) == 0);
    if (!same) {
        free_list(ex->exempt, ex->nexempt);
        ex->exempt = NULL;
        ex->nexempt = 0;
        ex->pattern = e->pattern;
        ex->pattern_len = e->pattern_len;
        if (e->pattern != NULL && exempt_components(e->pattern, e->pattern_len, &ex->exempt, &ex->nexempt)) {
            ex->pattern = NULL;
            *nomem = 1;
            return 0;
        }
    }
    size_t vn, rn;
    const char *v = view_of(f, &vn);
    const char *rel = below_root(v, vn, e->root, e->root_len, &rn);
    return tfsql_keep_listed(rel, rn, (const char *const *)(ex->pattern ? ex->exempt : NULL),
                             ex->pattern ? ex->nexempt : 0);
}

static int planned_order(const void *x, const void *y) {
    const planned *a = *(const planned *const *)x, *b = *(const planned *const *)y;
    if (a->e->item != b->e->item) {
        return a->e->item < b->e->item ? -1 : 1;
    }
    size_t an, bn;
    const char *ap = view_of(a, &an), *bp = view_of(b, &bn);
    int c = tfsql_path_compare(ap, an, bp, bn);
    return c != 0 ? c : (a->index > b->index) - (a->index < b->index);
}

typedef struct {
    const tfsql_listed *e;
    size_t pos; /* its place in the plan's order */
} placed;

static int placed_by_path(const void *x, const void *y) {
    const placed *a = (const placed *)x, *b = (const placed *)y;
    int c = tfsql_path_compare(a->e->path, a->e->path_len, b->e->path, b->e->path_len);
    return c != 0 ? c : (a->pos > b->pos) - (a->pos < b->pos);
}

/* Drop repeats of a path: the first in the plan's order is kept (an earlier item's). */
static int drop_repeats(planned **order, size_t *n) {
    size_t m = *n;
    placed *byp = (placed *)malloc((m ? m : 1) * sizeof(placed));
    char *repeat = (char *)calloc(m ? m : 1, 1);
    if (byp == NULL || repeat == NULL) {
        free(byp);
        free(repeat);
        return -1;
    }
    for (size_t i = 0; i < m; i++) {
        byp[i].e = order[i]->e;
        byp[i].pos = i;
    }
    qsort(byp, m, sizeof(placed), placed_by_path);
    for (size_t i = 1; i < m; i++) {
        const tfsql_listed *a = byp[i - 1].e, *b = byp[i].e;
        repeat[byp[i].pos] = a->path_len == b->path_len && memcmp(a->path, b->path, a->path_len) == 0;
    }
    size_t k = 0;
    for (size_t i = 0; i < m; i++) {
        if (!repeat[i]) {
            order[k++] = order[i];
        }
    }
    free(byp);
    free(repeat);
    *n = k;
    return 0;
}

/* The name of a listed file (after its last '/') and the length of its directory. */
static const char *name_of(const tfsql_listed *e, size_t *name_len, size_t *dir) {
    *dir = dir_len(e->path, e->path_len);
    size_t start = *dir + (*dir > 0 || e->path[0] == '/');
    *name_len = e->path_len - start;
    return e->path + start;
}

/* TFDS metadata (tfsql_is_tfds_metadata_name) of listed directories that hold
 * dataset_info.json is not data. */
static int drop_tfds_metadata(planned **order, size_t *n) {
    size_t m = *n, k = 0, ninfo = 0, nn, d;
    char *drop = (char *)calloc(m ? m : 1, 1);
    const tfsql_listed **info = (const tfsql_listed **)malloc((m ? m : 1) * sizeof(*info));
    if (drop == NULL || info == NULL) {
        free(drop);
        free(info);
        return -1;
    }
    for (size_t i = 0; i < m; i++) {
        const tfsql_listed *e = order[i]->e;
        const char *name = name_of(e, &nn, &d);
        if (e->root != NULL && tfsql_is_tfds_info_name(name, nn)) {
            info[ninfo++] = e;
        }
    }
    for (size_t i = 0; i < m && ninfo > 0; i++) {
        const tfsql_listed *e = order[i]->e;
        const char *name = name_of(e, &nn, &d);
        for (size_t j = 0; e->root != NULL && tfsql_is_tfds_metadata_name(name, nn) && j < ninfo && !drop[i]; j++) {
            drop[i] = dir_len(info[j]->path, info[j]->path_len) == d && memcmp(info[j]->path, e->path, d) == 0;
        }
    }
    for (size_t i = 0; i < m; i++) {
        if (!drop[i]) {
            order[k++] = order[i];
        }
    }
    free(drop);
    free(info);
    *n = k;
    return 0;
}

/* The layout of the planned files: kind, split slices, the TFDS shards' directory. */
static int plan_layout(planned **order, size_t n, tfsql_plan_result *out) {
    const char **paths = (const char **)malloc((n ? n : 1) * sizeof(char *));
    char **dirs = (char **)calloc(n ? n : 1, sizeof(char *));
    int rc = paths != NULL && dirs != NULL ? 0 : -1;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        const tfsql_listed *e = order[i]->e;
        paths[i] = e->path;
        if (e->root != NULL) {
            size_t start, len;
            tfsql_hive_directory(e->path, e->root, TFSQL_HIVE_BELOW_ROOT, &start, &len);
            dirs[i] = (char *)malloc(len + 1);
            rc = dirs[i] == NULL ? -1 : 0;
            if (rc == 0) {
                memcpy(dirs[i], e->path + start, len);
                dirs[i][len] = '\0';
            }
        }
    }
    out->layout = rc == 0 ? tfsql_detect_layout(paths, (const char *const *)dirs, n) : 0;
    if (rc == 0 && out->layout != TFSQL_LAYOUT_NONE) {
        out->split_start = (size_t *)malloc(n * sizeof(size_t));
        out->split_len = (size_t *)malloc(n * sizeof(size_t));
        rc = out->split_start && out->split_len ? 0 : -1;
    }
    for (size_t i = 0; rc == 0 && out->layout != TFSQL_LAYOUT_NONE && i < n; i++) {
        const tfsql_listed *e = order[i]->e;
        size_t start = 0, len = 0, dstart, dlen;
        if (out->layout == TFSQL_LAYOUT_TFDS) {
            tfsql_tfds_split(e->path, e->path_len, &start, &len);
        } else {
            tfsql_hive_directory(e->path, e->root, TFSQL_HIVE_BELOW_ROOT, &dstart, &dlen);
            tfsql_tfx_split(e->path + dstart, dlen, &start, &len);
            start += dstart;
        }
        out->split_start[i] = start;
        out->split_len[i] = len;
    }
    if (rc == 0 && out->layout == TFSQL_LAYOUT_TFDS) {
        const tfsql_listed *first = order[0]->e;
        size_t d = dir_len(first->path, first->path_len);
        out->has_tfds_dir = 1;
        for (size_t i = 1; i < n && out->has_tfds_dir; i++) {
            const tfsql_listed *e = order[i]->e;
            out->has_tfds_dir = dir_len(e->path, e->path_len) == d && memcmp(e->path, first->path, d) == 0;
        }
        out->tfds_dir_len = out->has_tfds_dir ? d : 0;
    }
    for (size_t i = 0; dirs != NULL && i < n; i++) {
        free(dirs[i]);
    }
    free(dirs);
    free(paths);
    return rc;
}

void tfsql_plan_result_free(tfsql_plan_result *r) {
    free(r->files);
    free(r->split_start);
    free(r->split_len);
    free(r->picks);
    memset(r, 0, sizeof(*r));
}

int tfsql_plan(const tfsql_listed *entries, size_t n, size_t nitems, const char *const *prefixes,
               size_t nprefixes, long long infer_files, tfsql_plan_result *out) {
    memset(out, 0, sizeof(*out));
    out->empty_item = -1;
    planned *fs = (planned *)calloc(n ? n : 1, sizeof(planned));
    planned **order = (planned **)malloc((n ? n : 1) * sizeof(planned *));
    size_t *kept = (size_t *)calloc(nitems ? nitems : 1, sizeof(size_t));
    int nomem = fs == NULL || order == NULL || kept == NULL;
    for (size_t i = 0; !nomem && i < n; i++) {
        fs[i].e = &entries[i];
        fs[i].index = i;
    }
    nomem = nomem || apply_intents(fs, n) != 0;
    size_t m = 0;
    exemptions ex = {NULL, 0, NULL, 0};
    for (size_t i = 0; !nomem && i < n; i++) {
        if (!fs[i].dropped && entries[i].item < nitems && keep_file(&fs[i], prefixes, nprefixes, &ex, &nomem)) {
            order[m++] = &fs[i];
            kept[entries[i].item] += !entries[i].fallback;
        }
    }
    free_list(ex.exempt, ex.nexempt);
    /* a glob's literal path is read only when the glob keeps nothing */
    size_t k = 0;
    for (size_t i = 0; !nomem && i < m; i++) {
        const tfsql_listed *e = order[i]->e;
        if (!e->fallback || kept[e->item] == 0) {
            order[k++] = order[i];
        }
    }
    m = k;
    for (size_t i = 0; !nomem && i < nitems; i++) {
        kept[i] = 0;
    }
    for (size_t i = 0; !nomem && i < m; i++) {
        kept[order[i]->e->item]++;
    }
    for (size_t i = 0; !nomem && i < nitems && out->empty_item < 0; i++) {
        out->empty_item = kept[i] == 0 ? (long)i : -1;
    }
    if (!nomem) {
        qsort(order, m, sizeof(planned *), planned_order);
        nomem = drop_repeats(order, &m) != 0;
    }
    if (!nomem) {
        nomem = drop_tfds_metadata(order, &m) != 0;
    }
    if (!nomem) {
        out->files = (size_t *)malloc((m ? m : 1) * sizeof(size_t));
        int64_t *sizes = (int64_t *)malloc((m ? m : 1) * sizeof(int64_t));
        out->picks = (size_t *)malloc((m ? m : 1) * sizeof(size_t));
        nomem = out->files == NULL || sizes == NULL || out->picks == NULL;
        for (size_t i = 0; !nomem && i < m; i++) {
            out->files[i] = order[i]->index;
            sizes[i] = (int64_t)order[i]->e->size;
        }
        out->n = nomem ? 0 : m;
        out->npicks = nomem ? 0 : infer_pick_files(sizes, m, infer_files, out->picks);
        free(sizes);
    }
    nomem = nomem || (m > 0 && plan_layout(order, m, out) != 0);
    for (size_t i = 0; fs != NULL && i < n; i++) {
        free(fs[i].view);
    }
    free(fs);
    free(order);
    free(kept);
    if (nomem) {
        tfsql_plan_result_free(out);
        return TFSQL_PLAN_NOMEM;
    }
    return TFSQL_PLAN_OK;
}
