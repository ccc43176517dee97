/*
 * tfsql/duckdb_ext/bind.c -- the v1 binding of tfrecord_scan's bind: the call's DuckDB
 * values -> tfargs (options.c), resolved by resolve.c; the result's columns declared.
 */

#include "duckdb_ext.h"

tfbind *v1_resolve(duckdb_bind_info info, const char *fname, const char *const *extra,
                   int scanning, idx_t *cardinality_out, char *err) {
    tfargs a;
    uint64_t cardinality = 0;
    tfbind *b = NULL;
    *cardinality_out = 0;
    if (v1_external_access_refused(info, fname, err)) {
        return NULL;
    }
    if (bind_args(info, extra, &a) != 0) {
        snprintf(err, ERRLEN, "out of memory");
    } else if (scanning) {
        b = scan_bind_resolve_args(&a, fname, connection_of(info), &cardinality, err);
    } else {
        b = scan_resolve(&a, fname, connection_of(info), &cardinality, err);
    }
    tfargs_free(&a);
    *cardinality_out = (idx_t)cardinality;
    return b;
}

tfbind *scan_bind_resolve(duckdb_bind_info info, const char *fname, idx_t *cardinality_out,
                          char *err) {
    return v1_resolve(info, fname, NULL, 1, cardinality_out, err);
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
