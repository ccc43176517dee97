/*
 * tfsql/duckdb_v2/copy_from.c -- COPY t FROM 'x.tfrecord' (FORMAT tfrecord, ...) on the
 * V2 API, as the v1 binding's copy_from.c does it.
 *
 * The bind reads the path and the COPY options (tfrecord_scan's named parameters, each
 * cast to the type tfrecord_scan registers it with) into tfargs and resolves them with
 * the neutral scan bind (resolve.c); the file's columns (those tfrecord_scan gives) go
 * to the table's columns by position, their counts must agree, and each is cast by
 * copy_cast.c's rules (int64 to any integer type, BOOLEAN, FLOAT or DOUBLE, checked
 * against the target's range; float32 to DOUBLE; bytes to VARCHAR (checked UTF-8) or
 * BLOB; a list to a list of such a type). The exec reads the next rows with the
 * neutral parallel scan (scanning.c) into a chunk of the scan's types, then casts them
 * into the output chunk: DuckDB casts nothing.
 *
 *     COPY t FROM 'x.tfrecord' (FORMAT tfrecord, COMPRESSION 'gzip', ON_CORRUPT 'skip')
 */
#include "v2_ext.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#define WHAT "COPY ... FROM (FORMAT tfrecord)"

typedef struct castplan {
    int ncols;
    int *how;                              /* CAST_* per column, -1 refused */
    int *list;                             /* 1 when the cast applies to a list's values */
    int *target;                           /* the table's leaf (COPY_LEAF_*) */
    duckdb_v2_logical_type_handle *source; /* the scan's column types (the decoded chunk) */
} castplan;

void castplan_free(castplan *p) {
    if (p == NULL) {
        return;
    }
    for (int c = 0; c < p->ncols && p->source != NULL; c++) {
        duckdb_v2_logical_type_destroy(&p->source[c]);
    }
    free(p->source);
    free(p->how);
    free(p->list);
    free(p->target);
    free(p);
}

static castplan *castplan_new(int n) {
    castplan *p = (castplan *)calloc(1, sizeof(castplan));
    if (p == NULL) {
        return NULL;
    }
    p->ncols = n;
    p->how = (int *)calloc((size_t)n + 1, sizeof(int));
    p->list = (int *)calloc((size_t)n + 1, sizeof(int));
    p->target = (int *)calloc((size_t)n + 1, sizeof(int));
    p->source = (duckdb_v2_logical_type_handle *)calloc((size_t)n + 1, sizeof(*p->source));
    if (p->how == NULL || p->list == NULL || p->target == NULL || p->source == NULL) {
        castplan_free(p);
        return NULL;
    }
    return p;
}

/* A short name of a type for messages (the v1 binding's words). */
static const char *type_word(const copy_type *t) {
    return t->levels > 0 ? "a LIST" : t->leaf == COPY_LEAF_NONE ? "another type" : t->type_name;
}

/* Plan column c: scan type `from`, table type `to`; the CAST_* or -1. */
static int plan_cast(castplan *p, int c, const copy_type *from, const copy_type *to) {
    p->list[c] = to->levels > 0;
    p->target[c] = to->leaf;
    return p->how[c] = copy_cast_plan(from, to);
}

/* -- bind ---------------------------------------------------------------------------- */

/* The type tfrecord_scan registers named parameter `name` with (TT_*); -2 when it takes
 * none of that name. */
static int param_type(const char *name) {
    for (const scan_param *p = scan_parameters(); p->name != NULL; p++) {
        if (strcasecmp(p->name, name) == 0) {
            return p->type;
        }
    }
    return -2;
}

/* A tuple option ((a, b): an unnamed STRUCT) as the LIST tfrecord_scan's parameter
 * takes. */
static void tuple_to_list(tfval *v) {
    if (v->kind != TFV_STRUCT) {
        return;
    }
    for (size_t i = 0; i < v->n; i++) {
        if (v->names[i] != NULL && v->names[i][0] != '\0') {
            return;
        }
    }
    for (size_t i = 0; i < v->n; i++) {
        free(v->names[i]);
    }
    free(v->names);
    v->names = NULL;
    v->kind = TFV_LIST;
}

/* Option i as tfrecord_scan's named argument, cast to the parameter's type; -1 with
 * message set. */
static int add_option(duckdb_v2_copy_from_bind_info_handle info, duckdb_v2_factory_handle f,
                      idx_t i, tfargs *a, char *message) {
    duckdb_v2_identifier_t id = {NULL, 0};
    duckdb_v2_value_handle v = NULL, cast = NULL;
    if (duckdb_v2_copy_from_bind_get_option_name(info, i, &id, NULL) != V2_OK ||
        duckdb_v2_copy_from_bind_get_option_value(info, i, &v, NULL) != V2_OK) {
        snprintf(message, ERRLEN, WHAT ": cannot read option %llu", (unsigned long long)i + 1);
        return -1;
    }
    char *name = xstrndup(id.ptr != NULL ? id.ptr : "", (size_t)id.len);
    int type = name != NULL ? param_type(name) : TT_ANY;
    int rc = 0;
    if (name == NULL) {
        snprintf(message, ERRLEN, "out of memory");
        rc = -1;
    } else if (type == -2) {
        snprintf(message, ERRLEN,
                 "'%s' is not a supported option for copy function 'tfrecord' (its options "
                 "are tfrecord_scan's named parameters: docs/duckdb-extension.md)",
                 name);
        rc = -1;
    } else if (type != TT_ANY) {
        tftype t = {0};
        t.leaf = type;
        duckdb_v2_logical_type_handle lt = v2_type(f, t);
        if (lt == NULL || duckdb_v2_value_cast(f, v, lt, &cast, NULL) != V2_OK) {
            char text[128] = "";
            idx_t len = 0;
            duckdb_v2_value_to_string(v, text, sizeof text, &len, NULL);
            snprintf(message, ERRLEN, WHAT ": option %s takes a %s value, not %s", name,
                     type == TT_BOOLEAN ? "BOOLEAN" : type == TT_VARCHAR ? "VARCHAR" : "BIGINT",
                     text);
            rc = -1;
        }
        duckdb_v2_logical_type_destroy(&lt);
    }
    tfval tv;
    if (rc == 0 && v2_tfval(cast != NULL ? cast : v, &tv) != 0) {
        snprintf(message, ERRLEN, "out of memory");
        rc = -1;
    }
    if (rc == 0) {
        tuple_to_list(&tv);
        if (tv.kind == TFV_NULL) {
            tfval_free(&tv);
        } else if (tfargs_add(a, name, &tv) != 0) {
            snprintf(message, ERRLEN, "out of memory");
            rc = -1;
        }
    }
    duckdb_v2_value_destroy(&cast);
    duckdb_v2_value_destroy(&v);
    free(name);
    return rc;
}

/* The path and options as tfrecord_scan's arguments; -1 with message set. */
static int copy_args(duckdb_v2_copy_from_bind_info_handle info, duckdb_v2_factory_handle f,
                     tfargs *a, char *message) {
    memset(a, 0, sizeof(*a));
    duckdb_v2_str path = {NULL, 0};
    idx_t n = 0;
    if (duckdb_v2_copy_from_bind_get_file_path(info, &path, NULL) != V2_OK ||
        duckdb_v2_copy_from_bind_get_option_count(info, &n, NULL) != V2_OK) {
        snprintf(message, ERRLEN, WHAT ": cannot read the statement's path and options");
        return -1;
    }
    a->source.kind = TFV_TEXT;
    a->source.text = xstrndup(path.ptr != NULL ? path.ptr : "", (size_t)path.len);
    if (a->source.text == NULL) {
        snprintf(message, ERRLEN, "out of memory");
        return -1;
    }
    for (idx_t i = 0; i < n; i++) {
        if (add_option(info, f, i, a, message) != 0) {
            return -1;
        }
    }
    return 0;
}

/* The column count mismatch's message: the file's columns and what to do. */
static void count_mismatch(const tfbind *b, const castplan *p, idx_t want, char *message) {
    int have = scan_output_count(b);
    int n = snprintf(message, ERRLEN,
                     WHAT ": column count mismatch: the table takes %llu columns but the "
                          "TFRecord data has %d (",
                     (unsigned long long)want, have);
    for (int c = 0; c < have && n > 0 && n < ERRLEN; c++) {
        char *name = NULL;
        scan_output_tftype(b, c, &name);
        copy_type t;
        v2_describe_type(p->source[c], &t);
        n += snprintf(message + n, ERRLEN - (size_t)n, "%s%s %s", c ? ", " : "",
                      name != NULL ? name : "?", type_word(&t));
        free(name);
    }
    if (n > 0 && n < ERRLEN) {
        snprintf(message + n, ERRLEN - (size_t)n,
                 "); name the columns to fill (COPY t (a, b) FROM ...) or use INSERT INTO t "
                 "SELECT ... FROM tfrecord_scan(...)");
    }
}

/* Plan every column's cast; -1 with message set. */
static int plan_columns(duckdb_v2_copy_from_bind_info_handle info, const tfbind *b, castplan *p,
                        char *message) {
    for (int c = 0; c < p->ncols; c++) {
        char *name = NULL;
        duckdb_v2_logical_type_handle target = NULL;
        duckdb_v2_identifier_t column = {NULL, 0};
        scan_output_tftype(b, c, &name);
        duckdb_v2_copy_from_bind_get_column_type(info, (idx_t)c, &target, NULL);
        duckdb_v2_copy_from_bind_get_column_name(info, (idx_t)c, &column, NULL);
        copy_type from, to;
        v2_describe_type(p->source[c], &from);
        v2_describe_type(target, &to);
        int how = target != NULL ? plan_cast(p, c, &from, &to) : -1;
        if (how < 0) {
            snprintf(message, ERRLEN,
                     WHAT ": the TFRecord column %d \"%s\" is %s, which does not cast to %s, the "
                          "type of the table's column \"%.*s\" (columns go by position); use "
                          "INSERT INTO ... SELECT CAST(...) FROM tfrecord_scan(...)",
                     c + 1, name != NULL ? name : "?", type_word(&from), type_word(&to),
                     (int)column.len, column.ptr != NULL ? column.ptr : "?");
        }
        duckdb_v2_logical_type_destroy(&target);
        free(name);
        if (how < 0) {
            return -1;
        }
    }
    return 0;
}

static void copy_from_bind(duckdb_v2_copy_from_bind_info_handle info, v2_ctx context, v2_err *err) {
    duckdb_v2_factory_handle f = NULL;
    if (duckdb_v2_context_get_factory(context, &f, err) != V2_OK) {
        return;
    }
    char message[ERRLEN] = "";
    uint64_t cardinality = 0;
    tfargs a;
    tfbind *b = NULL;
    if (copy_args(info, f, &a, message) == 0) {
        v2_reports_enter(context);
        b = scan_bind_resolve_args(&a, WHAT, v2_connection(context), &cardinality, message);
        v2_reports_leave();
    }
    tfargs_free(&a);
    if (b == NULL) {
        v2_fail(err, DUCKDB_V2_ERROR_QUERY_BINDER, message);
        return;
    }
    idx_t want = 0;
    duckdb_v2_copy_from_bind_get_column_count(info, &want, NULL);
    int have = scan_output_count(b);
    castplan *p = castplan_new(have);
    b->cast = p;
    int rc = p == NULL ? -1 : 0;
    if (p == NULL) {
        snprintf(message, ERRLEN, "out of memory");
    }
    v2_types types = {.n = 0};
    for (int c = 0; rc == 0 && c < have; c++) {
        char *name = NULL;
        p->source[c] = v2_type_cached(&types, f, scan_output_tftype(b, c, &name));
        free(name);
        if (p->source[c] == NULL) {
            snprintf(message, ERRLEN, "out of memory");
            rc = -1;
        }
    }
    v2_types_free(&types);
    if (rc == 0 && (idx_t)have != want) {
        count_mismatch(b, p, want, message);
        rc = -1;
    }
    if (rc == 0) {
        rc = plan_columns(info, b, p, message);
    }
    if (rc != 0) {
        tfbind_free(b);
        v2_fail(err, DUCKDB_V2_ERROR_QUERY_BINDER, message);
        return;
    }
    duckdb_v2_opaque data = {b, tfbind_free, NULL};
    if (duckdb_v2_copy_from_bind_set_bind_data(info, &data, err) != V2_OK) {
        tfbind_free(b);
        return;
    }
    if (cardinality > 0) {
        duckdb_v2_copy_from_bind_set_cardinality(info, (idx_t)cardinality, false, NULL);
    }
}

/* -- init ---------------------------------------------------------------------------- */

/* COPY ... FROM's state setters (v2_scan_states). */
static DUCKDB_V2_ERROR copy_set_global(void *info, duckdb_v2_opaque *state, v2_err *err) {
    return duckdb_v2_copy_from_init_global_set_global_state(
        (duckdb_v2_copy_from_init_global_info_handle)info, state, err);
}

static DUCKDB_V2_ERROR copy_set_threads(void *info, idx_t n, v2_err *err) {
    return duckdb_v2_copy_from_init_global_set_max_threads(
        (duckdb_v2_copy_from_init_global_info_handle)info, n, err);
}

static DUCKDB_V2_ERROR copy_set_local(void *info, duckdb_v2_opaque *state, v2_err *err) {
    return duckdb_v2_copy_from_init_local_set_local_state(
        (duckdb_v2_copy_from_init_local_info_handle)info, state, err);
}

static const v2_scan_states copy_states = {copy_set_global, copy_set_threads, copy_set_local};

static void copy_from_init_global(duckdb_v2_copy_from_init_global_info_handle info, v2_ctx context,
                                  v2_err *err) {
    (void)context;
    tfbind *b = NULL;
    if (duckdb_v2_copy_from_init_global_get_bind_data(info, (void **)&b, err) != V2_OK) {
        return;
    }
    int n = scan_output_count(b);
    size_t *columns = (size_t *)calloc(n ? (size_t)n : 1, sizeof(size_t));
    for (int i = 0; columns != NULL && i < n; i++) {
        columns[i] = (size_t)i; /* every column, in the table's order */
    }
    v2_scan_init_global(b, columns, (size_t)n, &copy_states, info, err);
    free(columns);
}

static void copy_from_init_local(duckdb_v2_copy_from_init_local_info_handle info, v2_ctx context,
                                 v2_err *err) {
    (void)context;
    v2_scan_init_local(&copy_states, info, err);
}

/* The statement's progress (DuckDB's progress bar): the bytes of the files read so far. */
static void copy_from_progress(duckdb_v2_copy_from_progress_info_handle info, v2_ctx context,
                               v2_err *err) {
    (void)context;
    tfglobal *g = NULL;
    if (duckdb_v2_copy_from_progress_get_global_state(info, (void **)&g, err) == V2_OK && g != NULL) {
        duckdb_v2_copy_from_progress_set_progress(info, scan_progress(g), err);
    }
}

/* -- the casts ----------------------------------------------------------------------- */

static uint64_t *writable_validity(void *vector) { return v2_vecops.validity(vector); }

static void assign_bytes(void *vector, uint64_t row, const char *p, uint32_t len) {
    v2_vecops.set_text(vector, (size_t)row, p, len);
}

static const copy_cast_ops V2_CASTS = {writable_validity, assign_bytes};

/* The flat vector `v` as copy_cast.c reads it; -1 with message set. */
static int view_of(duckdb_v2_vector_handle v, copy_view *out, char *message) {
    duckdb_v2_vector_view view;
    memset(&view, 0, sizeof(view));
    if (duckdb_v2_vector_get_view(v, &view, NULL) != V2_OK) {
        snprintf(message, ERRLEN, WHAT ": cannot read a decoded vector");
        return -1;
    }
    out->vector = v;
    out->data = view.data;
    out->validity = view.validity;
    return 0;
}

/* Cast n leaf values of `from` into `to` (sized to n here). */
static int cast_values(int how, int target, duckdb_v2_vector_handle from, duckdb_v2_vector_handle to,
                       size_t n, const char *column, char *message) {
    copy_view view;
    if (view_of(from, &view, message) != 0) {
        return -1;
    }
    if (v2_vecops.set_rows(to, n) != 0) {
        snprintf(message, ERRLEN, "out of memory");
        return -1;
    }
    return copy_cast_values(how, target, &view, to, v2_vecops.data(to), &V2_CASTS, n, column,
                            message);
}

/* Cast column vector `from` (n rows, plan column c) into `to`. */
static int cast_column(const castplan *p, int c, duckdb_v2_vector_handle from,
                       duckdb_v2_vector_handle to, size_t n, const char *column, char *message) {
    if (p->how[c] == CAST_SAME) {
        if (duckdb_v2_vector_reference(to, from, NULL) != V2_OK) {
            snprintf(message, ERRLEN, "out of memory");
            return -1;
        }
        return 0;
    }
    if (!p->list[c]) {
        return cast_values(p->how[c], p->target[c], from, to, n, column, message);
    }
    /* a list: the entries and validity as they are, the values cast */
    copy_view view;
    size_t size = 0;
    duckdb_v2_vector_handle child = (duckdb_v2_vector_handle)v2_vecops.list_child(from, &size);
    if (view_of(from, &view, message) != 0 || child == NULL) {
        return -1;
    }
    if (v2_vecops.set_rows(to, n) != 0) {
        snprintf(message, ERRLEN, "out of memory");
        return -1;
    }
    memcpy(v2_vecops.data(to), view.data, n * sizeof(list_entry));
    if (view.validity != NULL) {
        memcpy(v2_vecops.validity(to), view.validity, (n + 63) / 64 * sizeof(uint64_t));
    }
    duckdb_v2_vector_handle values = (duckdb_v2_vector_handle)v2_vecops.list_child(to, &(size_t){0});
    if (values == NULL) {
        snprintf(message, ERRLEN, "out of memory");
        return -1;
    }
    return cast_values(p->how[c], p->target[c], child, values, size, column, message);
}

/* -- exec ---------------------------------------------------------------------------- */

/* Cast the n decoded rows into the output chunk; -1 with message set. */
static int cast_chunk(const tfbind *b, duckdb_v2_data_chunk_handle decoded,
                      duckdb_v2_data_chunk_handle out, size_t n, char *message) {
    const castplan *p = b->cast;
    int rc = 0;
    for (int c = 0; rc == 0 && c < p->ncols; c++) {
        duckdb_v2_vector_handle from = NULL, to = NULL;
        if (duckdb_v2_data_chunk_get_vector(decoded, (idx_t)c, &from, NULL) != V2_OK ||
            duckdb_v2_data_chunk_get_vector(out, (idx_t)c, &to, NULL) != V2_OK) {
            snprintf(message, ERRLEN, WHAT ": cannot reach the output's column %d", c + 1);
            return -1;
        }
        char *name = NULL;
        scan_output_tftype(b, c, &name);
        rc = cast_column(p, c, from, to, n, name != NULL ? name : "?", message);
        free(name);
    }
    duckdb_v2_vector_handle first = NULL;
    if (rc == 0 && p->ncols > 0 && duckdb_v2_data_chunk_get_vector(out, 0, &first, NULL) == V2_OK) {
        rc = v2_vecops.set_rows(first, n) == 0 ? 0 : -1;
    }
    return rc;
}

static void copy_from_exec(duckdb_v2_copy_from_exec_info_handle info, v2_ctx context, v2_err *err) {
    tfbind *b = NULL;
    tfglobal *g = NULL;
    tflocal *l = NULL;
    duckdb_v2_data_chunk_handle out = NULL, decoded = NULL;
    duckdb_v2_factory_handle f = NULL;
    idx_t cap = 0, dcap = 0;
    if (duckdb_v2_copy_from_exec_get_bind_data(info, (void **)&b, err) != V2_OK ||
        duckdb_v2_copy_from_exec_get_global_state(info, (void **)&g, err) != V2_OK ||
        duckdb_v2_copy_from_exec_get_local_state(info, (void **)&l, err) != V2_OK ||
        duckdb_v2_copy_from_exec_get_output_chunk(info, &out, err) != V2_OK ||
        duckdb_v2_data_chunk_get_capacity(out, &cap, err) != V2_OK ||
        duckdb_v2_context_get_factory(context, &f, err) != V2_OK) {
        return;
    }
    const castplan *p = b->cast;
    if (duckdb_v2_data_chunk_create(f, p->source, (idx_t)p->ncols, &decoded, err) != V2_OK ||
        duckdb_v2_data_chunk_get_capacity(decoded, &dcap, err) != V2_OK) {
        duckdb_v2_data_chunk_destroy(&decoded);
        return;
    }
    void *vecs[64];
    void **v = p->ncols <= 64 ? vecs : (void **)malloc((size_t)p->ncols * sizeof(void *));
    char message[ERRLEN] = "out of memory";
    int rc = v == NULL ? -1 : 0;
    for (int c = 0; rc == 0 && c < p->ncols; c++) {
        duckdb_v2_vector_handle vec = NULL;
        rc = duckdb_v2_data_chunk_get_vector(decoded, (idx_t)c, &vec, NULL) == V2_OK ? 0 : -1;
        v[c] = vec;
    }
    size_t rows = 0;
    if (rc != 0) {
        v2_fail(err, DUCKDB_V2_ERROR_RESOURCE_OUT_OF_MEMORY, message);
    } else if (v2_scan_rows(b, g, l, v, (size_t)(cap < dcap ? cap : dcap), context, WHAT, &rows,
                            err) > 0 &&
               rows > 0 && cast_chunk(b, decoded, out, rows, message) != 0) {
        v2_fail(err, DUCKDB_V2_ERROR_INPUT_INVALID, message);
    }
    if (v != vecs) {
        free(v);
    }
    duckdb_v2_data_chunk_destroy(&decoded);
}

/* -- registration -------------------------------------------------------------------- */

DUCKDB_V2_ERROR register_copy_from(duckdb_v2_copy_function_handle f, v2_err *err) {
    DUCKDB_V2_ERROR rc = duckdb_v2_copy_from_set_bind_callback(f, copy_from_bind, err);
    if (rc == V2_OK) {
        rc = duckdb_v2_copy_from_set_init_global_callback(f, copy_from_init_global, err);
    }
    if (rc == V2_OK) {
        rc = duckdb_v2_copy_from_set_init_local_callback(f, copy_from_init_local, err);
    }
    if (rc == V2_OK) {
        rc = duckdb_v2_copy_from_set_exec_callback(f, copy_from_exec, err);
    }
    if (rc == V2_OK) {
        rc = duckdb_v2_copy_from_set_progress_callback(f, copy_from_progress, err);
    }
    return rc;
}
