/*
 * tfsql/duckdb_ext/layouts.c -- TFDS / TFX directory layouts (tfsql.layouts): the
 * features.json types and the `split` column (the core's plan finds the layout, the
 * splits and the TFDS directory: list_sources).
 */

#include "ext_common.h"

/* The features a TFDS directory's features.json describes (tfsql_tfds_features; the
 * same rule tfsql.tfds applies): 0 with *out (free with tfsql_tfds_features_free) and
 * *count, or 1 when there is none (no TFDS directory, no such file, not a features
 * document). */
int read_tfds_features(const tfbind *b, tfsql_tfds_feature **out, size_t *count) {
    *out = NULL;
    *count = 0;
    if (b->layout != LAYOUT_TFDS || b->tfds_dir == NULL) {
        return 1;
    }
    char *path = xprintf("%s/%s", b->tfds_dir, TFSQL_TFDS_FEATURES_NAME);
    size_t n = 0;
    char *data = read_small_file(path, TFSQL_TFDS_FEATURES_MAX_BYTES, &n);
    free(path);
    int rc = data == NULL ? -1 : tfsql_tfds_features(data, n, out, count);
    free(data);
    return rc == 0 ? 0 : 1;
}

/* The column description (features.json) a tfsql writer left in the one root directory
 * every file was listed below (tfsql_description_root, as tfsql.description.
 * written_description; tfsql_description_parse reads it): 0 with *out (free with
 * tfsql_description_free) and *count, 1 when there is none (a file named directly,
 * several roots, a TFDS or TFX layout, no such file, TFDS's own features.json). */
int read_written_description(const tfbind *b, tfsql_column **out, size_t *count) {
    *out = NULL;
    *count = 0;
    const char **roots = (const char **)malloc((b->files.n + 1) * sizeof(char *));
    size_t *lens = (size_t *)malloc((b->files.n + 1) * sizeof(size_t));
    for (size_t i = 0; roots != NULL && lens != NULL && i < b->files.n; i++) {
        roots[i] = b->files.items[i].root;
        lens[i] = roots[i] != NULL ? strlen(roots[i]) : 0;
    }
    int described = roots != NULL && lens != NULL &&
                    tfsql_description_root(roots, lens, b->files.n, b->layout);
    free(roots);
    free(lens);
    if (!described) {
        return 1;
    }
    const char *root = b->files.items[0].root;
    char *path = xprintf("%s/%s", root, TFSQL_DESCRIPTION_NAME);
    size_t n = 0;
    char *data = read_small_file(path, TFSQL_TFDS_FEATURES_MAX_BYTES, &n);
    free(path);
    int rc = data == NULL ? 1 : tfsql_description_parse(data, n, out, count);
    free(data);
    return rc == 0 ? 0 : 1;
}

/* The decoder's kind, the column's shape and whether it is text, for a described type;
 * and the DuckDB leaf type the scan gives it: the integer types, BOOLEAN and DATE
 * narrowed from int64 with a range check, DOUBLE widened from float, DECIMAL(p, s) (p
 * up to 38, s >= 0) converted from float exactly (decimals.c), a wider decimal as DOUBLE
 * (as DuckDB reads Parquet's: it has no wider DECIMAL), timestamps as stored, a time
 * zone's timestamps, times and durations (INTERVAL) in microseconds, nanosecond times
 * as TIME_NS, and date64 in days
 * (*scale: the factor or divisor), Arrow's null type as NULL (no record may hold it); else 0 (the kind's own type: float16 as FLOAT, an
 * exact widening). A fixed-size list is an ARRAY, fixed-size lists of them nested ARRAYs
 * (*d's inner sizes), a tensor its flat storage, as DuckDB reads Arrow's. */
static void described_column(const tfsql_type *t, int record_type, int *kind, int *shape,
                             int *utf8, int *leaf, uint64_t *array_size, int64_t *scale,
                             tftype *d) {
    switch (t->leaf) {
    case TFSQL_TYPE_FLOAT16:
    case TFSQL_TYPE_FLOAT32:
    case TFSQL_TYPE_FLOAT64:
    case TFSQL_TYPE_DECIMAL128:
    case TFSQL_TYPE_DECIMAL256:
        *kind = KIND_FLOAT;
        break;
    case TFSQL_TYPE_STRING:
    case TFSQL_TYPE_LARGE_STRING:
    case TFSQL_TYPE_BINARY:
    case TFSQL_TYPE_LARGE_BINARY:
    case TFSQL_TYPE_FIXED_BINARY:
        *kind = KIND_BYTES;
        break;
    default:
        *kind = KIND_INT64;
    }
    *utf8 = t->leaf == TFSQL_TYPE_STRING || t->leaf == TFSQL_TYPE_LARGE_STRING;
    int variable = 1; /* every wrapper a list or large list */
    for (int i = 0; i < t->nwrap; i++) {
        variable &= t->wrap[i] == TFSQL_WRAP_LIST || t->wrap[i] == TFSQL_WRAP_LARGE_LIST;
    }
    *shape = t->nwrap == 0 ? SCALAR
             : t->nwrap == 2 && variable && record_type == SEQUENCE_EXAMPLE ? LIST_OF_LIST
                                                                             : LIST;
    *leaf = 0;
    *array_size = 0;
    *scale = 1;
    int fixed = t->nwrap > 0 && t->nwrap <= TT_MAX_INNER + 1; /* every wrapper fixed-size */
    for (int i = 0; i < t->nwrap; i++) {
        fixed &= t->wrap[i] == TFSQL_WRAP_FIXED_LIST;
    }
    if (fixed) { /* an ARRAY (of ARRAYs), as DuckDB reads Arrow's; values stored flat */
        uint64_t size = 1;
        for (int i = 0; i < t->nwrap; i++) {
            size *= (uint64_t)t->wrap_size[i];
            if (i > 0) {
                d->inner[i - 1] = (uint64_t)t->wrap_size[i];
            }
        }
        *array_size = size;
        d->array = (uint64_t)t->wrap_size[0];
    } else if (t->nwrap == 1 && t->wrap[0] == TFSQL_WRAP_TENSOR) {
        uint64_t size = 1; /* DuckDB reads a fixed-shape tensor as its flat storage */
        for (int k = 0; k < t->ndim; k++) {
            size *= (uint64_t)t->shape[k];
        }
        *array_size = size;
    }
    variable |= *array_size > 0;
    static const struct {
        int leaf;
        int id;
    } narrowed[] = {
        {TFSQL_TYPE_BOOL, TT_BOOLEAN},     {TFSQL_TYPE_INT8, TT_TINYINT},
        {TFSQL_TYPE_INT16, TT_SMALLINT},   {TFSQL_TYPE_INT32, TT_INTEGER},
        {TFSQL_TYPE_UINT8, TT_UTINYINT},   {TFSQL_TYPE_UINT16, TT_USMALLINT},
        {TFSQL_TYPE_UINT32, TT_UINTEGER},  {TFSQL_TYPE_UINT64, TT_UBIGINT},
        {TFSQL_TYPE_DATE32, TT_DATE},      {TFSQL_TYPE_FLOAT64, TT_DOUBLE},
        {TFSQL_TYPE_NULL, TT_NULL},
    };
    for (size_t i = 0; variable && i < sizeof(narrowed) / sizeof(narrowed[0]); i++) {
        if (narrowed[i].leaf == t->leaf) {
            *leaf = narrowed[i].id; /* scanning.c's fill_leaf narrows (range-checked) or widens */
        }
    }
    /* microseconds per unit, as DuckDB reads Arrow's units (ns: no exact micros) */
    static const int64_t micros[] = {1000000, 1000, 1, 0};
    int decimal = t->leaf == TFSQL_TYPE_DECIMAL128 || t->leaf == TFSQL_TYPE_DECIMAL256;
    if (decimal && variable && t->precision <= 38 && t->scale >= 0) {
        *leaf = TT_DECIMAL;
        d->width = t->precision;
        d->scale = t->scale;
    } else if (decimal && variable) {
        *leaf = TT_DOUBLE; /* the decimal's nearest double (its width, scale in *d) */
        d->width = t->precision;
        d->scale = t->scale;
    }
    if (!variable || (t->nwrap > 1 && !fixed)) {
        return;
    }
    if (t->leaf == TFSQL_TYPE_TIMESTAMP && t->tz[0] == 0) {
        static const int units[] = {TT_TIMESTAMP_S, TT_TIMESTAMP_MS, TT_TIMESTAMP,
                                    TT_TIMESTAMP_NS};
        *leaf = units[t->unit];
    } else if ((t->leaf == TFSQL_TYPE_TIMESTAMP || t->leaf == TFSQL_TYPE_TIME32 ||
                t->leaf == TFSQL_TYPE_TIME64 || t->leaf == TFSQL_TYPE_DURATION) &&
               micros[t->unit] != 0) {
        *leaf = t->leaf == TFSQL_TYPE_TIMESTAMP  ? TT_TIMESTAMP_TZ
                : t->leaf == TFSQL_TYPE_DURATION ? TT_INTERVAL
                                                 : TT_TIME;
        *scale = micros[t->unit];
    } else if (t->leaf == TFSQL_TYPE_TIME64 && t->unit == TFSQL_UNIT_NS) {
        *leaf = TT_TIME_NS; /* as stored */
    } else if (t->leaf == TFSQL_TYPE_DATE64) {
        *leaf = TT_DATE;
        *scale = -86400000; /* milliseconds to days */
    }
}

/* The described data columns, in order, are the columns (nothing is inferred): the
 * decoder's kind of each, and the DuckDB type where it stores the values as written
 * (timestamps, TIME; a registered tfsql.dataset reads the other types).
 * 0, or -1 with err. */
int apply_written_description(tfbind *b, const tfsql_column *cols, size_t n, char *err) {
    size_t ndata = 0;
    for (size_t i = 0; i < n; i++) {
        ndata += !cols[i].partition;
    }
    b->sc.cols = (colspec *)calloc(ndata + 1, sizeof(colspec));
    b->utf8 = (int *)calloc(ndata + 1, sizeof(int));
    b->leaf = (int *)calloc(ndata + 1, sizeof(int));
    b->array_size = (uint64_t *)calloc(ndata + 1, sizeof(uint64_t));
    b->scale = (int64_t *)calloc(ndata + 1, sizeof(int64_t));
    b->described = (tftype *)calloc(ndata + 1, sizeof(tftype));
    if (b->sc.cols == NULL || b->utf8 == NULL || b->leaf == NULL || b->array_size == NULL ||
        b->scale == NULL || b->described == NULL) {
        snprintf(err, ERRLEN, "out of memory");
        return -1;
    }
    b->sc.record_type = b->record_type;
    int c = 0;
    for (size_t i = 0; i < n; i++) {
        if (cols[i].partition) {
            continue;
        }
        colspec *cs = &b->sc.cols[c];
        cs->name = (uint8_t *)xstrndup(cols[i].name, cols[i].name_len);
        if (cs->name == NULL) {
            snprintf(err, ERRLEN, "out of memory");
            return -1;
        }
        cs->name_len = cols[i].name_len;
        described_column(&cols[i].type, b->record_type, &cs->kind, &cs->shape, &b->utf8[c],
                         &b->leaf[c], &b->array_size[c], &b->scale[c], &b->described[c]);
        cs->location = cs->shape == LIST_OF_LIST ? FEATURE_LISTS : FEATURES;
        b->sc.ncols = b->ndata = ++c;
    }
    return 0;
}

/* Partition column `name` (BIGINT when is_int, else VARCHAR) null in every file. */
static int add_null_partition(tfbind *b, const char *name, size_t len, int is_int) {
    int k = b->npart;
    char **names = (char **)realloc(b->part_names, (size_t)(k + 1) * sizeof(char *));
    if (names == NULL) {
        return -1;
    }
    b->part_names = names;
    int *ints = (int *)realloc(b->part_is_int, (size_t)(k + 1) * sizeof(int));
    if (ints == NULL) {
        return -1;
    }
    b->part_is_int = ints;
    for (size_t i = 0; i < b->files.n; i++) {
        tfile *f = &b->files.items[i];
        char **parts = (char **)realloc(f->parts, (size_t)(k + 1) * sizeof(char *));
        if (parts == NULL) {
            return -1;
        }
        if (f->parts == NULL) {
            memset(parts, 0, (size_t)(k + 1) * sizeof(char *));
        }
        f->parts = parts;
        size_t *lens = (size_t *)realloc(f->part_lens, (size_t)(k + 1) * sizeof(size_t));
        if (lens == NULL) {
            return -1;
        }
        f->part_lens = lens;
        f->parts[k] = NULL;
        f->part_lens[k] = 0;
    }
    b->part_names[k] = xstrndup(name, len);
    b->part_is_int[k] = is_int;
    b->npart = k + 1;
    return b->part_names[k] == NULL ? -1 : 0;
}

/* The hive columns as a tfsql writer's description types them (tfsql_written_partitions:
 * which described partition column types which hive column; with no key=value directory,
 * the described partition columns null in every file). The extension reads BIGINT and
 * VARCHAR partition columns: a described string column stays VARCHAR where its values
 * all look like integers, a null column is BIGINT when described int64, else VARCHAR.
 * `user_typed`: hive_types := was given. 0, or -1 when out of memory. */
int apply_written_partitions(tfbind *b, const tfsql_column *cols, size_t n, int user_typed) {
    const char **described = (const char **)malloc((n + 1) * sizeof(char *));
    size_t *dlens = (size_t *)malloc((n + 1) * sizeof(size_t));
    size_t *which = (size_t *)malloc((n + 1) * sizeof(size_t)); /* described -> cols */
    size_t *hlens = (size_t *)malloc(((size_t)b->npart + 1) * sizeof(size_t));
    long long *typed_by = (long long *)malloc(((size_t)b->npart + 1) * sizeof(long long));
    int rc = described && dlens && which && hlens && typed_by ? 0 : -1;
    size_t nd = 0;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        if (cols[i].partition) {
            described[nd] = cols[i].name;
            dlens[nd] = cols[i].name_len;
            which[nd++] = i;
        }
    }
    for (int k = 0; rc == 0 && k < b->npart; k++) {
        hlens[k] = strlen(b->part_names[k]);
    }
    size_t npart = (size_t)b->npart, nulls = 0;
    if (rc == 0) {
        nulls = tfsql_written_partitions(user_typed, b->hive == HIVE_OFF,
                                         (const char *const *)b->part_names, hlens, npart,
                                         described, dlens, nd, typed_by);
    }
    for (size_t k = 0; rc == 0 && k < npart; k++) {
        const tfsql_type *t = typed_by[k] < 0 ? NULL : &cols[which[typed_by[k]]].type;
        if (t != NULL && t->nwrap == 0 &&
            (t->leaf == TFSQL_TYPE_STRING || t->leaf == TFSQL_TYPE_LARGE_STRING)) {
            b->part_is_int[k] = 0;
        }
    }
    for (size_t d = 0; rc == 0 && d < nulls; d++) {
        const tfsql_column *c = &cols[which[d]];
        rc = add_null_partition(b, c->name, c->name_len,
                                c->type.nwrap == 0 && c->type.leaf == TFSQL_TYPE_INT64);
    }
    free(described);
    free(dlens);
    free(which);
    free(hlens);
    free(typed_by);
    return rc;
}

/* The decoder's kind of a described TFDS feature type (KIND_NONE: one the extension does
 * not read). */
static int tfds_kind(int type) {
    return type == TFSQL_TFDS_INT64                                        ? KIND_INT64
           : type == TFSQL_TFDS_FLOAT32                                    ? KIND_FLOAT
           : type == TFSQL_TFDS_BINARY || type == TFSQL_TFDS_STRING ? KIND_BYTES
                                                                            : KIND_NONE;
}

/* The described features' columns in place of the inferred ones, the others after them
 * (tfsql_tfds_merge, as tfsql.tfds.apply_features). The extension reads the types the
 * decoder produces without a cast (int64, float32, string, binary and their lists);
 * another dtype is an error naming the feature. 0, or -1 with err. */
int apply_tfds_features(tfbind *b, const tfsql_tfds_feature *features, size_t n,
                        const char *fname, char *err) {
    const char **described = (const char **)malloc((n + 1) * sizeof(char *));
    size_t *dlens = (size_t *)malloc((n + 1) * sizeof(size_t));
    size_t *which = (size_t *)malloc((n + 1) * sizeof(size_t)); /* described -> features */
    size_t *appended = (size_t *)malloc((n + 1) * sizeof(size_t));
    long long *typed_by = (long long *)malloc(((size_t)b->ndata + 1) * sizeof(long long));
    strlist names = {0};
    size_t *lens = NULL, nd = 0, nappended = 0;
    int rc = described && dlens && which && appended && typed_by ? column_names(b, 0, &names, &lens) : -1;
    if (rc) {
        snprintf(err, ERRLEN, "out of memory");
    }
    for (size_t i = 0; rc == 0 && i < n; i++) {
        const tfsql_tfds_feature *f = &features[i];
        if (f->type == TFSQL_TFDS_UNDESCRIBED) {
            continue;
        }
        if (tfds_kind(f->type) == KIND_NONE) {
            snprintf(err, ERRLEN, "%s: %s/%s describes feature '%s' as %s%s, which the DuckDB "
                                  "extension does not read yet (it reads int64, float32, string "
                                  "and binary features and their lists); read the files through a "
                                  "registered tfsql.dataset(...), which casts to it, or pass "
                                  "columns := {...}",
                     fname, b->tfds_dir, TFSQL_TFDS_FEATURES_NAME, f->name,
                     f->is_list ? "a list of " : "", tfsql_tfds_type_name(f->type));
            rc = -1;
        }
        described[nd] = f->name;
        dlens[nd] = f->name_len;
        which[nd++] = i;
    }
    if (rc == 0) {
        tfsql_tfds_merge((const char *const *)names.items, lens, (size_t)b->ndata, described, dlens,
                         nd, typed_by, appended, &nappended);
    }
    int ndata = b->ndata, total = ndata + (int)nappended;
    colspec *cols = rc == 0 ? (colspec *)realloc(b->sc.cols, ((size_t)total + 1) * sizeof(colspec)) : NULL;
    if (cols != NULL) {
        b->sc.cols = cols;
    }
    int *utf8 = cols != NULL ? (int *)realloc(b->utf8, ((size_t)total + 1) * sizeof(int)) : NULL;
    if (utf8 != NULL) {
        b->utf8 = utf8;
    }
    if (rc == 0 && utf8 == NULL) {
        snprintf(err, ERRLEN, "out of memory");
        rc = -1;
    }
    for (int c = 0; rc == 0 && c < total; c++) {
        long long d = c < ndata ? typed_by[c] : (long long)appended[c - ndata];
        if (d < 0) {
            continue; /* inferred, not described */
        }
        const tfsql_tfds_feature *f = &features[which[d]];
        if (c >= ndata) { /* described only: a column after the inferred ones */
            memset(&b->sc.cols[c], 0, sizeof(colspec));
            b->sc.cols[c].name = (uint8_t *)xstrndup(f->name, f->name_len);
            if (b->sc.cols[c].name == NULL) {
                snprintf(err, ERRLEN, "out of memory");
                rc = -1;
                break;
            }
            b->sc.cols[c].name_len = f->name_len;
            b->sc.cols[c].location = FEATURES;
            b->sc.record_type = b->record_type;
            b->sc.ncols = b->ndata = c + 1;
        }
        b->sc.cols[c].kind = tfds_kind(f->type);
        b->sc.cols[c].shape = f->is_list ? LIST : SCALAR;
        b->utf8[c] = f->type == TFSQL_TFDS_STRING;
    }
    free(described);
    free(dlens);
    free(which);
    free(appended);
    free(typed_by);
    free(lens);
    strlist_free(&names);
    return rc;
}

/* Append the split column after the hive partition columns (tfsql.layouts.Layout
 * .add_split_column): its values move from b->splits to each file's parts. */
int add_split_column(tfbind *b) {
    strlist names = {0};
    size_t *lens = NULL;
    int rc = column_names(b, 1, &names, &lens); /* the data columns and the hive columns */
    int adds = rc == 0 && tfsql_layout_adds_split(b->layout, (const char *const *)names.items, lens, names.n);
    strlist_free(&names);
    free(lens);
    if (rc != 0 || !adds) {
        return rc;
    }
    int k = b->npart;
    if (add_null_partition(b, SPLIT_COLUMN, strlen(SPLIT_COLUMN), 0)) {
        return -1;
    }
    for (size_t i = 0; i < b->files.n; i++) { /* the splits move into the files' parts */
        tfile *f = &b->files.items[i];
        f->part_lens[k] = b->splits[i] != NULL ? strlen(b->splits[i]) : 0;
        f->parts[k] = b->splits[i];
        b->splits[i] = NULL;
    }
    return 0;
}
