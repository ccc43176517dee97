/* One file's inference sample read through the core's record reader: the loop every
 * binding runs (tfsql.inference, the DuckDB extension's inference.c), so that the
 * records a sample takes, and which damage ends it or is an error, are decided once.
 * The binding supplies the reader (its read callback: pread, fsspec, DuckDB's file
 * system) and turns the result into its errors and warnings. */
#include <stdint.h>
#include <string.h>

#include "core_internal.h"

/* The damage a sample goes past (reader_skip, as the scan does) or stops at: 1 past it,
 * 0 stop (the file's sample ends: the scan reports it where it reads it), -1 an error
 * now (INFER_SAMPLE_DAMAGE). */
static int on_damage(const infer_state *s, const reader_damage *d, const infer_sample_options *o) {
    if (d->status == READER_STREAM_CORRUPT || d->status == READER_STREAM_TRUNCATED) {
        return -1; /* the compressed stream itself: nothing further can be read */
    }
    if (o->skip_corrupt || o->tolerant) {
        return o->skip_corrupt ? 1 : 0;
    }
    /* a header over max_record_bytes, or framing lost before the sample holds any record
     * (the file may not be TFRecord at all): the answer now; a data CRC that fails leaves
     * the framing whole, for the scan to report */
    int lost = d->status != FRAME_BAD_DATA_CRC && infer_sampled_records(s) == 0;
    return d->status == FRAME_TOO_LONG || lost ? -1 : 0;
}

int infer_sample_file(infer_state *s, record_reader *r, const infer_sample_options *o,
                      int *sampled, int *sequence_hint, infer_error *e, char *err) {
    *sampled = *sequence_hint = 0;
    memset(e, 0, sizeof(*e));
    uint64_t budget = infer_file_budget(s);
    if (budget < r->budget) {
        r->budget = budget; /* about the sample, not twice that */
    }
    for (;;) {
        long long wanted = infer_records_wanted(s);
        if (wanted == 0) {
            return INFER_SAMPLE_OK;
        }
        reader_limits limits = {wanted, -1, o->max_record_bytes, o->verify};
        int got = reader_next(r, &limits, err);
        while (got == READER_DAMAGE) {
            int act = on_damage(s, &r->damage, o);
            if (act <= 0) {
                return act < 0 ? INFER_SAMPLE_DAMAGE : INFER_SAMPLE_OK;
            }
            got = reader_skip(r, o->max_record_bytes, err);
            if (got == 0) {
                got = reader_next(r, &limits, err);
            }
        }
        if (got <= 0) {
            return got < 0 ? INFER_SAMPLE_FAILED : INFER_SAMPLE_OK;
        }
        const uint8_t *offs = r->offs.data, *lens = r->lens.data;
        if (r->first == 0) {
            *sampled = 1;
            *sequence_hint = infer_record_type(s) == EXAMPLE &&
                             tfsql_looks_like_sequence_example(r->buf.data + load_u64(offs),
                                                               (size_t)load_u64(lens));
        }
        int done = 0;
        size_t taken = 0;
        int rc = infer_add(s, r->buf.data, r->buf.len, offs, lens, r->n, r->first, r->base,
                           &taken, &done, e);
        if (rc == INFER_MALFORMED && o->tolerant) {
            return INFER_SAMPLE_OK; /* the scan reports it */
        }
        if (rc != INFER_OK) {
            e->code = rc;
            return INFER_SAMPLE_REFUSED;
        }
        if (done) {
            return INFER_SAMPLE_OK;
        }
    }
}
