/*
 * tfsql/core/summary.c -- the per-feature statistics of sampled records
 * that schema inference reads (kinds, presence, list lengths, UTF-8).
 */

#include "core_internal.h"

static int sctx_grow_table(sctx *s) {
    uint32_t size = s->table ? 2 * (s->mask + 1) : 64;
    int32_t *table = (int32_t *)malloc(size * sizeof(int32_t));
    if (table == NULL) {
        return -1;
    }
    for (uint32_t k = 0; k < size; k++) {
        table[k] = -1;
    }
    size_t n = s->stats.len / sizeof(sstat);
    for (size_t i = 0; i < n; i++) {
        uint32_t k = sctx_stat(s, (int32_t)i)->hash & (size - 1);
        while (table[k] >= 0) {
            k = (k + 1) & (size - 1);
        }
        table[k] = (int32_t)i;
    }
    free(s->table);
    s->table = table;
    s->mask = size - 1;
    return 0;
}

/* Find or add the stat of (location, key); -1 when out of memory. */
static int32_t sctx_lookup(sctx *s, int loc, const uint8_t *key, size_t len) {
    size_t n = s->stats.len / sizeof(sstat);
    if (s->table == NULL || 2 * (n + 1) > (size_t)s->mask + 1) {
        if (n >= 0x3fffffff || sctx_grow_table(s)) {
            return -1;
        }
    }
    uint32_t h = name_hash(key, len) ^ (uint32_t)loc * 0x9e3779b9u;
    uint32_t k = h & s->mask;
    for (;;) {
        int32_t i = s->table[k];
        if (i < 0) {
            break;
        }
        sstat *st = sctx_stat(s, i);
        if (st->hash == h && st->location == loc && st->name_len == len &&
            memcmp(st->name, key, len) == 0) {
            return i;
        }
        k = (k + 1) & s->mask;
    }
    if (tbuf_reserve(&s->stats, sizeof(sstat))) {
        return -1;
    }
    sstat *st = (sstat *)(s->stats.data + s->stats.len);
    memset(st, 0, sizeof(*st));
    st->name = key;
    st->name_len = len;
    st->hash = h;
    st->location = loc;
    st->utf8 = 1;
    s->stats.len += sizeof(sstat);
    s->table[k] = (int32_t)n;
    return (int32_t)n;
}

static int summarize_entry(sctx *s, int loc, const uint8_t *p, const uint8_t *end,
                           size_t stamp) {
    entry_parts e = {0};
    if (read_entry(p, end, &e) || !utf8_valid(e.key, e.key_len)) {
        return E_MALFORMED; /* a feature name is a proto3 string: protobuf refuses it */
    }
    if ((e.key != p + 2 || e.nval > 1) && entry_well_formed(p, end, loc)) {
        return E_MALFORMED; /* several keys or values: protobuf parses each one */
    }
    int32_t i = sctx_lookup(s, loc, e.key, e.key_len);
    if (i < 0) {
        return E_NOMEM;
    }
    sstat *st = sctx_stat(s, i);
    if (st->stamp == stamp && entry_well_formed(st->entry, st->entry_end, loc)) {
        return E_MALFORMED; /* an earlier entry of the key, replaced, must still parse */
    }
    if (st->stamp != stamp) {
        st->stamp = stamp;
        int32_t v = i;
        if (tbuf_reserve(&s->touched, 4)) {
            return E_NOMEM;
        }
        memcpy(s->touched.data + s->touched.len, &v, 4);
        s->touched.len += 4;
    }
    st->entry = p;
    st->entry_end = end;
    return 0;
}

static int summarize_map(sctx *s, int loc, const uint8_t *p, const uint8_t *end, size_t stamp) {
    while (p < end) {
        uint32_t tag;
        const uint8_t *entry = NULL;
        size_t len = 0;
        if (next_field(&p, end, &tag, &entry, &len)) {
            return E_MALFORMED;
        }
        int rc = tag == TAG(1, WT_LEN) ? summarize_entry(s, loc, entry, entry + len, stamp) : 0;
        if (rc) {
            return rc;
        }
    }
    return 0;
}

/* Kind, value count and UTF-8-ness of a Feature, fed span by span (oneof merge). */
typedef struct {
    int kind;
    uint64_t count;
    int utf8;
} sfeat;

static int sfeat_feed(sfeat *f, const uint8_t *p, const uint8_t *end, int want_utf8) {
    while (p < end) {
        uint32_t tag;
        const uint8_t *list;
        size_t len;
        if (next_field(&p, end, &tag, &list, &len)) {
            return E_MALFORMED;
        }
        int kind = feature_kind_field(tag);
        if (kind == KIND_NONE) {
            continue;
        }
        if (kind != f->kind) {
            f->kind = kind;
            f->count = 0;
            f->utf8 = 1;
        }
        uint64_t k;
        if (list_count(kind, list, list + len, &k,
                       (want_utf8 && kind == KIND_BYTES) ? &f->utf8 : NULL)) {
            return E_MALFORMED;
        }
        f->count += k;
    }
    return 0;
}

/* Fold the current record's last entry of `st` into its statistics. */
static int summarize_feature(sstat *st) {
    const uint8_t *p = st->entry, *end = st->entry_end;
    uint64_t kinds = 0, len = 0, inner_max = 0;
    int utf8 = 1;
    sfeat f = {KIND_NONE, 0, 1};
    while (p < end) {
        uint32_t tag;
        const uint8_t *v;
        size_t vlen = 0;
        if (next_field(&p, end, &tag, &v, &vlen)) {
            return E_MALFORMED;
        }
        if (tag != TAG(2, WT_LEN)) {
            continue;
        }
        const uint8_t *vend = v + vlen;
        if (st->location == FEATURES) {
            if (sfeat_feed(&f, v, vend, st->utf8)) {
                return E_MALFORMED;
            }
            continue;
        }
        while (v < vend) { /* a FeatureList: its steps */
            const uint8_t *feature = NULL;
            size_t slen = 0;
            if (next_field(&v, vend, &tag, &feature, &slen)) {
                return E_MALFORMED;
            }
            if (tag != TAG(1, WT_LEN)) {
                continue;
            }
            sfeat step = {KIND_NONE, 0, 1};
            if (sfeat_feed(&step, feature, feature + slen, st->utf8 && utf8)) {
                return E_MALFORMED;
            }
            kinds |= 1ull << step.kind;
            inner_max = step.count > inner_max ? step.count : inner_max;
            if (step.kind == KIND_BYTES && !step.utf8) {
                utf8 = 0;
            }
            len++;
        }
    }
    if (st->location == FEATURES) {
        kinds = 1ull << f.kind;
        len = inner_max = f.count;
        utf8 = f.kind == KIND_BYTES ? f.utf8 : 1;
    }
    st->kinds |= kinds;
    if (st->present == 0 || len < st->min_len) {
        st->min_len = len;
    }
    if (len > st->max_len) {
        st->max_len = len;
    }
    if (inner_max > st->max_inner) {
        st->max_inner = inner_max;
    }
    st->utf8 = st->utf8 && utf8;
    st->present++;
    return 0;
}

int summarize_core(sctx *s, int record_type, const uint8_t *buf, size_t buflen,
                   const uint8_t *offs, const uint8_t *lens, size_t n, size_t *bad) {
    if (record_type == RAW) {
        return 0;
    }
    const int seq = record_type == SEQUENCE_EXAMPLE;
    for (size_t r = 0; r < n; r++) {
        size_t start, len;
        *bad = r;
        if (record_span(offs, lens, r, buflen, &start, &len)) {
            return E_SPAN;
        }
        const uint8_t *p = buf + start, *end = p + len;
        s->touched.len = 0;
        while (p < end) {
            uint32_t tag;
            const uint8_t *map = NULL;
            size_t mlen = 0;
            if (next_field(&p, end, &tag, &map, &mlen)) {
                return E_MALFORMED;
            }
            int rc = is_map_field(tag, seq)
                         ? summarize_map(s, (int)(tag >> 3) - 1, map, map + mlen, r + 1)
                         : 0;
            if (rc) {
                return rc;
            }
        }
        size_t ntouched = s->touched.len / 4;
        for (size_t k = 0; k < ntouched; k++) {
            int32_t i;
            memcpy(&i, s->touched.data + 4 * k, 4);
            int rc = summarize_feature(sctx_stat(s, i));
            if (rc) {
                return rc;
            }
        }
    }
    return 0;
}
