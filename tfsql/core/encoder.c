/*
 * tfsql/core/encoder.c -- Example / SequenceExample / RAW encoding from
 * Arrow column buffers, in two passes (sizes, then bytes).
 */

#include "core_internal.h"

static inline size_t varint_size(uint64_t v) {
#if defined(__GNUC__) || defined(__clang__)
    return (size_t)(((63 - __builtin_clzll(v | 1)) * 9 + 73) / 64);
#else
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
#endif
}

static inline uint8_t *put_varint(uint8_t *o, uint64_t v) {
    while (v >= 0x80) {
        *o++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *o++ = (uint8_t)v;
    return o;
}

/* Size of a length-delimited field with a one-byte tag and a body of `n` bytes. */
static inline uint64_t field_size(uint64_t n) { return 1 + varint_size(n) + n; }

/* [a, b) of the values: the size of the list message's body. */
static inline uint64_t list_body_size(const ecol *e, int64_t a, int64_t b) {
    int kind = e->spec->kind;
    if (a == b) {
        return 0;
    }
    if (kind == KIND_FLOAT) {
        return field_size(4 * (uint64_t)(b - a));
    }
    if (kind == KIND_INT64) {
        uint64_t payload = 0;
        for (int64_t j = a; j < b; j++) {
            payload += varint_size(load_u64(e->values + 8 * j));
        }
        return field_size(payload);
    }
    uint64_t total = 0;
    for (int64_t j = a; j < b; j++) {
        total += field_size((uint64_t)(load_i64(e->vo + 8 * j + 8) - load_i64(e->vo + 8 * j)));
    }
    return total;
}

/* Write a float or bytes Feature holding values [a, b) whose list body is `body` bytes. */
static inline uint8_t *write_feature(const ecol *e, int64_t a, int64_t b, uint64_t body,
                                     uint8_t *o) {
    int kind = e->spec->kind;
    *o++ = (uint8_t)TAG(kind, WT_LEN);
    o = put_varint(o, body);
    if (a == b) {
        return o;
    }
    if (kind == KIND_FLOAT) {
        *o++ = TAG(1, WT_LEN);
        o = put_varint(o, 4 * (uint64_t)(b - a));
#if TFSQL_BIG_ENDIAN
        for (int64_t j = a; j < b; j++) {
            uint32_t v;
            memcpy(&v, e->values + 4 * j, 4);
            store_le32(o, v);
            o += 4;
        }
#else
        memcpy(o, e->values + 4 * a, 4 * (size_t)(b - a));
        o += 4 * (size_t)(b - a);
#endif
    } else { /* bytes (int64 goes through write_int64_feature) */
        for (int64_t j = a; j < b; j++) {
            int64_t s = load_i64(e->vo + 8 * j), t = load_i64(e->vo + 8 * j + 8);
            *o++ = TAG(1, WT_LEN);
            o = put_varint(o, (uint64_t)(t - s));
            memcpy(o, e->values + s, (size_t)(t - s));
            o += t - s;
        }
    }
    return o;
}

/* Write the packed varints of int64 values [a, b) after their tag and length. */
static inline uint8_t *write_int64_feature(const ecol *e, int64_t a, int64_t b, uint64_t body,
                                           uint8_t *o) {
    *o++ = (uint8_t)TAG(KIND_INT64, WT_LEN);
    o = put_varint(o, body);
    if (a == b) {
        return o;
    }
    uint64_t payload = 0;
    for (int64_t j = a; j < b; j++) {
        payload += varint_size(load_u64(e->values + 8 * j));
    }
    *o++ = TAG(1, WT_LEN);
    o = put_varint(o, payload);
    for (int64_t j = a; j < b; j++) {
        o = put_varint(o, load_u64(e->values + 8 * j));
    }
    return o;
}

static inline uint8_t *emit_feature(const ecol *e, int64_t a, int64_t b, uint64_t body,
                                    uint8_t *o) {
    if (e->spec->kind == KIND_INT64) {
        return write_int64_feature(e, a, b, body, o);
    }
    return write_feature(e, a, b, body, o);
}

static inline int row_valid(const ecol *e, size_t row) {
    return e->validity == NULL || e->validity[row] != 0;
}

/* The value range [a, b) of a SCALAR/LIST row. */
static inline void row_range(const ecol *e, size_t row, int64_t *a, int64_t *b) {
    if (e->spec->shape == SCALAR) {
        *a = (int64_t)row;
        *b = (int64_t)row + 1;
    } else {
        *a = load_i64(e->outer + 8 * row);
        *b = load_i64(e->outer + 8 * row + 8);
    }
}

/* Size of the Feature (or FeatureList, for LIST_OF_LIST) of a valid row. */
static uint64_t feature_size(ecol *e, size_t row) {
    int64_t a, b;
    row_range(e, row, &a, &b);
    if (e->spec->shape != LIST_OF_LIST) {
        e->list_body = list_body_size(e, a, b);
        return field_size(e->list_body);
    }
    uint64_t total = 0;
    for (int64_t s = a; s < b; s++) {
        int64_t va = load_i64(e->inner + 8 * s), vb = load_i64(e->inner + 8 * s + 8);
        total += field_size(field_size(list_body_size(e, va, vb)));
    }
    return total;
}

static uint8_t *feature_write(const ecol *e, size_t row, uint8_t *o) {
    int64_t a, b;
    row_range(e, row, &a, &b);
    if (e->spec->shape != LIST_OF_LIST) {
        return emit_feature(e, a, b, e->list_body, o);
    }
    for (int64_t s = a; s < b; s++) {
        int64_t va = load_i64(e->inner + 8 * s), vb = load_i64(e->inner + 8 * s + 8);
        uint64_t body = list_body_size(e, va, vb);
        *o++ = TAG(1, WT_LEN); /* FeatureList.feature */
        o = put_varint(o, field_size(body));
        o = emit_feature(e, va, vb, body, o);
    }
    return o;
}

/* Encode and frame n_rows records (runs without the GIL). */
int encode_core(const schema *sc, ecol *cols, size_t n_rows, tbuf *out, tbuf *ends,
                size_t *bad_row) {
    const int ncols = sc->ncols;
    for (size_t row = 0; row < n_rows; row++) {
        uint64_t payload;
        uint64_t map_size[2] = {0, 0};
        if (sc->record_type == RAW) {
            const ecol *e = &cols[0];
            if (!row_valid(e, row)) {
                *bad_row = row;
                return EE_NULL_RAW;
            }
            payload = (uint64_t)(load_i64(e->vo + 8 * row + 8) - load_i64(e->vo + 8 * row));
        } else {
            for (int c = 0; c < ncols; c++) {
                ecol *e = &cols[c];
                if (!row_valid(e, row)) {
                    continue;
                }
                e->feature = feature_size(e, row);
                uint64_t entry = field_size(e->spec->name_len) + field_size(e->feature);
                map_size[e->spec->location] += field_size(entry);
            }
            payload = field_size(map_size[0]);
            if (sc->record_type == SEQUENCE_EXAMPLE) {
                payload += field_size(map_size[1]);
            }
        }
        if (payload > (uint64_t)PTRDIFF_MAX - 16 || tbuf_reserve(out, 16 + (size_t)payload)) {
            return EE_NOMEM;
        }
        uint8_t *frame = out->data + out->len;
        uint8_t *o = frame + 12;
        write_frame_header(frame, payload);
        if (sc->record_type == RAW) {
            const ecol *e = &cols[0];
            memcpy(o, e->values + load_i64(e->vo + 8 * row), (size_t)payload);
            o += payload;
        } else {
            int nloc = sc->record_type == SEQUENCE_EXAMPLE ? 2 : 1;
            for (int loc = 0; loc < nloc; loc++) {
                *o++ = (uint8_t)TAG(loc + 1, WT_LEN);
                o = put_varint(o, map_size[loc]);
                for (int c = 0; c < ncols; c++) {
                    const ecol *e = &cols[c];
                    if (e->spec->location != loc || !row_valid(e, row)) {
                        continue;
                    }
                    uint64_t entry = field_size(e->spec->name_len) + field_size(e->feature);
                    *o++ = TAG(1, WT_LEN); /* map entry */
                    o = put_varint(o, entry);
                    *o++ = TAG(1, WT_LEN); /* key */
                    o = put_varint(o, e->spec->name_len);
                    memcpy(o, e->spec->name, e->spec->name_len);
                    o += e->spec->name_len;
                    *o++ = TAG(2, WT_LEN); /* value */
                    o = put_varint(o, e->feature);
                    o = feature_write(e, row, o);
                }
            }
        }
        store_le32(o, masked_crc(frame + 12, (size_t)payload));
        o += 4;
        out->len = (size_t)(o - out->data);
        if (tbuf_put_u64(ends, (uint64_t)out->len)) {
            return EE_NOMEM;
        }
    }
    return 0;
}

/* Offsets (int64, `count` of them) must be non-decreasing and within [0, limit]. */
int check_offsets(const uint8_t *p, size_t count, int64_t limit) {
    int64_t prev = 0;
    for (size_t i = 0; i < count; i++) {
        int64_t v = load_i64(p + 8 * i);
        if (v < 0 || v > limit || (i > 0 && v < prev)) {
            return -1;
        }
        prev = v;
    }
    return 0;
}
