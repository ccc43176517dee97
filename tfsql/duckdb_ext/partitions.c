/*
 * tfsql/duckdb_ext/partitions.c -- hive key=value directories and the types of
 * their columns (tfsql.partitioning).
 */

#include "ext_common.h"



/* The names hive_types := {...} gives types to (a `split` entry is left to a TFDS / TFX
 * layout: tfsql.layouts.Layout.without_split), in *names (free with strlist_free). */
static int typed_names(const tfbind *b, const tfval *v, strlist *names) {
    if (v == NULL) {
        return 0;
    }
    size_t n = v->kind == TFV_STRUCT ? v->n : 0;
    for (size_t i = 0; i < n; i++) {
        const char *name = v->names[i];
        int skip = tfsql_layout_owns_column(b->layout, name, strlen(name));
        int rc = skip ? 0 : strlist_add(names, xstrdup(name));
        if (rc) {
            return -1;
        }
    }
    return 0;
}

/* Hive partition columns of the files: the core's plan (tfsql_plan_hive, DuckDB's
 * read_parquet rule: every directory of a file's path), its values moved to the files
 * (bytes-exact, NUL included) and its types to the bind. `hive_types` (may be NULL):
 * the columns the user types. 0, or -1 with err. */
int find_partitions(tfbind *b, const tfval *hive_types, char *err) {
    if (b->hive == HIVE_OFF) {
        return 0;
    }
    strlist typed = {0};
    size_t n = b->files.n;
    tfsql_plan_file *pf = (tfsql_plan_file *)calloc(n + 1, sizeof(*pf));
    size_t *typed_lens = NULL;
    if (pf == NULL || typed_names(b, hive_types, &typed) ||
        (typed_lens = (size_t *)calloc(typed.n + 1, sizeof(size_t))) == NULL) {
        free(pf);
        strlist_free(&typed);
        snprintf(err, ERRLEN, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        const tfile *f = &b->files.items[i];
        pf[i].path = f->path;
        pf[i].path_len = strlen(f->path);
        pf[i].root = f->root;
        pf[i].root_len = f->root != NULL ? strlen(f->root) : 0;
    }
    for (size_t t = 0; t < typed.n; t++) {
        typed_lens[t] = strlen(typed.items[t]);
    }
    tfsql_hive_plan plan;
    tfsql_plan_error perr;
    int rc = tfsql_plan_hive(pf, n, TFSQL_HIVE_WHOLE_PATH, b->hive == HIVE_ON,
                             (const char *const *)typed.items, typed_lens, typed.n,
                             sql_phrases(), &plan, &perr);
    free(pf);
    free(typed_lens);
    strlist_free(&typed);
    if (rc != TFSQL_PLAN_OK) {
        snprintf(err, ERRLEN, "%s", rc == TFSQL_PLAN_NOMEM ? "out of memory" : perr.message);
        tfsql_plan_error_free(&perr);
        return -1;
    }
    size_t nc = plan.ncols;
    int failed = 0;
    if (nc > 0) {
        b->part_names = (char **)calloc(nc, sizeof(char *));
        b->part_is_int = (int *)calloc(nc, sizeof(int));
        failed = b->part_names == NULL || b->part_is_int == NULL;
    }
    for (size_t i = 0; !failed && nc > 0 && i < n; i++) {
        tfile *f = &b->files.items[i];
        f->parts = (char **)calloc(nc, sizeof(char *));
        f->part_lens = (size_t *)calloc(nc, sizeof(size_t));
        failed = f->parts == NULL || f->part_lens == NULL;
        for (size_t k = 0; !failed && k < nc; k++) { /* the values move to the file */
            f->parts[k] = plan.values[i * nc + k];
            f->part_lens[k] = plan.value_lens[i * nc + k];
            plan.values[i * nc + k] = NULL;
        }
    }
    for (size_t k = 0; !failed && k < nc; k++) {
        b->part_names[k] = plan.names[k];
        b->part_is_int[k] = plan.is_int64[k];
        plan.names[k] = NULL;
    }
    b->npart = failed ? 0 : (int)nc;
    tfsql_hive_plan_free(&plan);
    if (failed) {
        snprintf(err, ERRLEN, "out of memory");
        return -1;
    }
    for (int k = 0; k < b->npart; k++) {
        if (is_column(b, b->part_names[k])) {
            snprintf(err, ERRLEN, "partition column '%s' is also a feature in the records; "
                                  "rename the directory key or pass hive_partitioning := "
                                  "false", b->part_names[k]);
            return -1;
        }
    }
    return 0;
}

/* hive_types := {'key': 'VARCHAR', ...} (tfsql.partitioning's hive_schema): the types of
 * the partition columns it names, over the inferred ones. The extension reads VARCHAR
 * (the values as they are); another type is refused with a message naming it (a
 * registered tfsql.dataset casts). A `split` entry is left to a TFDS / TFX layout
 * (tfsql.layouts.Layout.without_split). 0, or -1 with err. */
int apply_hive_types(tfbind *b, const tfval *v, const char *fname, char *err) {
    size_t n = v->kind == TFV_STRUCT ? v->n : 0;
    if (n == 0) {
        snprintf(err, ERRLEN, "%s: parameter hive_types expects a STRUCT of partition column "
                              "-> type name, e.g. hive_types := {'p': 'VARCHAR'}", fname);
        return -1;
    }
    if (b->hive == HIVE_OFF) {
        snprintf(err, ERRLEN, "%s: hive_types was given but hive_partitioning := false; drop "
                              "one of them", fname);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        const char *name = v->names[i];
        const char *type = v->items[i].kind == TFV_NULL ? NULL : v->items[i].text;
        int kind = KIND_NONE, shape = SCALAR, utf8 = 0;
        int rc = 0;
        int k = 0;
        while (name != NULL && k < b->npart && strcmp(b->part_names[k], name) != 0) {
            k++;
        }
        if (name == NULL) {
            snprintf(err, ERRLEN, "out of memory");
            rc = -1;
        } else if (tfsql_layout_owns_column(b->layout, name, strlen(name))) {
            rc = 0;
        } else if (type == NULL || parse_type_name(type, &kind, &shape, &utf8) ||
                   kind != KIND_BYTES || shape != SCALAR || !utf8) {
            snprintf(err, ERRLEN, "%s: hive_types gives partition column '%s' type '%s', which "
                                  "the DuckDB extension does not read yet (it reads VARCHAR); "
                                  "CAST the column in the query, or read the files through a "
                                  "registered tfsql.dataset(...), which casts to any type", fname, name, type != NULL ? type : "NULL");
            rc = -1;
        } else if (k == b->npart) { /* the plan refused names that are no key */
            rc = 0;
        } else {
            b->part_is_int[k] = 0;
        }
        if (rc) {
            return -1;
        }
    }
    return 0;
}
