/*
 * tfsql/core/core_internal.h -- declarations shared by the core's .c files only
 * (the bindings include tfsql_core.h alone): CPU feature switches, the protobuf wire
 * reader's inline helpers, map entries and the name table lookups.
 */
#ifndef TFSQL_CORE_INTERNAL_H
#define TFSQL_CORE_INTERNAL_H

#include "tfsql_core.h"

/* The CRC-32C values of three buffers (interleaved where the CPU's instruction is used). */
void crc32c_values3(const uint8_t *const p[3], const size_t n[3], uint32_t out[3]);
/* masked_crc(p, 8), a record header's length CRC, without the dispatch of longer ones
 * (one instruction where the CPU has it). */
uint32_t masked_crc8(const uint8_t *p);

/* Skip the value of an unknown field whose tag was just read. A start-group skips
 * everything up to its matching end-group (nested groups too, to a bounded depth), as
 * proto3 parsers do with unknown groups; a stray end-group and wire types 6/7 are
 * malformed. */
int skip_field(const uint8_t **pp, const uint8_t *end, uint32_t tag);

/* Validate one BytesList / FloatList / Int64List of `kind` and count its values;
 * `utf8` (optional) is cleared when a bytes value is not valid UTF-8. */
int list_count(int kind, const uint8_t *p, const uint8_t *end, uint64_t *count,
               int *utf8);

/* protobuf's checks on a map entry of Features (loc FEATURES) or FeatureLists whose
 * value no column reads: each key valid UTF-8 (a proto3 string), each value a
 * well-formed Feature / FeatureList (wire types and lengths, no value decoded). 0 when
 * it would parse, -1 when protobuf refuses the record. */
int entry_well_formed(const uint8_t *p, const uint8_t *end, int loc);
/* The same checks on one value: a Feature (a oneof of the three lists, fields 1-3; any
 * other field unknown, skipped) and a FeatureList (repeated Feature feature = 1). */
int feature_well_formed(const uint8_t *p, const uint8_t *end);
int feature_list_well_formed(const uint8_t *p, const uint8_t *end);
/* A whole Example (seq 0) or SequenceExample (seq 1) record, every feature checked so. */
int record_well_formed(const uint8_t *p, const uint8_t *end, int seq);

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define TFSQL_X86_CRC 1
#include <nmmintrin.h>
#include <wmmintrin.h>
#else
#define TFSQL_X86_CRC 0
#endif

#if defined(__aarch64__) && defined(__ARM_FEATURE_CRC32)
/* Compiled for a CPU that has the CRC extension (e.g. Apple silicon, -march=...+crc). */
#define TFSQL_ARM_CRC 1
#include <arm_acle.h>
#else
#define TFSQL_ARM_CRC 0
#endif

enum { WT_VARINT = 0, WT_I64 = 1, WT_LEN = 2, WT_SGROUP = 3, WT_EGROUP = 4, WT_I32 = 5 };

#define TAG(field, wt) (((uint32_t)(field) << 3) | (uint32_t)(wt))

/* Read a varint of at most `max_bytes` bytes; -1 when longer or running past `end`.
 * protobuf reads values in at most 10 bytes (bits beyond 64 in a 10th byte dropped),
 * tags and lengths in at most 5 (VARINT_SHORT). */
#define VARINT_LONG 10
#define VARINT_SHORT 5
static inline int rd_varint_max(const uint8_t **pp, const uint8_t *end, uint64_t *out,
                                size_t max_bytes) {
    const uint8_t *p = *pp;
    if (LIKELY(p < end && *p < 0x80)) {
        *out = *p;
        *pp = p + 1;
        return 0;
    }
    size_t avail = (size_t)(end - p);
    size_t limit = avail < max_bytes ? avail : max_bytes;
    uint64_t v = 0;
    for (size_t i = 0; i < limit; i++) {
        uint64_t b = p[i];
        v |= (b & 0x7f) << (7 * i);
        if (b < 0x80) {
            *out = v;
            *pp = p + i + 1;
            return 0;
        }
    }
    return -1;
}

static inline int rd_varint(const uint8_t **pp, const uint8_t *end, uint64_t *out) {
    return rd_varint_max(pp, end, out, VARINT_LONG);
}

/* A field tag: a varint of at most 5 bytes that fits 32 bits with a non-zero field
 * number. */
static inline int rd_tag(const uint8_t **pp, const uint8_t *end, uint32_t *tag) {
    const uint8_t *p = *pp;
    if (LIKELY(p < end && *p < 0x80)) {
        if (UNLIKELY(*p < 8)) {
            return -1; /* field number 0 */
        }
        *tag = *p;
        *pp = p + 1;
        return 0;
    }
    uint64_t v;
    if (rd_varint_max(pp, end, &v, VARINT_SHORT) || v > 0xffffffffu || (v >> 3) == 0) {
        return -1;
    }
    *tag = (uint32_t)v;
    return 0;
}

/* A length prefix (at most 5 bytes, below 2^31 - 1, as protobuf reads sizes), checked
 * against the bytes left. */
static inline int rd_len(const uint8_t **pp, const uint8_t *end, size_t *len) {
    const uint8_t *p = *pp;
    uint64_t v;
    if (LIKELY(p < end && *p < 0x80)) {
        v = *p++;
    } else if (rd_varint_max(&p, end, &v, VARINT_SHORT) || v >= 0x7fffffffu) {
        return -1;
    }
    if (v > (uint64_t)(end - p)) {
        return -1;
    }
    *len = (size_t)v;
    *pp = p;
    return 0;
}

#define MAX_GROUP_DEPTH 64

/* Skip one value of wire type `wt` (not a group); 0 on success. */
static inline int skip_scalar_value(const uint8_t **pp, const uint8_t *end, uint32_t wt) {
    const uint8_t *p = *pp;
    switch (wt) {
    case WT_VARINT: {
        uint64_t v;
        if (rd_varint(&p, end, &v)) {
            return -1;
        }
        break;
    }
    case WT_I64:
        if (end - p < 8) {
            return -1;
        }
        p += 8;
        break;
    case WT_LEN: {
        size_t len;
        if (rd_len(&p, end, &len)) {
            return -1;
        }
        p += len;
        break;
    }
    case WT_I32:
        if (end - p < 4) {
            return -1;
        }
        p += 4;
        break;
    default:
        return -1;
    }
    *pp = p;
    return 0;
}

/* Read the next field of a message: its tag and, when it is length-delimited, its body
 * [*body, *body + *len); any other field is skipped. 0 on success, -1 when malformed. */
static inline int next_field(const uint8_t **pp, const uint8_t *end, uint32_t *tag,
                            const uint8_t **body, size_t *len) {
    if (rd_tag(pp, end, tag)) {
        return -1;
    }
    if ((*tag & 7) != WT_LEN) {
        return skip_field(pp, end, *tag);
    }
    if (rd_len(pp, end, len)) {
        return -1;
    }
    *body = *pp;
    *pp += *len;
    return 0;
}

/* What a walk of a message's fields does with one length-delimited field: `tag` and its
 * body [body, end). 0 goes on to the next field; any other value ends the walk with it. */
typedef int (*len_field_step)(void *ctx, uint32_t tag, const uint8_t *body,
                              const uint8_t *end);

/* Walk the fields of a message [p, end): every field's wire structure is checked (a
 * field that is not length-delimited is skipped as protobuf skips an unknown field)
 * and each length-delimited one is handed to `step` with `ctx`. Returns `malformed`
 * when the wire structure is broken, else the first non-zero value of a step, else 0.
 * Every caller passes a constant `step`, so once this is inlined the compiler calls
 * the step directly (or inlines it): the walk costs what a hand-written loop costs. */
static inline int each_len_field(const uint8_t *p, const uint8_t *end, len_field_step step,
                                 void *ctx, int malformed) {
    while (p < end) {
        uint32_t tag;
        const uint8_t *body = NULL;
        size_t len = 0;
        if (next_field(&p, end, &tag, &body, &len)) {
            return malformed;
        }
        if ((tag & 7) == WT_LEN) {
            int rc = step(ctx, tag, body, body + len);
            if (rc) {
                return rc;
            }
        }
    }
    return 0;
}

/* Decode the packed varints of [p, end) into `out` (room for end - p values). */
#if defined(__GNUC__) || defined(__clang__)
/* The varint at the start of the 8 bytes `x` (loaded little-endian) when it is at most
 * 8 bytes long, without a loop: its length comes from the first byte whose high bit is
 * clear, and its 7-bit groups are packed together in three steps (pairs, quads, eights).
 * *len is 0 when all 8 high bits are set (a longer varint: the caller's loop decodes it). */
static inline uint64_t varint8(uint64_t x, size_t *len) {
    uint64_t stops = ~x & 0x8080808080808080ull;
    if (UNLIKELY(stops == 0)) {
        *len = 0;
        return 0;
    }
    unsigned bits = (unsigned)__builtin_ctzll(stops) + 1; /* 8 * length */
    *len = bits >> 3;
    if (bits < 64) {
        x &= (1ull << bits) - 1;
    }
    x = ((x & 0x7f007f007f007f00ull) >> 1) | (x & 0x007f007f007f007full);
    x = ((x & 0x3fff00003fff0000ull) >> 2) | (x & 0x00003fff00003fffull);
    return ((x & 0x0fffffff00000000ull) >> 4) | (x & 0x000000000fffffffull);
}
#endif

static inline int decode_packed_varints(const uint8_t *p, const uint8_t *end, int64_t *out,
                                        size_t *count) {
    int64_t *o = out;
    while (p < end) {
        uint64_t b = *p;
        if (LIKELY(b < 0x80)) {
            *o++ = (int64_t)b;
            p++;
            continue;
        }
        size_t avail = (size_t)(end - p);
#if defined(__GNUC__) || defined(__clang__)
        if (LIKELY(avail >= 8)) {
            size_t len;
            uint64_t fast = varint8(load_le64(p), &len);
            if (LIKELY(len)) {
                *o++ = (int64_t)fast;
                p += len;
                continue;
            }
        }
#endif
        uint64_t v = b & 0x7f;
        size_t i;
        if (LIKELY(avail >= 10)) {
            for (i = 1; i < 10; i++) {
                b = p[i];
                v |= (b & 0x7f) << (7 * i);
                if (b < 0x80) {
                    break;
                }
            }
            if (i == 10) {
                return -1;
            }
        } else {
            for (i = 1; i < avail; i++) {
                b = p[i];
                v |= (b & 0x7f) << (7 * i);
                if (b < 0x80) {
                    break;
                }
            }
            if (i == avail) {
                return -1;
            }
        }
        *o++ = (int64_t)v;
        p += i + 1;
    }
    *count = (size_t)(o - out);
    return 0;
}

/* Count (and validate) the packed varints of [p, end). */
static inline int count_packed_varints(const uint8_t *p, const uint8_t *end, uint64_t *count) {
    uint64_t n = 0;
    int run = 0;
    for (; p < end; p++) {
        if (*p < 0x80) {
            n++;
            run = 0;
        } else if (++run >= 10) {
            return -1;
        }
    }
    if (run) {
        return -1;
    }
    *count = n;
    return 0;
}

/* Packed varints [p, end): each at most 10 bytes, the last one complete (no count);
 * 0 when protobuf would read them, -1 when not. */
int packed_varints_valid(const uint8_t *p, const uint8_t *end);

/* A BytesList's values [p, end) in the layout writers produce (each a field 1 with its
 * length): 0 when well formed, -1 when refused, 1 when another layout needs the
 * general walk. */
static inline int bytes_values_valid(const uint8_t *p, const uint8_t *end) {
    while (p < end) {
        size_t len;
        if (*p != TAG(1, WT_LEN)) {
            return 1;
        }
        p++;
        if (LIKELY(p < end && *p < 0x80)) { /* a short value: its length in one byte */
            len = *p++;
            if (len > (size_t)(end - p)) {
                return -1;
            }
        } else if (rd_len(&p, end, &len)) {
            return -1;
        }
        p += len;
    }
    return 0;
}

/* feature_well_formed's checks on a Feature in the layout writers produce (one list
 * spanning the Feature, its numbers packed), without the general walk (same result,
 * fewer steps; inline, as the decoder checks every feature no column reads so): 0 when
 * well formed, -1 when protobuf refuses it, 1 when it has another layout (then
 * feature_well_formed walks it). */
static inline int feature_layout_well_formed(const uint8_t *p, const uint8_t *end) {
    size_t room = (size_t)(end - p);
    if (room < 2 || p[1] >= 0x80 || room != 2 + (size_t)p[1]) {
        return 1;
    }
    if (p[0] == TAG(1, WT_LEN)) {
        return bytes_values_valid(p + 2, end);
    }
    if (room < 4 || p[2] != TAG(1, WT_LEN) || p[3] >= 0x80 || room != 4 + (size_t)p[3]) {
        return 1;
    }
    if (p[0] == TAG(3, WT_LEN)) {
        /* in at most 10 bytes no varint runs past 10 bytes: only the last must end */
        if (p[3] <= 10) {
            return (p[3] != 0 && (end[-1] & 0x80)) ? -1 : 0;
        }
        return packed_varints_valid(p + 4, end);
    }
    if (p[0] == TAG(2, WT_LEN)) {
        return (p[3] & 3) ? -1 : 0;
    }
    return 1;
}

/* The kind a Feature field sets (its oneof field number: a length-delimited
 * bytes_list 1, float_list 2 or int64_list 3), or KIND_NONE for any other field. */
static inline int feature_kind_field(uint32_t tag) {
    uint32_t field = tag >> 3;
    return ((tag & 7) == WT_LEN && field >= 1 && field <= 3) ? (int)field : KIND_NONE;
}

/* Whether a top-level record field holds a feature map: Example.features (1), and for
 * a SequenceExample also feature_lists (2); the map's location is its field number - 1. */
static inline int is_map_field(uint32_t tag, int seq) {
    return tag == TAG(1, WT_LEN) || (seq && tag == TAG(2, WT_LEN));
}

/* The location of the feature map a top-level record field holds (FEATURES or
 * FEATURE_LISTS), or -1 when it holds none. */
static inline int map_location(uint32_t tag, int seq) {
    return is_map_field(tag, seq) ? (int)(tag >> 3) - 1 : -1;
}

/* A map entry of Features / FeatureLists: its key (field 1; "" when missing, the last
 * one when repeated) and its value fields (field 2): how many, and the first one. */
typedef struct {
    const uint8_t *key;
    size_t key_len;
    const uint8_t *val, *val_end;
    uint32_t nval;
} entry_parts;

/* One field of a map entry into its parts: the key (the last one) or a value. */
static inline int entry_part(void *ctx, uint32_t tag, const uint8_t *body, const uint8_t *end) {
    entry_parts *e = (entry_parts *)ctx;
    if (tag == TAG(1, WT_LEN)) {
        e->key = body;
        e->key_len = (size_t)(end - body);
    } else if (tag == TAG(2, WT_LEN) && e->nval++ == 0) {
        e->val = body;
        e->val_end = end;
    }
    return 0;
}

static inline int read_entry(const uint8_t *p, const uint8_t *end, entry_parts *e) {
    /* The layout every writer produces, a short key (field 1) then one value (field 2)
     * that ends the entry, read without the general loop: same result, fewer steps. */
    size_t room = (size_t)(end - p);
    if (room >= 4 && p[0] == TAG(1, WT_LEN) && p[1] < 0x80 && room >= 4 + (size_t)p[1] &&
        p[2 + p[1]] == TAG(2, WT_LEN)) {
        const uint8_t *v = p + 3 + p[1];
        size_t vlen;
        if (rd_len(&v, end, &vlen) == 0 && vlen == (size_t)(end - v)) {
            e->key = p + 2;
            e->key_len = p[1];
            e->val = v;
            e->val_end = end;
            e->nval = 1;
            return 0;
        }
    }
    e->key = p;
    e->key_len = 0;
    e->val = e->val_end = NULL;
    e->nval = 0;
    return each_len_field(p, end, entry_part, e, -1);
}

/* Equality of the 8 (4, 2) bytes at a and at b. */
static inline int same_u64(const uint8_t *a, const uint8_t *b) {
    uint64_t x, y;
    memcpy(&x, a, 8);
    memcpy(&y, b, 8);
    return x == y;
}

static inline int same_u32(const uint8_t *a, const uint8_t *b) {
    uint32_t x, y;
    memcpy(&x, a, 4);
    memcpy(&y, b, 4);
    return x == y;
}

static inline int same_u16(const uint8_t *a, const uint8_t *b) {
    uint16_t x, y;
    memcpy(&x, a, 2);
    memcpy(&y, b, 2);
    return x == y;
}

/* Equality of two short keys without a call into libc and without a loop below 8 bytes:
 * a key of 2 to 16 bytes is two overlapping word compares (its head and its tail). */
static inline int keys_equal(const uint8_t *a, const uint8_t *b, size_t n) {
    if (n >= 8) {
        for (size_t i = 0; i + 8 < n; i += 8) {
            if (!same_u64(a + i, b + i)) {
                return 0;
            }
        }
        return same_u64(a + n - 8, b + n - 8);
    }
    if (n >= 4) {
        return same_u32(a, b) & same_u32(a + n - 4, b + n - 4);
    }
    if (n >= 2) {
        return same_u16(a, b) & same_u16(a + n - 2, b + n - 2);
    }
    return n == 0 || *a == *b;
}

static inline uint32_t name_hash(const uint8_t *p, size_t n) {
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++) {
        h = (h ^ p[i]) * 16777619u;
    }
    return h;
}

static inline int nametable_find(const nametable *t, const colspec *cols, const uint8_t *key,
                                 size_t len) {
    if (t->slots == NULL) {
        return -1;
    }
    uint32_t i = name_hash(key, len) & t->mask;
    for (;;) {
        int32_t c = t->slots[i];
        if (c < 0) {
            return -1;
        }
        if (cols[c].name_len == len && keys_equal(cols[c].name, key, len)) {
            return c;
        }
        i = (i + 1) & t->mask;
    }
}

/* Check a record span against the buffer. */
static inline int record_span(const uint8_t *offs, const uint8_t *lens, size_t i,
                              size_t buflen, size_t *start, size_t *len) {
    uint64_t o = load_u64(offs + 8 * i), l = load_u64(lens + 8 * i);
    if (o > buflen || l > buflen - o) {
        return -1;
    }
    *start = (size_t)o;
    *len = (size_t)l;
    return 0;
}

/* -- inference's state, for its sample loop (infer.c, infer_sample.c) -------------- */

/* The record type an inference reads, and the bytes a file's sample reads about
 * (infer_bytes; UINT64_MAX when every record is sampled or no bound is set). */
int infer_record_type(const infer_state *s);
uint64_t infer_file_budget(const infer_state *s);

/* -- the bounded JSON reader (json.c) ---------------------------------------------- */

#define JSON_MAX_DEPTH 64

/* A JSON string, copied with its escapes undone (s is malloc'ed, NUL-terminated). */
typedef struct {
    char *s;
    size_t n;
} json_str;

/* The text being read and the first error (a static message), NULL while none. */
typedef struct {
    const char *p, *end;
    const char *why;
} json_reader;

void json_skip_ws(json_reader *r);
/* Keep `why` as the error unless one is already kept; returns -1. */
int json_fail(json_reader *r, const char *why);
/* Skip white space and the character c, else fail. */
int json_expect(json_reader *r, char c);
/* A JSON string at r->p; `out` (NULL to skip it) gets a malloc'ed copy. */
int json_read_string(json_reader *r, json_str *out);
/* Skip any JSON value, `depth` levels down (failing past JSON_MAX_DEPTH). */
int json_skip_value(json_reader *r, int depth);
/* A JSON array; each element read by `element`. */
int json_read_array(json_reader *r, int (*element)(json_reader *, void *), void *ctx);

#endif /* TFSQL_CORE_INTERNAL_H */
