/*
 * tfsql/duckdb_ext/sequences.c -- SequenceExamples read as Examples (tfsql.inference's
 * _warn_if_sequence_examples): Example has no field 2, so a SequenceExample's feature
 * lists are dropped without a word; a file whose first record has a feature list holding
 * values in some step is reported (each binding's reports_warning).
 */

#include "ext_common.h"

/* The varint at *p (< end): 0, or -1 when it runs past end. */
static int varint(const uint8_t **p, const uint8_t *end, uint64_t *v) {
    *v = 0;
    for (int shift = 0; *p < end && shift < 64; shift += 7) {
        uint8_t byte = *(*p)++;
        *v |= (uint64_t)(byte & 0x7f) << shift;
        if ((byte & 0x80) == 0) {
            return 0;
        }
    }
    return -1;
}

/* Call `each` on every length-delimited field `field` of message [p, end); stops at the
 * first that returns 1 (returned), or at malformed bytes (0). */
static int any_field(const uint8_t *p, const uint8_t *end, uint64_t field,
                     int (*each)(const uint8_t *, const uint8_t *)) {
    while (p < end) {
        uint64_t tag, n;
        if (varint(&p, end, &tag)) {
            return 0;
        }
        switch (tag & 7) {
        case 0:
            if (varint(&p, end, &n)) {
                return 0;
            }
            break;
        case 1:
            p += 8;
            break;
        case 5:
            p += 4;
            break;
        case 2:
            if (varint(&p, end, &n) || n > (uint64_t)(end - p)) {
                return 0;
            }
            if (tag >> 3 == field && each != NULL && each(p, p + n)) {
                return 1;
            }
            p += n;
            break;
        default:
            return 0;
        }
    }
    return 0;
}

/* A Feature whose kind is set: a bytes_list, float_list or int64_list field. */
static int feature_has_kind(const uint8_t *p, const uint8_t *end) {
    while (p < end) {
        uint64_t tag, n;
        if (varint(&p, end, &tag) || (tag & 7) != 2 || varint(&p, end, &n) ||
            n > (uint64_t)(end - p)) {
            return 0;
        }
        if ((tag >> 3) >= 1 && (tag >> 3) <= 3) {
            return 1;
        }
        p += n;
    }
    return 0;
}

static int list_has_kind(const uint8_t *p, const uint8_t *end) {
    return any_field(p, end, 1, feature_has_kind); /* FeatureList.feature */
}

static int entry_has_kind(const uint8_t *p, const uint8_t *end) {
    return any_field(p, end, 2, list_has_kind); /* the map entry's value */
}

static int lists_have_kind(const uint8_t *p, const uint8_t *end) {
    return any_field(p, end, 1, entry_has_kind); /* FeatureLists.feature_list */
}

int looks_like_sequence_example(const uint8_t *record, size_t len) {
    return any_field(record, record + len, 2, lists_have_kind); /* SequenceExample.feature_lists */
}

void warn_if_sequence_example(const tfbind *b, const char *path, const uint8_t *record,
                              size_t len) {
    if (b->record_type != EXAMPLE || !looks_like_sequence_example(record, len)) {
        return;
    }
    char text[ERRLEN];
    snprintf(text, sizeof text,
             "the records of %s look like tf.train.SequenceExample (they have feature lists), but "
             "are read as Examples, which keeps only their context features; pass record_type := "
             "'sequence_example'",
             path);
    reports_warning(text);
}
