/*
 * tfsql/duckdb_ext/options.c -- tfrecord_scan's named parameters -> the
 * options of a bind (record_type, compression, hive_partitioning, ...).
 */

#include "duckdb_ext.h"

/* -- parameters ------------------------------------------------------------- */

char *value_text(duckdb_value v) {
    char *s = duckdb_get_varchar(v);
    char *r = xstrdup(s ? s : "");
    duckdb_free(s);
    return r;
}

duckdb_type value_type_id(duckdb_value v) {
    duckdb_logical_type t = duckdb_get_value_type(v);
    return duckdb_get_type_id(t);
}

int parse_options(duckdb_bind_info info, tfbind *b, const char *fname, char *err) {
    static const char *unsupported[] = {"hive_types", NULL};
    for (int i = 0; unsupported[i]; i++) {
        duckdb_value v = duckdb_bind_get_named_parameter(info, unsupported[i]);
        if (v != NULL) {
            duckdb_destroy_value(&v);
            snprintf(err, ERRLEN, "%s: the parameter %s is not supported by the DuckDB extension "
                                  "yet; run the query through tfsql.connect() (Python), which "
                                  "supports it", fname, unsupported[i]);
            return -1;
        }
    }
    duckdb_value v;
    if ((v = duckdb_bind_get_named_parameter(info, "hive_partitioning")) != NULL) {
        b->hive = duckdb_get_bool(v) ? HIVE_ON : HIVE_OFF;
        duckdb_destroy_value(&v);
    }
    if ((v = duckdb_bind_get_named_parameter(info, "verify_checksums")) != NULL) {
        b->verify = duckdb_get_bool(v);
        duckdb_destroy_value(&v);
    }
    if ((v = duckdb_bind_get_named_parameter(info, "glob")) != NULL) {
        b->glob = duckdb_get_bool(v);
        duckdb_destroy_value(&v);
    }
    if ((v = duckdb_bind_get_named_parameter(info, "ignore_errors")) != NULL) {
        b->skip_corrupt = duckdb_get_bool(v);
        duckdb_destroy_value(&v);
    }
    if ((v = duckdb_bind_get_named_parameter(info, "on_corrupt")) != NULL) {
        char *s = value_text(v);
        duckdb_destroy_value(&v);
        if (s && strcasecmp(s, "skip") == 0) {
            b->skip_corrupt = 1;
        } else if (s && strcasecmp(s, "raise") == 0) {
            b->skip_corrupt = 0;
        } else {
            snprintf(err, ERRLEN, "%s: on_corrupt must be 'raise' or 'skip', not '%s'", fname,
                     s ? s : "");
            free(s);
            return -1;
        }
        free(s);
    }
    if ((v = duckdb_bind_get_named_parameter(info, "filename")) != NULL) {
        if (duckdb_is_null_value(v)) {
            /* nothing */
        } else if (value_type_id(v) == DUCKDB_TYPE_BOOLEAN) {
            if (duckdb_get_bool(v)) {
                b->filename_col = xstrdup("filename");
            }
        } else if (value_type_id(v) == DUCKDB_TYPE_VARCHAR) {
            b->filename_col = value_text(v);
        } else {
            duckdb_destroy_value(&v);
            snprintf(err, ERRLEN, "%s: parameter filename expects BOOLEAN or VARCHAR", fname);
            return -1;
        }
        duckdb_destroy_value(&v);
    }
    if ((v = duckdb_bind_get_named_parameter(info, "record_type")) != NULL) {
        char *s = value_text(v);
        duckdb_destroy_value(&v);
        char norm[64] = "";
        size_t o = 0;
        for (const char *p = s ? s : ""; *p && o < sizeof(norm) - 1; p++) {
            if (*p != '_' && *p != '-' && *p != '.') {
                norm[o++] = (char)((*p >= 'A' && *p <= 'Z') ? *p + 32 : *p);
            }
        }
        norm[o] = 0;
        if (strcmp(norm, "example") == 0 || strcmp(norm, "tftrainexample") == 0) {
            b->record_type = EXAMPLE;
        } else if (strcmp(norm, "sequenceexample") == 0 ||
                   strcmp(norm, "tftrainsequenceexample") == 0) {
            b->record_type = SEQUENCE_EXAMPLE;
        } else if (strcmp(norm, "bytes") == 0 || strcmp(norm, "raw") == 0) {
            b->record_type = RAW;
        } else {
            snprintf(err, ERRLEN, "%s: unknown record_type '%s'; use 'example', "
                                  "'sequence_example' or 'bytes'", fname, s ? s : "");
            free(s);
            return -1;
        }
        free(s);
    }
    if ((v = duckdb_bind_get_named_parameter(info, "compression")) != NULL) {
        char *s = value_text(v);
        duckdb_destroy_value(&v);
        if (!strcasecmp(s, "auto") || !strcasecmp(s, "infer")) {
            b->compression = COMP_INFER;
        } else if (!strcasecmp(s, "none") || !strcasecmp(s, "uncompressed")) {
            b->compression = COMP_NONE;
        } else if (!strcasecmp(s, "gzip") || !strcasecmp(s, "gz")) {
            b->compression = COMP_GZIP;
        } else if (!strcasecmp(s, "zlib") || !strcasecmp(s, "deflate") || !strcasecmp(s, "zz")) {
            b->compression = COMP_ZLIB;
        } else {
            snprintf(err, ERRLEN, "%s: unknown compression '%s'; use 'infer', None, 'gzip' or "
                                  "'zlib'", fname, s);
            free(s);
            return -1;
        }
        free(s);
    }
    const char *counts[] = {"infer_sample", "sample_size", "infer_files", NULL};
    for (int i = 0; counts[i]; i++) {
        if ((v = duckdb_bind_get_named_parameter(info, counts[i])) != NULL) {
            int64_t x = duckdb_get_int64(v);
            duckdb_destroy_value(&v);
            if (i < 2) {
                b->infer_sample = x < 0 ? -1 : x;
            } else {
                b->infer_files = x < 0 ? -1 : x;
            }
        }
    }
    const char *limits[] = {"max_record_bytes", "batch_bytes", NULL};
    long long *limit_fields[] = {&b->max_record_bytes, &b->batch_bytes};
    for (int i = 0; limits[i]; i++) {
        if ((v = duckdb_bind_get_named_parameter(info, limits[i])) != NULL) {
            int null = duckdb_is_null_value(v);
            int64_t x = null ? 0 : duckdb_get_int64(v);
            duckdb_destroy_value(&v);
            if (x <= 0) {
                snprintf(err, ERRLEN, "%s: %s must be a positive number of bytes, not %s", fname,
                         limits[i], null ? "NULL" : "a number below 1");
                return -1;
            }
            *limit_fields[i] = x;
        }
    }
    if ((v = duckdb_bind_get_named_parameter(info, "lists")) != NULL) {
        char *s = value_text(v);
        duckdb_destroy_value(&v);
        if (!strcmp(s, "always")) {
            b->lists_always = 1;
        } else if (strcmp(s, "auto") != 0) {
            snprintf(err, ERRLEN, "%s: lists must be 'auto' or 'always', not '%s'", fname, s);
            free(s);
            return -1;
        }
        free(s);
    }
    return 0;
}
