/*
 * tfsql/core/framing.c -- TFRecord framing: scan_core (validate and
 * index a buffer's frames), count_core (headers of a file read in windows),
 * find_boundary_core (resynchronising inside a file for splittable reads).
 */

#if defined(__linux__) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE 1 /* madvise flags, pread */
#endif

#include "core_internal.h"
#if !defined(_WIN32)
#include <errno.h>
#include <unistd.h>
#endif

/* Records shorter than this have their data CRCs checked three at a time where the CPU
 * has a CRC-32C instruction (crc32c_values3: one record's CRC is a chain of dependent
 * steps that uses a third of the unit; three interleaved fill it), longer ones one by
 * one (crc32c_value's folding is as fast there). */
#define CRC_BATCH_MAX 1024

/* Up to three framed records whose data CRCs are still to be checked, and where each
 * was framed: its header's position and the lengths of the output buffers before it. */
typedef struct {
    const uint8_t *data[3];
    size_t len[3], pos[3], offsets_len[3], lengths_len[3];
    int n;
} crc_batch;

/* Check the batch's data CRCs: -1 when all match (the batch is emptied), else the index
 * of the first that does not. */
static int crc_batch_check(crc_batch *b) {
    uint32_t crc[3];
    if (b->n == 3) {
        crc32c_values3(b->data, b->len, crc);
    } else {
        for (int i = 0; i < b->n; i++) {
            crc[i] = crc32c_value(0, b->data[i], b->len[i]);
        }
    }
    for (int i = 0; i < b->n; i++) {
        if (crc_mask(crc[i]) != load_le32(b->data[i] + b->len[i])) {
            return i;
        }
    }
    b->n = 0;
    return -1;
}

/* Index frames from `pos`; returns -1 only when out of memory. The result is that of
 * checking each record in turn: with batched data CRCs, a record that fails its check
 * ends the frames at its header even when later headers were read meanwhile. */
int scan_core(const uint8_t *buf, size_t size, size_t pos, long long max_records,
              long long max_bytes, int verify, tbuf *offsets, tbuf *lengths,
              size_t *end_out, int *status_out) {
    long long count = 0;
    uint64_t total = 0;
    int status = FRAME_OK;
    crc_batch batch;
    batch.n = 0;
    const int batched = verify && crc_is_hardware;
    int bad = -1;
    while (pos < size) {
        if (max_records >= 0 && count >= max_records) {
            break;
        }
        if (size - pos < 12) {
            status = FRAME_TRUNCATED;
            break;
        }
        const uint8_t *head = buf + pos;
        if (masked_crc8(head) != load_le32(head + 8)) {
            status = FRAME_BAD_LENGTH_CRC;
            break;
        }
        uint64_t length = load_le64(head);
        if (max_bytes >= 0 && count > 0 && (length > (uint64_t)max_bytes ||
                                            total > (uint64_t)max_bytes - length)) {
            break;
        }
        size_t room = size - pos - 12;
        if (room < 4 || length > room - 4) {
            status = FRAME_TRUNCATED;
            break;
        }
        if (batched && length < CRC_BATCH_MAX) {
            int i = batch.n++;
            batch.data[i] = head + 12;
            batch.len[i] = (size_t)length;
            batch.pos[i] = pos;
            batch.offsets_len[i] = offsets->len;
            batch.lengths_len[i] = lengths->len;
            if (batch.n == 3 && (bad = crc_batch_check(&batch)) >= 0) {
                break;
            }
        } else if (verify && (bad = crc_batch_check(&batch)) >= 0) {
            break;
        } else if (verify &&
                   masked_crc(head + 12, (size_t)length) != load_le32(head + 12 + length)) {
            status = FRAME_BAD_DATA_CRC;
            break;
        }
        if (tbuf_put_u64(offsets, (uint64_t)(pos + 12)) || tbuf_put_u64(lengths, length)) {
            return -1;
        }
        total += length;
        count++;
        pos += 12 + (size_t)length + 4;
    }
    if (bad < 0 && batch.n > 0) {
        bad = crc_batch_check(&batch);
    }
    if (bad >= 0) { /* the first record whose data CRC fails ends the frames */
        status = FRAME_BAD_DATA_CRC;
        pos = batch.pos[bad];
        offsets->len = batch.offsets_len[bad];
        lengths->len = batch.lengths_len[bad];
    }
    *end_out = pos;
    *status_out = status;
    return 0;
}

#if !defined(_WIN32)
/* Fill head[0:want) from the file at `pos`, up to `want` bytes; returns the bytes read
   (fewer at the end of the file) or -1 with errno set. */
static ssize_t pread_full(int fd, uint8_t *head, size_t want, uint64_t pos) {
    size_t have = 0;
    while (have < want) {
        ssize_t got = pread(fd, head + have, want - have, (off_t)(pos + have));
        if (got < 0) {
            if (errno == EINTR) {
                continue;
            }
            return -1;
        }
        if (got == 0) {
            break; /* the file shrank while being read */
        }
        have += (size_t)got;
    }
    return (ssize_t)have;
}

/* Count the frames of a plain file from byte `pos` to `size` reading only their
   12-byte headers (positioned reads; payloads are never read), appending each record's
   header offset to `offsets` when it is not NULL. The length CRC is checked; a length
   above `max_length`, or running past `size`, stops the count. After a record smaller
   than 4 KiB a read takes 64 KiB (the next headers are likely inside: small records
   cost a fraction of a read each); otherwise it takes the 12-byte header alone.
   Returns -1 with errno set when a read fails, -2 when out of memory. */
#define COUNT_WINDOW_MAX ((size_t)64 << 10)
int count_core(int fd, uint64_t pos, uint64_t size, uint64_t max_length, tbuf *offsets,
               long long *count_out, uint64_t *end_out, uint64_t *length_out,
               int *status_out) {
    long long count = 0;
    int status = FRAME_OK;
    uint8_t *window = (uint8_t *)malloc(COUNT_WINDOW_MAX);
    size_t have = 0;
    uint64_t base = 0, last = pos; /* window[0:have) holds the file from `base` */
    if (window == NULL) {
        return -2;
    }
    *length_out = 0;
    while (pos < size) {
        if (size - pos < 12) {
            status = FRAME_TRUNCATED;
            break;
        }
        const uint8_t *head;
        if (pos >= base && pos - base <= have && have - (pos - base) >= 12) {
            head = window + (pos - base);
        } else {
            /* Records smaller than a page: read 64 KiB at once; larger ones: the header. */
            size_t want = count && pos - last < 4096 ? COUNT_WINDOW_MAX : 12;
            size_t take = size - pos < (uint64_t)want ? (size_t)(size - pos) : want;
            ssize_t got = pread_full(fd, window, take, pos);
            if (got < 0) {
                free(window);
                return -1;
            }
            base = pos;
            have = (size_t)got;
            if (have < 12) {
                status = FRAME_TRUNCATED;
                break;
            }
            head = window;
        }
        if (masked_crc(head, 8) != load_le32(head + 8)) {
            status = FRAME_BAD_LENGTH_CRC;
            break;
        }
        uint64_t length = load_le64(head);
        *length_out = length;
        if (length > max_length) {
            status = FRAME_TOO_LONG;
            break;
        }
        if (size - pos - 12 < 4 || length > size - pos - 16) {
            status = FRAME_TRUNCATED;
            break;
        }
        if (offsets != NULL) {
            if (tbuf_reserve(offsets, 8) < 0) {
                free(window);
                return -2;
            }
            memcpy(offsets->data + offsets->len, &pos, 8);
            offsets->len += 8;
        }
        last = pos;
        pos += 16 + length;
        count++;
    }
    free(window);
    *count_out = count;
    *end_out = pos;
    *status_out = status;
    return 0;
}
#endif

/* -- resynchronising inside a file (splittable reads) ---------------------- */

/* A reader that starts at an arbitrary byte of an uncompressed file finds the next
 * record boundary with find_boundary_core: the first position p in [pos, stop) where
 *
 *   1. the 8-byte length at p is at most `max_length` and matches its masked CRC-32C
 *      (a random position passes with probability 2^-32),
 *   2. the whole record fits in the file and its data matches its CRC (another
 *      2^-32; checked whatever the caller's verify_checksums, so a random position is
 *      taken for a boundary with probability about 2^-64), and
 *   3. the chain of records that follows stays well framed (each header's length CRC
 *      and data CRC match) until it has covered `lookahead` bytes from p or ends
 *      exactly at the end of the file. This rejects whole frames stored inside a
 *      record's payload (a TFRecord file kept as a bytes feature): their chain breaks
 *      where the enclosing payload ends. Only such a nested chain longer than
 *      `lookahead` bytes could still be taken for a boundary.
 *
 * A range owns the records whose header starts in it, and its reader, on reaching the
 * first header past its end, reads on until a header this function accepts (so a
 * record the next range's search rejects, e.g. one cut short by the end of the file,
 * is read, or reported, by the range before): the ranges of a file partition its
 * records.
 */

/* Rule 3 for the record at p, whose header and data (rules 1 and 2) are verified and
 * which ends at `next`. */
static int chain_holds(const uint8_t *buf, size_t size, size_t p, size_t next, int at_eof,
                       size_t lookahead) {
    size_t goal = lookahead > (size_t)-1 - p ? (size_t)-1 : p + lookahead;
    size_t at = next;
    while (at < goal) {
        if (at == size) {
            return at_eof ? CHAIN_YES : CHAIN_MORE;
        }
        if (size - at < 12) {
            /* Too few bytes left for a header: at the end of the file these are more
             * likely the CRC of a record enclosing p than a header cut short. */
            return at_eof ? CHAIN_NO : CHAIN_MORE;
        }
        const uint8_t *head = buf + at;
        if (masked_crc(head, 8) != load_le32(head + 8)) {
            return CHAIN_NO;
        }
        uint64_t length = load_le64(head);
        size_t room = size - at - 12;
        if (room < 4 || length > room - 4) {
            /* A record cut short by the end of the file: not a chain to trust (the
             * range before reads on through it and reports the truncation). */
            return at_eof ? CHAIN_NO : CHAIN_MORE;
        }
        if (masked_crc(head + 12, (size_t)length) != load_le32(head + 12 + length)) {
            return CHAIN_NO;
        }
        at += 12 + (size_t)length + 4;
    }
    return CHAIN_YES;
}

/* The CRC verdict on the last header checked (its 8-byte length and stored CRC): a
 * run of identical headers (zeros, a repeated fill pattern) costs one CRC. */
typedef struct {
    uint64_t length;
    uint32_t stored;
    int holds;
} header_verdict;

static inline int length_crc_holds(const uint8_t *head, header_verdict *seen) {
    uint64_t length = load_le64(head);
    uint32_t stored = load_le32(head + 8);
    if (length != seen->length || stored != seen->stored) {
        seen->length = length;
        seen->stored = stored;
        seen->holds = masked_crc(head, 8) == stored;
    }
    return seen->holds;
}

/* When the 12 bytes at p (a rejected header) repeat one byte: the last candidate whose
 * header is that same run (all rejected alike, e.g. a stretch of zeros); else p. */
static size_t last_in_run(const uint8_t *buf, size_t size, size_t p) {
    uint64_t word = buf[p] * UINT64_C(0x0101010101010101);
    if (load_le64(buf + p) != word || load_le32(buf + p + 8) != (uint32_t)word) {
        return p;
    }
    size_t q = p + 12; /* buf[p:q) repeats the byte */
    while (size - q >= 8 && load_le64(buf + q) == word) {
        q += 8;
    }
    while (q < size && buf[q] == buf[p]) {
        q++;
    }
    return q - 12;
}

/* 1 when one of the 8 bytes of `w` is zero. */
static inline int has_zero_byte(uint64_t w) {
    return ((w - UINT64_C(0x0101010101010101)) & ~w & UINT64_C(0x8080808080808080)) != 0;
}

/* How many of a length's high bytes are zero whenever it is at most `max_length`. */
static int zero_high_bytes(uint64_t max_length) {
    int z = 0;
    while (z < 8 && (max_length >> (56 - 8 * z)) == 0) {
        z++;
    }
    return z;
}

/* The first record boundary at or after `pos` and before `stop` in buf[0:size).
 * `at_eof` says that buf ends where the file ends; a length above `max_length` is no
 * record's. Returns BOUNDARY_FOUND with the position in *found_out; BOUNDARY_NONE when
 * no boundary starts before `stop` (*found_out = stop); BOUNDARY_MORE when the
 * candidate at *found_out needs bytes past `size` to decide (read more, starting at or
 * before it, and call again).
 *
 * Speed (a skip-mode scan resynchronises through whatever damage there is, and the
 * extension cannot be interrupted inside this call): a candidate is rejected by its
 * length's plausibility -- at most `max_length` and, at the end of the file, fitting
 * in it -- before any CRC is computed (a nonzero byte where a plausible length has a
 * zero rules out several candidates at once), a repeated header reuses its CRC
 * verdict, and a run of one byte value (zeros) is passed over word by word: random
 * bytes and zeros are both searched at a fraction of a second per GiB. */
int find_boundary_core(const uint8_t *buf, size_t size, size_t pos, size_t stop,
                       int at_eof, size_t lookahead, uint64_t max_length, size_t *found_out) {
    if (stop > size && at_eof) {
        stop = size;
    }
    static const uint8_t zero_header[8] = {0};
    header_verdict seen = {0, 0, masked_crc(zero_header, 8) == 0};
    /* A plausible length has its `skip` high bytes zero. So eight nonzero bytes from
     * p + 8 - skip rule out the candidates p .. p + 7 (each has one of them among its
     * high bytes), and a nonzero byte at p + 7 rules out p .. p + skip - 1. */
    size_t skip = (size_t)zero_high_bytes(max_length);
    for (size_t p = pos; p < stop; p++) {
        if (p > size || size - p < 12) {
            if (at_eof) {
                break; /* too short for a header: no boundary */
            }
            *found_out = p;
            return BOUNDARY_MORE;
        }
        const uint8_t *head = buf + p;
        if (skip > 0 && size - p >= 20 && !has_zero_byte(load_le64(head + 8 - skip))) {
            p += 7;
            continue;
        }
        if (skip > 1 && size - p >= 12 + skip && head[7] != 0) {
            p += skip - 1;
            continue;
        }
        uint64_t length = load_le64(head);
        size_t room = size - p - 12;
        int fits = room >= 4 && length <= room - 4;
        if (length > max_length || (!fits && at_eof)) {
            continue; /* no record, or runs past the end of the file: not a whole record */
        }
        if (!length_crc_holds(head, &seen)) {
            p = last_in_run(buf, size, p);
            continue;
        }
        if (!fits) {
            *found_out = p;
            return BOUNDARY_MORE;
        }
        if (masked_crc(head + 12, (size_t)length) != load_le32(head + 12 + length)) {
            continue;
        }
        int chain = chain_holds(buf, size, p, p + 12 + (size_t)length + 4, at_eof, lookahead);
        if (chain == CHAIN_NO) {
            continue;
        }
        *found_out = p;
        return chain == CHAIN_YES ? BOUNDARY_FOUND : BOUNDARY_MORE;
    }
    *found_out = stop;
    return BOUNDARY_NONE;
}
