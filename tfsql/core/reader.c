/*
 * tfsql/core/reader.c -- one record reader over a binding's read callback: a file's
 * (decompressed) bytes through a bounded window, framed chunk by chunk, with the
 * limits and the damage rules of every tfsql reader.
 *
 * The binding supplies read(ctx, offset, buf, n) (pread and its change checks in the
 * DuckDB extension) and, for gzip / zlib files, zlib's inflate functions (however it
 * gets zlib): the core performs no I/O and links nothing.
 *
 * Window: nothing is mapped (a mapping of a file that another process truncates faults
 * with SIGBUS on the first page past the new end). A refill reads READER_WINDOW_READ
 * bytes (or one record, which max_record_bytes bounds) after moving the unread bytes to
 * the window's start; a compressed file is read in READER_COMPRESSED_CHUNK pieces and
 * inflated as the scan goes, never whole. A gzip file may hold several members and end
 * with zero padding; a zlib file holds one stream.
 *
 * Limits: a record whose header claims more than max_record_bytes is damage, found
 * from its header alone before any memory is taken for it; in a plain file a header
 * claiming more bytes than the file holds is damage without reading on; a chunk holds
 * at most max_records records and max_bytes of payload (a larger record: a chunk of one).
 *
 * Damage (reader_next returns READER_DAMAGE, r->damage says what and where; the
 * binding raises it or reports it and calls reader_skip): a record whose data CRC fails
 * is stepped over (its length CRC held); where framing is lost -- a length CRC that
 * fails, a length over max_record_bytes or past the end of the file -- reading resumes
 * at the next offset where a record's both CRCs check and the records after it chain
 * (find_boundary_core, the rule byte ranges start by), so a whole file and its byte
 * ranges give the same rows; a record cut short by the end of the stream ends it.
 */

#include "core_internal.h"

#include <stdio.h>

/* Fewer bytes than this ahead of the next record refill the window (the refill moves
 * them to the window's start: a quarter of a window, still in the cache). */
#define WINDOW_LOW (READER_WINDOW_READ / 4)

enum { Z_OK_ = 0, Z_STREAM_END_ = 1, Z_BUF_ERROR_ = -5 };

void reader_init(record_reader *r, reader_read_fn read, void *ctx, uint64_t file_size,
                 int comp, const reader_zlib *zlib, const char *path) {
    memset(r, 0, sizeof(*r));
    r->read = read;
    r->ctx = ctx;
    r->file_size = file_size;
    r->comp = comp;
    r->zlib = zlib;
    r->path = path;
    r->read_size = r->read_max = READER_WINDOW_READ;
    r->budget = r->stop = UINT64_MAX;
}

void reader_start(record_reader *r, uint64_t offset, size_t first_index) {
    r->file_pos = r->base = r->next = offset;
    r->index = r->first = first_index;
}

void reader_free(record_reader *r) {
    if (r->z_active) {
        r->zlib->end(&r->z);
        r->z_active = 0;
    }
    tbuf_free(&r->in);
    if (r->window == NULL) {
        tbuf_free(&r->buf);
    }
    r->buf.data = NULL;
    r->buf.len = r->buf.cap = 0;
    tbuf_free(&r->offs);
    tbuf_free(&r->lens);
    r->base = r->next = 0;
}

/* -- the (decompressed) stream --------------------------------------------- */

/* Append up to `want` bytes of a plain file to `out`. */
static int plain_read(record_reader *r, tbuf *out, size_t want, char *err) {
    uint64_t left = r->file_size - r->file_pos;
    size_t n = left < (uint64_t)want ? (size_t)left : want;
    if (n == 0) {
        r->eof = 1;
        return 0;
    }
    if (tbuf_reserve(out, n)) {
        snprintf(err, READER_ERRLEN, "out of memory reading %s", r->path);
        return -1;
    }
    if (r->read(r->ctx, r->file_pos, out->data + out->len, n, err)) {
        return -1;
    }
    out->len += n;
    r->file_pos += n;
    r->eof = r->file_pos == r->file_size;
    return 0;
}

/* Refill the compressed input buffer (it is empty). 0 and no bytes at the end. */
static int refill_input(record_reader *r, char *err) {
    uint64_t left = r->file_size - r->file_pos;
    size_t n = left < READER_COMPRESSED_CHUNK ? (size_t)left : READER_COMPRESSED_CHUNK;
    r->in.len = 0;
    r->in_pos = 0;
    if (n == 0) {
        return 0;
    }
    if (tbuf_reserve(&r->in, n)) {
        snprintf(err, READER_ERRLEN, "out of memory reading %s", r->path);
        return -1;
    }
    if (r->read(r->ctx, r->file_pos, r->in.data, n, err)) {
        return -1;
    }
    r->in.len = n;
    r->file_pos += n;
    return 0;
}

/* After a gzip member: whether only zero padding follows (the stream's end). */
static int only_padding_left(record_reader *r, int *padding, char *err) {
    for (;;) {
        while (r->in_pos < r->in.len && r->in.data[r->in_pos] == 0) {
            r->in_pos++;
        }
        if (r->in_pos < r->in.len) {
            *padding = 0;
            return 0;
        }
        if (r->file_pos == r->file_size) {
            *padding = 1;
            return 0;
        }
        if (refill_input(r, err)) {
            return -1;
        }
    }
}

/* Damage to the compressed stream itself: READER_DAMAGE with r->damage set. */
static int stream_damage(record_reader *r, int status, const char *detail) {
    memset(&r->damage, 0, sizeof(r->damage));
    r->damage.status = status;
    r->damage.index = r->index;
    r->damage.offset = r->next;
    snprintf(r->damage.detail, sizeof(r->damage.detail), "%s", detail);
    return READER_DAMAGE;
}

/* Append up to `want` inflated bytes to `out` (fewer at the end of the stream). */
static int inflate_read(record_reader *r, tbuf *out, size_t want, char *err) {
    const reader_zlib *zl = r->zlib;
    size_t goal = out->len + want;
    while (!r->eof && out->len < goal) {
        if (r->in_pos == r->in.len && refill_input(r, err)) {
            return -1;
        }
        if (!r->z_active) {
            if (r->members > 0) { /* zlib: one stream; gzip: another member or padding */
                int padding = r->comp == READER_ZLIB;
                if (!padding && only_padding_left(r, &padding, err)) {
                    return -1;
                }
                if (padding) {
                    r->eof = 1;
                    break;
                }
            }
            memset(&r->z, 0, sizeof(r->z));
            if (zl->init2(&r->z, r->comp == READER_GZIP ? 31 : 15, zl->version(),
                          (int)sizeof(reader_zstream)) != Z_OK_) {
                snprintf(err, READER_ERRLEN, "%s: cannot start zlib", r->path);
                return -1;
            }
            r->z_active = 1;
        }
        size_t room = goal - out->len;
        if (room > READER_INFLATE_STEP) {
            room = READER_INFLATE_STEP;
        }
        if (tbuf_reserve(out, room)) {
            snprintf(err, READER_ERRLEN, "out of memory inflating %s", r->path);
            return -1;
        }
        r->z.next_in = r->in.data + r->in_pos;
        r->z.avail_in = (unsigned)(r->in.len - r->in_pos);
        r->z.next_out = out->data + out->len;
        r->z.avail_out = (unsigned)room;
        int rc = zl->inflate(&r->z, 0);
        out->len += room - r->z.avail_out;
        r->in_pos = r->in.len - r->z.avail_in;
        if (rc == Z_STREAM_END_) {
            zl->end(&r->z);
            r->z_active = 0;
            r->members++;
            continue;
        }
        if (rc != Z_OK_ && rc != Z_BUF_ERROR_) {
            char detail[READER_DETAIL]; /* worded as Python's zlib module words it */
            snprintf(detail, sizeof(detail), "Error %d while decompressing data: %.200s", rc,
                     r->z.msg ? r->z.msg : "invalid compressed data");
            return stream_damage(r, READER_STREAM_CORRUPT, detail);
        }
        if (r->in_pos == r->in.len && r->file_pos == r->file_size && r->z.avail_out > 0) {
            return stream_damage(r, READER_STREAM_TRUNCATED, "");
        }
    }
    return 0;
}

/* -- the window -------------------------------------------------------------- */

/* The new bytes the next refill reads: the read size (doubling up to read_max, held to
 * READER_MIN_READ once `budget` bytes are read); in a byte range, no more than the range
 * holds but the rest of the record at the window's start (have bytes of it there). */
static size_t refill_bytes(record_reader *r, const uint8_t *head, size_t have, size_t need) {
    size_t want = r->read_size;
    if (r->read_size < r->read_max) {
        r->read_size = r->read_size > r->read_max / 2 ? r->read_max : 2 * r->read_size;
    }
    if (r->budget != UINT64_MAX) {
        uint64_t left = r->budget > r->consumed ? r->budget - r->consumed : 0;
        want = left < (uint64_t)want ? (size_t)left : want;
        want = want < READER_MIN_READ ? READER_MIN_READ : want;
    }
    if (r->stop != UINT64_MAX && !r->searching && r->comp == READER_PLAIN) {
        uint64_t left = r->stop > r->file_pos ? r->stop - r->file_pos : 0;
        size_t rest = 12 - (have < 12 ? have : 12);
        if (have >= 12) {
            uint64_t framed = load_le64(head) + 16;
            rest = framed > have ? (framed - have < (uint64_t)SIZE_MAX ? (size_t)(framed - have) : SIZE_MAX) : 0;
        }
        if (need > have && rest > need - have) {
            rest = need - have;
        }
        want = left < (uint64_t)want ? (size_t)left : want;
        want = want < rest ? rest : want;
        want = want < 1 ? 1 : want;
    }
    return want;
}

int reader_fill(record_reader *r, uint64_t from, size_t need, char *err) {
    if (from < r->base || from > r->base + r->buf.len) {
        snprintf(err, READER_ERRLEN,
                 "internal error: window position %llu outside [%llu, %llu]",
                 (unsigned long long)from, (unsigned long long)r->base,
                 (unsigned long long)(r->base + r->buf.len));
        return -1;
    }
    size_t at = (size_t)(from - r->base);
    size_t have = r->buf.len - at;
    if (have >= need || r->eof) {
        return 0;
    }
    size_t want = refill_bytes(r, r->buf.data + at, have, need);
    size_t goal;
    if (r->window == NULL) { /* one window: drop the bytes before `from` */
        if (at > 0) {
            memmove(r->buf.data, r->buf.data + at, have);
            r->buf.len = have;
            r->base = from;
        }
        goal = need > want ? need : want;
    } else { /* a fresh window holding the unread bytes, then the new ones */
        goal = have + want;
        if (need > goal) { /* a compressed stream grows by doubling: a lying header costs
                            * no more memory than the bytes really there */
            size_t step = need - have;
            if (r->comp != READER_PLAIN && step > have) {
                step = have;
            }
            goal = have + (step > want ? step : want);
        }
        uint8_t *fresh = r->window(r->ctx, goal, err);
        if (fresh == NULL) {
            return -1;
        }
        if (have > 0) {
            memcpy(fresh, r->buf.data + at, have);
        }
        r->buf.data = fresh;
        r->buf.len = have;
        r->buf.cap = goal;
        r->base = from;
    }
    while (r->buf.len < goal && !r->eof) {
        size_t before = r->buf.len;
        int rc = r->comp == READER_PLAIN
                     ? plain_read(r, &r->buf, goal - r->buf.len, err)
                     : inflate_read(r, &r->buf, goal - r->buf.len, err);
        r->consumed += r->buf.len - before;
        if (rc) {
            return rc;
        }
    }
    return 0;
}

/* -- framing ----------------------------------------------------------------- */

/* Damage at the header at r->next: READER_DAMAGE with r->damage set. */
static int frame_damage(record_reader *r, int status, uint64_t length, uint64_t limit) {
    memset(&r->damage, 0, sizeof(r->damage));
    r->damage.status = status;
    r->damage.index = r->index;
    r->damage.offset = r->next;
    r->damage.length = length;
    r->damage.limit = limit;
    r->damage.rest_of_file = status != FRAME_BAD_DATA_CRC;
    return READER_DAMAGE;
}

/* The record whose header is at stream offset `at`, given the window's bytes: FRAME_OK
 * (complete, or more bytes to read), or what is wrong with it (*length: the header's
 * length; *limit: the limit or the bytes the stream holds). */
static int pending_record(const record_reader *r, uint64_t at, uint64_t max_record_bytes,
                          uint64_t *length, uint64_t *limit) {
    size_t off = (size_t)(at - r->base);
    size_t have = r->buf.len - off;
    *length = 0;
    *limit = 0;
    if (have < 12) {
        *limit = have;
        return r->eof ? FRAME_TRUNCATED : FRAME_OK;
    }
    const uint8_t *head = r->buf.data + off;
    if (masked_crc(head, 8) != load_le32(head + 8)) {
        return FRAME_BAD_LENGTH_CRC;
    }
    *length = load_le64(head);
    if (*length > max_record_bytes) {
        *limit = max_record_bytes;
        return FRAME_TOO_LONG;
    }
    if (r->comp == READER_PLAIN && *length + 16 > r->file_size - at) {
        *limit = r->file_size - at;
        return FRAME_PAST_END; /* the file's size vouches: no need to read on */
    }
    if (have < *length + 16 && r->eof) {
        *limit = have;
        return FRAME_TRUNCATED;
    }
    return FRAME_OK;
}

/* The stream or the range ends cleanly at r->next: the next range's first record. */
static int range_end(record_reader *r) {
    r->chain_end = r->next;
    r->chained = 1;
    r->done = 1;
    return 0;
}

int reader_next(record_reader *r, const reader_limits *o, char *err) {
    for (;;) {
        r->index += r->n;
        r->first = r->index;
        r->n = 0;
        r->offs.len = r->lens.len = 0;
        if (r->done) {
            return 0;
        }
        /* fresh windows refill only once framing reaches their end: the unread bytes
         * they copy are then at most one record's */
        int rc = reader_fill(r, r->next, r->window != NULL ? 1 : WINDOW_LOW, err);
        if (rc) {
            return rc;
        }
        size_t at = (size_t)(r->next - r->base);
        if (at == r->buf.len && r->eof) {
            return range_end(r);
        }
        size_t end;
        int status;
        if (scan_core(r->buf.data, r->buf.len, at, o->max_records, o->max_bytes, o->verify,
                      &r->offs, &r->lens, &end, &status)) {
            snprintf(err, READER_ERRLEN, "out of memory framing %s", r->path);
            return -1;
        }
        size_t n = r->offs.len / 8;
        int cut = 0;
        for (size_t i = 0; i < n; i++) { /* possible only when the window is larger */
            if (load_u64(r->lens.data + 8 * i) > o->max_record_bytes) {
                end = (size_t)load_u64(r->offs.data + 8 * i) - 12;
                n = i;
                cut = 1;
                break;
            }
        }
        if (r->stop != UINT64_MAX && r->base + end > r->stop) {
            size_t lo = 0, hi = n; /* the first record whose header is at or past stop */
            while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (r->base + load_u64(r->offs.data + 8 * mid) - 12 >= r->stop) {
                    hi = mid;
                } else {
                    lo = mid + 1;
                }
            }
            if (lo < n) {
                end = (size_t)load_u64(r->offs.data + 8 * lo) - 12;
                n = lo;
                cut = 1;
                status = FRAME_OK;
            }
        }
        r->offs.len = r->lens.len = 8 * n;
        r->n = n;
        r->next = r->base + end;
        if (n > 0) {
            return 1; /* whatever stopped framing is looked at by the next call */
        }
        if (r->stop != UINT64_MAX && r->next >= r->stop && (cut || status == FRAME_OK)) {
            return range_end(r); /* the next record belongs to the next range */
        }
        if (status == FRAME_BAD_DATA_CRC) {
            return frame_damage(r, FRAME_BAD_DATA_CRC, load_le64(r->buf.data + end), 0);
        }
        uint64_t length, limit;
        int pending = pending_record(r, r->next, o->max_record_bytes, &length, &limit);
        if (pending != FRAME_OK) {
            return frame_damage(r, pending, length, limit);
        }
        /* a record running past the window: read it whole */
        size_t need = (r->buf.len - end < 12) ? 12 : (size_t)length + 16;
        rc = reader_fill(r, r->next, need, err);
        if (rc) {
            return rc;
        }
    }
}

/* Resynchronise after the damaged header at r->next: move to the first offset after it
 * that find_boundary_core accepts (1), or to the end of the stream (0); -1 on error. */
static int resync(record_reader *r, uint64_t max_record_bytes, char *err) {
    uint64_t from = r->next + 1;
    size_t need = READER_RESYNC_LOOKAHEAD + WINDOW_LOW;
    for (;;) {
        int rc = reader_fill(r, from, need, err);
        if (rc) {
            return rc == READER_DAMAGE ? -2 : -1;
        }
        size_t at = (size_t)(from - r->base), found, stop = r->buf.len;
        if (r->stop != UINT64_MAX) { /* a byte range: candidates before its stop */
            uint64_t s = r->stop > r->base ? r->stop - r->base : 0;
            stop = s < (uint64_t)SIZE_MAX / 2 ? (size_t)s : SIZE_MAX / 2;
            stop = stop < at ? at : stop;
        }
        int brc = find_boundary_core(r->buf.data, r->buf.len, at, stop, r->eof,
                                     READER_RESYNC_LOOKAHEAD, max_record_bytes, &found);
        if (brc == BOUNDARY_FOUND) {
            r->next = r->base + found;
            return 1;
        }
        if (brc == BOUNDARY_NONE && (r->eof || r->base + found >= r->stop)) {
            r->next = r->base + r->buf.len; /* the rest of the stream (or range) is lost */
            r->done = 1;
            return 0;
        }
        if (brc == BOUNDARY_NONE) { /* none in the window: search on past it */
            found = r->buf.len;
        }
        /* BOUNDARY_MORE: the candidate at `found` needs bytes past the window */
        from = r->base + found;
        size_t have = r->buf.len - found;
        uint64_t length = have >= 12 ? load_le64(r->buf.data + found) : 0; /* <= max */
        size_t want = (size_t)length + 16 + READER_RESYNC_LOOKAHEAD;
        need = want > 2 * have ? want : 2 * have;
    }
}

int reader_skip(record_reader *r, uint64_t max_record_bytes, char *err) {
    reader_damage *d = &r->damage;
    if (d->status == FRAME_BAD_DATA_CRC) {
        r->next += 16 + d->length; /* the length CRC held: step over the record */
        r->index++;
        return 0;
    }
    if (d->status == FRAME_TRUNCATED) { /* the stream ends inside this record */
        r->next = r->base + r->buf.len;
        r->eof = 1;
        r->done = 1;
        return 0;
    }
    reader_damage lost = *d;
    r->searching = 1;
    int found = resync(r, max_record_bytes, err);
    r->searching = 0;
    if (found == -2) {
        return READER_DAMAGE; /* the stream's own damage, met while searching */
    }
    if (found < 0) {
        return -1;
    }
    *d = lost;
    if (found) {
        d->rest_of_file = 0;
        d->skipped_to = r->next;
        if (r->next >= r->stop) { /* resumes in the next range */
            range_end(r);
        }
    }
    r->index++;
    return 0;
}
