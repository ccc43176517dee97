/*
 * tfsql/duckdb_ext/scan.c -- the scan step of tfrecord_scan: per-thread file
 * claims, framing in windows, decoding with the core, decoded buffers -> DuckDB
 * vectors, projection.
 */

#include "duckdb_ext.h"

typedef struct {
    size_t next_file; /* claimed with an atomic add */
    int nproj;
    int *proj;        /* output column index per projected position */
    schema sc;        /* the projected data columns */
    int *dcol;        /* projected position -> index into sc.cols (or -1) */
} tfglobal;

static void tfglobal_free(void *p) {
    tfglobal *g = (tfglobal *)p;
    if (g == NULL) {
        return;
    }
    free(g->proj);
    free(g->dcol);
    /* sc.cols names are borrowed from the bind data */
    free(g->sc.cols);
    free(g->sc.tables[0].slots);
    free(g->sc.tables[1].slots);
    free(g);
}

/* A thread's scan state. The open file is read through a bounded window (reading.c)
 * and framed one output chunk at a time, right before the chunk is decoded, so its
 * bytes are read from memory once while they are still in the CPU's cache. */
typedef struct {
    int have_file;
    size_t file;
    window fr;
    size_t pos;        /* records of the chunk already emitted */
    slotstate *slots;
    colbuild *cb;
} tflocal;

static void tflocal_close_file(tflocal *l) {
    window_close(&l->fr);
    l->have_file = 0;
}

static void tflocal_free(void *p) {
    tflocal *l = (tflocal *)p;
    if (l == NULL) {
        return;
    }
    window_close(&l->fr);
    free(l->slots);
    free(l->cb);
    free(l);
}

void tf_init(duckdb_init_info info) {
    tfbind *b = (tfbind *)duckdb_init_get_bind_data(info);
    tfglobal *g = (tfglobal *)calloc(1, sizeof(tfglobal));
    if (g == NULL) {
        duckdb_init_set_error(info, "out of memory");
        return;
    }
    idx_t n = duckdb_init_get_column_count(info);
    g->nproj = (int)n;
    g->proj = (int *)calloc(n ? n : 1, sizeof(int));
    g->dcol = (int *)calloc(n ? n : 1, sizeof(int));
    g->sc.cols = (colspec *)calloc(n ? n : 1, sizeof(colspec));
    if (g->proj == NULL || g->dcol == NULL || g->sc.cols == NULL) {
        tfglobal_free(g);
        duckdb_init_set_error(info, "out of memory");
        return;
    }
    g->sc.record_type = b->record_type;
    int ndec = 0;
    for (idx_t i = 0; i < n; i++) {
        idx_t c = duckdb_init_get_column_index(info, i);
        g->proj[i] = (int)c;
        g->dcol[i] = -1;
        if (c < (idx_t)b->ndata) {
            g->sc.cols[ndec] = b->sc.cols[c];
            g->dcol[i] = ndec++;
        }
    }
    g->sc.ncols = ndec;
    if (b->record_type == RAW) {
        g->sc.ncols = ndec; /* 0 or 1: the record column */
    } else if (schema_index(&g->sc, &(int){-1}) != 0) {
        tfglobal_free(g);
        duckdb_init_set_error(info, "out of memory");
        return;
    }
    size_t threads = b->files.n ? b->files.n : 1;
    duckdb_init_set_max_threads(info, threads);
    duckdb_init_set_init_data(info, g, tfglobal_free);
}

void tf_local_init(duckdb_init_info info) {
    tflocal *l = (tflocal *)calloc(1, sizeof(tflocal));
    if (l == NULL) {
        duckdb_init_set_error(info, "out of memory");
        return;
    }
    duckdb_init_set_init_data(info, l, tflocal_free);
}

/* -- decoded buffers -> DuckDB vectors -------------------------------------- */

static inline int bit_get(const uint8_t *bits, size_t i) { return (bits[i >> 3] >> (i & 7)) & 1; }

/* The SQL name of a leaf type a description gives (for messages). */
static const char *leaf_type_name(duckdb_type t) {
    switch (t) {
    case DUCKDB_TYPE_BOOLEAN: return "BOOLEAN";
    case DUCKDB_TYPE_TINYINT: return "TINYINT";
    case DUCKDB_TYPE_SMALLINT: return "SMALLINT";
    case DUCKDB_TYPE_INTEGER: return "INTEGER";
    case DUCKDB_TYPE_DATE: return "DATE";
    case DUCKDB_TYPE_UTINYINT: return "UTINYINT";
    case DUCKDB_TYPE_USMALLINT: return "USMALLINT";
    case DUCKDB_TYPE_UINTEGER: return "UINTEGER";
    case DUCKDB_TYPE_UBIGINT: return "UBIGINT";
    case DUCKDB_TYPE_TIME: return "TIME";
    case DUCKDB_TYPE_TIMESTAMP_TZ: return "TIMESTAMP WITH TIME ZONE";
    case DUCKDB_TYPE_INTERVAL: return "INTERVAL";
    default: return "BIGINT";
    }
}

/* Whether int64 v fits DuckDB leaf type t (a type a column description gives an
 * int64_list feature: tfsql.description), and store it there. */
static int narrow_int(duckdb_type t, void *data, idx_t i, int64_t v) {
    switch (t) {
    case DUCKDB_TYPE_BOOLEAN:
        if (v != 0 && v != 1) return 0;
        ((bool *)data)[i] = v != 0;
        return 1;
    case DUCKDB_TYPE_TINYINT:
        if (v < INT8_MIN || v > INT8_MAX) return 0;
        ((int8_t *)data)[i] = (int8_t)v;
        return 1;
    case DUCKDB_TYPE_SMALLINT:
        if (v < INT16_MIN || v > INT16_MAX) return 0;
        ((int16_t *)data)[i] = (int16_t)v;
        return 1;
    case DUCKDB_TYPE_INTEGER:
    case DUCKDB_TYPE_DATE:
        if (v < INT32_MIN || v > INT32_MAX) return 0;
        ((int32_t *)data)[i] = (int32_t)v;
        return 1;
    case DUCKDB_TYPE_UTINYINT:
        if (v < 0 || v > UINT8_MAX) return 0;
        ((uint8_t *)data)[i] = (uint8_t)v;
        return 1;
    case DUCKDB_TYPE_USMALLINT:
        if (v < 0 || v > UINT16_MAX) return 0;
        ((uint16_t *)data)[i] = (uint16_t)v;
        return 1;
    case DUCKDB_TYPE_UINTEGER:
        if (v < 0 || v > (int64_t)UINT32_MAX) return 0;
        ((uint32_t *)data)[i] = (uint32_t)v;
        return 1;
    case DUCKDB_TYPE_UBIGINT:
        if (v < 0) return 0;
        ((uint64_t *)data)[i] = (uint64_t)v;
        return 1;
    case DUCKDB_TYPE_INTERVAL: {
        duckdb_interval iv = {0, 0, v};
        ((duckdb_interval *)data)[i] = iv;
        return 1;
    }
    default: /* BIGINT, timestamps, TIME: the integer as stored */
        ((int64_t *)data)[i] = v;
        return 1;
    }
}

/* Fill `vec` from values [from, to) of `cb` as DuckDB leaf type `leaf`
 * (DUCKDB_TYPE_INVALID: the kind's own); -1 with *bad the index of the first value that
 * is not UTF-8 when the column is a string (`utf8`), -2 with *bad the index of the
 * first value `leaf` cannot hold. */
static int fill_leaf(duckdb_vector vec, const colbuild *cb, int64_t from, int64_t to, int utf8,
                     duckdb_type leaf, int64_t scale, idx_t at, int64_t *bad) {
    int64_t n = to - from;
    if (cb->kind == KIND_INT64 && leaf != DUCKDB_TYPE_INVALID && leaf != DUCKDB_TYPE_BIGINT) {
        void *dst = duckdb_vector_get_data(vec);
        const int64_t *src = (const int64_t *)cb->values.data + from;
        for (int64_t i = 0; i < n; i++) {
            int64_t v = src[i];
            if (scale > 1 && (v > INT64_MAX / scale || v < INT64_MIN / scale)) {
                *bad = from + i;
                return -2;
            }
            v = scale > 1 ? v * scale : scale < -1 ? (v - ((v % -scale) + -scale) % -scale) / -scale : v;
            if (!narrow_int(leaf, dst, at + (idx_t)i, v)) {
                *bad = from + i;
                return -2;
            }
        }
    } else if (cb->kind == KIND_INT64) {
        int64_t *dst = (int64_t *)duckdb_vector_get_data(vec);
        memcpy(dst + at, cb->values.data + 8 * from, (size_t)n * 8);
    } else if (cb->kind == KIND_FLOAT && leaf == DUCKDB_TYPE_DOUBLE) {
        double *dst = (double *)duckdb_vector_get_data(vec);
        const float *src = (const float *)cb->values.data + from;
        for (int64_t i = 0; i < n; i++) {
            dst[at + (idx_t)i] = (double)src[i]; /* exact */
        }
    } else if (cb->kind == KIND_FLOAT) {
        float *dst = (float *)duckdb_vector_get_data(vec);
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
            duckdb_vector_assign_string_element_len(vec, at + (idx_t)i, p, len);
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

static void set_validity(duckdb_vector vec, const uint8_t *bits, int64_t nulls, size_t n) {
    if (nulls == 0) {
        return;
    }
    duckdb_vector_ensure_validity_writable(vec);
    uint64_t *validity = duckdb_vector_get_validity(vec);
    for (size_t r = 0; r < n; r++) {
        if (!bit_get(bits, r)) {
            duckdb_validity_set_row_invalid(validity, r);
        }
    }
}

/* Fill `vec` with column `cb` of n rows as leaf type `leaf` (fill_leaf), an ARRAY of
 * array_size values when that is not 0; -1 with *bad_row the first row holding a value
 * that is not UTF-8 when the column is a string (`utf8`), -2 with *bad_row the first row
 * holding a value `leaf` cannot hold and *bad_value that value, -3 with *bad_row the
 * first row of an ARRAY whose list holds another count (*bad_value). */
static int fill_column(duckdb_vector vec, const colbuild *cb, size_t n, int utf8,
                       duckdb_type leaf, int64_t scale, idx_t array_size, int64_t *bad_row,
                       int64_t *bad_value) {
    int64_t bad = -1;
    int rc;
    if (array_size > 0) { /* an ARRAY: every row's list holds exactly array_size values */
        const int32_t *outer = (const int32_t *)cb->outer.data;
        duckdb_vector child = duckdb_array_vector_get_child(vec);
        set_validity(vec, cb->validity.data, cb->null_count, n);
        for (size_t r = 0; r < n; r++) {
            if (cb->null_count && !bit_get(cb->validity.data, r)) {
                duckdb_vector_ensure_validity_writable(child);
                uint64_t *cv = duckdb_vector_get_validity(child);
                for (idx_t k = 0; k < array_size; k++) {
                    duckdb_validity_set_row_invalid(cv, r * array_size + k);
                }
                continue;
            }
            if ((idx_t)(outer[r + 1] - outer[r]) != array_size) {
                *bad_row = (int64_t)r;
                *bad_value = outer[r + 1] - outer[r];
                return -3;
            }
            if ((rc = fill_leaf(child, cb, outer[r], outer[r + 1], utf8, leaf, scale, r * array_size,
                                &bad)) != 0) {
                *bad_row = (int64_t)r;
                *bad_value = rc == -2 ? ((const int64_t *)cb->values.data)[bad] : 0;
                return rc;
            }
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
                duckdb_vector_assign_string_element_len(vec, r, p, len);
            }
        } else if ((rc = fill_leaf(vec, cb, 0, (int64_t)n, utf8, leaf, scale, 0, &bad)) != 0) {
            *bad_row = bad;
            *bad_value = rc == -2 ? ((const int64_t *)cb->values.data)[bad] : 0;
            return rc;
        }
        set_validity(vec, cb->validity.data, cb->null_count, n);
        return 0;
    }
    const int32_t *outer = (const int32_t *)cb->outer.data;
    duckdb_list_entry *entries = (duckdb_list_entry *)duckdb_vector_get_data(vec);
    for (size_t r = 0; r < n; r++) {
        entries[r].offset = (uint64_t)outer[r];
        entries[r].length = (uint64_t)(outer[r + 1] - outer[r]);
    }
    set_validity(vec, cb->validity.data, cb->null_count, n);
    duckdb_vector child = duckdb_list_vector_get_child(vec);
    if (cb->shape == LIST) {
        idx_t nv = (idx_t)cb->nvalues;
        duckdb_list_vector_reserve(vec, nv);
        duckdb_list_vector_set_size(vec, nv);
        child = duckdb_list_vector_get_child(vec);
        if ((rc = fill_leaf(child, cb, 0, cb->nvalues, utf8, leaf, scale, 0, &bad)) != 0) {
            *bad_row = holding(outer, (int64_t)n, bad);
            *bad_value = rc == -2 ? ((const int64_t *)cb->values.data)[bad] : 0;
            return rc;
        }
        return 0;
    }
    /* LIST_OF_LIST: the outer list's child holds the inner lists */
    idx_t ninner = (idx_t)cb->ninner;
    duckdb_list_vector_reserve(vec, ninner);
    duckdb_list_vector_set_size(vec, ninner);
    child = duckdb_list_vector_get_child(vec);
    const int32_t *inner = (const int32_t *)cb->inner.data;
    duckdb_list_entry *ie = (duckdb_list_entry *)duckdb_vector_get_data(child);
    for (idx_t k = 0; k < ninner; k++) {
        ie[k].offset = (uint64_t)inner[k];
        ie[k].length = (uint64_t)(inner[k + 1] - inner[k]);
    }
    set_validity(child, cb->inner_validity.data, cb->inner_null_count, ninner);
    idx_t nv = (idx_t)cb->nvalues;
    duckdb_list_vector_reserve(child, nv);
    duckdb_list_vector_set_size(child, nv);
    duckdb_vector values = duckdb_list_vector_get_child(child);
    if ((rc = fill_leaf(values, cb, 0, cb->nvalues, utf8, leaf, scale, 0, &bad)) != 0) {
        *bad_row = holding(outer, (int64_t)n, holding(inner, (int64_t)ninner, bad));
        *bad_value = rc == -2 ? ((const int64_t *)cb->values.data)[bad] : 0;
        return rc;
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

/* Fail the scan with `err`, its fields (a data error) kept for tfrecord_last_error().
 * DuckDB shows it after the function's name, as the bind's errors and tfsql.connect()'s
 * Arrow path word it. */
static void scan_failed(duckdb_function_info info, const tfbind *b, const char *err) {
    const fninfo *fi = (const fninfo *)duckdb_function_get_extra_info(info);
    char shown[ERRLEN + 64];
    reports_scan_failed(b->conn, err);
    snprintf(shown, sizeof shown, "%s: %s", fi != NULL ? fi->name : "tfrecord_scan", err);
    duckdb_function_set_error(info, shown);
}

/* Claim and open the next file; 0 when none is left, -1 on error. */
static int open_next_file(tfbind *b, tfglobal *g, tflocal *l, char *err) {
    for (;;) {
        size_t i = __atomic_fetch_add(&g->next_file, 1, __ATOMIC_RELAXED);
        if (i >= b->files.n) {
            return 0;
        }
        const tfile *f = &b->files.items[i];
        if (f->size == 0) {
            continue;
        }
        l->pos = 0;
        if (window_open(&l->fr, f->path, f->size, b->compression, err)) {
            return -1;
        }
        l->file = i;
        l->have_file = 1;
        return 1;
    }
}

void tf_scan(duckdb_function_info info, duckdb_data_chunk output) {
    tfbind *b = (tfbind *)duckdb_function_get_bind_data(info);
    tfglobal *g = (tfglobal *)duckdb_function_get_init_data(info);
    tflocal *l = (tflocal *)duckdb_function_get_local_init_data(info);
    char err[ERRLEN] = "";
    idx_t cap = duckdb_vector_size();
    tferror_rec_free(tferror_take()); /* a data error of an earlier call on this thread */
    for (;;) {
        if (!l->have_file) {
            int rc = open_next_file(b, g, l, err);
            if (rc < 0) {
                scan_failed(info, b, err);
                return;
            }
            if (rc == 0) {
                duckdb_data_chunk_set_size(output, 0);
                return;
            }
        }
        if (l->pos >= l->fr.r.n) {
            framing o = {(long long)cap, b->batch_bytes, (uint64_t)b->max_record_bytes,
                         b->verify, b->skip_corrupt, b->conn};
            l->pos = 0;
            int rc = window_next(&l->fr, &o, err);
            if (rc < 0) {
                tflocal_close_file(l);
                scan_failed(info, b, err);
                return;
            }
            if (rc == 0) {
                tflocal_close_file(l);
                continue;
            }
        }
        size_t n = l->fr.r.n - l->pos;
        if (n > cap) {
            n = cap;
        }
        const uint8_t *offs = l->fr.r.offs.data + 8 * l->pos, *lens = l->fr.r.lens.data + 8 * l->pos;
        const uint8_t *data = l->fr.r.buf.data;
        size_t size = l->fr.r.buf.len;
        if (g->sc.ncols > 0 && l->cb == NULL) {
            l->slots = (slotstate *)calloc((size_t)g->sc.ncols, sizeof(slotstate));
            l->cb = (colbuild *)calloc((size_t)g->sc.ncols, sizeof(colbuild));
            if (l->slots == NULL || l->cb == NULL) {
                duckdb_function_set_error(info, "out of memory");
                return;
            }
        }
        if (g->sc.ncols > 0) {
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
                if (colbuild_init(&l->cb[c], g->sc.cols[c].kind, g->sc.cols[c].shape, n,
                                  payload, lists)) {
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
                duckdb_type leaf = b->leaf != NULL ? b->leaf[out] : DUCKDB_TYPE_INVALID;
                idx_t array_size = b->array_size != NULL ? b->array_size[out] : 0;
                int64_t scale = b->scale != NULL ? b->scale[out] : 1;
                int filled = fill_column(duckdb_data_chunk_get_vector(output, (idx_t)i), &l->cb[d],
                                         n, b->utf8[out], leaf, scale, array_size, &row, &value);
                if (filled) {
                    char col[256], found[64], expected[64];
                    snprintf(col, sizeof(col), "%.*s", (int)g->sc.cols[d].name_len,
                             (const char *)g->sc.cols[d].name);
                    tferror e;
                    tferror_init(&e, TFERR_SCHEMA,
                                 filled == -2 ? "out_of_range"
                                 : filled == -3 ? "wrong_count"
                                                : "not_utf8",
                                 b->files.items[l->file].path);
                    if (filled == -2) { /* a value the described type cannot hold */
                        snprintf(found, sizeof(found), "%lld", (long long)value);
                        snprintf(expected, sizeof(expected), "%s", leaf_type_name(leaf));
                        e.found = found;
                        e.expected = expected;
                    } else if (filled == -3) { /* a list of another length than the ARRAY's */
                        snprintf(found, sizeof(found), "%lld values", (long long)value);
                        snprintf(expected, sizeof(expected), "%llu", (unsigned long long)array_size);
                        e.found = found;
                        e.expected = expected;
                    }
                    e.feature = col;
                    e.record_index = (long long)(l->fr.r.first + l->pos + (size_t)row);
                    e.offset = (long long)l->fr.r.base +
                               (long long)load_u64(offs + 8 * (size_t)row) - 12;
                    tferror_raise(err, &e);
                    rc = -1;
                }
            }
            for (int c = 0; c < g->sc.ncols; c++) {
                colbuild_free(&l->cb[c]);
            }
            if (rc) {
                scan_failed(info, b, err);
                return;
            }
        }
        /* partition and filename columns: constant within the file */
        const tfile *f = &b->files.items[l->file];
        for (int i = 0; i < g->nproj; i++) {
            int out = g->proj[i];
            if (out < b->ndata) {
                continue;
            }
            duckdb_vector vec = duckdb_data_chunk_get_vector(output, (idx_t)i);
            int k = out - b->ndata;
            const char *text = k < b->npart ? f->parts[k] : TFILE_SHOWN(f);
            if (text == NULL) {
                duckdb_vector_ensure_validity_writable(vec);
                uint64_t *validity = duckdb_vector_get_validity(vec);
                for (size_t r = 0; r < n; r++) {
                    duckdb_validity_set_row_invalid(validity, r);
                }
            } else if (k < b->npart && b->part_is_int[k]) {
                int64_t v = strtoll(text, NULL, 10); /* the plan typed it int64 */
                int64_t *dst = (int64_t *)duckdb_vector_get_data(vec);
                for (size_t r = 0; r < n; r++) {
                    dst[r] = v;
                }
            } else {
                size_t len = k < b->npart ? f->part_lens[k] : strlen(text);
                for (size_t r = 0; r < n; r++) {
                    duckdb_vector_assign_string_element_len(vec, r, text, len);
                }
            }
        }
        l->pos += n;
        duckdb_data_chunk_set_size(output, n);
        return;
    }
}
