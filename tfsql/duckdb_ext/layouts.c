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
    FILE *fp = path != NULL ? fopen(path, "rb") : NULL;
    free(path);
    if (fp == NULL) {
        return 1;
    }
    struct stat st;
    char *data = NULL;
    size_t n = 0;
    if (fstat(fileno(fp), &st) == 0 && S_ISREG(st.st_mode) &&
        (uint64_t)st.st_size <= TFSQL_TFDS_FEATURES_MAX_BYTES) {
        data = (char *)malloc((size_t)st.st_size + 1);
        n = data != NULL ? fread(data, 1, (size_t)st.st_size, fp) : 0;
    }
    fclose(fp);
    int rc = data != NULL && n == (size_t)st.st_size ? tfsql_tfds_features(data, n, out, count)
                                                     : -1;
    free(data);
    return rc == 0 ? 0 : 1;
}

/* The described features' columns in place of the inferred ones, the others after them
 * (tfsql.tfds.apply_features). The extension reads the types the decoder produces
 * without a cast (int64, float32, string, binary and their lists); another dtype is an
 * error naming the feature. 0, or -1 with err. */
int apply_tfds_features(tfbind *b, const tfsql_tfds_feature *features, size_t n,
                        const char *fname, char *err) {
    for (size_t i = 0; i < n; i++) {
        const tfsql_tfds_feature *f = &features[i];
        int kind = f->type == TFSQL_TFDS_INT64     ? KIND_INT64
                   : f->type == TFSQL_TFDS_FLOAT32 ? KIND_FLOAT
                   : f->type == TFSQL_TFDS_BINARY || f->type == TFSQL_TFDS_STRING ? KIND_BYTES
                                                                                  : KIND_NONE;
        if (f->type == TFSQL_TFDS_UNDESCRIBED) {
            continue;
        }
        if (kind == KIND_NONE) {
            snprintf(err, ERRLEN, "%s: %s/%s describes feature '%s' as %s%s, which the DuckDB "
                                  "extension does not read yet (it reads int64, float32, string "
                                  "and binary features and their lists); run the query through "
                                  "tfsql.connect(), which casts to it, or pass columns := {...}",
                     fname, b->tfds_dir, TFSQL_TFDS_FEATURES_NAME, f->name,
                     f->is_list ? "a list of " : "", tfsql_tfds_type_name(f->type));
            return -1;
        }
        int c = 0;
        while (c < b->ndata && !(b->sc.cols[c].location == FEATURES &&
                                 b->sc.cols[c].name_len == f->name_len &&
                                 memcmp(b->sc.cols[c].name, f->name, f->name_len) == 0)) {
            c++;
        }
        if (c == b->ndata) {
            colspec *cols = (colspec *)realloc(b->sc.cols, (size_t)(c + 1) * sizeof(colspec));
            if (cols != NULL) {
                b->sc.cols = cols;
            }
            int *utf8 = cols != NULL ? (int *)realloc(b->utf8, (size_t)(c + 1) * sizeof(int)) : NULL;
            if (utf8 != NULL) {
                b->utf8 = utf8;
            }
            char *name = utf8 != NULL ? xstrndup(f->name, f->name_len) : NULL;
            if (name == NULL) {
                snprintf(err, ERRLEN, "out of memory");
                return -1;
            }
            memset(&b->sc.cols[c], 0, sizeof(colspec));
            b->sc.cols[c].name = (uint8_t *)name;
            b->sc.cols[c].name_len = f->name_len;
            b->sc.cols[c].location = FEATURES;
            b->sc.record_type = b->record_type;
            b->sc.ncols = b->ndata = c + 1;
        }
        b->sc.cols[c].kind = kind;
        b->sc.cols[c].shape = f->is_list ? LIST : SCALAR;
        b->utf8[c] = f->type == TFSQL_TFDS_STRING;
    }
    return 0;
}

/* Append the split column after the hive partition columns (tfsql.layouts.Layout
 * .add_split_column): its values move from b->splits to each file's parts. */
int add_split_column(tfbind *b) {
    if (b->layout == LAYOUT_NONE || is_column(b, SPLIT_COLUMN)) {
        return 0;
    }
    for (int k = 0; k < b->npart; k++) {
        if (strcmp(b->part_names[k], SPLIT_COLUMN) == 0) {
            return 0;
        }
    }
    int k = b->npart;
    char **names = (char **)realloc(b->part_names, (size_t)(k + 1) * sizeof(char *));
    if (names == NULL) {
        return -1;
    }
    b->part_names = names;
    int *is_int = (int *)realloc(b->part_is_int, (size_t)(k + 1) * sizeof(int));
    if (is_int == NULL) {
        return -1;
    }
    b->part_is_int = is_int;
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
        f->part_lens[k] = b->splits[i] != NULL ? strlen(b->splits[i]) : 0;
        f->parts[k] = b->splits[i];
        b->splits[i] = NULL;
    }
    b->part_names[k] = xstrdup(SPLIT_COLUMN);
    b->part_is_int[k] = 0;
    b->npart = k + 1;
    return b->part_names[k] == NULL ? -1 : 0;
}
