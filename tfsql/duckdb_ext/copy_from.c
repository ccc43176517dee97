/*
 * tfsql/duckdb_ext/copy_from.c -- COPY t FROM 'x.tfrecord' (FORMAT tfrecord, ...).
 *
 * DuckDB binds the function with the path as its one argument, the COPY options as
 * named parameters (those of tfrecord_scan: RECORD_TYPE, COMPRESSION, ON_CORRUPT, ...)
 * and the target table's columns as the result columns, which the function must fill
 * with exactly those types: DuckDB casts nothing (measured on 2.0.1). As DuckDB's COPY
 * FROM does for Parquet, the file's columns (those tfrecord_scan gives) go to the
 * table's columns by position, their counts must agree, and each is cast to the
 * table's type: int64 features to any integer type, BOOLEAN (0 / 1), FLOAT or DOUBLE,
 * with a value out of the target's range an error naming the column and the value;
 * floats to FLOAT or DOUBLE; bytes and strings to VARCHAR (checked UTF-8) or BLOB; a
 * list to a list of such a type. Other pairs are refused at bind with what to write
 * instead (INSERT INTO ... SELECT CAST(...) FROM tfrecord_scan(...)).
 */
#include "duckdb_ext.h"

#include <stdio.h>
#include <string.h>

typedef struct castplan {
    int ncols;
    int *how;            /* CAST_* per column */
    int *list;           /* 1 when the column is a list (the cast applies to its values) */
    int *target;         /* the leaf to produce (COPY_LEAF_*) */
    duckdb_logical_type *source; /* the scan's column types, for the intermediate chunk */
} castplan;

void castplan_free(castplan *p) {
    if (p == NULL) {
        return;
    }
    for (int c = 0; c < p->ncols && p->source != NULL; c++) {
        if (p->source[c] != NULL) {
            duckdb_destroy_logical_type(&p->source[c]);
        }
    }
    free(p->source);
    free(p->how);
    free(p->list);
    free(p->target);
    free(p);
}

/* Plan column c: scan type `from`, table type `to` (copy_cast.c's rules). */
static int plan_cast(castplan *p, int c, duckdb_logical_type from, duckdb_logical_type to) {
    copy_type f, t;
    copy_describe_type(from, &f);
    copy_describe_type(to, &t);
    p->list[c] = t.levels > 0;
    p->target[c] = t.leaf;
    return p->how[c] = copy_cast_plan(&f, &t);
}

/* A short name of a type for messages. */
static const char *type_word(duckdb_logical_type t) {
    switch (duckdb_get_type_id(t)) {
    case DUCKDB_TYPE_BOOLEAN: return "BOOLEAN";
    case DUCKDB_TYPE_TINYINT: return "TINYINT";
    case DUCKDB_TYPE_SMALLINT: return "SMALLINT";
    case DUCKDB_TYPE_INTEGER: return "INTEGER";
    case DUCKDB_TYPE_BIGINT: return "BIGINT";
    case DUCKDB_TYPE_UTINYINT: return "UTINYINT";
    case DUCKDB_TYPE_USMALLINT: return "USMALLINT";
    case DUCKDB_TYPE_UINTEGER: return "UINTEGER";
    case DUCKDB_TYPE_UBIGINT: return "UBIGINT";
    case DUCKDB_TYPE_FLOAT: return "FLOAT";
    case DUCKDB_TYPE_DOUBLE: return "DOUBLE";
    case DUCKDB_TYPE_VARCHAR: return "VARCHAR";
    case DUCKDB_TYPE_BLOB: return "BLOB";
    case DUCKDB_TYPE_LIST: return "a LIST";
    case DUCKDB_TYPE_DATE: return "DATE";
    case DUCKDB_TYPE_TIMESTAMP: return "TIMESTAMP";
    case DUCKDB_TYPE_TIMESTAMP_S: return "TIMESTAMP_S";
    case DUCKDB_TYPE_TIMESTAMP_MS: return "TIMESTAMP_MS";
    case DUCKDB_TYPE_TIMESTAMP_NS: return "TIMESTAMP_NS";
    case DUCKDB_TYPE_TIMESTAMP_TZ: return "TIMESTAMP WITH TIME ZONE";
    case DUCKDB_TYPE_TIME: return "TIME";
    case DUCKDB_TYPE_DECIMAL: return "DECIMAL";
    case DUCKDB_TYPE_STRUCT: return "a STRUCT";
    default: return "another type";
    }
}

/* type_word, with a DECIMAL's width and scale (written into buf). */
static const char *type_text(duckdb_logical_type t, char *buf, size_t cap) {
    if (duckdb_get_type_id(t) != DUCKDB_TYPE_DECIMAL) {
        return type_word(t);
    }
    snprintf(buf, cap, "DECIMAL(%d,%d)", duckdb_decimal_width(t), duckdb_decimal_scale(t));
    return buf;
}

static void copy_from_bind(duckdb_bind_info info) {
    char err[ERRLEN] = "";
    idx_t cardinality = 0;
    tfbind *b = scan_bind_resolve(info, "COPY ... FROM (FORMAT tfrecord)", &cardinality, err);
    if (b == NULL) {
        duckdb_bind_set_error(info, err);
        return;
    }
    idx_t want = duckdb_table_function_bind_get_result_column_count(info);
    int have = scan_output_count(b);
    castplan *p = (castplan *)calloc(1, sizeof(castplan));
    if (p != NULL) {
        p->ncols = (int)want;
        p->how = (int *)calloc(want + 1, sizeof(int));
        p->list = (int *)calloc(want + 1, sizeof(int));
        p->target = (int *)calloc(want + 1, sizeof(int));
        p->source = (duckdb_logical_type *)calloc(want + 1, sizeof(duckdb_logical_type));
    }
    b->cast = p;
    if (p == NULL || p->how == NULL || p->list == NULL || p->target == NULL || p->source == NULL) {
        snprintf(err, ERRLEN, "out of memory");
        goto fail;
    }
    if ((idx_t)have != want) {
        int n = snprintf(err, ERRLEN,
                         "COPY ... FROM (FORMAT tfrecord): column count mismatch: the table "
                         "takes %llu columns but the TFRecord data has %d (",
                         (unsigned long long)want, have);
        for (int c = 0; c < have && n > 0 && n < ERRLEN; c++) {
            char *name = NULL;
            duckdb_logical_type t = scan_output_type(b, c, &name);
            n += snprintf(err + n, ERRLEN - (size_t)n, "%s%s %s", c ? ", " : "", name,
                          type_word(t));
            duckdb_destroy_logical_type(&t);
            free(name);
        }
        if (n > 0 && n < ERRLEN) {
            snprintf(err + n, ERRLEN - (size_t)n,
                     "); name the columns to fill (COPY t (a, b) FROM ...) or use INSERT INTO t "
                     "SELECT ... FROM tfrecord_scan(...)");
        }
        goto fail;
    }
    for (int c = 0; c < have; c++) {
        char *name = NULL;
        p->source[c] = scan_output_type(b, c, &name);
        duckdb_logical_type target = duckdb_table_function_bind_get_result_column_type(info, (idx_t)c);
        const char *column = duckdb_table_function_bind_get_result_column_name(info, (idx_t)c);
        int how = plan_cast(p, c, p->source[c], target);
        char from_text[32], to_text[32];
        if (how < 0) {
            snprintf(err, ERRLEN,
                     "COPY ... FROM (FORMAT tfrecord): the TFRecord column %d \"%s\" is %s, "
                     "which does not cast to %s, the type of the table's column \"%s\" (columns "
                     "go by position); use INSERT INTO ... SELECT CAST(...) FROM "
                     "tfrecord_scan(...)",
                     c + 1, name, type_text(p->source[c], from_text, sizeof(from_text)),
                     type_text(target, to_text, sizeof(to_text)),
                     column ? column : "?");
        }
        duckdb_destroy_logical_type(&target);
        free(name);
        if (how < 0) {
            goto fail;
        }
    }
    if (cardinality > 0) {
        duckdb_bind_set_cardinality(info, cardinality, false);
    }
    duckdb_bind_set_bind_data(info, b, tfbind_free);
    return;
fail:
    tfbind_free(b);
    duckdb_bind_set_error(info, err);
}

/* -- the casts, on flat vectors ------------------------------------------------------ */

static uint64_t *writable_validity(void *vector) {
    duckdb_vector_ensure_validity_writable((duckdb_vector)vector);
    return duckdb_vector_get_validity((duckdb_vector)vector);
}

static void assign_bytes(void *vector, uint64_t row, const char *p, uint32_t len) {
    duckdb_vector_assign_string_element_len((duckdb_vector)vector, row, p, len);
}

static const copy_cast_ops V1_CASTS = {writable_validity, assign_bytes};

/* Cast n values of the flat vector `from` into `to` (of leaf `target`). */
static int cast_values(int how, int target, duckdb_vector from, duckdb_vector to, idx_t n,
                       const char *column, char *err) {
    copy_view view = {from, duckdb_vector_get_data(from), duckdb_vector_get_validity(from)};
    return copy_cast_values(how, target, &view, to, duckdb_vector_get_data(to),
                            &V1_CASTS, n, column, err);
}

/* Cast column vector `from` (n rows, plan column c) into `to`. */
static int cast_column(const castplan *p, int c, duckdb_vector from, duckdb_vector to, idx_t n,
                       const char *column, char *err) {
    if (p->how[c] == CAST_SAME) {
        duckdb_vector_reference_vector(to, from);
        return 0;
    }
    if (!p->list[c]) {
        return cast_values(p->how[c], p->target[c], from, to, n, column, err);
    }
    /* a list: the entries and validity as they are, the values cast */
    memcpy(duckdb_vector_get_data(to), duckdb_vector_get_data(from), n * sizeof(duckdb_list_entry));
    uint64_t *fv = duckdb_vector_get_validity(from);
    if (fv != NULL) {
        duckdb_vector_ensure_validity_writable(to);
        memcpy(duckdb_vector_get_validity(to), fv, (n + 63) / 64 * sizeof(uint64_t));
    }
    idx_t size = duckdb_list_vector_get_size(from);
    if (duckdb_list_vector_reserve(to, size) == DuckDBError ||
        duckdb_list_vector_set_size(to, size) == DuckDBError) {
        snprintf(err, ERRLEN, "out of memory");
        return -1;
    }
    return cast_values(p->how[c], p->target[c], duckdb_list_vector_get_child(from),
                       duckdb_list_vector_get_child(to), size, column, err);
}

static void copy_from_scan(duckdb_function_info info, duckdb_data_chunk output) {
    const tfbind *b = (const tfbind *)duckdb_function_get_bind_data(info);
    const castplan *p = b->cast;
    duckdb_data_chunk decoded = duckdb_create_data_chunk(p->source, (idx_t)p->ncols);
    if (decoded == NULL) {
        duckdb_function_set_error(info, "out of memory");
        return;
    }
    tf_scan(info, decoded); /* tfrecord_scan's rows, in the file's types */
    idx_t n = duckdb_data_chunk_get_size(decoded);
    char err[ERRLEN] = "";
    int rc = 0;
    for (int c = 0; c < p->ncols && rc == 0 && n > 0; c++) {
        char *name = NULL;
        duckdb_logical_type t = scan_output_type(b, c, &name);
        duckdb_destroy_logical_type(&t);
        rc = cast_column(p, c, duckdb_data_chunk_get_vector(decoded, (idx_t)c),
                         duckdb_data_chunk_get_vector(output, (idx_t)c), n, name ? name : "?",
                         err);
        free(name);
    }
    duckdb_destroy_data_chunk(&decoded);
    if (rc) {
        duckdb_function_set_error(info, err);
        return;
    }
    duckdb_data_chunk_set_size(output, n);
}

duckdb_table_function copy_from_function(void) {
    duckdb_table_function f = duckdb_create_table_function();
    set_function_info(f, "COPY ... FROM (FORMAT tfrecord)");
    add_scan_parameters(f);
    duckdb_table_function_set_bind(f, copy_from_bind);
    duckdb_table_function_set_init(f, tf_init);
    duckdb_table_function_set_local_init(f, tf_local_init);
    duckdb_table_function_set_function(f, copy_from_scan);
    return f;
}
