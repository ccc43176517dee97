/*
 * tfsql/duckdb_ext/scanning.c -- the scan step of tfrecord_scan, for both bindings:
 * per-thread claims of files and byte ranges (ranges.c), framing in windows, decoding with the core, decoded buffers
 * -> DuckDB vectors (through the binding's vecops), projection.
 */

#include "ext_common.h"

void scan_global_free(void *p) {
    tfglobal *g = (tfglobal *)p;
    if (g == NULL) {
        return;
    }
    scan_units_free(g);
    free(g->proj);
    free(g->dcol);
    free(g->skip);
    /* sc.cols names are borrowed from the bind data */
    free(g->sc.cols);
    free(g->sc.tables[0].slots);
    free(g->sc.tables[1].slots);
    free(g);
}

static void tflocal_close_file(tflocal *l) {
    window_close(&l->fr);
    l->have_file = 0;
}

void scan_local_free(void *p) {
    tflocal *l = (tflocal *)p;
    if (l == NULL) {
        return;
    }
    window_close(&l->fr);
    free(l->slots);
    free(l->cb);
    free(l);
}

tfglobal *scan_global_new(const tfbind *b, const size_t *columns, size_t n, char *err) {
    tfglobal *g = (tfglobal *)calloc(1, sizeof(tfglobal));
    if (g == NULL) {
        snprintf(err, ERRLEN, "out of memory");
        return NULL;
    }
    g->nproj = (int)n;
    g->proj = (int *)calloc(n ? n : 1, sizeof(int));
    g->dcol = (int *)calloc(n ? n : 1, sizeof(int));
    g->sc.cols = (colspec *)calloc(n ? n : 1, sizeof(colspec));
    if (g->proj == NULL || g->dcol == NULL || g->sc.cols == NULL) {
        scan_global_free(g);
        snprintf(err, ERRLEN, "out of memory");
        return NULL;
    }
    g->sc.record_type = b->record_type;
    int ndec = 0;
    for (size_t i = 0; i < n; i++) {
        size_t c = columns[i];
        g->proj[i] = (int)c;
        g->dcol[i] = -1;
        if (c < (size_t)b->ndata) {
            g->sc.cols[ndec] = b->sc.cols[c];
            g->dcol[i] = ndec++;
        }
    }
    g->sc.ncols = ndec;
    if (b->record_type != RAW && schema_index(&g->sc, &(int){-1}) != 0) {
        scan_global_free(g);
        snprintf(err, ERRLEN, "out of memory");
        return NULL;
    }
    scan_count_total(b, g);
    return g;
}

void scan_count_total(const tfbind *b, tfglobal *g) {
    g->total_bytes = 0;
    for (size_t i = 0; i < b->files.n; i++) {
        if (g->skip == NULL || !g->skip[i]) {
            g->total_bytes += (uint64_t)b->files.items[i].size;
        }
    }
}

double scan_progress(const tfglobal *g) {
    uint64_t read = __atomic_load_n(&g->read_bytes, __ATOMIC_RELAXED);
    return g->total_bytes == 0 ? 1.0 : read >= g->total_bytes ? 1.0 : (double)read / (double)g->total_bytes;
}

/* Add the bytes of l's open unit read up to `upto` (at most its end) to g's progress. */
static void count_read(const tfbind *b, tfglobal *g, tflocal *l, uint64_t upto) {
    uint64_t size = (uint64_t)b->files.items[l->file].size;
    size = l->unit_end < size ? l->unit_end : size;
    upto = upto < size ? upto : size;
    if (upto > l->counted) {
        __atomic_fetch_add(&g->read_bytes, upto - l->counted, __ATOMIC_RELAXED);
        l->counted = upto;
    }
}

tflocal *scan_local_new(void) { return (tflocal *)calloc(1, sizeof(tflocal)); }

/* -- decoded buffers -> DuckDB vectors -------------------------------------- */

static inline int bit_get(const uint8_t *bits, size_t i) { return (bits[i >> 3] >> (i & 7)) & 1; }

/* Whether int64 v fits TT_* leaf t (a type a column description gives an int64_list
 * feature: tfsql.description), and store it there as DuckDB lays that type out. */
static int narrow_int(int t, void *data, size_t i, int64_t v) {
    switch (t) {
    case TT_BOOLEAN:
        if (v != 0 && v != 1) return 0;
        ((uint8_t *)data)[i] = v != 0;
        return 1;
    case TT_TINYINT:
        if (v < INT8_MIN || v > INT8_MAX) return 0;
        ((int8_t *)data)[i] = (int8_t)v;
        return 1;
    case TT_SMALLINT:
        if (v < INT16_MIN || v > INT16_MAX) return 0;
        ((int16_t *)data)[i] = (int16_t)v;
        return 1;
    case TT_INTEGER:
    case TT_DATE:
        if (v < INT32_MIN || v > INT32_MAX) return 0;
        ((int32_t *)data)[i] = (int32_t)v;
        return 1;
    case TT_UTINYINT:
        if (v < 0 || v > UINT8_MAX) return 0;
        ((uint8_t *)data)[i] = (uint8_t)v;
        return 1;
    case TT_USMALLINT:
        if (v < 0 || v > UINT16_MAX) return 0;
        ((uint16_t *)data)[i] = (uint16_t)v;
        return 1;
    case TT_UINTEGER:
        if (v < 0 || v > (int64_t)UINT32_MAX) return 0;
        ((uint32_t *)data)[i] = (uint32_t)v;
        return 1;
    case TT_UBIGINT:
        if (v < 0) return 0;
        ((uint64_t *)data)[i] = (uint64_t)v;
        return 1;
    case TT_INTERVAL: { /* months, days, micros */
        struct {
            int32_t months, days;
            int64_t micros;
        } iv = {0, 0, v};
        memcpy((uint8_t *)data + 16 * i, &iv, 16);
        return 1;
    }
    default: /* BIGINT, timestamps, TIME: the integer as stored */
        ((int64_t *)data)[i] = v;
        return 1;
    }
}

/* How a data column's values are written: tfbind's leaf, scale, array_size and
 * described type (a DECIMAL's width and scale, nested ARRAYs' sizes) of it. */
typedef struct {
    int utf8, leaf;
    int64_t scale;
    uint64_t array_size;
    tftype type;
} colout;

/* Fill `vec` from values [from, to) of `cb` as c's TT_* leaf (0: the kind's own), an
 * integer first scaled by c's scale (tfbind.scale); -1 with *bad the index of the first
 * value that is not UTF-8 when the column is a string (c->utf8), -3 with *bad the index
 * of the first value the leaf cannot hold (-5 for a float no DECIMAL value of the
 * column's holds exactly). */
static int fill_leaf(const vecops *o, void *vec, const colbuild *cb, int64_t from, int64_t to,
                     const colout *c, size_t at, int64_t *bad) {
    int64_t n = to - from;
    int utf8 = c->utf8, leaf = c->leaf;
    int64_t scale = c->scale;
    if (cb->kind == KIND_FLOAT && leaf == TT_DECIMAL) {
        void *dst = o->data(vec);
        const float *src = (const float *)cb->values.data + from;
        for (int64_t i = 0; i < n; i++) {
            if (store_decimal(src[i], c->type.width, c->type.scale, dst, at + (size_t)i)) {
                *bad = from + i;
                return -5;
            }
        }
    } else if (cb->kind == KIND_INT64 && leaf != 0) {
        void *dst = o->data(vec);
        const int64_t *src = (const int64_t *)cb->values.data + from;
        for (int64_t i = 0; i < n; i++) {
            int64_t v = src[i];
            if (scale > 1 && (v > INT64_MAX / scale || v < INT64_MIN / scale)) {
                *bad = from + i;
                return -3;
            }
            v = scale > 1    ? v * scale
                : scale < -1 ? (v - ((v % -scale) + -scale) % -scale) / -scale /* floor */
                             : v;
            if (!narrow_int(leaf, dst, at + (size_t)i, v)) {
                *bad = from + i;
                return -3;
            }
        }
    } else if (cb->kind == KIND_INT64) {
        int64_t *dst = (int64_t *)o->data(vec);
        memcpy(dst + at, cb->values.data + 8 * from, (size_t)n * 8);
    } else if (cb->kind == KIND_FLOAT && leaf == TT_DOUBLE && c->type.width > 0) {
        double *dst = (double *)o->data(vec); /* a decimal wider than DuckDB's */
        const float *src = (const float *)cb->values.data + from;
        for (int64_t i = 0; i < n; i++) {
            if (decimal_double(src[i], c->type.width, c->type.scale, &dst[at + (size_t)i])) {
                *bad = from + i;
                return -5;
            }
        }
    } else if (cb->kind == KIND_FLOAT && leaf == TT_DOUBLE) {
        double *dst = (double *)o->data(vec);
        const float *src = (const float *)cb->values.data + from;
        for (int64_t i = 0; i < n; i++) {
            dst[at + (size_t)i] = (double)src[i]; /* exact */
        }
    } else if (cb->kind == KIND_FLOAT) {
        float *dst = (float *)o->data(vec);
        memcpy(dst + at, cb->values.data + 4 * from, (size_t)n * 4);
    } else {
        const int32_t *vo = (const int32_t *)cb->voffs.data;
        for (int64_t i = 0; i < n; i++) {
            const char *p = (const char *)cb->values.data + vo[from + i];
            size_t len = (size_t)(vo[from + i + 1] - vo[from + i]);
            if (utf8 && !utf8_valid((const uint8_t *)p, len)) {
                *bad = from + i;
                return -1;
            }
            if (o->set_text(vec, at + (size_t)i, p, len)) {
                *bad = -2;
                return -1;
            }
        }
    }
    return 0;
}

/* The index k with offs[k] <= v < offs[k + 1] (offsets of n lists). */
static int64_t holding(const int32_t *offs, int64_t n, int64_t v) {
    int64_t k = 0;
    while (k + 1 < n && offs[k + 1] <= v) {
        k++;
    }
    return k;
}

void set_row_invalid(uint64_t *validity, size_t row) {
    validity[row >> 6] &= ~((uint64_t)1 << (row & 63));
}

static void set_validity(const vecops *o, void *vec, const uint8_t *bits, int64_t nulls,
                         size_t n) {
    if (nulls == 0) {
        return;
    }
    uint64_t *validity = o->validity(vec);
    for (size_t r = 0; r < n; r++) {
        if (!bit_get(bits, r)) {
            set_row_invalid(validity, r);
        }
    }
}

/* A failed fill_leaf's row (the list holding value `bad` of `outer`) and value. */
static int leaf_failed(int rc, const colbuild *cb, int64_t bad, int64_t row, int64_t *bad_row,
                       int64_t *bad_value) {
    *bad_row = bad == -2 ? -2 : row;
    *bad_value = rc == -3 ? ((const int64_t *)cb->values.data)[bad] : 0;
    if (rc == -5) { /* the float's bits */
        uint32_t bits;
        memcpy(&bits, cb->values.data + 4 * bad, 4);
        *bad_value = bits;
    }
    return rc;
}

/* An ARRAY column (a described fixed size): every row's list holds exactly
 * c->array_size values; -4 with *bad_row the first row whose list holds another count
 * (*bad_value). */
static int fill_array(const vecops *o, void *vec, const colbuild *cb, size_t n, const colout *c,
                      int64_t *bad_row, int64_t *bad_value) {
    const int32_t *outer = (const int32_t *)cb->outer.data;
    size_t size = (size_t)c->array_size;
    /* nested ARRAYs (c->type.inner): each level's child holds rows times its sizes */
    void *levels[TT_MAX_INNER + 2];
    size_t per_row[TT_MAX_INNER + 2];
    int depth = 0;
    levels[0] = vec;
    per_row[0] = 1;
    uint64_t sizes[TT_MAX_INNER + 1] = {c->type.array > 0 ? c->type.array : size};
    for (int i = 0; i < TT_MAX_INNER && c->type.inner[i] > 0; i++) {
        sizes[i + 1] = c->type.inner[i];
    }
    for (int i = 0; i < TT_MAX_INNER + 1 && sizes[i] > 0; i++) {
        per_row[depth + 1] = per_row[depth] * (size_t)sizes[i];
        levels[depth + 1] = o->array_child(levels[depth], n * per_row[depth + 1]);
        if (levels[++depth] == NULL) {
            *bad_row = -2;
            return -1;
        }
    }
    void *child = levels[depth]; /* per_row[depth] == size values a row */
    set_validity(o, vec, cb->validity.data, cb->null_count, n);
    for (size_t r = 0; r < n; r++) {
        if (cb->null_count && !bit_get(cb->validity.data, r)) {
            for (int l = 1; l <= depth; l++) {
                uint64_t *cv = o->validity(levels[l]);
                for (size_t k = 0; k < per_row[l]; k++) {
                    set_row_invalid(cv, r * per_row[l] + k);
                }
            }
            continue;
        }
        if ((size_t)(outer[r + 1] - outer[r]) != size) {
            *bad_row = (int64_t)r;
            *bad_value = outer[r + 1] - outer[r];
            return -4;
        }
        int64_t bad = -1;
        int rc = fill_leaf(o, child, cb, outer[r], outer[r + 1], c, r * size, &bad);
        if (rc) {
            return leaf_failed(rc, cb, bad, (int64_t)r, bad_row, bad_value);
        }
    }
    return 0;
}

/* Fill `vec` with column `cb` of n rows as `c` says; -1 with *bad_row the first row
 * holding a value that is not UTF-8 when the column is a string (-2: out of memory), -3
 * with *bad_row the first row holding a value the leaf cannot hold and *bad_value that
 * value, -4 for an ARRAY's list of another count (fill_array). */
static int fill_column(const vecops *o, void *vec, const colbuild *cb, size_t n, const colout *c,
                       int64_t *bad_row, int64_t *bad_value) {
    int64_t bad = -1;
    int rc;
    int utf8 = c->utf8;
    if (c->array_size > 0) {
        return fill_array(o, vec, cb, n, c, bad_row, bad_value);
    }
    if (c->leaf == TT_NULL) { /* a column no record holds: the first that does is refused */
        uint64_t *validity = o->validity(vec);
        for (size_t r = 0; r < n; r++) {
            if (cb->shape == SCALAR && cb->kind == KIND_INT64 &&
                (cb->null_count == 0 || bit_get(cb->validity.data, r))) {
                *bad_row = (int64_t)r;
                *bad_value = ((const int64_t *)cb->values.data)[r];
                return -3;
            }
            set_row_invalid(validity, r);
        }
        return 0;
    }
    if (cb->shape == SCALAR) {
        if (cb->kind == KIND_BYTES) {
            /* assign valid rows only */
            const int32_t *vo = (const int32_t *)cb->voffs.data;
            for (size_t r = 0; r < n; r++) {
                if (cb->null_count && !bit_get(cb->validity.data, r)) {
                    continue;
                }
                const char *p = (const char *)cb->values.data + vo[r];
                size_t len = (size_t)(vo[r + 1] - vo[r]);
                if (utf8 && !utf8_valid((const uint8_t *)p, len)) {
                    *bad_row = (int64_t)r;
                    return -1;
                }
                if (o->set_text(vec, r, p, len)) {
                    *bad_row = -2;
                    return -1;
                }
            }
        } else if ((rc = fill_leaf(o, vec, cb, 0, (int64_t)n, c, 0, &bad))) {
            return leaf_failed(rc, cb, bad, bad, bad_row, bad_value);
        }
        set_validity(o, vec, cb->validity.data, cb->null_count, n);
        return 0;
    }
    const int32_t *outer = (const int32_t *)cb->outer.data;
    list_entry *entries = (list_entry *)o->data(vec);
    for (size_t r = 0; r < n; r++) {
        entries[r].offset = (uint64_t)outer[r];
        entries[r].length = (uint64_t)(outer[r + 1] - outer[r]);
    }
    set_validity(o, vec, cb->validity.data, cb->null_count, n);
    if (cb->shape == LIST) {
        size_t nv = (size_t)cb->nvalues;
        void *child = o->list_resize(vec, nv);
        if (child == NULL) {
            *bad_row = -2;
            return -1;
        }
        if ((rc = fill_leaf(o, child, cb, 0, cb->nvalues, c, 0, &bad))) {
            return leaf_failed(rc, cb, bad, bad < 0 ? bad : holding(outer, (int64_t)n, bad),
                               bad_row, bad_value);
        }
        return 0;
    }
    /* LIST_OF_LIST: the outer list's child holds the inner lists */
    size_t ninner = (size_t)cb->ninner;
    void *child = o->list_resize(vec, ninner);
    if (child == NULL) {
        *bad_row = -2;
        return -1;
    }
    const int32_t *inner = (const int32_t *)cb->inner.data;
    list_entry *ie = (list_entry *)o->data(child);
    for (size_t k = 0; k < ninner; k++) {
        ie[k].offset = (uint64_t)inner[k];
        ie[k].length = (uint64_t)(inner[k + 1] - inner[k]);
    }
    set_validity(o, child, cb->inner_validity.data, cb->inner_null_count, ninner);
    size_t nv = (size_t)cb->nvalues;
    void *leaf = o->list_resize(child, nv);
    if (leaf == NULL) {
        *bad_row = -2;
        return -1;
    }
    if ((rc = fill_leaf(o, leaf, cb, 0, cb->nvalues, c, 0, &bad))) {
        int64_t row = bad < 0 ? bad : holding(outer, (int64_t)n, holding(inner, (int64_t)ninner, bad));
        return leaf_failed(rc, cb, bad, row, bad_row, bad_value);
    }
    return 0;
}

static void decode_error(char *err, const tfbind *b, const dctx *x, int rc, const char *path,
                         size_t record, size_t at) {
    char col[256] = "";
    int named = x->err_column >= 0 && x->err_column < x->sc->ncols;
    if (named) {
        snprintf(col, sizeof(col), "%.*s", (int)x->sc->cols[x->err_column].name_len,
                 (const char *)x->sc->cols[x->err_column].name);
    }
    if (rc == E_MALFORMED) {
        malformed_error(err, b->record_type, path, record, at, named ? col : NULL);
    } else if ((rc == E_KIND_MISMATCH || rc == E_NOT_SCALAR) && named) {
        tferror e;
        tferror_init(&e, TFERR_SCHEMA, rc == E_KIND_MISMATCH ? "kind_mismatch" : "not_scalar",
                     path);
        e.feature = col;
        e.record_index = (long long)record;
        e.offset = (long long)at;
        e.found = kind_names[x->err_found_kind & 3];
        e.expected = kind_names[x->sc->cols[x->err_column].kind & 3];
        tferror_raise(err, &e);
    } else if (rc == E_NOMEM) {
        snprintf(err, ERRLEN, "out of memory decoding %s", path);
    } else {
        snprintf(err, ERRLEN, "cannot decode %s, record %zu at byte %zu (error %d)", path, record,
                 at, rc);
    }
}

/* err = the scan's failure as DuckDB shows it (after the function's name, as the bind's
 * errors and tfsql's Python errors word it), its fields (a data error) kept for
 * tfrecord_last_error(). */
void scan_failed_message(const tfbind *b, const char *fname, char *err) {
    char shown[ERRLEN];
    reports_scan_failed(b->conn, err);
    snprintf(shown, sizeof shown, "%s: %s", fname != NULL ? fname : "tfrecord_scan", err);
    memcpy(err, shown, ERRLEN);
}

/* Claim and open the next unit (ranges.c: a file, or a byte range of one, from its
 * first record); 0 when none is left, -1 on error. */
static int open_next_unit(const tfbind *b, tfglobal *g, tflocal *l, char *err) {
    for (;;) {
        size_t u = __atomic_fetch_add(&g->next_unit, 1, __ATOMIC_RELAXED);
        if (u >= g->nunits) {
            return 0;
        }
        const scanunit *unit = &g->units[u];
        const tfile *f = &b->files.items[unit->file];
        uint64_t at = 0, stop = UINT64_MAX;
        size_t index = 0;
        l->file = unit->file;
        l->split = unit->split;
        l->part = unit->part;
        l->counted = unit->split != NULL ? range_start(unit->split, unit->part) : 0;
        l->unit_end = unit->split != NULL ? range_stop(unit->split, unit->part) : UINT64_MAX;
        if (unit->split != NULL) {
            stop = l->unit_end;
            if (range_begin(b, unit->split, unit->part, &at, &index, err)) {
                return -1;
            }
            if (at >= stop) { /* no record starts in the range */
                count_read(b, g, l, stop);
                range_finished(unit->split, at, index);
                continue;
            }
        }
        l->pos = 0;
        if (window_open(&l->fr, f->path, f->size, unit->split != NULL ? COMP_NONE : b->compression,
                        err)) {
            return -1;
        }
        if (unit->split != NULL) {
            l->fr.r.stop = stop;
            reader_start(&l->fr.r, at, index);
        }
        l->have_file = 1;
        return 1;
    }
}

/* Decode n records of l's chunk into the projected data columns of `vecs`; -1 with err. */
static int fill_data_columns(const tfbind *b, const tfglobal *g, tflocal *l, const vecops *o,
                             void *const *vecs, size_t n, char *err) {
    const uint8_t *offs = l->fr.r.offs.data + 8 * l->pos, *lens = l->fr.r.lens.data + 8 * l->pos;
    const uint8_t *data = l->fr.r.buf.data;
    size_t size = l->fr.r.buf.len;
    if (l->cb == NULL) {
        l->slots = (slotstate *)calloc((size_t)g->sc.ncols, sizeof(slotstate));
        l->cb = (colbuild *)calloc((size_t)g->sc.ncols, sizeof(colbuild));
        if (l->slots == NULL || l->cb == NULL) {
            snprintf(err, ERRLEN, "out of memory");
            return -1;
        }
    }
    dctx x;
    memset(&x, 0, sizeof(x));
    x.sc = &g->sc;
    x.slots = l->slots;
    x.cb = l->cb;
    memset(l->slots, 0, (size_t)g->sc.ncols * sizeof(slotstate));
    int rc = 0;
    size_t payload = records_payload((const uint8_t *)lens, n, size);
    size_t lists = list_reserve(&g->sc, payload);
    for (int c = 0; c < g->sc.ncols && rc == 0; c++) {
        if (colbuild_init(&l->cb[c], g->sc.cols[c].kind, g->sc.cols[c].shape, n, payload, lists)) {
            rc = E_NOMEM;
        }
    }
    if (rc == 0) {
        rc = decode_core(&x, data, size, offs, lens, n);
    }
    if (rc) {
        size_t rec = l->fr.r.first + l->pos + x.err_record;
        size_t at = (size_t)l->fr.r.base + (size_t)load_u64(offs + 8 * x.err_record) - 12;
        decode_error(err, b, &x, rc, b->files.items[l->file].path, rec, at);
    }
    for (int i = 0; i < g->nproj && rc == 0; i++) {
        int d = g->dcol[i];
        if (d < 0) {
            continue;
        }
        int out = g->proj[i];
        int64_t row = -1, value = 0;
        colout c = {b->utf8[out], b->leaf != NULL ? b->leaf[out] : 0,
                    b->scale != NULL && b->scale[out] != 0 ? b->scale[out] : 1,
                    b->array_size != NULL ? b->array_size[out] : 0,
                    b->described != NULL ? b->described[out] : (tftype)TFTYPE_OF(0)};
        int filled = fill_column(o, vecs[i], &l->cb[d], n, &c, &row, &value);
        if (filled) {
            rc = -1;
            if (row == -2) {
                snprintf(err, ERRLEN, "out of memory");
                break;
            }
            char col[256], found[64] = "", expected[96] = "";
            snprintf(col, sizeof(col), "%.*s", (int)g->sc.cols[d].name_len,
                     (const char *)g->sc.cols[d].name);
            tferror e;
            tferror_init(&e, TFERR_SCHEMA,
                         filled == -3 || filled == -5 ? "out_of_range"
                         : filled == -4               ? "wrong_count"
                                        : "not_utf8",
                         b->files.items[l->file].path);
            if (filled == -3) { /* a value the described type cannot hold */
                snprintf(found, sizeof(found), "%lld", (long long)value);
                snprintf(expected, sizeof(expected), "%s", tt_name(c.leaf));
            } else if (filled == -5) { /* a float no value of the DECIMAL equals */
                uint32_t bits = (uint32_t)value;
                float f;
                memcpy(&f, &bits, 4);
                tftype t = c.type;
                t.leaf = c.leaf;
                t.array = 0;
                memset(t.inner, 0, sizeof(t.inner));
                snprintf(found, sizeof(found), "the float32 %.9g", (double)f);
                if (t.leaf == TT_DOUBLE) { /* a decimal wider than DuckDB's */
                    snprintf(expected, sizeof(expected), "DOUBLE, of a DECIMAL(%d,%d)", t.width, t.scale);
                } else {
                    tftype_text(t, expected, sizeof(expected));
                }
            } else if (filled == -4) { /* a list of another length than the ARRAY's */
                snprintf(found, sizeof(found), "%lld values", (long long)value);
                snprintf(expected, sizeof(expected), "%llu", (unsigned long long)c.array_size);
            }
            if (filled <= -3) { /* -3, -4, -5 */
                e.found = found;
                e.expected = expected;
            }
            e.feature = col;
            e.record_index = (long long)(l->fr.r.first + l->pos + (size_t)row);
            e.offset = (long long)l->fr.r.base + (long long)load_u64(offs + 8 * (size_t)row) - 12;
            tferror_raise(err, &e);
        }
    }
    for (int c = 0; c < g->sc.ncols; c++) {
        colbuild_free(&l->cb[c]);
    }
    return rc ? -1 : 0;
}

/* The partition, split and filename columns of n rows of file f: constant within it. */
static int fill_file_columns(const tfbind *b, const tfglobal *g, const tfile *f,
                             const vecops *o, void *const *vecs, size_t n) {
    for (int i = 0; i < g->nproj; i++) {
        int out = g->proj[i];
        if (out < b->ndata) {
            continue;
        }
        void *vec = vecs[i];
        int k = out - b->ndata;
        const char *text = k < b->npart ? f->parts[k] : TFILE_SHOWN(f);
        if (text == NULL) {
            uint64_t *validity = o->validity(vec);
            for (size_t r = 0; r < n; r++) {
                set_row_invalid(validity, r);
            }
        } else if (k < b->npart && b->part_is_int[k]) {
            int64_t v = strtoll(text, NULL, 10); /* the plan typed it int64 */
            int64_t *dst = (int64_t *)o->data(vec);
            for (size_t r = 0; r < n; r++) {
                dst[r] = v;
            }
        } else {
            size_t len = k < b->npart ? f->part_lens[k] : strlen(text);
            for (size_t r = 0; r < n; r++) {
                if (o->set_text(vec, r, text, len)) {
                    return -1;
                }
            }
        }
    }
    return 0;
}

int scan_next(const tfbind *b, tfglobal *g, tflocal *l, const vecops *o, void *const *vecs,
              size_t cap, size_t *rows, char *err) {
    *rows = 0;
    tferror_rec_free(tferror_take()); /* a data error of an earlier call on this thread */
    for (;;) {
        if (!l->have_file) {
            int rc = open_next_unit(b, g, l, err);
            if (rc <= 0) {
                return rc;
            }
        }
        if (l->pos >= l->fr.r.n) {
            framing fo = {(long long)cap, b->batch_bytes, (uint64_t)b->max_record_bytes,
                          b->verify, b->skip_corrupt, b->conn};
            l->pos = 0;
            int rc = window_next(&l->fr, &fo, err);
            if (rc < 0) {
                tflocal_close_file(l);
                return -1;
            }
            if (rc == 0) {
                count_read(b, g, l, UINT64_MAX);
                if (l->split != NULL) { /* where the next range starts */
                    range_finished(l->split, l->fr.r.next, l->fr.r.index + l->fr.r.n);
                }
                tflocal_close_file(l);
                continue;
            }
            count_read(b, g, l, l->fr.r.file_pos);
            if (l->split != NULL) {
                range_progress(l->split, l->part, l->fr.r.next, l->fr.r.index + l->fr.r.n);
            }
        }
        size_t n = l->fr.r.n - l->pos;
        if (n > cap) {
            n = cap;
        }
        for (int i = 0; i < g->nproj; i++) {
            if (o->set_rows != NULL && o->set_rows(vecs[i], n)) {
                snprintf(err, ERRLEN, "out of memory");
                return -1;
            }
        }
        if (g->sc.ncols > 0 && fill_data_columns(b, g, l, o, vecs, n, err)) {
            return -1;
        }
        if (fill_file_columns(b, g, &b->files.items[l->file], o, vecs, n)) {
            snprintf(err, ERRLEN, "out of memory");
            return -1;
        }
        l->pos += n;
        *rows = n;
        return 1;
    }
}
