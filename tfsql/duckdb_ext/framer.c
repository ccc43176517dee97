/*
 * tfsql/duckdb_ext/framer.c -- framing a file through its window: the next records,
 * within the call's limits, and what a damaged stretch of the file does.
 *
 * Limits (the Python reader's options, same names and defaults): a record whose header
 * claims more than max_record_bytes is refused from its header alone, before any
 * memory is taken for it; in a plain file a header claiming more bytes than the file
 * holds is refused without reading on; a chunk of records holds at most batch_bytes of
 * payload (a larger record makes a chunk of one).
 *
 * Damage under on_corrupt := 'skip': a record whose data CRC fails is stepped over (its
 * length is trusted: its length CRC checked). Where framing is lost -- a length CRC
 * that fails, a length over max_record_bytes or past the end of the file -- the scan
 * resynchronises at the next offset where a record's both CRCs check and the records
 * after it chain (find_boundary_core, the rule byte ranges start by), so a whole file
 * and its byte ranges give the same rows. Without 'skip' each is an error naming the
 * file, the record and its byte offset.
 */

#include "duckdb_ext.h"

/* The bytes find_boundary_core checks past a candidate (tfsql.splits.RESYNC_LOOKAHEAD). */
#define RESYNC_LOOKAHEAD ((size_t)256 << 10)
/* Fewer bytes than this ahead of the next record refill the window (the refill moves
 * them to the window's start: a quarter of a window, still in the cache). */
#define WINDOW_LOW (WINDOW_READ / 4)

void frame_fields(tferror *e, const char *path, int status, size_t index, uint64_t at,
                  uint64_t length, uint64_t limit) {
    static const char *const reasons[] = {"truncated", "past_end", "too_long", "length_crc",
                                          "data_crc"};
    int k = status == FRAME_TRUNCATED        ? 0
            : status == FRAME_PAST_END       ? 1
            : status == FRAME_TOO_LONG       ? 2
            : status == FRAME_BAD_LENGTH_CRC ? 3
                                             : 4;
    tferror_init(e, TFERR_CORRUPT, reasons[k], path);
    e->record_index = (long long)index;
    e->offset = (long long)at;
    e->rest_of_file = k != 4;
    if (k == 1 || k == 2 || k == 4) { /* the header's length (data_crc: where the record ends) */
        e->length = (long long)length;
    }
    if (k <= 2) {
        e->limit = (long long)limit;
    }
}

void frame_error(char *err, const char *path, int status, size_t index, uint64_t at,
                 uint64_t length, uint64_t limit) {
    tferror e;
    frame_fields(&e, path, status, index, at, length, limit);
    e.suggest_skip = 1;
    tferror_raise(err, &e);
}

void malformed_error(char *err, int record_type, const char *path, size_t index, uint64_t at,
                     const char *feature) {
    char detail[512] = "";
    tferror e;
    tferror_init(&e, TFERR_CORRUPT, "malformed", path);
    e.record_type = record_type == SEQUENCE_EXAMPLE ? "sequence_example" : "example";
    e.record_index = (long long)index;
    e.offset = (long long)at;
    if (feature != NULL) {
        malformed_detail(detail, sizeof(detail), feature);
        e.detail = detail;
    }
    tferror_raise(err, &e);
}

int pending_record(const window *w, uint64_t at, uint64_t max_record_bytes, uint64_t *length,
                   uint64_t *limit) {
    size_t off = (size_t)(at - w->base);
    size_t have = w->buf.len - off;
    *length = 0;
    *limit = 0;
    if (have < 12) {
        *limit = have;
        return w->src.eof ? FRAME_TRUNCATED : FRAME_OK;
    }
    const uint8_t *head = w->buf.data + off;
    if (masked_crc(head, 8) != load_le32(head + 8)) {
        return FRAME_BAD_LENGTH_CRC;
    }
    *length = load_le64(head);
    if (*length > max_record_bytes) {
        *limit = max_record_bytes;
        return FRAME_TOO_LONG;
    }
    if (w->src.comp == COMP_NONE && *length + 16 > w->src.file_size - at) {
        *limit = w->src.file_size - at;
        return FRAME_PAST_END; /* the file's size vouches: no need to read on */
    }
    if (have < *length + 16 && w->src.eof) {
        *limit = have;
        return FRAME_TRUNCATED;
    }
    return FRAME_OK;
}

void framer_start(framer *f) {
    f->next = 0;
    f->index = 0;
    f->first = 0;
    f->n = 0;
    f->offs.len = f->lens.len = 0;
}

void framer_free(framer *f) {
    window_close(&f->w);
    tbuf_free(&f->offs);
    tbuf_free(&f->lens);
}

/* Resynchronise after the damaged header at f->next: move to the first offset after it
 * that find_boundary_core accepts (1), or to the end of the stream (0); -1 on error. */
static int resync(framer *f, uint64_t max_record_bytes, char *err) {
    window *w = &f->w;
    uint64_t from = f->next + 1;
    size_t need = RESYNC_LOOKAHEAD + WINDOW_LOW;
    for (;;) {
        if (window_fill(w, from, need, err)) {
            return -1;
        }
        size_t at = (size_t)(from - w->base), found;
        int at_eof = w->src.eof;
        int rc = find_boundary_core(w->buf.data, w->buf.len, at, w->buf.len, at_eof,
                                    RESYNC_LOOKAHEAD, max_record_bytes, &found);
        if (rc == BOUNDARY_FOUND) {
            f->next = w->base + found;
            return 1;
        }
        if (rc == BOUNDARY_NONE) {
            f->next = w->base + w->buf.len; /* at the end of the stream */
            return 0;
        }
        /* BOUNDARY_MORE: the candidate at `found` needs bytes past the window */
        from = w->base + found;
        size_t have = w->buf.len - found;
        uint64_t length = have >= 12 ? load_le64(w->buf.data + found) : 0; /* <= max */
        size_t want = (size_t)length + 16 + RESYNC_LOOKAHEAD;
        need = want > 2 * have ? want : 2 * have;
    }
}

int framer_next(framer *f, const framing *o, const char *path, char *err) {
    window *w = &f->w;
    for (;;) {
        f->index += f->n;
        f->first = f->index;
        f->n = 0;
        f->offs.len = f->lens.len = 0;
        if (window_fill(w, f->next, WINDOW_LOW, err)) {
            return -1;
        }
        size_t at = (size_t)(f->next - w->base);
        if (at == w->buf.len && w->src.eof) {
            return 0;
        }
        size_t end;
        int status;
        if (scan_core(w->buf.data, w->buf.len, at, o->max_records, o->max_bytes, o->verify,
                      &f->offs, &f->lens, &end, &status)) {
            snprintf(err, ERRLEN, "out of memory framing %s", path);
            return -1;
        }
        size_t n = f->offs.len / 8;
        for (size_t i = 0; i < n; i++) { /* possible only when the window is larger */
            if (load_u64(f->lens.data + 8 * i) > o->max_record_bytes) {
                end = (size_t)load_u64(f->offs.data + 8 * i) - 12;
                n = i;
                break;
            }
        }
        f->offs.len = f->lens.len = 8 * n;
        f->n = n;
        f->next = w->base + end;
        if (n > 0) {
            return 1; /* whatever stopped framing is looked at by the next call */
        }
        if (status == FRAME_BAD_DATA_CRC) {
            uint64_t length = load_le64(w->buf.data + end);
            if (!o->skip_corrupt) {
                frame_error(err, path, FRAME_BAD_DATA_CRC, f->index, f->next, length, 0);
                return -1;
            }
            tferror e;
            frame_fields(&e, path, FRAME_BAD_DATA_CRC, f->index, f->next, length, 0);
            reports_skipped(o->reports, &e);
            f->next += 16 + length; /* the length CRC held: step over the record */
            f->index++;
            continue;
        }
        uint64_t length, limit;
        int pending = pending_record(w, f->next, o->max_record_bytes, &length, &limit);
        if (pending == FRAME_OK) { /* a record running past the window: read it whole */
            size_t need = (w->buf.len - end < 12) ? 12 : (size_t)length + 16;
            if (window_fill(w, f->next, need, err)) {
                return -1;
            }
            continue;
        }
        if (!o->skip_corrupt) {
            frame_error(err, path, pending, f->index, f->next, length, limit);
            return -1;
        }
        tferror e; /* what is skipped, as the Python reader's warning names it */
        frame_fields(&e, path, pending, f->index, f->next, length, limit);
        if (pending == FRAME_TRUNCATED) {
            reports_skipped(o->reports, &e);
            return 0; /* the stream ends inside this record: nothing follows */
        }
        int found = resync(f, o->max_record_bytes, err);
        if (found < 0) {
            return -1;
        }
        if (found) {
            e.rest_of_file = 0;
            e.skipped_to = (long long)f->next;
        }
        reports_skipped(o->reports, &e);
        f->index++;
    }
}
