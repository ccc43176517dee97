/*
 * tfsql/duckdb_ext/copy_lock.c -- the target lock of native COPY ... TO (FORMAT tfrecord):
 * the protocol of tfsql/locking.py (target_lock), so that native COPY, write_tfrecord and
 * every writer built on it exclude each other from one target.
 *
 * The lock is an exclusive flock on '<target>/_tfsql.lock' (hidden from readers by its
 * '_'); the kernel releases it when the process exits, however it exits. Its holder
 * removes the file while still holding it, so a taker re-checks after flock that the file
 * it locked is still the one at the path (the unlink race), as locking._locked_fd does.
 *
 * The target of a file DuckDB names: the directory of the file, without the key=value
 * directories of PARTITION_BY ('out/p=0/data_0.' -> 'out'); a single file's target is its
 * directory, as for write_tfrecord. Unlike write_tfrecord, which waits for the lock, a
 * native COPY that finds it held fails at once, naming the holder's lock file: DuckDB has
 * already applied its own OVERWRITE (removed the old files) before the first file is
 * opened, so waiting and then writing could leave the two writers' files mixed.
 *
 * A mount without flock (ENOLCK, EOPNOTSUPP, EINVAL, ENOSYS) writes unlocked, as
 * tfsql.locking does.
 */
#include "ext_common.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#define LOCK_NAME "_tfsql.lock" /* tfsql.locking.LOCK_NAME */

static int unsupported(int e) { return e == ENOLCK || e == EOPNOTSUPP || e == EINVAL || e == ENOSYS; }

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
        return 0; /* taken by this COPY already (another of its files) */
    }
    char *path = xprintf("%s/%s", target, LOCK_NAME);
    if (path == NULL) {
        snprintf(err, ERRLEN, "out of memory");
        return -1;
    }
    for (;;) {
        int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
        if (fd < 0) {
            snprintf(err, ERRLEN, "COPY ... TO: cannot create the lock file %s of the target: %s",
                     path, strerror(errno));
            free(path);
            return -1;
        }
        if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
            int e = errno;
            close(fd);
            if (unsupported(e)) {
                l->unlocked = 1; /* no flock on this mount: write unlocked */
                free(path);
                return 0;
            }
            snprintf(err, ERRLEN,
                     "COPY ... TO: %s is being written by another writer (it holds %s); nothing "
                     "was written: run this COPY again when that write is done",
                     target, path);
            free(path);
            return -1;
        }
        struct stat held, now;
        if (fstat(fd, &held) == 0 && stat(path, &now) == 0 && held.st_dev == now.st_dev &&
            held.st_ino == now.st_ino) {
            l->fd = fd;
            l->path = path;
            l->dev = held.st_dev;
            l->ino = held.st_ino;
            return 0;
        }
        close(fd); /* we locked a file its holder removed: lock the current one */
    }
}

int copy_lock_check(const copy_lock *l, const char *final_path, char *err) {
    if (l->fd < 0) {
        return 0;
    }
    struct stat now;
    if (stat(l->path, &now) == 0 && now.st_dev == l->dev && now.st_ino == l->ino) {
        return 0;
    }
    snprintf(err, ERRLEN,
             "COPY ... TO: another writer replaced the target while this COPY wrote (its lock file "
             "%s was removed: a concurrent COPY with OVERWRITE removes the target's files before it "
             "writes); %s was not written: run this COPY again",
             l->path, final_path);
    return -1;
}

void copy_lock_release(copy_lock *l) {
    if (l->fd >= 0) {
        struct stat now;
        if (stat(l->path, &now) == 0 && now.st_dev == l->dev && now.st_ino == l->ino) {
            unlink(l->path); /* while still held, as tfsql.locking.Lock.release(remove=True) */
        }
        close(l->fd);
    }
    free(l->path);
    l->path = NULL;
    l->fd = -1;
}
