/*
 * tfsql/duckdb_ext/copy_files.c -- the files of COPY ... TO (FORMAT tfrecord), for both
 * DuckDB bindings (v1 copy_to.c, V2 tfsql/duckdb_v2/copy_to.c): a file's final name and
 * compression, its hidden temporary name, its INDEX sidecar, the target's lock
 * (copy_lock.c), writing framed records (compressed when asked), and the commit: synced,
 * then renamed into place with its index.
 *
 * A target the binding routes to its engine's file system (routed.c: on V2 a URL, such as
 * memory://out or s3://b/out, goes to DuckDB's) is written through it the same way (a
 * hidden temporary file moved into place), without the lock: an object store has no
 * flock, and tfsql.locking takes none on fsspec file systems either.
 *
 * DuckDB names each file (PARTITION_BY, FILENAME_PATTERN, FILE_EXTENSION, OVERWRITE's
 * 'tmp_<name>'); the binding hands that name to copyfile_open and the records of each
 * batch to copyfile_put; copyfile_commit ends the file. A 'tmp_<name>' file DuckDB moves
 * to <name> at the statement's end gets its index moved after it (copy_target_end).
 *
 *     copy_target t;  copy_target_init(&t, NULL);
 *     copyfile *f = copyfile_open(&t, &settings, "out/p=0/data_0.tfrecord", err);
 *     copyfile_put(f, &framed, &ends, n, err);  copyfile_commit(&t, f, err);
 *     copyfile_free(f);  copy_target_end(&t);
 */
#include "ext_common.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ------------------------------------------------------------------------------------ */
/* Names                                                                                */
/* ------------------------------------------------------------------------------------ */

static unsigned long temp_counter;
static pthread_mutex_t temp_lock = PTHREAD_MUTEX_INITIALIZER;

/* '.<name>.tfsql-tmp-<pid>-<n>' beside `path`: hidden, so no reader lists it. */
static char *temp_name(const char *path) {
    pthread_mutex_lock(&temp_lock);
    unsigned long n = ++temp_counter;
    pthread_mutex_unlock(&temp_lock);
    const char *slash = strrchr(path, '/');
    int dir_len = slash ? (int)(slash - path + 1) : 0;
    return xprintf("%.*s.%s.tfsql-tmp-%ld-%lu", dir_len, path, slash ? slash + 1 : path,
                   (long)getpid(), n);
}


/* The index of a routed file: DuckDB's 'tmp_<name>' (OVERWRITE of a single file) gets the
 * index of <name> at once, as the statement's end (copy_target_end) runs outside any
 * callback, where the binding's file system cannot be reached to move it then. */
static char *routed_index_name(const char *path) {
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    if (strncmp(base, "tmp_", 4) != 0 || base[4] == 0) {
        return index_sidecar(path);
    }
    char *moved = xprintf("%.*s%s", (int)(base - path), path, base + 4);
    char *index = moved != NULL ? index_sidecar(moved) : NULL;
    free(moved);
    return index;
}

static const char *compression_suffix(int compression) {
    return compression == COMP_GZIP ? ".gz" : compression == COMP_ZLIB ? ".zz" : "";
}

static char *normal_path(const char *path);

/* 1 when `path` is a file DuckDB named inside the directory target `root` (not the
 * target itself nor its 'tmp_<name>': a single-file target keeps the name written). */
static int named_by_duckdb(const char *root, const char *path) {
    char *t = normal_path(root), *p = normal_path(path);
    size_t tn = t != NULL ? strlen(t) : 0;
    int inside = t != NULL && p != NULL && strncmp(p, t, tn) == 0 && p[tn] == '/';
    free(t);
    free(p);
    return inside;
}

/* The name a file DuckDB calls `path` gets: DuckDB's name, with the TFRecord extension
 * after a final '.' (DuckDB's name when the function declares no extension and the
 * statement gives no FILE_EXTENSION: the v1 API), and -- when the target says so
 * (compress_named) -- the compression's suffix after a '.tfrecord' DuckDB chose. */
static char *final_name(const copy_target *t, const char *path, int compression) {
    size_t n = strlen(path);
    if (n > 0 && path[n - 1] == '.' && (n == 1 || path[n - 2] != '/')) {
        return xprintf("%stfrecord%s", path, compression_suffix(compression));
    }
    if (t->compress_named && compression != COMP_NONE && ends_with_ci(path, ".tfrecord") &&
        t->root != NULL && named_by_duckdb(t->root, path)) {
        return xprintf("%s%s", path, compression_suffix(compression));
    }
    return xstrdup(path);
}

/* A name that says a compression holds that one (tfsql.naming.check_name_compression). */
static int check_file_name(const char *final_path, int compression, char *err) {
    size_t k = 0;
    int said = name_compression(final_path, &k);
    if (said != COMP_NONE && said != compression) {
        static const char *const names[] = {"none", "gzip", "zlib"};
        size_t n = strlen(final_path);
        snprintf(err, ERRLEN,
                 "COPY ... TO (FORMAT tfrecord): '%s' ends in '%s', which says %s, but the file "
                 "would hold %s (COMPRESSION %s): name it '%.*s%s' or give COMPRESSION %s",
                 final_path, final_path + n - k, names[said],
                 compression == COMP_NONE ? "no compression" : names[compression], names[compression],
                 (int)(n - k), final_path, compression_suffix(compression), names[said]);
        return -1;
    }
    return 0;
}

/* `path` made absolute (against the working directory) and lexically normal: no '.',
 * '..' or empty components. A new string. */
static char *normal_path(const char *path) {
    char cwd[PATH_MAX];
    const char *scheme = fs_routed(path) != NULL ? strstr(path, "://") : NULL;
    if (scheme != NULL) { /* a URL: its scheme kept, the rest normal as an absolute path */
        char *rest = normal_path(scheme + 2);
        char *r = rest != NULL ? xprintf("%.*s:/%s", (int)(scheme - path), path, rest) : NULL;
        free(rest);
        return r;
    }
    char *whole = path[0] == '/' ? xstrdup(path)
                                 : (getcwd(cwd, sizeof(cwd)) ? xprintf("%s/%s", cwd, path) : NULL);
    if (whole == NULL) {
        return NULL;
    }
    size_t n = strlen(whole), out = 0;
    char *r = (char *)malloc(n + 2);
    if (r == NULL) {
        free(whole);
        return NULL;
    }
    for (size_t i = 0; i < n;) {
        while (i < n && whole[i] == '/') {
            i++;
        }
        size_t s = i;
        while (i < n && whole[i] != '/') {
            i++;
        }
        size_t len = i - s;
        if (len == 0 || (len == 1 && whole[s] == '.')) {
            continue;
        }
        if (len == 2 && whole[s] == '.' && whole[s + 1] == '.') {
            while (out > 0 && r[out - 1] != '/') {
                out--;
            }
            if (out > 0) {
                out--; /* the '/' before the dropped component */
            }
            continue;
        }
        r[out++] = '/';
        memcpy(r + out, whole + s, len);
        out += len;
    }
    if (out == 0) {
        r[out++] = '/';
    }
    r[out] = '\0';
    free(whole);
    return r;
}

int copy_path_inside(const char *target, const char *path, char *err) {
    char *t = normal_path(target), *p = normal_path(path);
    int inside = 0;
    if (t != NULL && p != NULL) {
        size_t tn = strlen(t);
        const char *tbase = strrchr(t, '/') + 1;
        const char *pbase = strrchr(p, '/') + 1;
        inside = strcmp(p, t) == 0 || (strncmp(p, t, tn) == 0 && (p[tn] == '/' || tn == 1)) ||
                 /* DuckDB's 'tmp_<name>' beside a single file it replaces */
                 ((size_t)(pbase - p) == (size_t)(tbase - t) && strncmp(p, t, (size_t)(tbase - t)) == 0 &&
                  strncmp(pbase, "tmp_", 4) == 0 && strcmp(pbase + 4, tbase) == 0);
    }
    if (!inside) {
        snprintf(err, ERRLEN,
                 "COPY ... TO (FORMAT tfrecord): DuckDB would write '%s', which is outside the "
                 "COPY's target '%s' (FILENAME_PATTERN and FILE_EXTENSION name files inside the "
                 "target: they must not hold '..' or leave it with '/'); nothing was written",
                 path, target);
    }
    free(t);
    free(p);
    return inside ? 0 : -1;
}

/* ------------------------------------------------------------------------------------ */
/* The target: its lock and the statement's 'tmp_' files                                */
/* ------------------------------------------------------------------------------------ */

void copy_target_init(copy_target *t, const char *root) {
    memset(t, 0, sizeof(*t));
    pthread_mutex_init(&t->mu, NULL);
    t->lock.fd = -1;
    t->root = root != NULL ? xstrdup(root) : NULL;
}

/* The index of a file DuckDB moved from 'tmp_<name>' to '<name>' after it was committed
 * (its USE_TMP_FILE) follows the file; a file still under its own name keeps its index. */
static void move_tmp_indexes(copy_target *t) {
    for (size_t i = 0; i < t->ntmp; i++) {
        copy_tmp_commit *c = &t->tmp[i];
        const char *slash = strrchr(c->data, '/');
        const char *base = slash ? slash + 1 : c->data;
        char *moved = xprintf("%.*s%s", (int)(base - c->data), c->data, base + 4);
        struct stat st;
        if (moved != NULL && access(c->data, F_OK) != 0 && stat(moved, &st) == 0 &&
            st.st_dev == c->dev && st.st_ino == c->ino) {
            char *index = index_sidecar(moved);
            if (index != NULL) {
                rename(c->index, index);
            }
            free(index);
        }
        free(moved);
        free(c->data);
        free(c->index);
    }
    free(t->tmp);
    t->tmp = NULL;
    t->ntmp = 0;
}

void copy_target_end(copy_target *t) {
    move_tmp_indexes(t); /* the statement is over: DuckDB has moved its tmp_ files */
    copy_lock_release(&t->lock);
    strlist_free(&t->names);
    pthread_mutex_destroy(&t->mu);
    free(t->root);
    t->root = NULL;
}

void copy_common_start(copy_common *c, const char *root) {
    memset(c, 0, sizeof(*c));
    c->set.record_type = EXAMPLE;
    c->set.compression = COMP_INFER;
    c->set.level = -1;
    copy_target_init(&c->target, root);
    c->target.plan = &c->plan; /* its description: features.json */
}

void copy_common_end(copy_common *c) {
    copy_target_end(&c->target);
    copy_plan_free(&c->plan);
}

/* Note `final_path` as one of this statement's files; -1 with err set when another file
 * of it has that name already (a FILENAME_PATTERN with '../' leaves PARTITION_BY's
 * directories, and every partition would write the one file: all but one lost). */
static int claim_name(copy_target *t, const char *final_path, char *err) {
    pthread_mutex_lock(&t->mu);
    int taken = 0;
    for (size_t i = 0; i < t->names.n && !taken; i++) {
        taken = strcmp(t->names.items[i], final_path) == 0;
    }
    int rc = taken ? -1 : strlist_add(&t->names, xstrdup(final_path));
    pthread_mutex_unlock(&t->mu);
    if (taken) {
        snprintf(err, ERRLEN,
                 "COPY ... TO (FORMAT tfrecord): DuckDB names two files of this COPY '%s' (a "
                 "FILENAME_PATTERN or FILE_EXTENSION holding '..' or '/' takes the files of "
                 "PARTITION_BY out of their partition's directory), and this COPY fails: give "
                 "a pattern without them",
                 final_path);
    } else if (rc) {
        snprintf(err, ERRLEN, "out of memory");
    }
    return rc ? -1 : 0;
}

/* Take the lock of the target of `final_path` for this COPY (once per statement). */
static int take_target_lock(copy_target *t, const char *final_path, char *err) {
    if (fs_routed(final_path) != NULL) {
        t->lock.unlocked = 1; /* a routed target: no flock there (see the top) */
        return 0;
    }
    char *target = copy_target_of(final_path);
    if (target == NULL) {
        snprintf(err, ERRLEN, "out of memory");
        return -1;
    }
    pthread_mutex_lock(&t->mu);
    int rc = copy_lock_take(&t->lock, target, err);
    pthread_mutex_unlock(&t->mu);
    free(target);
    return rc;
}

int copy_target_lock_early(copy_target *t, char *err) {
    struct stat st;
    if (t->root == NULL || fs_routed(t->root) != NULL || stat(t->root, &st) != 0 || !S_ISDIR(st.st_mode)) {
        return 0; /* a new target (or a file's): locked when its first file is opened */
    }
    pthread_mutex_lock(&t->mu);
    int rc = copy_lock_take(&t->lock, t->root, err);
    char staging[256];
    if (rc == 0 && tfsql_target_busy(t->root, staging, sizeof(staging))) {
        snprintf(err, ERRLEN,
                 "COPY ... TO: %s is being written by another writer (tfsql.write_tfrecord: its staging "
                 "directory %s is live); nothing was written: run this COPY again when that write is done",
                 t->root, staging);
        copy_lock_release(&t->lock);
        rc = -1;
    }
    pthread_mutex_unlock(&t->mu);
    return rc;
}

/* Remember a committed 'tmp_<name>' file with an index (move_tmp_indexes). */
static void note_tmp_commit(copy_target *t, const copyfile *f) {
    const char *slash = strrchr(f->final_path, '/');
    const char *base = slash ? slash + 1 : f->final_path;
    struct stat st;
    if (f->index_final == NULL || strncmp(base, "tmp_", 4) != 0 || stat(f->final_path, &st) != 0) {
        return;
    }
    pthread_mutex_lock(&t->mu);
    copy_tmp_commit *grown = (copy_tmp_commit *)realloc(t->tmp, (t->ntmp + 1) * sizeof(copy_tmp_commit));
    if (grown != NULL) {
        t->tmp = grown;
        copy_tmp_commit *c = &t->tmp[t->ntmp];
        c->data = xstrdup(f->final_path);
        c->index = xstrdup(f->index_final);
        c->dev = st.st_dev;
        c->ino = st.st_ino;
        if (c->data != NULL && c->index != NULL) {
            t->ntmp++;
        } else {
            free(c->data);
            free(c->index);
        }
    }
    pthread_mutex_unlock(&t->mu);
}

/* ------------------------------------------------------------------------------------ */
/* One file                                                                             */
/* ------------------------------------------------------------------------------------ */

void copyfile_free(copyfile *f) {
    if (f == NULL) {
        return;
    }
    if (f->fd >= 0) {
        close(f->fd);
    }
    if (f->fs != NULL) { /* a routed file */
        if (f->h != NULL) {
            f->fs->close(f->h);
        }
        if (!f->committed && f->temp_path != NULL) {
            f->fs->remove(f->temp_path);
        }
        if (!f->committed && f->index_temp != NULL) {
            f->fs->remove(f->index_temp);
        }
    } else if (!f->committed) { /* an error or an interrupted COPY: nothing stays behind */
        if (f->temp_path != NULL) {
            unlink(f->temp_path);
        }
        if (f->index_temp != NULL) {
            unlink(f->index_temp);
        }
    }
    deflater_end(&f->d);
    tbuf_free(&f->packed);
    tbuf_free(&f->index_text);
    free(f->final_path);
    free(f->temp_path);
    free(f->index_final);
    free(f->index_temp);
    pthread_mutex_destroy(&f->lock);
    free(f);
}

/* -1 with err set when `path` names a directory (ends in '/' or is one): DuckDB writes a
 * single file there, as for COPY ... (FORMAT parquet), which fails the same way. */
static int is_directory(const char *path, char *err) {
    size_t n = strlen(path);
    struct stat st;
    if ((n > 0 && path[n - 1] == '/') ||
        (fs_routed(path) == NULL && stat(path, &st) == 0 && S_ISDIR(st.st_mode))) {
        snprintf(err, ERRLEN,
                 "COPY ... TO (FORMAT tfrecord): cannot write the file '%s': it is a directory "
                 "(without PARTITION_BY or PER_THREAD_OUTPUT a COPY writes one file, also with "
                 "OVERWRITE, as COPY ... (FORMAT parquet) does): name a file, or write into the "
                 "directory with PARTITION_BY or PER_THREAD_OUTPUT",
                 path);
        return -1;
    }
    return 0;
}

static int write_all(int fd, const uint8_t *p, size_t n, const char *path, char *err);

/* A new file `path` holding the n bytes at p, through the routed file system fs: written
 * to `temp`, then moved to `path`; -1 with err set (nothing left at temp). */
static int routed_write_whole(const fsops *fs, const char *path, const char *temp, const void *p, size_t n,
                              char *err) {
    void *h = fs->open(temp, FS_WRITE, NULL, err);
    int rc = h == NULL || fs->write(h, p, n, err) || fs->sync(h, err) ? -1 : 0;
    if (h != NULL) {
        fs->close(h);
    }
    rc = rc ? rc : fs->move(temp, path, err);
    if (rc) {
        fs->remove(temp);
    }
    return rc;
}

/* The data columns of two descriptions agree (names, order, types); else -1 with the
 * first column that differs in *at (its index in `have`, or `want`'s count). */
static int same_data_columns(const tfsql_column *have, size_t nhave, const tfsql_column *want,
                             size_t nwant, size_t *at) {
    size_t i = 0, j = 0;
    for (;;) {
        while (i < nhave && have[i].partition) {
            i++;
        }
        while (j < nwant && want[j].partition) {
            j++;
        }
        if (i == nhave || j == nwant) {
            *at = j;
            return i == nhave && j == nwant ? 0 : -1;
        }
        char a[TFSQL_TYPE_TEXT_MAX], c[TFSQL_TYPE_TEXT_MAX];
        if (have[i].name_len != want[j].name_len ||
            memcmp(have[i].name, want[j].name, want[j].name_len) != 0 ||
            tfsql_type_render(&have[i].type, a, sizeof(a)) < 0 ||
            tfsql_type_render(&want[j].type, c, sizeof(c)) < 0 || strcmp(a, c) != 0) {
            *at = j;
            return -1;
        }
        i++;
        j++;
    }
}

/* A PARTITION_BY COPY's target directory gets the row's description (features.json,
 * tfsql.description) once per statement; one already there must describe the same
 * columns (an append), else the COPY fails naming the column. Called with t->mu held. */
static int write_description(copy_target *t, const char *final_path, char *err) {
    const copy_plan *p = t->plan;
    if (p == NULL || p->described == NULL || t->description_done) {
        return 0;
    }
    char *target = copy_target_of(final_path);
    const char *slash = strrchr(final_path, '/');
    size_t dir_len = slash != NULL ? (size_t)(slash - final_path) : 0;
    if (target == NULL) {
        snprintf(err, ERRLEN, "out of memory");
        return -1;
    }
    int partitioned = !(strlen(target) == dir_len && strncmp(target, final_path, dir_len) == 0) &&
                      !(dir_len == 0 && strcmp(target, ".") == 0);
    if (!partitioned) { /* one file named itself: read as its own records, no description */
        free(target);
        t->description_done = 1;
        return 0;
    }
    char *path = xprintf("%s/%s", target, TFSQL_DESCRIPTION_NAME);
    char *temp = path != NULL ? temp_name(path) : NULL;
    char *rendered = NULL;
    size_t n = 0;
    int rc = -1;
    if (temp == NULL || tfsql_description_render(p->described, p->ndescribed, &rendered, &n)) {
        snprintf(err, ERRLEN, "out of memory");
        goto done;
    }
    const fsops *fs = fs_routed(path);
    char *data = NULL;
    size_t got = 0;
    FILE *fp = fs != NULL ? NULL : fopen(path, "rb");
    if (fp != NULL) {
        data = (char *)malloc(TFSQL_TFDS_FEATURES_MAX_BYTES + 1);
        got = data != NULL ? fread(data, 1, TFSQL_TFDS_FEATURES_MAX_BYTES + 1, fp) : 0;
        fclose(fp);
    }
    if (fp != NULL || (fs != NULL && fs_read_whole(fs, path, TFSQL_TFDS_FEATURES_MAX_BYTES, &data, &got) == 0)) {
        /* an append: the target's description must agree */
        tfsql_column *have = NULL;
        size_t nhave = 0, at = 0;
        int parsed = data != NULL && tfsql_description_parse(data, got, &have, &nhave) == 0;
        free(data);
        int same = parsed && same_data_columns(have, nhave, p->described, p->ndescribed, &at) == 0;
        tfsql_description_free(have, nhave);
        if (parsed && !same) {
            char text[TFSQL_TYPE_TEXT_MAX] = "";
            if (at < p->ndescribed) {
                tfsql_type_render(&p->described[at].type, text, sizeof(text));
            }
            snprintf(err, ERRLEN,
                     "COPY ... TO: %s describes other columns than this COPY writes (%s%s%s%s); "
                     "cast or reorder the query's columns to match the target, or write with "
                     "OVERWRITE",
                     path, at < p->ndescribed ? "column \"" : "fewer columns",
                     at < p->ndescribed ? p->described[at].name : "",
                     at < p->ndescribed ? "\" as " : "", text);
            goto done;
        }
        rc = 0; /* the same columns, or a file that is not a description: left as it is */
        t->description_done = 1;
        goto done;
    }
    if (fs != NULL) {
        rc = routed_write_whole(fs, path, temp, rendered, n, err);
        t->description_done = rc == 0;
        goto done;
    }
    int fd = open(temp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0 || write_all(fd, (const uint8_t *)rendered, n, temp, err) || fsync(fd) != 0 ||
        close(fd) != 0 || rename(temp, path) != 0) {
        if (err[0] == 0) {
            snprintf(err, ERRLEN, "cannot write %s: %s", path, strerror(errno));
        }
        if (fd >= 0) {
            close(fd);
        }
        unlink(temp);
        goto done;
    }
    t->description_done = 1;
    rc = 0;
done:
    free(rendered);
    free(temp);
    free(path);
    free(target);
    return rc;
}

copyfile *copyfile_open(copy_target *t, const copy_settings *s, const char *path, char *err,
                        int *io_error) {
    *io_error = 0;
    copyfile *f = (copyfile *)calloc(1, sizeof(copyfile));
    if (f == NULL) {
        snprintf(err, ERRLEN, "out of memory");
        return NULL;
    }
    pthread_mutex_init(&f->lock, NULL);
    f->fd = -1;
    if (t->root != NULL && copy_path_inside(t->root, path, err)) {
        goto fail;
    }
    f->compression = s->compression == COMP_INFER ? name_compression(path, NULL) : s->compression;
    f->final_path = final_name(t, path, f->compression);
    f->temp_path = f->final_path ? temp_name(f->final_path) : NULL;
    if (f->final_path == NULL || f->temp_path == NULL) {
        snprintf(err, ERRLEN, "out of memory");
        goto fail;
    }
    if (is_directory(f->final_path, err)) {
        *io_error = 1;
        goto fail;
    }
    if (check_file_name(f->final_path, f->compression, err) || claim_name(t, f->final_path, err) ||
        take_target_lock(t, f->final_path, err)) {
        goto fail;
    }
    pthread_mutex_lock(&t->mu);
    int described = write_description(t, f->final_path, err);
    pthread_mutex_unlock(&t->mu);
    if (described) {
        goto fail;
    }
    if (s->index && f->compression == COMP_NONE) {
        /* the sidecar of the file written; one DuckDB then moves from 'tmp_<name>' gets its
         * index moved with it when the statement ends (copy_target_end) */
        f->index_final = fs_routed(f->final_path) != NULL ? routed_index_name(f->final_path)
                                                          : index_sidecar(f->final_path);
        f->index_temp = f->index_final ? temp_name(f->index_final) : NULL;
        if (f->index_temp == NULL) {
            snprintf(err, ERRLEN, "out of memory");
            goto fail;
        }
    } else if (s->index) {
        snprintf(err, ERRLEN, "COPY option INDEX: %s is compressed (its name says so), and "
                              "compressed files have no record offsets; drop INDEX",
                 f->final_path);
        goto fail;
    }
    if (f->compression != COMP_NONE && deflater_start(&f->d, f->compression, s->level, err)) {
        goto fail;
    }
    f->fs = fs_routed(f->final_path);
    if (f->fs != NULL) {
        f->h = f->fs->open(f->temp_path, FS_WRITE, NULL, err);
        *io_error = f->h == NULL;
        if (f->h == NULL) {
            goto fail;
        }
        return f;
    }
    f->fd = open(f->temp_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (f->fd < 0) {
        snprintf(err, ERRLEN, "cannot create %s (for %s): %s", f->temp_path, f->final_path,
                 strerror(errno));
        *io_error = 1;
        goto fail;
    }
    return f;
fail:
    copyfile_free(f);
    return NULL;
}

static int write_all(int fd, const uint8_t *p, size_t n, const char *path, char *err) {
    while (n > 0) {
        ssize_t w = write(fd, p, n > 0x40000000u ? 0x40000000u : n);
        if (w < 0 && errno == EINTR) {
            continue;
        }
        if (w <= 0) {
            snprintf(err, ERRLEN, "cannot write %s: %s", path, w < 0 ? strerror(errno) : "no space");
            return -1;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* A routed file that failed: its temporary file goes now, while the binding's file system
 * is reachable (copyfile_free may run outside any callback, where it is not). */
static int routed_failed(copyfile *f) {
    if (f->h != NULL) {
        f->fs->close(f->h);
        f->h = NULL;
    }
    f->fs->remove(f->temp_path);
    return -1;
}

/* n bytes more of f's temporary file. */
static int file_write(copyfile *f, const uint8_t *p, size_t n, char *err) {
    f->written += n;
    if (f->fs != NULL && f->h == NULL) {
        snprintf(err, ERRLEN, "cannot write %s: an earlier write failed", f->temp_path);
        return -1;
    }
    if (f->fs != NULL) {
        return f->fs->write(f->h, p, n, err) ? routed_failed(f) : 0;
    }
    return write_all(f->fd, p, n, f->temp_path, err);
}

int copyfile_put(copyfile *f, const tbuf *framed, const tbuf *ends, size_t n, char *err) {
    if (f->index_temp != NULL) {
        uint64_t start = 0;
        for (size_t i = 0; i < n; i++) {
            uint64_t end = load_le64(ends->data + 8 * i);
            char line[48];
            int len = snprintf(line, sizeof(line), "%llu %llu\n",
                               (unsigned long long)(f->offset + start),
                               (unsigned long long)(end - start));
            if (tbuf_reserve(&f->index_text, (size_t)len)) {
                snprintf(err, ERRLEN, "out of memory");
                return -1;
            }
            memcpy(f->index_text.data + f->index_text.len, line, (size_t)len);
            f->index_text.len += (size_t)len;
            start = end;
        }
    }
    f->offset += framed->len;
    if (f->compression == COMP_NONE) {
        return file_write(f, framed->data, framed->len, err);
    }
    f->packed.len = 0;
    if (deflater_run(&f->d, framed->data, framed->len, 0, &f->packed, err)) {
        return -1;
    }
    return file_write(f, f->packed.data, f->packed.len, err);
}

static void sync_directory_of(const char *path) {
    const char *slash = strrchr(path, '/');
    char *dir = slash ? xstrndup(path, slash == path ? 1 : (size_t)(slash - path)) : xstrdup(".");
    if (dir == NULL) {
        return;
    }
    int fd = open(dir, O_RDONLY | O_CLOEXEC);
    free(dir);
    if (fd >= 0) {
        fsync(fd);
        close(fd);
    }
}

/* copyfile_commit of a routed file: closed, its index written, both moved into place. */
static int routed_commit(copyfile *f, char *err) {
    const fsops *fs = f->fs;
    int rc = fs->sync(f->h, err);
    fs->close(f->h);
    f->h = NULL;
    if (rc || fs->move(f->temp_path, f->final_path, err) != 0) {
        return routed_failed(f);
    }
    f->committed = 1; /* the data file stands; its index follows it */
    return f->index_temp == NULL ? 0
                                 : routed_write_whole(fs, f->index_final, f->index_temp, f->index_text.data,
                                                      f->index_text.len, err);
}

int copyfile_commit(copy_target *t, copyfile *f, char *err) {
    if (f->compression != COMP_NONE) {
        f->packed.len = 0;
        if (deflater_run(&f->d, NULL, 0, 1, &f->packed, err) ||
            file_write(f, f->packed.data, f->packed.len, err)) {
            return -1;
        }
    }
    if (f->fs != NULL) {
        return routed_commit(f, err);
    }
    if (fsync(f->fd) != 0 || close(f->fd) != 0) {
        f->fd = -1;
        snprintf(err, ERRLEN, "cannot write %s: %s", f->temp_path, strerror(errno));
        return -1;
    }
    f->fd = -1;
    if (f->index_temp != NULL) {
        int fd = open(f->index_temp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd < 0 || write_all(fd, f->index_text.data, f->index_text.len, f->index_temp, err) ||
            fsync(fd) != 0) {
            if (!err[0]) {
                snprintf(err, ERRLEN, "cannot write %s: %s", f->index_temp, strerror(errno));
            }
            if (fd >= 0) {
                close(fd);
            }
            return -1;
        }
        close(fd);
    }
    pthread_mutex_lock(&t->mu);
    int replaced = copy_lock_check(&t->lock, f->temp_path, f->final_path, err);
    pthread_mutex_unlock(&t->mu);
    if (replaced) {
        return -1;
    }
    if (rename(f->temp_path, f->final_path) != 0) {
        snprintf(err, ERRLEN, "cannot rename %s to %s: %s", f->temp_path, f->final_path,
                 strerror(errno));
        return -1;
    }
    f->committed = 1; /* the data file stands; its index follows it */
    if (f->index_temp != NULL && rename(f->index_temp, f->index_final) != 0) {
        snprintf(err, ERRLEN, "wrote %s but cannot rename its index %s to %s: %s", f->final_path,
                 f->index_temp, f->index_final, strerror(errno));
        unlink(f->index_temp);
        return -1;
    }
    sync_directory_of(f->final_path);
    note_tmp_commit(t, f);
    return 0;
}
