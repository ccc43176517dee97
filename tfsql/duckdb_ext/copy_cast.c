/*
 * tfsql/duckdb_ext/copy_cast.c -- COPY t FROM ... (FORMAT tfrecord)'s casts, for both
 * DuckDB bindings: DuckDB casts nothing for a C-API COPY FROM (the function must produce
 * the table's exact types), so the scan's columns (int64, float32, bytes as VARCHAR or
 * BLOB, and lists of them) are cast here, as docs/duckdb-extension.md's table says:
 * int64 to any integer type, BOOLEAN (0 / 1), FLOAT or DOUBLE, checked against the
 * target's range; float32 to DOUBLE; bytes to VARCHAR (checked UTF-8) or BLOB. A column
 * the scan already gives in the table's very type (a described DECIMAL(p, s), a
 * TIMESTAMP_S, ...) is taken as it is; the same kind of another width, scale or unit is
 * refused, never copied as it lies.
 *
 *     copy_cast_plan(BIGINT, SMALLINT)                 -> CAST_INT
 *     copy_cast_plan(DECIMAL(10,2), DECIMAL(10,2))     -> CAST_SAME
 *     copy_cast_plan(TIMESTAMP_S, TIMESTAMP)           -> -1 (refused at bind)
 *     copy_cast_plan(FLOAT, BIGINT)                    -> -1
 */
#include "ext_common.h"

#include <stdio.h>
#include <string.h>

/* The leaves an int64 casts to: BOOLEAN, the integers, FLOAT and DOUBLE. */
static int is_int_target(int leaf) {
    switch (leaf) {
    case COPY_LEAF_BOOL:
    case COPY_LEAF_I8:
    case COPY_LEAF_I16:
    case COPY_LEAF_I32:
    case COPY_LEAF_I64:
    case COPY_LEAF_U8:
    case COPY_LEAF_U16:
    case COPY_LEAF_U32:
    case COPY_LEAF_U64:
    case COPY_LEAF_F32:
    case COPY_LEAF_F64:
        return 1;
    default:
        return 0;
    }
}

static int is_bytes(int leaf) { return leaf == COPY_LEAF_VARCHAR || leaf == COPY_LEAF_BLOB; }

/* How leaf `from` becomes another leaf `to`: CAST_INT, CAST_FLOAT, CAST_BYTES or -1. */
static int leaf_cast(int from, int to) {
    if (from == COPY_LEAF_I64 && is_int_target(to)) {
        return CAST_INT;
    }
    if (from == COPY_LEAF_F32 && to == COPY_LEAF_F64) {
        return CAST_FLOAT;
    }
    if (is_bytes(from) && is_bytes(to) && from != to) {
        return CAST_BYTES;
    }
    return -1;
}

int copy_cast_plan(const copy_type *from, const copy_type *to) {
    if (from->array[0] || from->array[1] || to->array[0] || to->array[1] || from->levels != to->levels) {
        return -1;
    }
    if (from->leaf == to->leaf && from->leaf != COPY_LEAF_NONE && from->time == to->time &&
        from->width == to->width && from->scale == to->scale) {
        return CAST_SAME;
    }
    /* lists of lists: the very same type only */
    return from->levels == 2 ? -1 : leaf_cast(from->leaf, to->leaf);
}

static int int_fits(int leaf, int64_t v) {
    switch (leaf) {
    case COPY_LEAF_BOOL: return v == 0 || v == 1;
    case COPY_LEAF_I8: return v >= INT8_MIN && v <= INT8_MAX;
    case COPY_LEAF_I16: return v >= INT16_MIN && v <= INT16_MAX;
    case COPY_LEAF_I32: return v >= INT32_MIN && v <= INT32_MAX;
    case COPY_LEAF_U8: return v >= 0 && v <= UINT8_MAX;
    case COPY_LEAF_U16: return v >= 0 && v <= UINT16_MAX;
    case COPY_LEAF_U32: return v >= 0 && v <= (int64_t)UINT32_MAX;
    case COPY_LEAF_U64: return v >= 0;
    default: return 1;
    }
}

static void store_int(int leaf, void *data, uint64_t i, int64_t v) {
    switch (leaf) {
    case COPY_LEAF_BOOL: ((uint8_t *)data)[i] = v != 0; break;
    case COPY_LEAF_I8: ((int8_t *)data)[i] = (int8_t)v; break;
    case COPY_LEAF_I16: ((int16_t *)data)[i] = (int16_t)v; break;
    case COPY_LEAF_I32: ((int32_t *)data)[i] = (int32_t)v; break;
    case COPY_LEAF_U8: ((uint8_t *)data)[i] = (uint8_t)v; break;
    case COPY_LEAF_U16: ((uint16_t *)data)[i] = (uint16_t)v; break;
    case COPY_LEAF_U32: ((uint32_t *)data)[i] = (uint32_t)v; break;
    case COPY_LEAF_U64: ((uint64_t *)data)[i] = (uint64_t)v; break;
    case COPY_LEAF_F32: ((float *)data)[i] = (float)v; break;
    case COPY_LEAF_F64: ((double *)data)[i] = (double)v; break;
    default: ((int64_t *)data)[i] = v; break;
    }
}

static int is_valid(const uint64_t *validity, uint64_t i) {
    return validity == NULL || ((validity[i / 64] >> (i % 64)) & 1) != 0;
}

static void set_valid(uint64_t *validity, uint64_t i, int valid) {
    if (valid) {
        validity[i / 64] |= (uint64_t)1 << (i % 64);
    } else {
        validity[i / 64] &= ~((uint64_t)1 << (i % 64));
    }
}

int copy_cast_values(int how, int to_leaf, const copy_view *from, void *to, void *to_data,
                     const copy_cast_ops *ops, uint64_t n, const char *column, char *err) {
    uint64_t *tv = from->validity != NULL ? ops->writable_validity(to) : NULL;
    for (uint64_t i = 0; i < n; i++) {
        if (!is_valid(from->validity, i)) {
            set_valid(tv, i, 0);
            continue;
        }
        if (tv != NULL) {
            set_valid(tv, i, 1);
        }
        if (how == CAST_INT) {
            int64_t v = ((const int64_t *)from->data)[i];
            if (!int_fits(to_leaf, v)) {
                snprintf(err, ERRLEN, "COPY ... FROM (FORMAT tfrecord): the value %lld does not "
                                      "fit the table's column \"%s\"; use a wider column type",
                         (long long)v, column);
                return -1;
            }
            store_int(to_leaf, to_data, i, v);
        } else if (how == CAST_FLOAT) {
            ((double *)to_data)[i] = (double)((const float *)from->data)[i];
        } else { /* CAST_BYTES: DuckDB's 16-byte strings */
            const uint8_t *s = (const uint8_t *)from->data + 16 * i;
            uint32_t len;
            memcpy(&len, s, 4);
            const uint8_t *p = s + 4;
            if (len > 12) {
                memcpy(&p, s + 8, sizeof(p));
            }
            if (to_leaf == COPY_LEAF_VARCHAR && !utf8_valid(p, len)) {
                snprintf(err, ERRLEN, "COPY ... FROM (FORMAT tfrecord): a value of the "
                                      "table's VARCHAR column \"%s\" is not UTF-8; make the "
                                      "column a BLOB",
                         column);
                return -1;
            }
            ops->assign_bytes(to, i, (const char *)p, len);
        }
    }
    return 0;
}
