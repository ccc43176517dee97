/*
 * tfsql/core/target_lock.c -- the write lock of a target directory, one protocol for every
 * tfsql writer: write_tfrecord and Spark's committer (tfsql/locking.py, through
 * tfsql._native) and both native COPY bindings (tfsql/duckdb_ext/copy_lock.c).
 *
 * The lock is a flock on a descriptor of the target directory itself -- no lock file:
 *
 *   - DuckDB's COPY ... (OVERWRITE) empties the target before it writes (every file in
 *     it, hidden ones included) but keeps the directory (same inode, measured on DuckDB
 *     2.0.1), so it cannot remove the lock from under its holder, as it removed the
 *     '<target>/_tfsql.lock' file earlier versions used;
 *   - nothing is created outside the target (a lock file beside it would be: in a
 *     parent the writer may not own, may not be allowed to write, or that does not exist
 *     for a target at a file-system root) and nothing is left behind after a write or a
 *     crash: the kernel releases the lock when the holder's process exits, however it
 *     exits (kill -9 included);
 *   - readers take the shared lock the same way (a descriptor of a directory they list
 *     needs no write access), and ignore nothing new: there is no file to hide.
 *
 * After flock, the descriptor's directory is compared (st_dev, st_ino) with the one now
 * at the path: a holder that removed or replaced the directory meanwhile makes the taker
 * lock the current one instead (lock, then verify the inode, retry).
 *
 * Nested targets ('a' and 'a/b') are two directories and two locks: a writer of 'a' does
 * not exclude one of 'a/b', as before. A mount whose flock fails with ENOLCK, EOPNOTSUPP,
 * EINVAL, ENOSYS or EBADF (NFS takes no exclusive flock on a directory descriptor) has no
 * lock: TLOCK_UNSUPPORTED, and the binding writes unlocked, as on object stores.
 *
 * A writer that stages inside the target (write_tfrecord: '_temporary-<job>/', a single
 * file's '.<name>.tfsql-<job>/') holds the target lock only to create its staging and to
 * commit, and an owner lock on '<staging>/_tfsql.owner' for as long as it lives: the next
 * writer removes a staging directory whose owner lock is free (a dead writer's), and a
 * native COPY, whose OVERWRITE would empty the target, refuses to start while one is held
 * (tfsql_target_busy, called holding the target lock, under which no staging is made).
 *
 *     int fd;
 *     if (tfsql_target_lock("out", 1, 0, &fd) == TLOCK_HELD) { ... write ...; close(fd); }
 */
#include "tfsql_core.h"

#include <errno.h>

#ifdef _WIN32
int tfsql_owner_lock(const char *file, int *fd) {
    (void)file;
    *fd = -1;
    return TLOCK_UNSUPPORTED;
}
int tfsql_owner_alive(const char *file) {
    (void)file;
    return 0;
}
int tfsql_target_busy(const char *dir, char *name, size_t cap) {
    (void)dir, (void)name, (void)cap;
    return 0;
}
int tfsql_target_lock(const char *dir, int exclusive, int wait, int *fd) {
    (void)dir, (void)exclusive, (void)wait;
    *fd = -1;
    return TLOCK_UNSUPPORTED; /* no flock: tfsql writes unlocked (tfsql/locking.py) */
}
#else
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef O_DIRECTORY
#define O_DIRECTORY 0
#endif
#ifndef O_CLOEXEC
#define O_CLOEXEC 0
#endif

#define OWNER_FILE "_tfsql.owner" /* tfsql.locking.OWNER_NAME */

static int unsupported(int e) {
    return e == ENOLCK || e == EOPNOTSUPP || e == EINVAL || e == ENOSYS || e == EBADF;
}

/* flock(fd, how) as a TLOCK_* status (errno kept for TLOCK_ERROR). */
static int lock_status(int fd, int exclusive, int wait) {
    int how = (exclusive ? LOCK_EX : LOCK_SH) | (wait ? 0 : LOCK_NB);
    if (flock(fd, how) == 0) {
        return TLOCK_HELD;
    }
    if (errno == EWOULDBLOCK) {
        return TLOCK_BUSY;
    }
    return unsupported(errno) ? TLOCK_UNSUPPORTED : TLOCK_ERROR;
}

int tfsql_target_lock(const char *dir, int exclusive, int wait, int *fd) {
    *fd = -1;
    for (;;) {
        int d = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (d < 0) {
            return TLOCK_ERROR;
        }
        int rc = lock_status(d, exclusive, wait);
        if (rc != TLOCK_HELD) {
            int e = errno;
            close(d);
            errno = e;
            return rc;
        }
        struct stat held, now;
        int missing = stat(dir, &now) != 0;
        int e = errno;
        if (!missing && fstat(d, &held) == 0 && held.st_dev == now.st_dev && held.st_ino == now.st_ino) {
            *fd = d;
            return TLOCK_HELD;
        }
        close(d);
        if (missing) { /* removed while we waited: the caller makes it again, or gives up */
            errno = e;
            return TLOCK_ERROR;
        }
        /* replaced while we waited: lock the directory now at the path */
    }
}


int tfsql_owner_lock(const char *file, int *fd) {
    *fd = -1;
    int d = open(file, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    if (d < 0) {
        return TLOCK_ERROR;
    }
    int rc = lock_status(d, 1, 0);
    if (rc != TLOCK_HELD) {
        int e = errno;
        close(d);
        errno = e;
        return rc;
    }
    *fd = d;
    return TLOCK_HELD;
}

int tfsql_owner_alive(const char *file) {
    int d = open(file, O_RDONLY | O_CLOEXEC);
    if (d < 0) {
        return 0; /* no owner file: made before locking existed, or never finished */
    }
    int rc = lock_status(d, 0, 0);
    close(d);
    return rc == TLOCK_BUSY;
}

int tfsql_target_busy(const char *dir, char *name, size_t cap) {
    DIR *listing = opendir(dir);
    if (listing == NULL) {
        return 0;
    }
    int busy = 0;
    struct dirent *e;
    while (!busy && (e = readdir(listing)) != NULL) {
        const char *n = e->d_name;
        if ((n[0] != '_' && n[0] != '.') || strcmp(n, ".") == 0 || strcmp(n, "..") == 0) {
            continue; /* staging directories are hidden: '_temporary-<job>', '.<file>.tfsql-<job>' */
        }
        size_t len = strlen(dir) + strlen(n) + sizeof("/" OWNER_FILE) + 1;
        char *owner = (char *)malloc(len);
        if (owner == NULL) {
            break;
        }
        snprintf(owner, len, "%s/%s/%s", dir, n, OWNER_FILE);
        busy = tfsql_owner_alive(owner);
        if (busy && cap > 0) {
            snprintf(name, cap, "%s", n);
        }
        free(owner);
    }
    closedir(listing);
    return busy;
}
#endif
