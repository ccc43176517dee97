/*
 * tfsql/duckdb_ext/bind.c -- the bind step of tfrecord_scan: options, files,
 * partitions and columns (inferred or given with schema := / columns :=) -> the
 * result's columns and types.
 */

#include "duckdb_ext.h"

void tfbind_free(void *p) {
    tfbind *b = (tfbind *)p;
    if (b == NULL) {
        return;
    }
    if (b->splits != NULL) {
        for (size_t i = 0; i < b->files.n; i++) {
            free(b->splits[i]);
        }
        free(b->splits);
    }
    free(b->tfds_dir);
    filelist_free(&b->files, b->npart);
    for (int k = 0; k < b->npart; k++) {
        free(b->part_names[k]);
    }
    free(b->part_names);
    free(b->part_is_int);
    schema_free(&b->sc);
    free(b->utf8);
    free(b->leaf);
    free(b->array_size);
    free(b->scale);
    free(b->filename_col);
    castplan_free(b->cast);
    free(b);
}

static duckdb_logical_type leaf_type(int kind, int utf8) {
    return duckdb_create_logical_type(kind == KIND_INT64   ? DUCKDB_TYPE_BIGINT
                                      : kind == KIND_FLOAT ? DUCKDB_TYPE_FLOAT
                                      : utf8               ? DUCKDB_TYPE_VARCHAR
                                                           : DUCKDB_TYPE_BLOB);
}

duckdb_logical_type column_type(int kind, int shape, int utf8) {
    duckdb_logical_type t = leaf_type(kind, utf8);
    for (int s = 0; s < shape; s++) {
        duckdb_logical_type l = duckdb_create_list_type(t);
        duckdb_destroy_logical_type(&t);
        t = l;
    }
    return t;
}

duckdb_logical_type data_column_type(const tfbind *b, int c) {
    const colspec *cs = &b->sc.cols[c];
    idx_t array_size = b->array_size != NULL ? b->array_size[c] : 0;
    if ((b->leaf == NULL || b->leaf[c] == DUCKDB_TYPE_INVALID) && array_size == 0) {
        return column_type(cs->kind, cs->shape, b->utf8[c]);
    }
    duckdb_logical_type t = b->leaf != NULL && b->leaf[c] != DUCKDB_TYPE_INVALID
                                ? duckdb_create_logical_type(b->leaf[c])
                                : column_type(cs->kind, SCALAR, b->utf8[c]);
    if (array_size > 0) { /* one level: a described fixed-size list or tensor */
        duckdb_logical_type a = duckdb_create_array_type(t, array_size);
        duckdb_destroy_logical_type(&t);
        return a;
    }
    for (int s = 0; s < cs->shape; s++) {
        duckdb_logical_type l = duckdb_create_list_type(t);
        duckdb_destroy_logical_type(&t);
        t = l;
    }
    return t;
}

/* A column type of schema := {...}: the Arrow types the decoder produces without a cast
 * (BIGINT, FLOAT, VARCHAR, BLOB, and lists of them); 0 when supported. */
int parse_type_name(const char *text, int *kind, int *shape, int *utf8) {
    char t[64];
    size_t o = 0;
    for (const char *p = text; *p && o < sizeof(t) - 1; p++) {
        if (*p != ' ') {
            t[o++] = (char)((*p >= 'a' && *p <= 'z') ? *p - 32 : *p);
        }
    }
    t[o] = 0;
    *shape = SCALAR;
    while (o >= 2 && t[o - 2] == '[' && t[o - 1] == ']' && *shape < LIST_OF_LIST) {
        o -= 2;
        t[o] = 0;
        (*shape)++;
    }
    static const char *ints[] = {"BIGINT", "INT8", "INT64", "LONG", NULL};
    static const char *floats[] = {"FLOAT", "FLOAT4", "REAL", NULL};
    static const char *texts[] = {"VARCHAR", "TEXT", "STRING", NULL};
    static const char *blobs[] = {"BLOB", "BYTEA", "BINARY", "VARBINARY", NULL};
    const char **groups[] = {ints, floats, texts, blobs};
    const int kinds[] = {KIND_INT64, KIND_FLOAT, KIND_BYTES, KIND_BYTES};
    for (int g = 0; g < 4; g++) {
        for (int i = 0; groups[g][i]; i++) {
            if (strcmp(t, groups[g][i]) == 0) {
                *kind = kinds[g];
                *utf8 = g == 2;
                return 0;
            }
        }
    }
    return -1;
}

/* schema := {'name': 'TYPE', ...} (or columns :=): the columns to read, no inference. */
static int user_columns(tfbind *b, duckdb_value v, const char *fname, const char *param,
                        char *err) {
    duckdb_logical_type t = duckdb_get_value_type(v);
    idx_t n = duckdb_get_type_id(t) == DUCKDB_TYPE_STRUCT ? duckdb_struct_type_child_count(t) : 0;
    if (n == 0) {
        snprintf(err, ERRLEN, "%s: parameter %s expects a STRUCT of column name -> type name, "
                              "e.g. %s := {'label': 'BIGINT', 'emb': 'FLOAT[]'}", fname, param,
                 param);
        return -1;
    }
    b->sc.cols = (colspec *)calloc((size_t)n, sizeof(colspec));
    b->utf8 = (int *)calloc((size_t)n, sizeof(int));
    if (b->sc.cols == NULL || b->utf8 == NULL) {
        snprintf(err, ERRLEN, "out of memory");
        return -1;
    }
    b->sc.record_type = b->record_type;
    for (idx_t i = 0; i < n; i++) {
        char *name = duckdb_struct_type_child_name(t, i);
        duckdb_value child = duckdb_get_struct_child(v, i);
        int null_type = child == NULL || duckdb_is_null_value(child);
        char *type = null_type ? NULL : value_text(child);
        duckdb_destroy_value(&child);
        colspec *c = &b->sc.cols[i];
        c->name = (uint8_t *)xstrdup(name ? name : "");
        c->name_len = strlen((const char *)c->name);
        duckdb_free(name);
        b->sc.ncols = b->ndata = (int)i + 1;
        if (null_type) {
            snprintf(err, ERRLEN, "%s: column '%s' of %s has type NULL; give its type, e.g. "
                                  "%s := {'%s': 'BIGINT'}", fname, (const char *)c->name, param,
                     param, (const char *)c->name);
            return -1;
        }
        int bad = parse_type_name(type, &c->kind, &c->shape, &b->utf8[i]);
        c->location = c->shape == LIST_OF_LIST ? FEATURE_LISTS : FEATURES;
        b->sc.ncols = b->ndata = (int)i + 1;
        if (bad || (c->shape == LIST_OF_LIST && b->record_type != SEQUENCE_EXAMPLE)) {
            snprintf(err, ERRLEN, "%s: column '%s' of %s has type '%s', which the DuckDB extension "
                                  "does not read yet (it reads BIGINT, FLOAT, VARCHAR, BLOB, their "
                                  "lists, and X[][] feature lists of a sequence_example); run the "
                                  "query through tfsql.connect(), which casts to any type", fname,
                     (const char *)c->name, param, type);
            free(type);
            return -1;
        }
        free(type);
    }
    /* tfsql.schema.feature_list_name: X[][] column N__feature_list beside a context
     * column N reads the feature list N */
    size_t sl = strlen(TFSQL_FEATURE_LIST_SUFFIX);
    for (idx_t i = 0; i < n; i++) {
        colspec *c = &b->sc.cols[i];
        if (c->location == FEATURE_LISTS && c->name_len > sl &&
            memcmp(c->name + c->name_len - sl, TFSQL_FEATURE_LIST_SUFFIX, sl) == 0 &&
            context_column(b, c->name, c->name_len - sl)) {
            c->name_len -= sl;
            c->name[c->name_len] = 0;
        }
    }
    return 0;
}

/* Whether the VARCHAR `v`, whose text duckdb_get_varchar showed as `s`, holds a NUL
 * byte: 1 yes, 0 no, -1 when this engine cannot tell. duckdb_value_to_string (C API
 * v1.5.6; its slot is NULL on older engines) gives the value as SQL -- quoted, with
 * quotes doubled -- copied whole and NUL-terminated, so a NUL inside the value cuts it
 * before its closing quote. Any other spelling (an engine that escapes more) is -1. */
static int varchar_has_nul(duckdb_value v, const char *s) {
    if (duckdb_value_to_string == NULL) { /* the macro names the table slot */
        return -1;
    }
    char *sql = duckdb_value_to_string(v);
    if (sql == NULL) {
        return -1;
    }
    int verdict = -1;
    const char *q = sql;
    if (*q++ == '\'') {
        const char *p = s;
        while (*p != 0 && *q == *p && (*p != '\'' || *++q == '\'')) {
            p++;
            q++;
        }
        if (*p == 0 && q[0] == '\'' && q[1] == 0) {
            verdict = 0;
        } else if (*p == 0 && q[0] == 0) {
            verdict = 1; /* cut where the value's NUL is */
        }
    }
    duckdb_free(sql);
    return verdict;
}

/* A source path as a new C string; NULL with err set when it holds a NUL byte (no file
 * name can; duckdb_get_varchar stops at it, which would read another file). The value's
 * SQL spelling shows the NUL (varchar_has_nul); on engines without it (DuckDB 1.4),
 * DuckDB's BLOB cast shows the whole text, but refuses bytes over 0x7f and reads
 * backslash escapes: it is asked when the text before any NUL has neither (there a
 * NUL after a non-ASCII prefix is not seen). */
static char *source_text(duckdb_value v, const char *fname, char *err) {
    char *s = value_text(v);
    if (s == NULL) {
        snprintf(err, ERRLEN, "out of memory");
        return NULL;
    }
    int nul = varchar_has_nul(v, s);
    int plain = nul < 0;
    for (const char *p = s; *p != 0 && plain; p++) {
        plain = (unsigned char)*p < 0x80 && *p != '\\';
    }
    if (plain) {
        duckdb_blob blob = duckdb_get_blob(v);
        nul = blob.data != NULL && tfsql_path_has_nul((const char *)blob.data, (size_t)blob.size);
        duckdb_free(blob.data);
    }
    if (nul > 0) {
        snprintf(err, ERRLEN, "%s: the path '%s\\0...' holds a NUL byte, which no file name can "
                              "hold; remove it", fname, s);
        free(s);
        return NULL;
    }
    return s;
}

tfbind *scan_resolve(duckdb_bind_info info, const char *fname, idx_t *cardinality_out,
                     char *err) {
    tfbind *b = (tfbind *)calloc(1, sizeof(tfbind));
    if (b == NULL) {
        snprintf(err, ERRLEN, "out of memory");
        return NULL;
    }
    set_default_options(b);
    b->conn = connection_of(info);
    tfsql_column *written = NULL; /* a tfsql writer's description of the columns */
    size_t nwritten = 0;
    if (parse_options(info, b, fname, err)) {
        goto fail;
    }
    duckdb_value src = duckdb_bind_get_parameter(info, 0);
    duckdb_type tid = value_type_id(src);
    int nfound = 0;
    if (tid == DUCKDB_TYPE_VARCHAR) {
        char *s = source_text(src, fname, err);
        int rc = s == NULL ? -1 : list_item(s, b->glob, &b->files, err);
        free(s);
        if (rc) {
            duckdb_destroy_value(&src);
            goto fail;
        }
        nfound = 1;
    } else if (tid == DUCKDB_TYPE_LIST && !duckdb_is_null_value(src)) {
        idx_t n = duckdb_get_list_size(src);
        for (idx_t i = 0; i < n; i++) {
            duckdb_value item = duckdb_get_list_child(src, i);
            if (value_type_id(item) != DUCKDB_TYPE_VARCHAR || duckdb_is_null_value(item)) {
                duckdb_destroy_value(&item);
                duckdb_destroy_value(&src);
                snprintf(err, ERRLEN, "%s: the source must be a VARCHAR path or glob, or a "
                                      "VARCHAR[] of them", fname);
                goto fail;
            }
            char *s = source_text(item, fname, err);
            duckdb_destroy_value(&item);
            size_t before = b->files.n;
            int rc = s == NULL ? -1 : list_item(s, b->glob, &b->files, err);
            free(s);
            if (rc) {
                duckdb_destroy_value(&src);
                goto fail;
            }
            /* a file named by two items is kept once, at its first place */
            for (size_t k = before; k < b->files.n; k++) {
                for (size_t j = 0; j < before; j++) {
                    if (strcmp(b->files.items[j].path, b->files.items[k].path) == 0) {
                        free(b->files.items[k].path);
                        free(b->files.items[k].root);
                        memmove(&b->files.items[k], &b->files.items[k + 1],
                                (b->files.n - k - 1) * sizeof(tfile));
                        b->files.n--;
                        k--;
                        break;
                    }
                }
            }
            nfound++;
        }
    }
    duckdb_destroy_value(&src);
    if (nfound == 0) {
        snprintf(err, ERRLEN, "%s: the source must be a VARCHAR path or glob, or a non-empty "
                              "VARCHAR[] of them, e.g. %s('data/*.tfrecord')", fname, fname);
        goto fail;
    }
    if (drop_tfds_metadata(b) || detect_layout(b)) {
        snprintf(err, ERRLEN, "out of memory");
        goto fail;
    }
    for (size_t i = 0; i < b->files.n; i++) {
        b->total_bytes += b->files.items[i].size;
    }
    idx_t cardinality = 0;
    duckdb_value schema_value = duckdb_bind_get_named_parameter(info, "schema");
    duckdb_value columns_value = duckdb_bind_get_named_parameter(info, "columns");
    if (schema_value != NULL && columns_value != NULL) {
        duckdb_destroy_value(&schema_value);
        duckdb_destroy_value(&columns_value);
        snprintf(err, ERRLEN, "%s: give either schema or columns, not both", fname);
        goto fail;
    }
    if (schema_value != NULL || columns_value != NULL) {
        duckdb_value given = schema_value != NULL ? schema_value : columns_value;
        int rc = b->record_type == RAW
                     ? infer_columns(b, err, &cardinality)
                     : user_columns(b, given, fname, schema_value ? "schema" : "columns", err);
        duckdb_destroy_value(&given);
        if (rc || check_missing_columns(b, err)) {
            goto fail;
        }
    } else if (read_written_description(b, &written, &nwritten) == 0) {
        /* a tfsql writer's features.json: its columns, in order (tfsql.description) */
        if (apply_written_description(b, written, nwritten, err)) {
            goto fail;
        }
    } else {
        /* a TFDS directory's features.json types the columns it describes; when it
         * describes all of them nothing is inferred (tfsql.opening) */
        tfsql_tfds_feature *described = NULL;
        size_t ndescribed = 0;
        int has_features = b->record_type != RAW && read_tfds_features(b, &described, &ndescribed) == 0;
        int rc = 0;
        if (!has_features || !tfsql_tfds_features_complete(described, ndescribed)) {
            uint64_t key = b->record_type == RAW ? 0 : infer_key(b);
            if (!infer_cache_get(b, key, &cardinality)) {
                rc = infer_columns(b, err, &cardinality);
                if (rc == 0) {
                    infer_cache_put(b, key, cardinality);
                }
            }
        }
        if (rc == 0 && has_features) {
            rc = apply_tfds_features(b, described, ndescribed, fname, err);
        }
        tfsql_tfds_features_free(described, ndescribed);
        if (rc) {
            goto fail;
        }
    }
    duckdb_value hive_types = duckdb_bind_get_named_parameter(info, "hive_types");
    if (hive_types != NULL && b->hive == HIVE_AUTO) {
        b->hive = HIVE_ON; /* naming partition columns asks for them */
    }
    int typed = find_partitions(b, hive_types, err) == 0 &&
                (hive_types == NULL || apply_hive_types(b, hive_types, fname, err) == 0);
    if (typed && hive_types == NULL && written != NULL &&
        apply_written_partitions(b, written, nwritten)) {
        snprintf(err, ERRLEN, "out of memory");
        typed = 0;
    }
    if (hive_types != NULL) {
        duckdb_destroy_value(&hive_types);
    }
    if (!typed) {
        goto fail;
    }
    if (add_split_column(b)) {
        snprintf(err, ERRLEN, "out of memory");
        goto fail;
    }
    if (b->ndata == 0 && b->files.n == 0) {
        snprintf(err, ERRLEN, "%s: no files found (hidden files such as _SUCCESS are skipped)",
                 fname);
        goto fail;
    }
    if (b->ndata == 0 && b->npart == 0 && b->filename_col == NULL) {
        /* No column was found: a file that is not TFRecord at all (damaged from its first
         * header) is the scan's error now, not a table of file names a COPY ... FROM or
         * an INSERT then refuses for its column count. */
        for (size_t i = 0; !b->skip_corrupt && i < b->files.n && i < 16; i++) {
            char why[ERRLEN];
            long long framed = walked_count(b, &b->files.items[i], b->compression, 1, why);
            if (framed < 0) {
                snprintf(err, ERRLEN, "%s: %.3800s", fname, why);
                goto fail;
            }
            if (framed > 0) {
                break;
            }
        }
        /* DuckDB scans no table without columns: records that hold no features (or empty
         * files) get the filename column, as in tfsql.connect()'s Arrow path, so that
         * count(*) works. */
        b->filename_col = xstrdup("filename");
    }
    int dup = -1;
    int indexed = schema_index(&b->sc, &dup);
    if (indexed == -2) {
        snprintf(err, ERRLEN, "%s: column %d is listed twice", fname, dup);
        goto fail;
    }
    if (indexed != 0) {
        snprintf(err, ERRLEN, "out of memory");
        goto fail;
    }
    if (b->filename_col != NULL) {
        int clash = is_column(b, b->filename_col);
        for (int k = 0; k < b->npart; k++) {
            clash |= strcmp(b->part_names[k], b->filename_col) == 0;
        }
        if (clash) {
            snprintf(err, ERRLEN, "%s: filename := '%s' collides with an existing column", fname,
                     b->filename_col);
            goto fail;
        }
    }
    *cardinality_out = cardinality;
    tfsql_description_free(written, nwritten);
    return b;
fail:
    tfsql_description_free(written, nwritten);
    tfbind_free(b);
    return NULL;
}

tfbind *scan_bind_resolve(duckdb_bind_info info, const char *fname, idx_t *cardinality_out,
                          char *err) {
    tferror_rec_free(tferror_take()); /* a data error of an earlier call on this thread */
    tfbind *b = scan_resolve(info, fname, cardinality_out, err);
    if (b == NULL) {
        connref conn = connection_of(info);
        reports_begin_scan(conn, 0);
        reports_scan_failed(conn, err);
        return NULL;
    }
    reports_begin_scan(b->conn, b->skip_corrupt);
    return b;
}

void tf_bind(duckdb_bind_info info) {
    const fninfo *fi = (const fninfo *)duckdb_bind_get_extra_info(info);
    const char *fname = fi != NULL ? fi->name : "tfrecord_scan";
    char err[ERRLEN] = "";
    idx_t cardinality = 0;
    tfbind *b = scan_bind_resolve(info, fname, &cardinality, err);
    if (b == NULL) {
        duckdb_bind_set_error(info, err);
        return;
    }
    int n = scan_output_count(b);
    for (int c = 0; c < n; c++) {
        char *name = NULL;
        duckdb_logical_type t = scan_output_type(b, c, &name);
        if (name != NULL) {
            duckdb_bind_add_result_column(info, name, t);
        }
        duckdb_destroy_logical_type(&t);
        free(name);
        if (name == NULL) {
            tfbind_free(b);
            duckdb_bind_set_error(info, "out of memory");
            return;
        }
    }
    if (cardinality > 0) {
        duckdb_bind_set_cardinality(info, cardinality, false);
    }
    duckdb_bind_set_bind_data(info, b, tfbind_free);
}
