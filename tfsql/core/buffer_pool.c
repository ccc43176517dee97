/*
 * tfsql/core/buffer_pool.c -- a small process-wide cache of large freed buffers, so
 * that a batch's output columns reuse the pages of an earlier batch's instead of
 * faulting in (and the kernel zeroing) fresh ones.
 *
 * Why: a batch's large buffers (a vectors batch's 2.5 MB of floats, an images batch's
 * 16 MB of bytes) are above glibc's mmap threshold, so each was a fresh mapping whose
 * every page the kernel faulted in and zeroed, then unmapped when the consumer released
 * the batch: on a vectors decode that was two thirds of the CPU time, and with two
 * threads the zeroing shares the memory bandwidth. Calling mallopt would change the
 * whole process's allocator for a library's sake; this cache holds only the core's own
 * buffers, at most POOL_BYTES of them, and hands one out only for a request of about
 * its size.
 *
 * A scan on several threads holds several batches at once, and its consumer releases
 * them while the threads start the next ones: with 64 MiB kept, an images scan on two
 * threads (batches of 16 MiB) freed two buffers out of three and faulted in fresh
 * ones for the next batches (a seventh of its CPU time zeroing pages). Such a scan
 * widens the pool by its own batches while it runs (tfsql_pool_widen: the Python
 * scanner asks 2 x threads x batch_bytes and a quarter, see tfsql/scanning.py) and
 * narrows it when it ends (tfsql_pool_narrow), which frees the oldest buffers above
 * the limit again. So the pool holds at most 64 MiB plus what the running scans hold
 * in flight anyway.
 *
 * Every buffer here came from malloc and may still be released with free(): giving one
 * back (pool_give) is an optimisation, never a requirement. Thread-safe (one mutex,
 * taken twice per buffer per batch); on Windows the pool is off (take finds nothing,
 * give frees).
 */

#if !defined(_WIN32) && !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200809L /* nanosleep */
#endif

#include "core_internal.h"

/* Buffers smaller than this come and go through malloc's heap, which reuses them well. */
#define POOL_MIN ((size_t)256 << 10)
/* At most this many bytes (plus the running scans' widening) and buffers are kept (the
 * oldest freed first). */
#define POOL_BYTES ((size_t)64 << 20)
#define POOL_SLOTS 128

#if defined(_WIN32)

void *pool_take(size_t need, size_t want, size_t *cap) {
    (void)need;
    (void)want;
    *cap = 0;
    return NULL;
}

void pool_give(void *data, size_t cap) {
    (void)cap;
    free(data);
}

void tfsql_pool_clear(void) {}

void tfsql_pool_stats(size_t *count, size_t *bytes, size_t *reused) {
    *count = *bytes = *reused = 0;
}

void tfsql_pool_widen(size_t bytes) {
    (void)bytes;
}

void tfsql_pool_narrow(size_t bytes) {
    (void)bytes;
}

size_t tfsql_pool_limit(void) {
    return POOL_BYTES;
}

void tfsql_pool_hold(unsigned milliseconds) {
    (void)milliseconds;
}

#else

#include <pthread.h>
#include <time.h>

typedef struct {
    void *data;
    size_t cap;
} pooled;

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static pooled slots[POOL_SLOTS]; /* slots[0] the oldest */
static size_t n_slots, held, reused;
static size_t widened; /* bytes the running scans added to POOL_BYTES (tfsql_pool_widen) */

/* fork() while another thread holds pool_lock (a decode thread giving a buffer back)
 * would leave the child's copy locked forever: its first decode would hang. So a fork
 * waits for the lock and the child starts with it free (torch's DataLoader forks its
 * workers from a process whose threads may be decoding). */
static pthread_once_t fork_guard = PTHREAD_ONCE_INIT;

static void before_fork(void) {
    pthread_mutex_lock(&pool_lock);
}

static void after_fork(void) {
    pthread_mutex_unlock(&pool_lock);
}

static void guard_fork(void) {
    pthread_atfork(before_fork, after_fork, after_fork);
}

static void pool_enter(void) {
    pthread_once(&fork_guard, guard_fork);
    pthread_mutex_lock(&pool_lock);
}

/* Remove slot i (the lock held). */
static pooled pool_remove(size_t i) {
    pooled p = slots[i];
    memmove(&slots[i], &slots[i + 1], (n_slots - i - 1) * sizeof(pooled));
    n_slots--;
    held -= p.cap;
    return p;
}

void *pool_take(size_t need, size_t want, size_t *cap) {
    *cap = 0;
    if (want < POOL_MIN) {
        return NULL;
    }
    size_t most = want + want / 4; /* a much larger one would hold memory it does not use */
    pool_enter();
    size_t best = SIZE_MAX;
    for (size_t i = 0; i < n_slots; i++) {
        if (slots[i].cap >= need && slots[i].cap <= most &&
            (best == SIZE_MAX || slots[i].cap < slots[best].cap)) {
            best = i;
        }
    }
    pooled p = {NULL, 0};
    if (best != SIZE_MAX) {
        p = pool_remove(best);
        reused++;
    }
    pthread_mutex_unlock(&pool_lock);
    *cap = p.cap;
    return p.data;
}

/* The most bytes kept now (the lock held). */
static size_t pool_limit(void) {
    return widened > SIZE_MAX - POOL_BYTES ? SIZE_MAX : POOL_BYTES + widened;
}

/* Remove the oldest buffers until `incoming` more bytes fit the limit and a slot is
 * free (incoming 0: until the buffers kept fit the limit), into evicted[] (the lock
 * held); returns how many. */
static size_t pool_evict(size_t incoming, void **evicted) {
    size_t n = 0;
    size_t limit = pool_limit();
    while (n_slots > 0 && ((incoming && n_slots == POOL_SLOTS) || held + incoming > limit)) {
        evicted[n++] = pool_remove(0).data;
    }
    return n;
}

static void free_all(void **evicted, size_t n) {
    for (size_t i = 0; i < n; i++) {
        free(evicted[i]); /* outside the lock: munmap can take a while */
    }
}

void pool_give(void *data, size_t cap) {
    if (data == NULL) {
        return;
    }
    if (cap < POOL_MIN || cap > POOL_BYTES) {
        free(data);
        return;
    }
    void *evicted[POOL_SLOTS];
    pool_enter();
    size_t n_evicted = pool_evict(cap, evicted);
    slots[n_slots].data = data;
    slots[n_slots].cap = cap;
    n_slots++;
    held += cap;
    pthread_mutex_unlock(&pool_lock);
    free_all(evicted, n_evicted);
}

void tfsql_pool_widen(size_t bytes) {
    pool_enter();
    widened = bytes > SIZE_MAX - widened ? SIZE_MAX : widened + bytes;
    pthread_mutex_unlock(&pool_lock);
}

void tfsql_pool_narrow(size_t bytes) {
    void *evicted[POOL_SLOTS];
    pool_enter();
    widened = bytes > widened ? 0 : widened - bytes;
    size_t n_evicted = pool_evict(0, evicted);
    pthread_mutex_unlock(&pool_lock);
    free_all(evicted, n_evicted);
}

size_t tfsql_pool_limit(void) {
    pool_enter();
    size_t limit = pool_limit();
    pthread_mutex_unlock(&pool_lock);
    return limit;
}

void tfsql_pool_clear(void) {
    pooled taken[POOL_SLOTS];
    pool_enter();
    size_t n = n_slots;
    memcpy(taken, slots, n * sizeof(pooled));
    n_slots = held = 0;
    pthread_mutex_unlock(&pool_lock);
    for (size_t i = 0; i < n; i++) {
        free(taken[i].data);
    }
}

void tfsql_pool_hold(unsigned milliseconds) {
    pool_enter();
    struct timespec wait = {(time_t)(milliseconds / 1000), (long)(milliseconds % 1000) * 1000000L};
    nanosleep(&wait, NULL);
    pthread_mutex_unlock(&pool_lock);
}

void tfsql_pool_stats(size_t *count, size_t *bytes, size_t *reuses) {
    pool_enter();
    *count = n_slots;
    *bytes = held;
    *reuses = reused;
    pthread_mutex_unlock(&pool_lock);
}

#endif
