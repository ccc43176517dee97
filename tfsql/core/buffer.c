/*
 * tfsql/core/buffer.c -- growable byte buffers (malloc / realloc, usable
 * without Python's GIL), with huge pages for large ones on Linux.
 */

#if defined(__linux__) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE 1 /* madvise flags, pread */
#endif

#include "core_internal.h"
#if defined(__linux__)
#include <sys/mman.h>
#endif

#if defined(__linux__) && defined(MADV_HUGEPAGE)
#define HUGE_PAGE ((size_t)2 << 20)
/* Ask for transparent huge pages on a large buffer, as numpy does: first touching
 * fresh memory then costs one fault per 2 MiB instead of per 4 KiB. */
static void advise_huge_pages(uint8_t *data, size_t cap) {
    uintptr_t start = ((uintptr_t)data + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1);
    uintptr_t end = ((uintptr_t)data + cap) & ~(uintptr_t)(HUGE_PAGE - 1);
    if (end > start) {
        (void)madvise((void *)start, end - start, MADV_HUGEPAGE);
    }
}
#else
static void advise_huge_pages(uint8_t *data, size_t cap) {
    (void)data;
    (void)cap;
}
#endif

/* Make `data` (`cap` bytes from malloc, realloc or the pool) b's memory, huge pages
 * advised when it is large: 0, or -1 when `data` is NULL (out of memory; b unchanged). */
static int tbuf_adopt(tbuf *b, uint8_t *data, size_t cap) {
    if (data == NULL) {
        return -1;
    }
    if (cap >= ((size_t)4 << 20)) {
        advise_huge_pages(data, cap);
    }
    b->data = data;
    b->cap = cap;
    return 0;
}

int tbuf_grow(tbuf *b, size_t extra) {
    size_t need = b->len + extra;
    if (need < b->len || need > (size_t)PTRDIFF_MAX) {
        return -1;
    }
    size_t cap = b->cap ? b->cap : 64;
    while (cap < need) {
        cap = (cap > (size_t)PTRDIFF_MAX / 2) ? need : cap * 2;
    }
    return tbuf_adopt(b, (uint8_t *)realloc(b->data, cap), cap);
}

void tbuf_free(tbuf *b) {
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

void tbuf_recycle(tbuf *b) {
    pool_give(b->data, b->cap); /* kept for reuse when large, else freed */
    b->data = NULL;
    b->len = b->cap = 0;
}

int tbuf_start(tbuf *b, size_t need, size_t want, size_t reserve) {
    if (b->data != NULL) {
        return tbuf_reserve(b, reserve > b->len ? reserve - b->len : 0);
    }
    size_t cap;
    uint8_t *data = (uint8_t *)pool_take(need, want, &cap);
    if (data == NULL) {
        /* an eighth to spare: near its end a column reserves for the most values a packed
         * run could hold (8 per byte), more than it then writes; growing would copy */
        cap = reserve + reserve / 8 + 64;
        data = (uint8_t *)malloc(cap);
    }
    b->len = 0;
    return tbuf_adopt(b, data, cap);
}

uint8_t *tbuf_take_sized(tbuf *b, size_t *cap) {
    if (b->data == NULL) {
        b->data = (uint8_t *)malloc(8);
        if (b->data == NULL) {
            return NULL;
        }
        b->cap = 8;
    } else {
        /* give back a large unused tail (more than 4 KiB and ~1/8 of the allocation),
         * keeping a quarter of room so that a later batch of about this size fits it
         * (pool_take) */
        size_t keep = b->len + b->len / 4 + 64;
        if (b->cap > keep && b->cap - keep > 4096 && b->cap - keep > b->cap / 8) {
            uint8_t *data = (uint8_t *)realloc(b->data, keep);
            if (data != NULL) {
                b->data = data;
                b->cap = keep;
            }
        }
    }
    uint8_t *data = b->data;
    *cap = b->cap;
    b->data = NULL;
    b->len = b->cap = 0;
    return data;
}

uint8_t *tbuf_take(tbuf *b) {
    size_t cap;
    return tbuf_take_sized(b, &cap);
}
