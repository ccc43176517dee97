/*
 * tfsql/duckdb_ext/copy_lock.c -- the target lock of native COPY ... TO (FORMAT tfrecord):
 * the core's (tfsql/core/target_lock.c: a flock on a descriptor of the target directory
 * itself), which write_tfrecord takes too (tfsql/locking.py), so that native COPY,
 * write_tfrecord and every writer built on it exclude each other from one target.
 *
 * DuckDB's OVERWRITE empties the target directory (every file in it) but keeps the
 * directory, so it cannot remove this lock from under its holder; nothing is made inside
 * or outside the target for it, and the kernel releases it when the process exits.
 *
 * The target of a file DuckDB names: the directory of the file, without the key=value
 * directories of PARTITION_BY ('out/p=0/data_0.' -> 'out'); a single file's target is its
 * directory, as for write_tfrecord. The V2 binding takes the lock at bind when the COPY's
 * path is an existing directory -- before DuckDB applies OVERWRITE -- and every binding
 * takes it when the first file is opened otherwise (the v1 API gives bind no path; a new
 * directory does not exist before DuckDB makes it). Unlike write_tfrecord, which waits for
 * the lock, a native COPY that finds it held fails at once, naming the locked directory:
 * by the first file DuckDB has already applied its OVERWRITE, so waiting and then writing
 * could leave the two writers' files mixed.
 *
 * A mount without flock writes unlocked, as tfsql.locking does.
 */
#include "ext_common.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Is the key=value segment [s, s + n) a partition directory's name? */
static int is_partition_segment(const char *s, size_t n) {
    const char *eq = memchr(s, '=', n);
    return eq != NULL && eq > s;
}

char *copy_target_of(const char *path) {
    size_t end = strlen(path);
    while (end > 0 && path[end - 1] != '/') { /* the file's name */
        end--;
    }
    for (;;) {
        size_t dir_end = end > 0 ? end - 1 : 0; /* without its '/' */
        size_t start = dir_end;
        while (start > 0 && path[start - 1] != '/') {
            start--;
        }
        if (dir_end == 0 || !is_partition_segment(path + start, dir_end - start)) {
            break;
        }
        end = start;
    }
    if (end == 0) {
        return xstrdup(".");
    }
    return xstrndup(path, end > 1 ? end - 1 : 1);
}

int copy_lock_take(copy_lock *l, const char *target, char *err) {
    if (l->fd >= 0 || l->unlocked) {
        return 0; /* taken by this COPY already (at bind, or for another of its files) */
    }
    int fd = -1;
    int rc = tfsql_target_lock(target, 1, 0, &fd);
    if (rc == TLOCK_UNSUPPORTED) {
        l->unlocked = 1; /* no flock on this mount: write unlocked */
        return 0;
    }
    if (rc == TLOCK_BUSY) {
        snprintf(err, ERRLEN,
                 "COPY ... TO: %s is being written by another writer (it holds the target's lock, a flock on "
                 "that directory); nothing was written: run this COPY again when that write is done",
                 target);
        return -1;
    }
    if (rc != TLOCK_HELD) {
        snprintf(err, ERRLEN, "COPY ... TO: cannot lock the target directory %s: %s", target, strerror(errno));
        return -1;
    }
    l->fd = fd;
    l->path = xstrdup(target);
    return 0;
}

int copy_lock_check(const copy_lock *l, const char *temp_path, const char *final_path, char *err) {
    if (l->fd < 0 || access(temp_path, F_OK) == 0) {
        return 0;
    }
    snprintf(err, ERRLEN,
             "COPY ... TO: another writer removed %s while this COPY wrote it (DuckDB applies a COPY's "
             "OVERWRITE before the v1 API lets it take the target's lock); %s was not written: run this "
             "COPY again",
             temp_path, final_path);
    return -1;
}

void copy_lock_release(copy_lock *l) {
    if (l->fd >= 0) {
        close(l->fd);
    }
    free(l->path);
    l->path = NULL;
    l->fd = -1;
}
