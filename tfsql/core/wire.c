/*
 * tfsql/core/wire.c -- the protobuf wire reader's out-of-line parts:
 * skipping unknown fields and groups, strict UTF-8 validation, validating and counting
 * a feature's values (the hot inline readers are in core_internal.h).
 */

#include "core_internal.h"

/* Skip the value of an unknown field whose tag was just read. A start-group skips
 * everything up to its matching end-group (nested groups too, to a bounded depth), as
 * proto3 parsers do with unknown groups; a stray end-group and wire types 6/7 are
 * malformed. */
int skip_field(const uint8_t **pp, const uint8_t *end, uint32_t tag) {
    uint32_t wt = tag & 7;
    if (LIKELY(wt != WT_SGROUP)) {
        return skip_scalar_value(pp, end, wt);
    }
    uint32_t open[MAX_GROUP_DEPTH];
    int depth = 0;
    open[depth++] = tag >> 3;
    const uint8_t *p = *pp;
    while (depth > 0) {
        /* inside a group protobuf (upb) takes field number 0 too */
        uint64_t v;
        if (rd_varint_max(&p, end, &v, VARINT_SHORT) || v > 0xffffffffu) {
            return -1;
        }
        uint32_t inner = (uint32_t)v;
        uint32_t iwt = inner & 7;
        if (iwt == WT_SGROUP) {
            if (depth == MAX_GROUP_DEPTH) {
                return -1;
            }
            open[depth++] = inner >> 3;
        } else if (iwt == WT_EGROUP) {
            if (open[depth - 1] != (inner >> 3)) {
                return -1;
            }
            depth--;
        } else if (skip_scalar_value(&p, end, iwt)) {
            return -1;
        }
    }
    *pp = p;
    return 0;
}

/* -- UTF-8 (strict, as Python's decoder: no overlongs, surrogates, > U+10FFFF) -- */

int utf8_valid(const uint8_t *p, size_t n) {
    const uint8_t *end = p + n;
    while (p < end) {
        if ((size_t)(end - p) >= 8) {
            uint64_t w;
            memcpy(&w, p, 8);
            if ((w & 0x8080808080808080ull) == 0) {
                p += 8;
                continue;
            }
        }
        uint8_t c = *p;
        if (c < 0x80) {
            p++;
        } else if (c >= 0xc2 && c <= 0xdf) {
            if (end - p < 2 || (p[1] & 0xc0) != 0x80) {
                return 0;
            }
            p += 2;
        } else if (c >= 0xe0 && c <= 0xef) {
            if (end - p < 3 || (p[1] & 0xc0) != 0x80 || (p[2] & 0xc0) != 0x80) {
                return 0;
            }
            if ((c == 0xe0 && p[1] < 0xa0) || (c == 0xed && p[1] > 0x9f)) {
                return 0;
            }
            p += 3;
        } else if (c >= 0xf0 && c <= 0xf4) {
            if (end - p < 4 || (p[1] & 0xc0) != 0x80 || (p[2] & 0xc0) != 0x80 ||
                (p[3] & 0xc0) != 0x80) {
                return 0;
            }
            if ((c == 0xf0 && p[1] < 0x90) || (c == 0xf4 && p[1] > 0x8f)) {
                return 0;
            }
            p += 4;
        } else {
            return 0;
        }
    }
    return 1;
}

/* Validate one BytesList / FloatList / Int64List of `kind` and count its values;
 * `utf8` (optional) is cleared when a bytes value is not valid UTF-8. */
int list_count(int kind, const uint8_t *p, const uint8_t *end, uint64_t *count,
               int *utf8) {
    uint64_t n = 0;
    while (p < end) {
        uint32_t tag;
        if (rd_tag(&p, end, &tag)) {
            return -1;
        }
        if (kind == 1 && tag == TAG(1, WT_LEN)) { /* BytesList.value */
            size_t len;
            if (rd_len(&p, end, &len)) {
                return -1;
            }
            if (utf8 != NULL && *utf8 && !utf8_valid(p, len)) {
                *utf8 = 0;
            }
            p += len;
            n++;
        } else if (kind == 2 && tag == TAG(1, WT_LEN)) { /* packed floats */
            size_t len;
            if (rd_len(&p, end, &len) || (len & 3)) {
                return -1;
            }
            p += len;
            n += len / 4;
        } else if (kind == 2 && tag == TAG(1, WT_I32)) {
            if (end - p < 4) {
                return -1;
            }
            p += 4;
            n++;
        } else if (kind == 3 && tag == TAG(1, WT_LEN)) { /* packed varints */
            size_t len;
            uint64_t k;
            if (rd_len(&p, end, &len) || count_packed_varints(p, p + len, &k)) {
                return -1;
            }
            p += len;
            n += k;
        } else if (kind == 3 && tag == TAG(1, WT_VARINT)) {
            uint64_t v;
            if (rd_varint(&p, end, &v)) {
                return -1;
            }
            n++;
        } else if (skip_field(&p, end, tag)) {
            return -1;
        }
    }
    *count = n;
    return 0;
}

/* -- protobuf's checks on what no column decodes ----------------------------- */

/* The checks below are steps of each_len_field (core_internal.h): a non-zero step
 * refuses the field, and a walk returns -1 when protobuf would not parse the message. */

/* Feature: oneof bytes_list 1, float_list 2, int64_list 3 (other fields unknown). */
static int feature_field_ok(void *ctx, uint32_t tag, const uint8_t *body, const uint8_t *end) {
    (void)ctx;
    uint64_t count;
    int kind = feature_kind_field(tag);
    return kind != KIND_NONE && list_count(kind, body, end, &count, NULL);
}

/* FeatureList: repeated Feature feature = 1. */
static int feature_list_field_ok(void *ctx, uint32_t tag, const uint8_t *body,
                                 const uint8_t *end) {
    (void)ctx;
    return tag == TAG(1, WT_LEN) && feature_well_formed(body, end);
}

/* A map entry: string key = 1 (UTF-8), value = 2 (a Feature, or a FeatureList at
 * location *loc FEATURE_LISTS). */
static int entry_field_ok(void *loc, uint32_t tag, const uint8_t *body, const uint8_t *end) {
    if (tag == TAG(1, WT_LEN)) {
        return !utf8_valid(body, (size_t)(end - body));
    }
    if (tag == TAG(2, WT_LEN)) {
        return *(const int *)loc == FEATURES ? feature_well_formed(body, end)
                                             : feature_list_well_formed(body, end);
    }
    return 0;
}

/* Features / FeatureLists at location *loc: repeated entry = 1. */
static int map_field_ok(void *loc, uint32_t tag, const uint8_t *body, const uint8_t *end) {
    return tag == TAG(1, WT_LEN) && entry_well_formed(body, end, *(const int *)loc);
}

/* Example (features = 1) / SequenceExample (*seq: context = 1, feature_lists = 2). */
static int record_field_ok(void *seq, uint32_t tag, const uint8_t *body, const uint8_t *end) {
    int loc = map_location(tag, *(const int *)seq);
    return loc < 0 ? 0 : each_len_field(body, end, map_field_ok, &loc, -1);
}

int packed_varints_valid(const uint8_t *p, const uint8_t *end) {
    if (p < end && (end[-1] & 0x80)) {
        return -1;
    }
    int run = 0; /* continuation bytes in a row */
    while (end - p >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        uint64_t high = w & 0x8080808080808080ull;
        if (high == 0) {
            run = 0;
        } else if (high == 0x8080808080808080ull) {
            if ((run += 8) >= 10) {
                return -1;
            }
        } else {
            for (int i = 0; i < 8; i++) {
                run = p[i] < 0x80 ? 0 : run + 1;
                if (run >= 10) {
                    return -1;
                }
            }
        }
        p += 8;
    }
    for (; p < end; p++) {
        run = *p < 0x80 ? 0 : run + 1;
        if (run >= 10) {
            return -1;
        }
    }
    return 0;
}

int feature_well_formed(const uint8_t *p, const uint8_t *end) {
    int rc = feature_layout_well_formed(p, end);
    if (rc <= 0) {
        return rc;
    }
    return each_len_field(p, end, feature_field_ok, NULL, -1) ? -1 : 0;
}

int feature_list_well_formed(const uint8_t *p, const uint8_t *end) {
    return each_len_field(p, end, feature_list_field_ok, NULL, -1) ? -1 : 0;
}

int entry_well_formed(const uint8_t *p, const uint8_t *end, int loc) {
    return each_len_field(p, end, entry_field_ok, &loc, -1) ? -1 : 0;
}

int record_well_formed(const uint8_t *p, const uint8_t *end, int seq) {
    return each_len_field(p, end, record_field_ok, &seq, -1) ? -1 : 0;
}
