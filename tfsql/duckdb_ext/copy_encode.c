/*
 * tfsql/duckdb_ext/copy_encode.c -- COPY ... TO (FORMAT tfrecord)'s rows -> records, for
 * both DuckDB bindings (v1 copy_to.c, V2 tfsql/duckdb_v2/copy_to.c): which column types a
 * feature holds and how (tfsql.encoding's rules), the refusals, and a chunk of DuckDB
 * vectors turned into the core's encoder arrays (encode_core) and framed records.
 *
 * A binding describes each column's type as a copy_type (its leaf as a COPY_LEAF_*, the
 * list levels above it) and hands each chunk's vectors through copy_vector_ops (a
 * vector's data and validity, a LIST's or ARRAY's child): DuckDB's vector layouts (fixed
 * width leaves, 16-byte strings inlined up to 12 bytes, {offset, length} list entries)
 * are the same in both APIs, so the walk over them is written here once.
 *
 *     copy_plan p;  copy_plan_start(&p, &settings, ncols, err);
 *     copy_plan_column(&p, i, name, &type, err) ...;  copy_plan_finish(&p, err);
 *     copy_encoder e;  copy_encoder_init(&e, &p);
 *     copy_encode_rows(&e, &p, &ops, vectors, NULL, n, err);   -> e.framed, e.ends
 */
#include "ext_common.h"

#include <stdio.h>
#include <string.h>

static int leaf_kind(int leaf) {
    switch (leaf) {
    case COPY_LEAF_F32:
    case COPY_LEAF_F64:
    case COPY_LEAF_DECIMAL: /* float32, only when exact (decimals.c) */
        return KIND_FLOAT;
    case COPY_LEAF_VARCHAR:
    case COPY_LEAF_BLOB:
        return KIND_BYTES;
    case COPY_LEAF_NONE:
    case COPY_LEAF_SQLNULL:
        return KIND_NONE;
    default: /* BOOLEAN, the integers, dates, times, timestamps: the stored integer */
        return KIND_INT64;
    }
}

void copy_plan_free(copy_plan *p) {
    free(p->in);
    free(p->enc);
    schema_free(&p->sc);
    tfsql_description_free(p->described, p->ndescribed);
    memset(p, 0, sizeof(*p));
}

int copy_plan_start(copy_plan *p, const copy_settings *set, int ncols, char *err) {
    memset(p, 0, sizeof(*p));
    p->set = *set;
    p->ncols = ncols;
    p->sc.record_type = set->record_type;
    p->in = (copy_incol *)calloc((size_t)ncols + 1, sizeof(copy_incol));
    p->enc = (int *)calloc((size_t)ncols + 1, sizeof(int));
    p->sc.cols = (colspec *)calloc((size_t)ncols + 1, sizeof(colspec));
    if (p->in == NULL || p->enc == NULL || p->sc.cols == NULL) {
        snprintf(err, ERRLEN, "out of memory");
        return -1;
    }
    return 0;
}

int copy_settings_check(const copy_settings *s, char *err) {
    if (s->level >= 0 && s->compression == COMP_NONE) {
        snprintf(err, ERRLEN, "COPY option COMPRESSION_LEVEL needs COMPRESSION gzip or zlib");
        return -1;
    }
    if (s->index && s->compression != COMP_NONE && s->compression != COMP_INFER) {
        snprintf(err, ERRLEN, "COPY option INDEX writes record offsets, which compressed files "
                              "do not have; drop INDEX or COMPRESSION");
        return -1;
    }
    return 0;
}

/* The description type (tfsql/description.py's type_text for the Arrow type DuckDB gives
 * it) of a column of type `t`: 0, or -1 for one it cannot say. */
static int description_type(const copy_type *t, tfsql_type *out) {
    static const int leaves[] = {
        [COPY_LEAF_BOOL] = TFSQL_TYPE_BOOL,       [COPY_LEAF_I8] = TFSQL_TYPE_INT8,
        [COPY_LEAF_I16] = TFSQL_TYPE_INT16,       [COPY_LEAF_I32] = TFSQL_TYPE_INT32,
        [COPY_LEAF_I64] = TFSQL_TYPE_INT64,       [COPY_LEAF_U8] = TFSQL_TYPE_UINT8,
        [COPY_LEAF_U16] = TFSQL_TYPE_UINT16,      [COPY_LEAF_U32] = TFSQL_TYPE_UINT32,
        [COPY_LEAF_U64] = TFSQL_TYPE_UINT64,      [COPY_LEAF_F32] = TFSQL_TYPE_FLOAT32,
        [COPY_LEAF_F64] = TFSQL_TYPE_FLOAT64,     [COPY_LEAF_VARCHAR] = TFSQL_TYPE_STRING,
        [COPY_LEAF_BLOB] = TFSQL_TYPE_BINARY,     [COPY_LEAF_DATE] = TFSQL_TYPE_DATE32,
        [COPY_LEAF_TIMESTAMP] = TFSQL_TYPE_TIMESTAMP, [COPY_LEAF_DECIMAL] = TFSQL_TYPE_DECIMAL128,
    };
    static const int units[] = {
        [COPY_TIME_OF_DAY] = TFSQL_UNIT_US, [COPY_TIME_S] = TFSQL_UNIT_S,
        [COPY_TIME_MS] = TFSQL_UNIT_MS,     [COPY_TIME_US] = TFSQL_UNIT_US,
        [COPY_TIME_NS] = TFSQL_UNIT_NS,     [COPY_TIME_US_TZ] = TFSQL_UNIT_US,
    };
    memset(out, 0, sizeof(*out));
    if (t->leaf <= COPY_LEAF_SQLNULL || t->leaf > COPY_LEAF_DECIMAL || t->levels > TFSQL_TYPE_MAX_WRAP) {
        return -1;
    }
    for (int i = 0; i < t->levels; i++) {
        out->wrap[i] = t->array[i] > 0 ? TFSQL_WRAP_FIXED_LIST : TFSQL_WRAP_LIST;
        out->wrap_size[i] = (int64_t)t->array[i];
    }
    out->nwrap = t->levels;
    out->leaf = leaves[t->leaf];
    out->precision = t->width;
    out->scale = t->scale;
    if (t->leaf == COPY_LEAF_TIMESTAMP) {
        out->leaf = t->time == COPY_TIME_OF_DAY ? TFSQL_TYPE_TIME64 : TFSQL_TYPE_TIMESTAMP;
        out->unit = units[t->time];
        if (t->time == COPY_TIME_US_TZ) {
            memcpy(out->tz, "UTC", 4);
        }
    }
    return 0;
}

/* Add column `name` of type `t` to p's description; a type it cannot say drops it. */
static void describe_column(copy_plan *p, const char *name, const copy_type *t) {
    if (p->undescribable || p->set.record_type == RAW) {
        return;
    }
    if (p->described == NULL) {
        p->described = (tfsql_column *)calloc((size_t)p->ncols + 1, sizeof(tfsql_column));
    }
    tfsql_column *c = p->described != NULL ? &p->described[p->ndescribed] : NULL;
    if (c != NULL) {
        memset(c, 0, sizeof(*c));
        c->name = xstrdup(name);
        c->name_len = c->name != NULL ? strlen(name) : 0;
    }
    if (c == NULL || c->name == NULL || description_type(t, &c->type) != 0) {
        if (c != NULL) {
            free(c->name);
        }
        tfsql_description_free(p->described, p->ndescribed);
        p->described = NULL;
        p->ndescribed = 0;
        p->undescribable = 1;
        return;
    }
    p->ndescribed++;
}

int copy_plan_column(copy_plan *p, int i, const char *name, const copy_type *t, char *err) {
    copy_incol *ic = &p->in[i];
    memset(ic, 0, sizeof(*ic));
    p->enc[i] = -1;
    if (t->leaf == COPY_LEAF_SQLNULL && t->levels == 0) {
        ic->skip = 1; /* only nulls: the feature is omitted from every record */
        return 0;
    }
    ic->leaf = t->leaf;
    ic->width = t->width;
    ic->scale = t->scale;
    ic->shape = t->levels == 0 ? SCALAR : t->levels == 1 ? LIST : LIST_OF_LIST;
    ic->outer_array = t->array[0];
    ic->inner_array = t->array[1];
    ic->kind = leaf_kind(t->leaf);
    if (ic->kind == KIND_NONE) {
        snprintf(err, ERRLEN,
                 "COPY ... (FORMAT tfrecord): column \"%s\" has a type no TFRecord feature holds "
                 "(%s%s); features hold integers, booleans, dates and timestamps "
                 "(int64_list), FLOAT / DOUBLE / DECIMAL (float_list), VARCHAR / BLOB "
                 "(bytes_list) and lists or lists of lists of them: cast it in the query (a "
                 "HUGEINT, UUID or INTERVAL to VARCHAR, a STRUCT to its fields)",
                 name, t->type_name, ic->shape == SCALAR ? "" : " inside a list");
        return -1;
    }
    if (p->set.record_type == RAW && (ic->kind != KIND_BYTES || ic->shape != SCALAR)) {
        snprintf(err, ERRLEN, "RECORD_TYPE bytes writes one VARCHAR or BLOB column verbatim, "
                              "but column \"%s\" is not one", name);
        return -1;
    }
    if (p->set.record_type == EXAMPLE && ic->shape == LIST_OF_LIST) {
        snprintf(err, ERRLEN,
                 "column \"%s\" is a list of lists: it becomes a SequenceExample feature list, "
                 "which an Example cannot hold; add RECORD_TYPE sequence_example (or flatten "
                 "the column)",
                 name);
        return -1;
    }
    colspec *cs = &p->sc.cols[p->sc.ncols];
    cs->name_len = strlen(name);
    cs->name = (uint8_t *)xstrdup(name);
    if (cs->name == NULL) {
        snprintf(err, ERRLEN, "out of memory");
        return -1;
    }
    cs->kind = ic->kind;
    cs->shape = ic->shape;
    cs->location = ic->shape == LIST_OF_LIST ? FEATURE_LISTS : FEATURES;
    p->enc[i] = p->sc.ncols++;
    describe_column(p, name, t);
    return 0;
}

int copy_plan_finish(copy_plan *p, char *err) {
    if (p->set.record_type == RAW && p->sc.ncols != 1) {
        snprintf(err, ERRLEN, "RECORD_TYPE bytes writes exactly one VARCHAR or BLOB column "
                              "verbatim, but the row has %d columns; select one",
                 p->sc.ncols);
        return -1;
    }
    int dup = -1;
    int indexed = schema_index(&p->sc, &dup);
    if (indexed == -2) {
        snprintf(err, ERRLEN, "field \"%.*s\" is given twice; feature names must be unique",
                 (int)p->sc.cols[dup].name_len, (const char *)p->sc.cols[dup].name);
        return -1;
    }
    if (indexed != 0) {
        snprintf(err, ERRLEN, "out of memory");
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------------------------------ */
/* A chunk of vectors -> the encoder's arrays                                           */
/* ------------------------------------------------------------------------------------ */

int copy_encoder_init(copy_encoder *e, const copy_plan *p) {
    memset(e, 0, sizeof(*e));
    e->ncols = p->sc.ncols;
    e->bufs = (copy_colbufs *)calloc((size_t)e->ncols + 1, sizeof(copy_colbufs));
    e->ecols = (ecol *)calloc((size_t)e->ncols + 1, sizeof(ecol));
    return e->bufs != NULL && e->ecols != NULL ? 0 : -1;
}

void copy_encoder_free(copy_encoder *e) {
    for (int c = 0; c < e->ncols && e->bufs != NULL; c++) {
        tbuf_free(&e->bufs[c].validity);
        tbuf_free(&e->bufs[c].outer);
        tbuf_free(&e->bufs[c].inner);
        tbuf_free(&e->bufs[c].vo);
        tbuf_free(&e->bufs[c].values);
    }
    free(e->bufs);
    free(e->ecols);
    tbuf_free(&e->framed);
    tbuf_free(&e->ends);
    memset(e, 0, sizeof(*e));
}

static int put_i64(tbuf *b, int64_t v) { return tbuf_put_u64(b, (uint64_t)v); }

static int row_is_valid(const uint64_t *validity, uint64_t row) {
    return validity == NULL || ((validity[row / 64] >> (row % 64)) & 1) != 0;
}

static int put_f32(tbuf *b, float v) {
    if (tbuf_reserve(b, 4)) {
        return -1;
    }
    memcpy(b->data + b->len, &v, 4);
    b->len += 4;
    return 0;
}

/* A DECIMAL value is written as the float32 nearest it only when that float32 reads
 * back as the same value (docs/format.md, section 8; tfsql.feature_buffers' rule and
 * words, in SQL's spelling): the value at `row` of `data`, of chunk row `chunk_row`. */
static int put_decimal(const copy_incol *ic, const void *data, uint64_t row, copy_colbufs *cb,
                       const char *name, uint64_t chunk_row, char *err) {
    float f;
    char value[64];
    if (decimal_float(data, (size_t)row, ic->width, ic->scale, &f, value, sizeof(value)) == 0) {
        return put_f32(&cb->values, f);
    }
    snprintf(err, ERRLEN,
             "column \"%s\" row %llu of this chunk holds the decimal %s, which a float_list "
             "(float32) cannot store exactly (it would read back as %.9g); decimals are "
             "written only when exact: CAST the column to VARCHAR in the query to keep every "
             "digit (a bytes_list), or to DOUBLE to accept float32 rounding",
             name, (unsigned long long)chunk_row, value, (double)f);
    return -1;
}

/* Append the leaf value at `row` of the flat vector data `data` (of chunk row
 * `chunk_row`, for messages). */
static int put_leaf(const copy_incol *ic, const void *data, uint64_t row, copy_colbufs *cb,
                    const char *name, uint64_t chunk_row, char *err) {
    int64_t iv = 0;
    switch (ic->leaf) {
    case COPY_LEAF_BOOL:
        iv = ((const uint8_t *)data)[row] ? 1 : 0;
        break;
    case COPY_LEAF_I8:
        iv = ((const int8_t *)data)[row];
        break;
    case COPY_LEAF_I16:
        iv = ((const int16_t *)data)[row];
        break;
    case COPY_LEAF_I32:
    case COPY_LEAF_DATE:
        iv = ((const int32_t *)data)[row];
        break;
    case COPY_LEAF_U8:
        iv = ((const uint8_t *)data)[row];
        break;
    case COPY_LEAF_U16:
        iv = ((const uint16_t *)data)[row];
        break;
    case COPY_LEAF_U32:
        iv = ((const uint32_t *)data)[row];
        break;
    case COPY_LEAF_U64: {
        uint64_t u = ((const uint64_t *)data)[row];
        if (u > (uint64_t)INT64_MAX) {
            snprintf(err, ERRLEN, "column \"%s\": the UBIGINT %llu does not fit an int64 feature; "
                                  "cast it to VARCHAR (exact) or DOUBLE in the query",
                     name, (unsigned long long)u);
            return -1;
        }
        iv = (int64_t)u;
        break;
    }
    case COPY_LEAF_F32:
        return put_f32(&cb->values, ((const float *)data)[row]);
    case COPY_LEAF_DECIMAL:
        return put_decimal(ic, data, row, cb, name, chunk_row, err);
    case COPY_LEAF_F64:
        return put_f32(&cb->values, (float)((const double *)data)[row]); /* float_list: float32 */
    case COPY_LEAF_VARCHAR:
    case COPY_LEAF_BLOB: {
        /* DuckDB's 16-byte string: its length, then the bytes inlined (up to 12) or a
         * 4-byte prefix and a pointer */
        const uint8_t *s = (const uint8_t *)data + 16 * row;
        uint32_t len;
        memcpy(&len, s, 4);
        const uint8_t *p = s + 4;
        if (len > 12) {
            memcpy(&p, s + 8, sizeof(p));
        }
        if (tbuf_reserve(&cb->values, len)) {
            return -1;
        }
        memcpy(cb->values.data + cb->values.len, p, len);
        cb->values.len += len;
        return put_i64(&cb->vo, (int64_t)cb->values.len);
    }
    default: /* BIGINT, the int64 timestamps and times */
        iv = ((const int64_t *)data)[row];
        break;
    }
    return put_i64(&cb->values, iv);
}

/* A placeholder for a null scalar (its feature is omitted; the encoder indexes by row). */
static int put_null_scalar(const copy_incol *ic, copy_colbufs *cb) {
    if (ic->kind == KIND_BYTES) {
        return put_i64(&cb->vo, (int64_t)cb->values.len);
    }
    size_t width = ic->kind == KIND_FLOAT ? 4 : 8;
    if (tbuf_reserve(&cb->values, width)) {
        return -1;
    }
    memset(cb->values.data + cb->values.len, 0, width);
    cb->values.len += width;
    return 0;
}

/* The element range of row `row` of a LIST (its entries `data`) or ARRAY vector. */
static void list_range(const void *data, uint64_t array_size, uint64_t row, uint64_t *from,
                       uint64_t *to) {
    if (array_size > 0) {
        *from = row * array_size;
        *to = *from + array_size;
        return;
    }
    const uint64_t *e = (const uint64_t *)data + 2 * row; /* {offset, length} */
    *from = e[0];
    *to = e[0] + e[1];
}

/* Append the values of elements [from, to) of the list's child `child`. */
static int put_elements(const copy_incol *ic, const copy_view *child, uint64_t from, uint64_t to,
                        copy_colbufs *cb, const char *name, uint64_t row, char *err) {
    for (uint64_t j = from; j < to; j++) {
        if (!row_is_valid(child->validity, j)) {
            snprintf(err, ERRLEN, "column \"%s\", row %llu of this chunk: a list holds a NULL "
                                  "element, which no feature can store; filter it out "
                                  "(list_filter(x, v -> v IS NOT NULL)) in the query",
                     name, (unsigned long long)row);
            return -1;
        }
        if (put_leaf(ic, child->data, j, cb, name, row, err)) {
            return -1;
        }
    }
    return 0;
}

static size_t value_count(const copy_incol *ic, const copy_colbufs *cb) {
    return ic->kind == KIND_BYTES ? cb->vo.len / 8 - 1
                                  : cb->values.len / (ic->kind == KIND_FLOAT ? 4 : 8);
}

/* The views of a column's vector and, for lists, of its children. */
typedef struct {
    copy_view top, mid, leaf;
} column_views;

static int view_column(const copy_incol *ic, const copy_vector_ops *ops, void *vec, column_views *v,
                       char *err) {
    memset(v, 0, sizeof(*v));
    if (ops->view(vec, &v->top, err)) {
        return -1;
    }
    if (ic->shape == SCALAR) {
        return 0;
    }
    void *mid = ops->child(v->top.vector, ic->outer_array > 0);
    if (mid == NULL || ops->view(mid, &v->mid, err)) {
        return -1;
    }
    if (ic->shape == LIST) {
        return 0;
    }
    void *leaf = ops->child(v->mid.vector, ic->inner_array > 0);
    return leaf == NULL || ops->view(leaf, &v->leaf, err) ? -1 : 0;
}

/* Fill one encoder column's arrays from the input vector `vec` (n rows). */
static int fill_encoder_column(const copy_incol *ic, const copy_vector_ops *ops, void *vec,
                               const uint64_t *row_validity, uint64_t n, copy_colbufs *cb,
                               const char *name, char *err) {
    cb->validity.len = cb->outer.len = cb->inner.len = cb->vo.len = cb->values.len = 0;
    column_views v;
    if (view_column(ic, ops, vec, &v, err)) {
        return -1;
    }
    if (tbuf_reserve(&cb->validity, n + 1) || put_i64(&cb->outer, 0) || put_i64(&cb->inner, 0) ||
        put_i64(&cb->vo, 0)) {
        snprintf(err, ERRLEN, "out of memory");
        return -1;
    }
    for (uint64_t row = 0; row < n; row++) {
        /* a NULL row (the STRUCT itself) holds no features: an empty record */
        int valid = row_is_valid(v.top.validity, row) && row_is_valid(row_validity, row);
        cb->validity.data[row] = (uint8_t)valid;
        int rc = 0;
        if (ic->shape == SCALAR) {
            rc = valid ? put_leaf(ic, v.top.data, row, cb, name, row, err) : put_null_scalar(ic, cb);
        } else if (valid) {
            uint64_t from, to;
            list_range(v.top.data, ic->outer_array, row, &from, &to);
            if (ic->shape == LIST) {
                rc = put_elements(ic, &v.mid, from, to, cb, name, row, err);
            } else {
                for (uint64_t s = from; s < to && rc == 0; s++) {
                    if (!row_is_valid(v.mid.validity, s)) {
                        snprintf(err, ERRLEN, "column \"%s\", row %llu of this chunk: a list of "
                                              "lists holds a NULL list, which no feature list "
                                              "can store; filter it out in the query",
                                 name, (unsigned long long)row);
                        return -1;
                    }
                    uint64_t a, z;
                    list_range(v.mid.data, ic->inner_array, s, &a, &z);
                    rc = put_elements(ic, &v.leaf, a, z, cb, name, row, err);
                    if (rc == 0) {
                        rc = put_i64(&cb->inner, (int64_t)value_count(ic, cb));
                    }
                }
            }
        }
        if (rc == 0 && ic->shape != SCALAR) {
            size_t items = ic->shape == LIST_OF_LIST ? cb->inner.len / 8 - 1 : value_count(ic, cb);
            rc = put_i64(&cb->outer, (int64_t)items);
        }
        if (rc) {
            if (!err[0]) {
                snprintf(err, ERRLEN, "out of memory");
            }
            return -1;
        }
    }
    return 0;
}

int copy_encode_rows(copy_encoder *e, const copy_plan *p, const copy_vector_ops *ops,
                     void *const *vectors, const uint64_t *row_validity, uint64_t n, char *err) {
    for (int i = 0; i < p->ncols; i++) {
        int c = p->enc[i];
        if (c < 0) {
            continue;
        }
        const colspec *cs = &p->sc.cols[c];
        copy_colbufs *cb = &e->bufs[c];
        if (fill_encoder_column(&p->in[i], ops, vectors[i], row_validity, n, cb,
                                (const char *)cs->name, err)) {
            return -1;
        }
        ecol *ec = &e->ecols[c];
        memset(ec, 0, sizeof(*ec));
        ec->spec = cs;
        ec->validity = cb->validity.data;
        ec->outer = cb->outer.data;
        ec->inner = cb->inner.data;
        ec->vo = cb->vo.data;
        ec->values = cb->values.data;
        ec->values_len = cb->values.len;
    }
    size_t bad_row = 0;
    e->framed.len = e->ends.len = 0;
    int erc = encode_core(&p->sc, e->ecols, (size_t)n, &e->framed, &e->ends, &bad_row);
    if (erc == EE_NULL_RAW) {
        snprintf(err, ERRLEN, "RECORD_TYPE bytes: row %zu of this chunk is NULL, and a "
                              "record cannot be null; filter NULLs out in the query",
                 bad_row);
        return -1;
    }
    if (erc != 0) {
        snprintf(err, ERRLEN, "out of memory while encoding %llu records", (unsigned long long)n);
        return -1;
    }
    return 0;
}
