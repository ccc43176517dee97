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

/* The slot of the table where (location, key) with hash h is, or the empty slot where
 * it would go (the table must exist). */
static uint32_t sctx_probe(const sctx *s, int loc, const uint8_t *key, size_t len, uint32_t h) {
    uint32_t k = h & s->mask;
    for (;;) {
        int32_t i = s->table[k];
        if (i < 0) {
            return k;
        }
        const sstat *st = ((const sstat *)s->stats.data) + i;
        if (st->hash == h && st->location == loc && st->name_len == len &&
            memcmp(st->name, key, len) == 0) {
            return k;
        }
        k = (k + 1) & s->mask;
    }
}

static uint32_t sctx_hash(int loc, const uint8_t *key, size_t len) {
    return name_hash(key, len) ^ (uint32_t)loc * 0x9e3779b9u;
}

int32_t sctx_find(const sctx *s, int loc, const uint8_t *key, size_t len) {
    if (s->table == NULL) {
        return -1;
    }
    return s->table[sctx_probe(s, loc, key, len, sctx_hash(loc, key, len))];
}

/* Find or add the stat of (location, key); -1 when out of memory. */
static int32_t sctx_lookup(sctx *s, int loc, const uint8_t *key, size_t len) {
    size_t n = s->stats.len / sizeof(sstat);
    if (s->table == NULL || 2 * (n + 1) > (size_t)s->mask + 1) {
        if (n >= 0x3fffffff || sctx_grow_table(s)) {
            return -1;
        }
    }
    uint32_t h = sctx_hash(loc, key, len);
    uint32_t k = sctx_probe(s, loc, key, len, h);
    if (s->table[k] >= 0) {
        return s->table[k];
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

/* Where the summary of one record is: its statistics, the record's stamp, and the
 * location of the map being walked. */
typedef struct {
    sctx *s;
    size_t stamp;
    int seq;
    int loc;
} record_summary;

/* A Features / FeatureLists message: a repeated map entry field 1. */
static int summarize_map_field(void *ctx, uint32_t tag, const uint8_t *entry,
                               const uint8_t *end) {
    const record_summary *rs = (const record_summary *)ctx;
    return tag == TAG(1, WT_LEN) ? summarize_entry(rs->s, rs->loc, entry, end, rs->stamp) : 0;
}

/* The top level of an Example / SequenceExample: its feature maps. */
static int summarize_record_field(void *ctx, uint32_t tag, const uint8_t *map,
                                  const uint8_t *end) {
    record_summary *rs = (record_summary *)ctx;
    rs->loc = map_location(tag, rs->seq);
    return rs->loc < 0 ? 0 : each_len_field(map, end, summarize_map_field, rs, E_MALFORMED);
}

/* Kind, value count and UTF-8-ness of a Feature, fed span by span (oneof merge); with
 * want_utf8, the UTF-8 of its bytes values is checked. */
typedef struct {
    int kind;
    uint64_t count;
    int utf8;
    int want_utf8;
} sfeat;

/* One field of a Feature: a list of a kind (the last kind field wins). */
static int sfeat_field(void *ctx, uint32_t tag, const uint8_t *list, const uint8_t *end) {
    sfeat *f = (sfeat *)ctx;
    int kind = feature_kind_field(tag);
    if (kind == KIND_NONE) {
        return 0;
    }
    if (kind != f->kind) {
        f->kind = kind;
        f->count = 0;
        f->utf8 = 1;
    }
    uint64_t k;
    if (list_count(kind, list, end, &k, (f->want_utf8 && kind == KIND_BYTES) ? &f->utf8 : NULL)) {
        return E_MALFORMED;
    }
    f->count += k;
    return 0;
}

/* What the values of one entry of a feature hold: the Feature (at FEATURES) or, for a
 * FeatureList, the kinds, number and largest length of its steps. */
typedef struct {
    int location;
    sfeat f;
    int want_utf8;
    uint64_t kinds, len, inner_max;
    int utf8;
} svalues;

/* A FeatureList's field 1: one step, a Feature. */
static int summarize_step(void *ctx, uint32_t tag, const uint8_t *feature, const uint8_t *end) {
    svalues *v = (svalues *)ctx;
    if (tag != TAG(1, WT_LEN)) {
        return 0;
    }
    sfeat step = {KIND_NONE, 0, 1, v->want_utf8 && v->utf8};
    if (each_len_field(feature, end, sfeat_field, &step, E_MALFORMED)) {
        return E_MALFORMED;
    }
    v->kinds |= 1ull << step.kind;
    v->inner_max = step.count > v->inner_max ? step.count : v->inner_max;
    if (step.kind == KIND_BYTES && !step.utf8) {
        v->utf8 = 0;
    }
    v->len++;
    return 0;
}

/* A map entry's value field (2): a Feature (fed into one), or a FeatureList's steps. */
static int summarize_value(void *ctx, uint32_t tag, const uint8_t *value, const uint8_t *end) {
    svalues *v = (svalues *)ctx;
    if (tag != TAG(2, WT_LEN)) {
        return 0;
    }
    if (v->location == FEATURES) {
        return each_len_field(value, end, sfeat_field, &v->f, E_MALFORMED) ? E_MALFORMED : 0;
    }
    return each_len_field(value, end, summarize_step, v, E_MALFORMED);
}

/* Fold the current record's last entry of `st` into its statistics. */
static int summarize_feature(sstat *st) {
    svalues v = {st->location, {KIND_NONE, 0, 1, st->utf8}, st->utf8, 0, 0, 0, 1};
    if (each_len_field(st->entry, st->entry_end, summarize_value, &v, E_MALFORMED)) {
        return E_MALFORMED;
    }
    uint64_t kinds = v.kinds, len = v.len, inner_max = v.inner_max;
    int utf8 = v.utf8;
    if (st->location == FEATURES) {
        kinds = 1ull << v.f.kind;
        len = inner_max = v.f.count;
        utf8 = v.f.kind == KIND_BYTES ? v.f.utf8 : 1;
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
        s->touched.len = 0;
        record_summary rs = {s, r + 1, seq, FEATURES};
        int rc = each_len_field(buf + start, buf + start + len, summarize_record_field, &rs,
                                E_MALFORMED);
        if (rc) {
            return rc;
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
