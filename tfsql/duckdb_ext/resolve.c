/*
 * tfsql/duckdb_ext/resolve.c -- the bind step of tfrecord_scan, for both bindings:
 * options, files, partitions and columns (inferred or given with schema := / columns :=)
 * of the call's arguments (tfargs: each binding reads its DuckDB values into them).
 */

#include "ext_common.h"

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
    free(b->picks);
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
    free(b->described);
    free(b->filename_col);
    for (size_t i = 0; i < b->npreds; i++) {
        tfpred_free(&b->preds[i]);
    }
    free(b->preds);
    if (b->cast != NULL && castplan_free != NULL) {
        castplan_free(b->cast);
    }
    free(b);
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

/* tfsql_feature_list_name's question: is `name` a context (not a feature list) column? */
static int is_context_column(void *ctx, const char *name, size_t len) {
    return context_column((const tfbind *)ctx, (const uint8_t *)name, len);
}

/* schema := {'name': 'TYPE', ...} (or columns :=): the columns to read, no inference. */
static int user_columns(tfbind *b, const tfval *v, const char *fname, const char *param,
                        char *err) {
    size_t n = v->kind == TFV_STRUCT ? v->n : 0;
    if (n == 0) {
        snprintf(err, ERRLEN, "%s: parameter %s expects a STRUCT of column name -> type name, "
                              "e.g. %s := {'label': 'BIGINT', 'emb': 'FLOAT[]'}", fname, param,
                 param);
        return -1;
    }
    b->sc.cols = (colspec *)calloc(n, sizeof(colspec));
    b->utf8 = (int *)calloc(n, sizeof(int));
    if (b->sc.cols == NULL || b->utf8 == NULL) {
        snprintf(err, ERRLEN, "out of memory");
        return -1;
    }
    b->sc.record_type = b->record_type;
    for (size_t i = 0; i < n; i++) {
        const char *name = v->names[i];
        const tfval *child = &v->items[i];
        int null_type = child->kind == TFV_NULL;
        const char *type = null_type ? NULL : child->text != NULL ? child->text : "";
        colspec *c = &b->sc.cols[i];
        c->name = (uint8_t *)xstrdup(name ? name : "");
        c->name_len = strlen((const char *)c->name);
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
                                  "lists, and X[][] feature lists of a sequence_example); CAST the "
                                  "column in the query, or read the files through a registered "
                                  "tfsql.dataset(...), which casts to any type", fname,
                     (const char *)c->name, param, type);
            return -1;
        }
    }
    /* an X[][] column reads its feature list (tfsql_feature_list_name: N__feature_list
     * beside a context column N reads the list N) */
    for (size_t i = 0; i < n; i++) {
        colspec *c = &b->sc.cols[i];
        if (c->location == FEATURE_LISTS) {
            c->name_len = tfsql_feature_list_name((const char *)c->name, c->name_len,
                                                  is_context_column, (void *)b);
            c->name[c->name_len] = 0;
        }
    }
    return 0;
}

/* record_type := 'bytes': the schema names the one column of the raw records, binary or
 * string (tfsql.opening, tfsql.schema.column_specs). 0, or -1 with err. */
static int raw_column(const tfbind *b, const tfval *given, const char *fname, char *err) {
    const colspec *c = &b->sc.cols[0];
    if (b->ndata != 1) {
        raw_schema_message(err, ERRLEN, fname, b->ndata, NULL, NULL);
        return -1;
    }
    if (c->kind != KIND_BYTES || c->shape != SCALAR) {
        const char *type = given->items[0].text != NULL ? given->items[0].text : "";
        raw_schema_message(err, ERRLEN, fname, 1, (const char *)c->name, type);
        return -1;
    }
    return 0;
}

/* A source path as a new C string; NULL with err set when it is not a VARCHAR or holds a
 * NUL byte (no file name can; the text stops at it, which would read another file). */
static char *source_text(const tfval *v, const char *fname, char *err) {
    if (v->has_nul) {
        snprintf(err, ERRLEN, "%s: the path '%s\\0...' holds a NUL byte, which no file name can "
                              "hold; remove it", fname, v->text != NULL ? v->text : "");
        return NULL;
    }
    char *s = xstrdup(v->text != NULL ? v->text : "");
    if (s == NULL) {
        snprintf(err, ERRLEN, "out of memory");
    }
    return s;
}

tfbind *scan_resolve(const tfargs *a, const char *fname, connref conn, uint64_t *cardinality_out,
                     char *err) {
    tfbind *b = (tfbind *)calloc(1, sizeof(tfbind));
    if (b == NULL) {
        snprintf(err, ERRLEN, "out of memory");
        return NULL;
    }
    set_default_options(b);
    b->conn = conn;
    tfsql_column *written = NULL; /* a tfsql writer's description of the columns */
    size_t nwritten = 0;
    if (parse_options(a, b, fname, err)) {
        goto fail;
    }
    const tfval *src = &a->source;
    strlist items = {0};
    int bad = 0;
    if (src->kind == TFV_TEXT) {
        char *s = source_text(src, fname, err);
        bad = s == NULL || strlist_add(&items, s);
    } else if (src->kind == TFV_LIST) {
        for (size_t i = 0; i < src->n && !bad; i++) {
            const tfval *item = &src->items[i];
            if (item->kind != TFV_TEXT) {
                snprintf(err, ERRLEN, "%s: the source must be a VARCHAR path or glob, or a "
                                      "VARCHAR[] of them", fname);
                bad = 1;
            } else {
                char *s = source_text(item, fname, err);
                bad = s == NULL || strlist_add(&items, s);
            }
        }
    }
    if (!bad && items.n == 0) {
        snprintf(err, ERRLEN, "%s: the source must be a VARCHAR path or glob, or a non-empty "
                              "VARCHAR[] of them, e.g. %s('data/*.tfrecord')", fname, fname);
        bad = 1;
    }
    /* listed here, planned by the core: the files in order, their layout and splits */
    bad = bad || list_sources((const char *const *)items.items, items.n, b->glob, b->infer_files, b, err);
    strlist_free(&items);
    if (bad) {
        if (err[0] == 0) {
            snprintf(err, ERRLEN, "out of memory");
        }
        goto fail;
    }
    for (size_t i = 0; i < b->files.n; i++) {
        b->total_bytes += b->files.items[i].size;
    }
    uint64_t cardinality = 0;
    /* a tfsql writer's description: it types the hive columns (raw records' too) */
    if (read_written_description(b, &written, &nwritten) != 0) {
        written = NULL;
        nwritten = 0;
    }
    const tfval *schema_value = tfargs_get(a, "schema");
    const tfval *columns_value = tfargs_get(a, "columns");
    if (schema_value != NULL && columns_value != NULL) {
        snprintf(err, ERRLEN, "%s: give either schema or columns, not both", fname);
        goto fail;
    }
    if (schema_value != NULL || columns_value != NULL) {
        const tfval *given = schema_value != NULL ? schema_value : columns_value;
        const char *param = schema_value != NULL ? "schema" : "columns";
        int rc = user_columns(b, given, fname, param, err);
        if (rc == 0 && b->record_type == RAW) {
            rc = raw_column(b, given, fname, err);
        }
        /* the description names columns that are no misspelling (tfsql.opening) */
        if (rc || check_missing_columns(b, written, nwritten, err)) {
            goto fail;
        }
    } else if (written != NULL && b->record_type != RAW) {
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
    /* naming partition columns asks for them (the core's plan: a layout's split is not one) */
    const tfval *hive_types = tfargs_get(a, "hive_types");
    int typed = find_partitions(b, hive_types, err) == 0 &&
                (hive_types == NULL || apply_hive_types(b, hive_types, fname, err) == 0);
    if (typed && written != NULL &&
        apply_written_partitions(b, written, nwritten, hive_types != NULL)) {
        snprintf(err, ERRLEN, "out of memory");
        typed = 0;
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
         * files) get the filename column, as tfsql.dataset gives them, so that
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
    /* Index sidecars beside every file: the record count itself, not an estimate (a
     * file without one ends the look, so unindexed data costs one stat). */
    uint64_t counted = 0;
    size_t with_index = 0;
    for (long long n; with_index < b->files.n; with_index++, counted += (uint64_t)n) {
        const tfile *f = &b->files.items[with_index];
        if ((n = indexed_count(f->path, f->size)) < 0) {
            break;
        }
    }
    *cardinality_out = b->files.n > 0 && with_index == b->files.n ? counted : cardinality;
    tfsql_description_free(written, nwritten);
    return b;
fail:
    tfsql_description_free(written, nwritten);
    tfbind_free(b);
    return NULL;
}

tfbind *scan_bind_resolve_args(const tfargs *a, const char *fname, connref conn,
                               uint64_t *cardinality, char *err) {
    tferror_rec_free(tferror_take()); /* a data error of an earlier call on this thread */
    tfbind *b = scan_resolve(a, fname, conn, cardinality, err);
    if (b == NULL) {
        reports_begin_scan(conn, 0);
        reports_scan_failed(conn, err);
        return NULL;
    }
    reports_begin_scan(b->conn, b->skip_corrupt);
    return b;
}
