/*
 * tfsql/core/decoder.c -- Example / SequenceExample decoding straight into
 * Arrow column buffers: the compiled column table, the per-record map scan, column
 * builders, and the begin / feed / end steps.
 */

#include "core_internal.h"

const char *const kind_names[4] = {"no kind", "bytes_list", "float_list", "int64_list"};

void schema_free(schema *s) {
    if (s->cols != NULL) {
        for (int i = 0; i < s->ncols; i++) {
            free(s->cols[i].name);
        }
        free(s->cols);
    }
    free(s->tables[0].slots);
    free(s->tables[1].slots);
    memset(s, 0, sizeof(*s));
}

/* Build the name tables of compiled columns: 0; -1 when out of memory; -2 when a name
 * is listed twice at one location (*dup: the second column's index). */
int schema_index(schema *s, int *dup) {
    for (int loc = 0; loc < 2; loc++) {
        uint32_t size = 8;
        while (size < 2 * (uint32_t)s->ncols + 2) {
            size *= 2;
        }
        nametable *t = &s->tables[loc];
        t->slots = (int32_t *)malloc(size * sizeof(int32_t));
        if (t->slots == NULL) {
            return -1;
        }
        t->mask = size - 1;
        for (uint32_t k = 0; k < size; k++) {
            t->slots[k] = -1;
        }
        for (int c = 0; c < s->ncols; c++) {
            if (s->cols[c].location != loc) {
                continue;
            }
            const colspec *col = &s->cols[c];
            uint32_t k = name_hash(col->name, col->name_len) & t->mask;
            while (t->slots[k] >= 0) {
                const colspec *other = &s->cols[t->slots[k]];
                if (other->name_len == col->name_len &&
                    memcmp(other->name, col->name, col->name_len) == 0) {
                    *dup = c;
                    return -2;
                }
                k = (k + 1) & t->mask;
            }
            t->slots[k] = c;
        }
    }
    return 0;
}

/* Marks for rolling a column back to the start of a Feature (oneof semantics). */
typedef struct {
    int kind;
    size_t m_values, m_voffs;
    int64_t m_nvalues;
} fstate;

static inline void fstate_begin(const colbuild *cb, fstate *st) {
    st->kind = KIND_NONE;
    st->m_values = cb->values.len;
    st->m_voffs = cb->voffs.len;
    st->m_nvalues = cb->nvalues;
}

static inline void fstate_rollback(colbuild *cb, const fstate *st) {
    cb->values.len = st->m_values;
    cb->voffs.len = st->m_voffs;
    cb->nvalues = st->m_nvalues;
}

#if TFSQL_X86_CRC
#include <emmintrin.h>
/* Copy a value into an output buffer. Large values (images, audio, tensors) are
 * written with non-temporal stores: the output is fresh memory that nothing reads
 * again during the scan, so the stores skip reading each line first and leave the
 * cache to the records still to decode. */
static inline void copy_value(uint8_t *dst, const uint8_t *src, size_t len) {
    if (len < ((size_t)16 << 10)) {
        memcpy(dst, src, len);
        return;
    }
    size_t head = (16 - ((uintptr_t)dst & 15)) & 15;
    memcpy(dst, src, head);
    dst += head;
    src += head;
    len -= head;
    size_t body = len & ~(size_t)63;
    for (size_t i = 0; i < body; i += 64) {
        __m128i a = _mm_loadu_si128((const __m128i *)(src + i));
        __m128i b = _mm_loadu_si128((const __m128i *)(src + i + 16));
        __m128i c = _mm_loadu_si128((const __m128i *)(src + i + 32));
        __m128i d = _mm_loadu_si128((const __m128i *)(src + i + 48));
        _mm_stream_si128((__m128i *)(dst + i), a);
        _mm_stream_si128((__m128i *)(dst + i + 16), b);
        _mm_stream_si128((__m128i *)(dst + i + 32), c);
        _mm_stream_si128((__m128i *)(dst + i + 48), d);
    }
    memcpy(dst + body, src + body, len - body);
    _mm_sfence();
}
#else
static inline void copy_value(uint8_t *dst, const uint8_t *src, size_t len) {
    memcpy(dst, src, len);
}
#endif

/* Append one bytes value and its end offset (room for both reserved by the caller). */
static inline void put_bytes_value(colbuild *cb, const uint8_t *p, size_t len) {
    copy_value(cb->values.data + cb->values.len, p, len);
    cb->values.len += len;
    int32_t off = (int32_t)cb->values.len;
    memcpy(cb->voffs.data + cb->voffs.len, &off, 4);
    cb->voffs.len += 4;
    cb->nvalues++;
}

/* Append the values of one list message of the column's kind. */
static int list_append(colbuild *cb, const uint8_t *p, const uint8_t *end) {
    const int kind = cb->kind;
    while (p < end) {
        uint32_t tag;
        if (rd_tag(&p, end, &tag)) {
            return E_MALFORMED;
        }
        if (tag == TAG(1, WT_LEN)) {
            size_t len;
            if (rd_len(&p, end, &len)) {
                return E_MALFORMED;
            }
            const uint8_t *sub = p;
            p += len;
            if (kind == KIND_INT64) {
                if (tbuf_reserve(&cb->values, len * 8)) {
                    return E_NOMEM;
                }
                size_t n;
                if (decode_packed_varints(sub, p, (int64_t *)(cb->values.data + cb->values.len),
                                          &n)) {
                    return E_MALFORMED;
                }
                cb->values.len += n * 8;
                cb->nvalues += (int64_t)n;
            } else if (kind == KIND_FLOAT) {
                if (len & 3) {
                    return E_MALFORMED;
                }
                if (tbuf_reserve(&cb->values, len)) {
                    return E_NOMEM;
                }
                copy_le32_words(cb->values.data + cb->values.len, sub, len / 4);
                cb->values.len += len;
                cb->nvalues += (int64_t)(len / 4);
            } else {
                if ((int64_t)(cb->values.len + len) > INT32_LIMIT) {
                    return E_OVERFLOW;
                }
                if (tbuf_reserve(&cb->values, len) || tbuf_reserve(&cb->voffs, 4)) {
                    return E_NOMEM;
                }
                put_bytes_value(cb, sub, len);
            }
        } else if (kind == KIND_INT64 && tag == TAG(1, WT_VARINT)) {
            uint64_t v;
            if (rd_varint(&p, end, &v)) {
                return E_MALFORMED;
            }
            if (tbuf_reserve(&cb->values, 8)) {
                return E_NOMEM;
            }
            memcpy(cb->values.data + cb->values.len, &v, 8);
            cb->values.len += 8;
            cb->nvalues++;
        } else if (kind == KIND_FLOAT && tag == TAG(1, WT_I32)) {
            if (end - p < 4) {
                return E_MALFORMED;
            }
            if (tbuf_reserve(&cb->values, 4)) {
                return E_NOMEM;
            }
            copy_le32_words(cb->values.data + cb->values.len, p, 1);
            p += 4;
            cb->values.len += 4;
            cb->nvalues++;
        } else if (skip_field(&p, end, tag)) {
            return E_MALFORMED;
        }
    }
    return 0;
}

/* The encoding nearly every writer produces: a Feature holding one field of the
 * column's kind, whose list holds one packed (or, for bytes, one) value field. Appends
 * the values and returns 1, or returns 0 without side effects so that the general
 * path handles (and reports) everything else. */
static inline int feature_fast(colbuild *cb, const uint8_t *p, const uint8_t *end) {
    if (p >= end || *p != (uint8_t)TAG(cb->kind, WT_LEN)) {
        return 0;
    }
    p++;
    size_t list_len;
    if (rd_len(&p, end, &list_len) || p + list_len != end) {
        return 0;
    }
    if (list_len == 0) {
        return 1; /* an empty list of the right kind */
    }
    if (*p != (uint8_t)TAG(1, WT_LEN)) {
        return 0;
    }
    p++;
    size_t len;
    if (rd_len(&p, end, &len) || p + len != end) {
        return 0;
    }
    if (cb->kind == KIND_INT64) {
        size_t n;
        if (tbuf_reserve(&cb->values, len * 8) ||
            decode_packed_varints(p, end, (int64_t *)(cb->values.data + cb->values.len), &n)) {
            return 0;
        }
        cb->values.len += n * 8;
        cb->nvalues += (int64_t)n;
    } else if (cb->kind == KIND_FLOAT) {
        if ((len & 3) || tbuf_reserve(&cb->values, len)) {
            return 0;
        }
        copy_le32_words(cb->values.data + cb->values.len, p, len / 4);
        cb->values.len += len;
        cb->nvalues += (int64_t)(len / 4);
    } else {
        if ((int64_t)(cb->values.len + len) > INT32_LIMIT || tbuf_reserve(&cb->values, len) ||
            tbuf_reserve(&cb->voffs, 4)) {
            return 0;
        }
        put_bytes_value(cb, p, len);
    }
    return 1;
}

/* A column being fed one Feature after another, and where the current one started. */
typedef struct {
    colbuild *cb;
    fstate *st;
} feed;

/* One field of a Feature: a list of the column's kind is appended, a list of another
 * kind checked (the last kind field wins, see feature_feed); other fields are unknown. */
static inline int feed_field(void *ctx, uint32_t tag, const uint8_t *list, const uint8_t *end) {
    const feed *f = (const feed *)ctx;
    int kind = feature_kind_field(tag);
    if (kind == KIND_NONE) {
        return 0;
    }
    if (kind != f->st->kind) {
        if (f->st->kind == f->cb->kind) {
            fstate_rollback(f->cb, f->st);
        }
        f->st->kind = kind;
    }
    if (kind == f->cb->kind) {
        return list_append(f->cb, list, end);
    }
    uint64_t ignored;
    return list_count(kind, list, end, &ignored, NULL) ? E_MALFORMED : 0;
}

/* Feed one span of Feature bytes. Several spans (a map entry whose value field
 * repeats) merge like one message: the last kind field wins, and the occurrences of
 * that kind after the last different kind concatenate. */
static int feature_feed(colbuild *cb, fstate *st, const uint8_t *p, const uint8_t *end) {
    feed f = {cb, st};
    return each_len_field(p, end, feed_field, &f, E_MALFORMED);
}

/* A map entry's value field (2) is fed as a Feature; its other fields are skipped. */
static int feed_value(void *ctx, uint32_t tag, const uint8_t *value, const uint8_t *end) {
    const feed *f = (const feed *)ctx;
    return tag == TAG(2, WT_LEN) ? feature_feed(f->cb, f->st, value, end) : 0;
}

/* Feed every value field (field 2) of a map entry. */
static int feature_feed_entry(colbuild *cb, fstate *st, const uint8_t *p, const uint8_t *end) {
    feed f = {cb, st};
    return each_len_field(p, end, feed_value, &f, E_MALFORMED);
}

static inline void bit_set(uint8_t *bits, int64_t i) { bits[i >> 3] |= (uint8_t)(1u << (i & 7)); }

static int put_offset(tbuf *b, int64_t v) {
    if (v > INT32_LIMIT) {
        return E_OVERFLOW;
    }
    return tbuf_put_i32(b, (int32_t)v) ? E_NOMEM : 0;
}

/* One step (a Feature) of a FeatureList into a LIST_OF_LIST column. */
static int lol_step(dctx *x, colbuild *cb, const uint8_t *p, const uint8_t *end) {
    fstate st;
    fstate_begin(cb, &st);
    int rc = feature_feed(cb, &st, p, end);
    if (rc) {
        return rc;
    }
    if (st.kind != KIND_NONE && st.kind != cb->kind) {
        x->err_found_kind = st.kind;
        return E_KIND_MISMATCH;
    }
    int64_t i = cb->ninner;
    if (cb->inner_validity.len <= (size_t)(i >> 3)) {
        if (tbuf_reserve(&cb->inner_validity, 1)) {
            return E_NOMEM;
        }
        cb->inner_validity.data[cb->inner_validity.len++] = 0;
    }
    if (st.kind == KIND_NONE) {
        cb->inner_null_count++;
    } else {
        bit_set(cb->inner_validity.data, i);
    }
    cb->ninner++;
    return put_offset(&cb->inner, cb->nvalues);
}

/* A LIST_OF_LIST column being fed FeatureLists, and the decoder (for its errors). */
typedef struct {
    dctx *x;
    colbuild *cb;
} lol_feed;

/* A FeatureList's field 1 is a step (a Feature); its other fields are skipped. */
static int lol_step_field(void *ctx, uint32_t tag, const uint8_t *step, const uint8_t *end) {
    const lol_feed *f = (const lol_feed *)ctx;
    return tag == TAG(1, WT_LEN) ? lol_step(f->x, f->cb, step, end) : 0;
}

/* A map entry's value field (2) is a FeatureList: its steps. */
static int lol_value_field(void *ctx, uint32_t tag, const uint8_t *value, const uint8_t *end) {
    return tag == TAG(2, WT_LEN) ? each_len_field(value, end, lol_step_field, ctx, E_MALFORMED)
                                 : 0;
}

static int lol_row(dctx *x, colbuild *cb, const slotstate *s, size_t r, int present) {
    if (present) {
        lol_feed f = {x, cb};
        int rc = 0;
        if (s->nval == 1) {
            rc = each_len_field(s->val, s->val_end, lol_step_field, &f, E_MALFORMED);
        } else if (s->nval > 1) {
            rc = each_len_field(s->entry, s->entry_end, lol_value_field, &f, E_MALFORMED);
        }
        if (rc) {
            return rc;
        }
        bit_set(cb->validity.data, (int64_t)r);
    } else {
        cb->null_count++;
    }
    return put_offset(&cb->outer, cb->ninner);
}

/* Finish row `r` of column `c` from what the record scan found. */
static int column_row(dctx *x, int c, size_t r) {
    colbuild *cb = &x->cb[c];
    const slotstate *s = &x->slots[c];
    int present = s->stamp == r + 1;
    if (cb->shape == LIST_OF_LIST) {
        return lol_row(x, cb, s, r, present);
    }
    int kind = KIND_NONE;
    int64_t before = cb->nvalues;
    if (present && s->nval == 1 && feature_fast(cb, s->val, s->val_end)) {
        kind = cb->kind;
    } else if (present) {
        fstate st;
        fstate_begin(cb, &st);
        int rc = 0;
        if (s->nval == 1) {
            rc = feature_feed(cb, &st, s->val, s->val_end);
        } else if (s->nval > 1) {
            rc = feature_feed_entry(cb, &st, s->entry, s->entry_end);
        }
        if (rc) {
            return rc;
        }
        kind = st.kind;
        if (kind != KIND_NONE && kind != cb->kind) {
            x->err_found_kind = kind;
            return E_KIND_MISMATCH;
        }
    }
    int64_t count = cb->nvalues - before;
    if (cb->shape == SCALAR) {
        if (count > 1) {
            x->err_count = (uint64_t)count;
            return E_NOT_SCALAR;
        }
        if (count == 1) {
            bit_set(cb->validity.data, (int64_t)r);
            return 0;
        }
        cb->null_count++;
        if (cb->kind == KIND_BYTES) {
            if (tbuf_put_i32(&cb->voffs, (int32_t)cb->values.len)) {
                return E_NOMEM;
            }
        } else {
            size_t width = cb->kind == KIND_INT64 ? 8 : 4;
            if (tbuf_reserve(&cb->values, width)) {
                return E_NOMEM;
            }
            memset(cb->values.data + cb->values.len, 0, width);
            cb->values.len += width;
        }
        cb->nvalues++;
        return 0;
    }
    if (kind == KIND_NONE) {
        cb->null_count++;
    } else {
        bit_set(cb->validity.data, (int64_t)r);
    }
    return put_offset(&cb->outer, cb->nvalues);
}

/* One map entry (key 1, value 2) of Features / FeatureLists: remember where a
 * projected one is; an unprojected one is skipped by length. */
/* Remember a feature name that is not a column (first MAX_UNKNOWN distinct ones). */
static void note_unknown(dctx *x, int loc, const uint8_t *key, size_t len) {
    if (x->n_unknown >= MAX_UNKNOWN) {
        return;
    }
    for (int i = 0; i < x->n_unknown; i++) {
        const unknown_key *u = &x->unknown[i];
        if (u->loc == loc && u->len == len && keys_equal(u->key, key, len)) {
            return;
        }
    }
    unknown_key *u = &x->unknown[x->n_unknown++];
    u->loc = loc;
    u->key = key;
    u->len = len;
}

/* Settle a map entry [p, end) whose parts `e` were read and whose column `c` was found
 * (-1: none). A record is valid or not whatever the columns asked for: an entry no
 * column reads (another feature, or an earlier entry of a key a later one replaces) is
 * checked as protobuf would parse it, without decoding its values; a projected one is
 * remembered in its column's slot. */
static inline int settle_entry(dctx *x, int loc, const uint8_t *p, const uint8_t *end,
                               const entry_parts *e, int c, size_t stamp) {
    if (c < 0) {
        if (e->key == p + 2 && e->nval <= 1) { /* one key (checked above), one value */
            if (e->nval == 0) {
                return 0;
            }
            int bad = loc == FEATURES ? feature_layout_well_formed(e->val, e->val_end) : 1;
            if (bad > 0) {
                bad = loc == FEATURES ? feature_well_formed(e->val, e->val_end)
                                      : feature_list_well_formed(e->val, e->val_end);
            }
            return bad ? E_MALFORMED : 0;
        }
        return entry_well_formed(p, end, loc) ? E_MALFORMED : 0;
    }
    if ((e->key != p + 2 || e->nval > 1) && entry_well_formed(p, end, loc)) {
        return E_MALFORMED; /* several keys or values: protobuf parses each one */
    }
    slotstate *s = &x->slots[c];
    if (s->stamp == stamp && entry_well_formed(s->entry, s->entry_end, loc)) {
        return E_MALFORMED;
    }
    s->stamp = stamp;
    s->entry = p;
    s->entry_end = end;
    s->val = e->val;
    s->val_end = e->val_end;
    s->nval = e->nval;
    return 0;
}

static inline int scan_entry(dctx *x, int loc, const uint8_t *p, const uint8_t *end,
                             size_t stamp, int ordinal) {
    entry_parts e;
    if (read_entry(p, end, &e)) {
        return E_MALFORMED;
    }
    const uint8_t *key = e.key;
    size_t key_len = e.key_len;
    int c;
    if (ordinal < NHINT) {
        hint *h = &x->hints[loc][ordinal];
        if (ordinal < x->hint_used[loc] && h->len == key_len &&
            keys_equal(h->key, key, key_len)) {
            c = h->col;
        } else {
            if (!utf8_valid(key, key_len)) {
                return E_MALFORMED; /* a proto3 string: protobuf refuses the record */
            }
            c = nametable_find(&x->sc->tables[loc], x->sc->cols, key, key_len);
            h->key = key;
            h->len = key_len;
            h->col = c;
            if (ordinal >= x->hint_used[loc]) {
                x->hint_used[loc] = ordinal + 1;
            }
            if (c < 0 && x->track_unknown) {
                note_unknown(x, loc, key, key_len);
            }
        }
    } else {
        if (!utf8_valid(key, key_len)) {
            return E_MALFORMED;
        }
        c = nametable_find(&x->sc->tables[loc], x->sc->cols, key, key_len);
        if (c < 0 && x->track_unknown) {
            note_unknown(x, loc, key, key_len);
        }
    }
    return settle_entry(x, loc, p, end, &e, c, stamp);
}

/* The common case of scan_entry: an entry [p, end) in the layout writers produce (a
 * short key, then one value ending the entry) whose key is the hint `h` (the key at the
 * same position of the previous record, already checked). Returns 1 without side
 * effects when that is not so (scan_entry then reads the entry), else what
 * settle_entry returns. */
static inline int scan_hinted_entry(dctx *x, int loc, const uint8_t *p, const uint8_t *end,
                                    size_t stamp, const hint *h) {
    size_t room = (size_t)(end - p);
    size_t k = h->len;
    if (room < 4 + k || p[0] != TAG(1, WT_LEN) || p[1] != k || p[2 + k] != TAG(2, WT_LEN) ||
        !keys_equal(h->key, p + 2, k)) {
        return 1;
    }
    const uint8_t *v = p + 3 + k;
    size_t vlen;
    if (rd_len(&v, end, &vlen) || vlen != (size_t)(end - v)) {
        return 1;
    }
    entry_parts e = {p + 2, k, v, end, 1};
    if (h->col >= 0 && x->slots[h->col].stamp == stamp) {
        return 1; /* a key repeated in the record: scan_entry's general rules */
    }
    return settle_entry(x, loc, p, end, &e, h->col, stamp);
}

/* Where the scan of one record is: the decoder, the record's stamp, and for each
 * location the ordinal of the next map entry there (for the key hints). */
typedef struct {
    dctx *x;
    size_t stamp;
    int seq;
    int loc;
    int ordinal[2];
} record_scan;

/* A Features / FeatureLists message [p, end): a repeated map entry field 1 (other
 * fields skipped). An entry whose key is the hint for its position takes the short
 * path (scan_hinted_entry); the position is kept in a register meanwhile. */
static inline int scan_map(record_scan *rs, const uint8_t *p, const uint8_t *end) {
    dctx *x = rs->x;
    const int loc = rs->loc;
    int ordinal = rs->ordinal[loc];
    while (p < end) {
        if (*p == TAG(1, WT_LEN) && ordinal < x->hint_used[loc]) {
            const uint8_t *q = p + 1;
            size_t len;
            if (rd_len(&q, end, &len) == 0) {
                int rc = scan_hinted_entry(x, loc, q, q + len, rs->stamp, &x->hints[loc][ordinal]);
                if (rc != 1) {
                    if (rc) {
                        return rc;
                    }
                    ordinal++;
                    p = q + len;
                    continue;
                }
            }
        }
        uint32_t tag;
        const uint8_t *body = NULL;
        size_t len = 0;
        if (next_field(&p, end, &tag, &body, &len)) {
            return E_MALFORMED;
        }
        if (tag == TAG(1, WT_LEN)) {
            int rc = scan_entry(x, loc, body, body + len, rs->stamp, ordinal++);
            if (rc) {
                return rc;
            }
        }
    }
    rs->ordinal[loc] = ordinal;
    return 0;
}

/* The top level of an Example (features = 1) or SequenceExample (context = 1,
 * feature_lists = 2). A repeated message field merges, so its maps merge. */
static inline int scan_record_field(void *ctx, uint32_t tag, const uint8_t *map,
                                    const uint8_t *end) {
    record_scan *rs = (record_scan *)ctx;
    rs->loc = map_location(tag, rs->seq);
    return rs->loc < 0 ? 0 : scan_map(rs, map, end);
}

static int scan_record(dctx *x, const uint8_t *p, const uint8_t *end, size_t stamp) {
    record_scan rs = {x, stamp, x->sc->record_type == SEQUENCE_EXAMPLE, FEATURES, {0, 0}};
    return each_len_field(p, end, scan_record_field, &rs, E_MALFORMED);
}

/* The records' payload bytes in all (at most the buffer's size, whatever the lengths say). */
size_t records_payload(const uint8_t *lens, size_t n, size_t buflen) {
    uint64_t total = 0;
    for (size_t r = 0; r < n && total < buflen; r++) {
        total += load_u64(lens + 8 * r);
    }
    return total < buflen ? (size_t)total : buflen;
}

void colbuild_free(colbuild *cb) {
    tbuf_recycle(&cb->validity);
    tbuf_recycle(&cb->outer);
    tbuf_recycle(&cb->inner_validity);
    tbuf_recycle(&cb->inner);
    tbuf_recycle(&cb->voffs);
    tbuf_recycle(&cb->values);
}

/* Preallocate what a column needs for n rows whose payloads total `payload` bytes (a
 * bytes column's values are a part of those payloads, so reserving that much at once
 * spares the copies of growing, and a large buffer gets its huge pages advised before
 * its first byte is written); starts offsets at 0. */
/* What each numeric list column of `sc` reserves for its values when the records hold
 * `payload` bytes: the payload (floats take at least 4 bytes on the wire, so a float
 * list fits), shared out when there are more than two such columns, so that a wide
 * schema does not reserve many times the batch. Reserving at once spares the copies
 * of growing; pages never touched cost no memory. */
size_t list_reserve(const schema *sc, size_t payload) {
    size_t lists = 0;
    for (int c = 0; sc->record_type != RAW && c < sc->ncols; c++) {
        lists += sc->cols[c].shape != SCALAR && sc->cols[c].kind != KIND_BYTES;
    }
    return lists <= 2 ? payload : 2 * (payload / lists);
}

/* Start `b` with room for `reserve` bytes, or, when `expected` (an earlier batch's
 * length, 0: unknown) is less, with a pooled buffer of about that length a released
 * batch left (tbuf_take_sized leaves a quarter to spare, so that batches whose sizes
 * vary a little fit each other's buffers). Without one, `reserve` bytes from malloc:
 * pages never touched cost nothing, while a buffer started smaller than its batch would
 * be copied as it grows (a scan's first batches grow one after another). */
static int start_sized(tbuf *b, size_t reserve, size_t expected) {
    if (expected > 0 && expected < reserve) {
        size_t want = expected + expected / 4 + 64;
        return tbuf_start(b, expected, want < reserve ? want : reserve, reserve);
    }
    return tbuf_start(b, reserve, reserve, reserve);
}

int colbuild_init(colbuild *cb, int kind, int shape, size_t n, size_t payload,
                  size_t list_values) {
    return colbuild_init_sized(cb, kind, shape, n, payload, list_values, NULL);
}

int colbuild_init_sized(colbuild *cb, int kind, int shape, size_t n, size_t payload,
                        size_t list_values, const size_t *expect) {
    static const size_t none[COL_SIZES] = {0, 0, 0};
    const size_t *ex = expect != NULL ? expect : none;
    memset(cb, 0, sizeof(*cb));
    cb->kind = kind;
    cb->shape = shape;
    size_t nbytes = (n + 7) / 8;
    size_t width = kind == KIND_INT64 ? 8 : kind == KIND_FLOAT ? 4 : 0;
    if (tbuf_reserve(&cb->validity, nbytes ? nbytes : 1)) {
        return -1;
    }
    memset(cb->validity.data, 0, nbytes);
    cb->validity.len = nbytes;
    if (shape != SCALAR && start_sized(&cb->outer, 4 * (n + 1), ex[1])) {
        return -1;
    }
    if (shape != SCALAR) {
        tbuf_put_i32(&cb->outer, 0);
    }
    if (shape == LIST_OF_LIST) {
        if (tbuf_reserve(&cb->inner, 4 * (n + 1))) {
            return -1;
        }
        tbuf_put_i32(&cb->inner, 0);
    }
    if (kind == KIND_BYTES) {
        if (start_sized(&cb->voffs, 4 * (n + 1), ex[2])) {
            return -1;
        }
        tbuf_put_i32(&cb->voffs, 0);
    }
    /* never NULL, so memcpy of 0 bytes into it stays defined */
    size_t want = kind == KIND_BYTES ? payload : width * n;
    if (kind != KIND_BYTES && shape != SCALAR && list_values > want) {
        want = list_values;
    }
    if (start_sized(&cb->values, want > 64 ? want : 64, ex[0])) {
        return -1;
    }
    return 0;
}

/* Check the data CRCs (against the footers after the payloads) of the next records from
 * r: three at once where their spans are sound (crc32c_values3), else the ones before
 * the first unsound span (which decoding then reports) or just r. Sets crc_checked past
 * the records checked and crc_bad to the first mismatch among them (SIZE_MAX: none). */
static void check_crcs_ahead(dctx *x, const uint8_t *buf, size_t buflen, const uint8_t *offs,
                             const uint8_t *lens, size_t n, size_t r) {
    const uint8_t *p[3];
    size_t len[3];
    size_t k = 0;
    x->crc_bad = SIZE_MAX;
    for (; k < 3 && r + k < n; k++) {
        size_t start, l;
        if (record_span(offs, lens, r + k, buflen, &start, &l)) {
            break;
        }
        if (buflen - start - l < 4) { /* no footer: a mismatch */
            x->crc_bad = r + k;
            break;
        }
        p[k] = buf + start;
        len[k] = l;
    }
    uint32_t crc[3];
    if (k == 3) {
        crc32c_values3(p, len, crc);
    } else {
        for (size_t j = 0; j < k; j++) {
            crc[j] = crc32c_value(0, p[j], len[j]);
        }
    }
    for (size_t j = 0; j < k; j++) {
        if (crc_mask(crc[j]) != load_le32(p[j] + len[j])) {
            x->crc_bad = r + j;
            break;
        }
    }
    x->crc_checked = x->crc_bad != SIZE_MAX ? x->crc_bad + 1 : r + (k ? k : 1);
}

/* With x->verify_crc, whether record r's data CRC matches its footer (checked a few
 * records ahead of decoding, see check_crcs_ahead). */
static inline int record_crc_ok(dctx *x, const uint8_t *buf, size_t buflen, const uint8_t *offs,
                                const uint8_t *lens, size_t n, size_t r) {
    if (!x->verify_crc) {
        return 1;
    }
    if (r >= x->crc_checked) {
        check_crcs_ahead(x, buf, buflen, offs, lens, n, r);
    }
    return r != x->crc_bad;
}

/* Record r's span [*start, *start + *len) in the buffer, its data CRC checked with
 * x->verify_crc: 0, or E_SPAN / E_DATA_CRC with x->err_record set. */
static inline int record_checked(dctx *x, const uint8_t *buf, size_t buflen, const uint8_t *offs,
                                 const uint8_t *lens, size_t n, size_t r, size_t *start,
                                 size_t *len) {
    if (record_span(offs, lens, r, buflen, start, len)) {
        x->err_record = r;
        return E_SPAN;
    }
    if (!record_crc_ok(x, buf, buflen, offs, lens, n, r)) {
        x->err_record = r;
        return E_DATA_CRC;
    }
    return 0;
}

/* The decode loop (runs without the GIL). */
int decode_core(dctx *x, const uint8_t *buf, size_t buflen, const uint8_t *offs,
                const uint8_t *lens, size_t n) {
    const schema *sc = x->sc;
    if (sc->record_type == RAW) {
        colbuild *cb = &x->cb[0];
        for (size_t r = 0; r < n; r++) {
            size_t start, len;
            int rc = record_checked(x, buf, buflen, offs, lens, n, r, &start, &len);
            if (rc) {
                return rc;
            }
            if ((int64_t)(cb->values.len + len) > INT32_LIMIT) {
                x->err_record = r;
                x->err_column = 0;
                return E_OVERFLOW;
            }
            if (tbuf_reserve(&cb->values, len)) {
                return E_NOMEM;
            }
            memcpy(cb->values.data + cb->values.len, buf + start, len);
            cb->values.len += len;
            if (tbuf_put_i32(&cb->voffs, (int32_t)cb->values.len)) {
                return E_NOMEM;
            }
        }
        return 0;
    }
    for (size_t r = 0; r < n; r++) {
        size_t start, len;
        int rc = record_checked(x, buf, buflen, offs, lens, n, r, &start, &len);
        if (rc) {
            return rc;
        }
        size_t row = x->row_base + r;
        rc = scan_record(x, buf + start, buf + start + len, row + 1);
        if (rc) {
            x->err_record = r;
            x->err_column = -1;
            return rc;
        }
        for (int c = 0; c < sc->ncols; c++) {
            rc = column_row(x, c, row);
            if (rc) {
                x->err_record = r;
                x->err_column = c;
                /* protobuf refuses a record it cannot parse before any column sees it */
                if (rc != E_NOMEM &&
                    record_well_formed(buf + start, buf + start + len,
                                       sc->record_type == SEQUENCE_EXAMPLE)) {
                    x->err_column = -1;
                    return E_MALFORMED;
                }
                return rc;
            }
        }
    }
    return 0;
}

/* -- decoding in steps: begin, feed (any number of times), results ---------- */
/* Decoder.decode is one feed; a Builder feeds many buffers into the same columns, so a
 * reader can decode each small read while it is in cache and still cut large batches. */

int decode_ncols(const schema *sc) { return sc->record_type == RAW ? 1 : sc->ncols; }

/* Set up `x` to decode into fresh columns, reserving for about `n` rows whose payloads
 * total `payload` bytes; E_NOMEM when out of memory (then decode_end still frees). */
int decode_begin(dctx *x, const schema *sc, size_t n, size_t payload) {
    return decode_begin_sized(x, sc, n, payload, NULL);
}

int decode_begin_sized(dctx *x, const schema *sc, size_t n, size_t payload, const size_t *sizes) {
    int ncols = decode_ncols(sc);
    memset(x, 0, sizeof(*x));
    x->sc = sc;
    x->err_column = -1;
    size_t lists = list_reserve(sc, payload);
    x->slots = (slotstate *)calloc((size_t)ncols + 1, sizeof(slotstate));
    x->cb = (colbuild *)calloc((size_t)ncols + 1, sizeof(colbuild));
    if (x->slots == NULL || x->cb == NULL) {
        return E_NOMEM;
    }
    for (int c = 0; c < ncols; c++) {
        int kind = sc->record_type == RAW ? KIND_BYTES : sc->cols[c].kind;
        int shape = sc->record_type == RAW ? SCALAR : sc->cols[c].shape;
        const size_t *expect = sizes != NULL ? sizes + (size_t)c * COL_SIZES : NULL;
        if (colbuild_init_sized(&x->cb[c], kind, shape, n, payload, lists, expect)) {
            return E_NOMEM;
        }
        x->cb[c].validity.len = 0; /* grown (zeroed) by each feed */
    }
    return 0;
}

/* Decode `n` more records into the columns (runs without the GIL); 0 or an E_ code,
 * with x->err_record counted from this call's first record. */
int decode_feed(dctx *x, const uint8_t *buf, size_t buflen, const uint8_t *offs,
                const uint8_t *lens, size_t n, int verify) {
    size_t bytes = (x->row_base + n + 7) / 8;
    for (int c = 0; c < decode_ncols(x->sc); c++) {
        tbuf *v = &x->cb[c].validity;
        if (v->len < bytes) {
            if (tbuf_reserve(v, bytes - v->len)) {
                return E_NOMEM;
            }
            memset(v->data + v->len, 0, bytes - v->len);
            v->len = bytes;
        }
    }
    x->verify_crc = verify;
    x->crc_checked = 0;
    x->crc_bad = SIZE_MAX;
    x->hint_used[0] = x->hint_used[1] = 0; /* the hints point into the previous buffer */
    x->n_unknown = 0;                      /* so do the unknown names: reported per feed */
    x->err_column = -1;
    int rc = decode_core(x, buf, buflen, offs, lens, n);
    if (rc == 0) {
        x->row_base += n;
    }
    return rc;
}

void decode_note_sizes(const dctx *x, size_t *sizes) {
    for (int c = 0; x->cb != NULL && c < decode_ncols(x->sc); c++) {
        const colbuild *cb = &x->cb[c];
        const size_t lens[COL_SIZES] = {cb->values.len, cb->outer.len, cb->voffs.len};
        for (int k = 0; k < COL_SIZES; k++) {
            size_t *kept = &sizes[(size_t)c * COL_SIZES + k];
            size_t lowered = *kept - *kept / 16;
            *kept = lens[k] > lowered ? lens[k] : lowered;
        }
    }
}

/* Add the feature names the last feed found outside the columns to `unknown` (a set). */

void decode_end(dctx *x) {
    if (x->cb != NULL) {
        for (int c = 0; c < decode_ncols(x->sc); c++) {
            colbuild_free(&x->cb[c]);
        }
    }
    free(x->cb);
    free(x->slots);
    x->cb = NULL;
    x->slots = NULL;
}
