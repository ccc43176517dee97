/*
 * tfsql/duckdb_v2/scan.c -- the V2 binding of tfrecord_scan and its alias read_tfrecord:
 * the call's values -> tfargs (resolved by resolve.c), the result's columns, the
 * parallel scan of files and byte ranges (scanning.c) over V2 vectors, the replacement
 * scan for FROM 'x.tfrecord'.
 */
#include "v2_ext.h"

/* -- values -------------------------------------------------------------------------- */

static char *str_dup(duckdb_v2_str s) { return xstrndup(s.ptr != NULL ? s.ptr : "", (size_t)s.len); }

static DUCKDB_V2_LOGICAL_TYPE_ID value_type_id(duckdb_v2_value_handle v,
                                               duckdb_v2_logical_type_handle *type) {
    DUCKDB_V2_LOGICAL_TYPE_ID id = DUCKDB_V2_LOGICAL_TYPE_ID_INVALID;
    if (duckdb_v2_value_get_logical_type(v, type, NULL) == V2_OK) {
        duckdb_v2_logical_type_get_id(*type, &id, NULL);
    }
    return id;
}

int v2_tfval(duckdb_v2_value_handle v, tfval *out) {
    memset(out, 0, sizeof(*out));
    bool is_null = true;
    if (v == NULL || duckdb_v2_value_is_null(v, &is_null, NULL) != V2_OK || is_null) {
        return 0;
    }
    duckdb_v2_logical_type_handle type = NULL;
    DUCKDB_V2_LOGICAL_TYPE_ID id = value_type_id(v, &type);
    int rc = 0;
    if (id == DUCKDB_V2_LOGICAL_TYPE_ID_LIST || id == DUCKDB_V2_LOGICAL_TYPE_ID_STRUCT) {
        int is_struct = id == DUCKDB_V2_LOGICAL_TYPE_ID_STRUCT;
        idx_t n = 0;
        duckdb_v2_value_get_child_count(v, &n, NULL);
        out->kind = is_struct ? TFV_STRUCT : TFV_LIST;
        out->items = (tfval *)calloc(n ? n : 1, sizeof(tfval));
        out->names = is_struct ? (char **)calloc(n ? n : 1, sizeof(char *)) : NULL;
        rc = out->items == NULL || (is_struct && out->names == NULL) ? -1 : 0;
        for (idx_t i = 0; rc == 0 && i < n; i++) {
            duckdb_v2_value_handle child = NULL;
            duckdb_v2_value_get_child(v, i, &child, NULL);
            out->n = (size_t)i + 1;
            rc = v2_tfval(child, &out->items[i]);
            duckdb_v2_value_destroy(&child);
            if (is_struct) {
                duckdb_v2_identifier_t name = {NULL, 0};
                duckdb_v2_value_handle param = NULL;
                duckdb_v2_logical_type_get_param(type, i, &name, &param, NULL);
                out->names[i] = str_dup(name);
                duckdb_v2_value_destroy(&param);
                rc |= out->names[i] == NULL ? -1 : 0;
            }
        }
    } else if (id == DUCKDB_V2_LOGICAL_TYPE_ID_VARCHAR) {
        duckdb_v2_str s = {NULL, 0};
        duckdb_v2_value_get_varchar(v, &s, NULL);
        out->kind = TFV_TEXT;
        out->text = str_dup(s);
        out->has_nul = s.len > 0 && memchr(s.ptr, 0, (size_t)s.len) != NULL;
        rc = out->text == NULL ? -1 : 0;
    } else {
        char buf[256];
        idx_t len = 0;
        if (duckdb_v2_value_to_string(v, buf, sizeof(buf), &len, NULL) != V2_OK) {
            len = 0;
        }
        out->text = xstrndup(buf, len < sizeof(buf) ? (size_t)len : sizeof(buf) - 1);
        rc = out->text == NULL ? -1 : 0;
        bool flag = false;
        int64_t i64 = 0;
        if (id == DUCKDB_V2_LOGICAL_TYPE_ID_BOOLEAN && duckdb_v2_value_get_bool(v, &flag, NULL) == V2_OK) {
            out->kind = TFV_BOOL;
            out->i = flag;
        } else if (id == DUCKDB_V2_LOGICAL_TYPE_ID_BIGINT &&
                   duckdb_v2_value_get_bigint(v, &i64, NULL) == V2_OK) {
            out->kind = TFV_INT;
            out->i = i64;
        } else {
            out->kind = TFV_OTHER;
        }
    }
    duckdb_v2_logical_type_destroy(&type);
    return rc;
}

int v2_bind_args(duckdb_v2_function_bind_info_handle info, tfargs *a, v2_err *err) {
    memset(a, 0, sizeof(*a));
    idx_t pf = 0, pv = 0, nf = 0, nv = 0;
    if (duckdb_v2_function_bind_get_arg_count(info, &pf, &pv, &nf, &nv, err) != V2_OK) {
        return -1;
    }
    int rc = 0;
    for (idx_t i = 0; rc == 0 && i < pf + pv + nf + nv; i++) {
        duckdb_v2_value_handle v = NULL;
        duckdb_v2_identifier_t name = {NULL, 0};
        if (duckdb_v2_function_bind_get_arg_value(info, i, &v, NULL) != V2_OK) {
            continue;
        }
        duckdb_v2_function_bind_get_arg_name(info, i, &name, NULL);
        char *n = str_dup(name);
        tfval tv;
        if (n == NULL) {
            v2_fail(err, DUCKDB_V2_ERROR_RESOURCE_OUT_OF_MEMORY, "out of memory");
            rc = -1;
        } else if (i == 0) {
            rc = v2_tfval(v, &a->source);
            if (rc != 0) {
                v2_fail(err, DUCKDB_V2_ERROR_RESOURCE_OUT_OF_MEMORY, "out of memory");
            }
        } else {
            rc = v2_named_arg(v, n, &tv, err); /* 1: left out */
            rc = rc == 0 ? tfargs_add(a, n, &tv) : rc > 0 ? 0 : rc;
            if (rc < 0 && (err == NULL || *err == NULL)) {
                v2_fail(err, DUCKDB_V2_ERROR_RESOURCE_OUT_OF_MEMORY, "out of memory");
            }
        }
        free(n);
        duckdb_v2_value_destroy(&v);
    }
    return rc;
}

duckdb_v2_logical_type_handle v2_type(duckdb_v2_factory_handle f, tftype t) {
    char text[V2_TYPE_TEXT];
    tftype_text(t, text, sizeof text);
    duckdb_v2_logical_type_handle r = NULL;
    if (t.leaf == TT_ANY) {
        duckdb_v2_factory_create_type_from_id(f, DUCKDB_V2_LOGICAL_TYPE_ID_ANY, NULL, NULL, 0, &r,
                                              NULL);
        return r;
    }
    duckdb_v2_str s = v2_str(text);
    duckdb_v2_factory_create_type_from_text(f, &s, &r, NULL);
    return r;
}

duckdb_v2_logical_type_handle v2_type_cached(v2_types *cache, duckdb_v2_factory_handle f, tftype t) {
    char text[V2_TYPE_TEXT];
    tftype_text(t, text, sizeof text);
    int i = 0;
    while (i < cache->n && strcmp(cache->text[i], text) != 0) {
        i++;
    }
    if (i == cache->n) {
        duckdb_v2_logical_type_handle made = v2_type(f, t);
        if (made == NULL || cache->n == V2_TYPES_KEPT) {
            return made; /* the cache is full: this type is made each time */
        }
        memcpy(cache->text[i], text, sizeof text);
        cache->type[i] = made;
        cache->n++;
    }
    duckdb_v2_logical_type_handle r = NULL;
    duckdb_v2_logical_type_copy(cache->type[i], &r, NULL);
    return r;
}

void v2_types_free(v2_types *cache) {
    for (int i = 0; i < cache->n; i++) {
        duckdb_v2_logical_type_destroy(&cache->type[i]);
    }
    cache->n = 0;
}

/* -- bind ---------------------------------------------------------------------------- */

static const char *function_name(const fninfo *fi) {
    return fi != NULL ? fi->name : "tfrecord_scan";
}

int v2_declare_columns(const tfbind *b, duckdb_v2_table_function_bind_info_handle result,
                       duckdb_v2_factory_handle f, v2_err *err) {
    int n = scan_output_count(b);
    v2_types types = {.n = 0};
    int rc = 0;
    for (int c = 0; rc == 0 && c < n; c++) {
        char *name = NULL;
        duckdb_v2_logical_type_handle t = v2_type_cached(&types, f, scan_output_tftype(b, c, &name));
        if (name == NULL || t == NULL) {
            v2_fail(err, DUCKDB_V2_ERROR_RESOURCE_OUT_OF_MEMORY, "out of memory");
            rc = -1;
        } else {
            duckdb_v2_str s = v2_str(name);
            rc = duckdb_v2_table_function_bind_add_result_column(result, &s, t, err) == V2_OK ? 0 : -1;
        }
        duckdb_v2_logical_type_destroy(&t);
        free(name);
    }
    v2_types_free(&types);
    return rc;
}

static void scan_bind(duckdb_v2_function_bind_info_handle info,
                      duckdb_v2_table_function_bind_info_handle result, v2_ctx context, v2_err *err) {
    fninfo *fi = NULL;
    duckdb_v2_factory_handle f = NULL;
    if (v2_bind_start(info, context, &fi, &f, err) != 0) {
        return;
    }
    char message[ERRLEN] = "";
    uint64_t cardinality = 0;
    tfargs a;
    tfbind *b = NULL;
    if (v2_bind_args(info, &a, err) != 0) {
        tfargs_free(&a);
        return;
    }
    v2_reports_enter(context); /* the inference's warnings go to DuckDB's log */
    b = scan_bind_resolve_args(&a, function_name(fi), v2_connection(context), &cardinality, message);
    v2_reports_leave();
    tfargs_free(&a);
    if (b == NULL) {
        v2_fail(err, DUCKDB_V2_ERROR_QUERY_BINDER, message);
        return;
    }
    duckdb_v2_opaque data = {b, tfbind_free, NULL};
    if (duckdb_v2_function_bind_set_bind_data(info, &data, err) != V2_OK) {
        tfbind_free(b);
        return;
    }
    if (v2_declare_columns(b, result, f, err) != 0) {
        return;
    }
    if (cardinality > 0) {
        duckdb_v2_table_function_bind_set_cardinality(result, (idx_t)cardinality, false, NULL);
    }
}

/* -- scan ---------------------------------------------------------------------------- */

void v2_scan_init_global(const tfbind *b, const size_t *columns, size_t n, const v2_scan_states *s,
                         void *info, v2_err *err) {
    char message[ERRLEN] = "out of memory";
    tfglobal *g = columns != NULL ? scan_global_new(b, columns, n, message) : NULL;
    if (g == NULL) {
        v2_fail(err, DUCKDB_V2_ERROR_RESOURCE_OUT_OF_MEMORY, message);
        return;
    }
    v2_prune_files(b, g);
    if (scan_plan_units(b, g, message)) { /* the files left, large plain ones as ranges */
        scan_global_free(g);
        v2_fail(err, DUCKDB_V2_ERROR_RESOURCE_OUT_OF_MEMORY, message);
        return;
    }
    duckdb_v2_opaque state = {g, scan_global_free, NULL};
    if (s->set_global(info, &state, err) != V2_OK) {
        scan_global_free(g);
        return;
    }
    s->set_threads(info, g->nunits ? g->nunits : 1, NULL); /* a thread per unit at most */
}

void v2_scan_init_local(const v2_scan_states *s, void *info, v2_err *err) {
    tflocal *l = scan_local_new();
    duckdb_v2_opaque state = {l, scan_local_free, NULL};
    if (l == NULL) {
        v2_fail(err, DUCKDB_V2_ERROR_RESOURCE_OUT_OF_MEMORY, "out of memory");
    } else if (s->set_local(info, &state, err) != V2_OK) {
        scan_local_free(l);
    }
}

int v2_scan_rows(const tfbind *b, tfglobal *g, tflocal *l, void *const *vecs, size_t cap,
                 v2_ctx context, const char *fname, size_t *rows, v2_err *err) {
    char message[ERRLEN] = "";
    v2_reports_enter(context);
    int rc = scan_next(b, g, l, &v2_vecops, vecs, cap, rows, message);
    v2_reports_leave();
    if (rc < 0) {
        scan_failed_message(b, fname, message);
        v2_fail(err, DUCKDB_V2_ERROR_INPUT_INVALID, message);
    }
    return rc;
}

/* The table function's state setters (v2_scan_states). */
static DUCKDB_V2_ERROR table_set_global(void *info, duckdb_v2_opaque *state, v2_err *err) {
    return duckdb_v2_table_function_init_global_set_global_state(
        (duckdb_v2_table_function_init_global_info_handle)info, state, err);
}

static DUCKDB_V2_ERROR table_set_threads(void *info, idx_t n, v2_err *err) {
    return duckdb_v2_table_function_init_global_set_max_threads(
        (duckdb_v2_table_function_init_global_info_handle)info, n, err);
}

static DUCKDB_V2_ERROR table_set_local(void *info, duckdb_v2_opaque *state, v2_err *err) {
    return duckdb_v2_table_function_init_local_set_local_state(
        (duckdb_v2_table_function_init_local_info_handle)info, state, err);
}

static const v2_scan_states table_states = {table_set_global, table_set_threads, table_set_local};

static void scan_init_global(duckdb_v2_table_function_init_global_info_handle info, v2_ctx context,
                             v2_err *err) {
    (void)context;
    tfbind *b = NULL;
    idx_t n = 0;
    if (duckdb_v2_table_function_init_global_get_bind_data(info, (void **)&b, err) != V2_OK ||
        duckdb_v2_table_function_init_global_get_column_count(info, &n, err) != V2_OK) {
        return;
    }
    size_t *columns = (size_t *)calloc(n ? n : 1, sizeof(size_t));
    for (idx_t i = 0; columns != NULL && i < n; i++) {
        idx_t c = 0;
        duckdb_v2_table_function_init_global_get_column_index(info, i, &c, NULL);
        columns[i] = (size_t)c;
    }
    v2_scan_init_global(b, columns, (size_t)n, &table_states, info, err);
    free(columns);
}

static void scan_init_local(duckdb_v2_table_function_init_local_info_handle info, v2_ctx context,
                            v2_err *err) {
    (void)context;
    v2_scan_init_local(&table_states, info, err);
}

/* The query's progress (DuckDB's progress bar): the bytes of the files read so far. */
static void scan_report_progress(duckdb_v2_table_function_progress_info_handle info, v2_ctx context,
                                 v2_err *err) {
    (void)context;
    tfglobal *g = NULL;
    if (duckdb_v2_table_function_progress_get_global_state(info, (void **)&g, err) == V2_OK && g != NULL) {
        duckdb_v2_table_function_progress_set_progress(info, scan_progress(g), err);
    }
}

/* vecops over V2 vectors */
/* The string vector set_text wrote last, its cells and arena: asked of DuckDB once per
 * vector and chunk (a resize forgets them). */
static __thread struct {
    void *vec;
    duckdb_v2_bytes *cells;
    duckdb_v2_arena_handle arena;
} text_target;

static int v2_set_rows(void *vec, size_t n) {
    text_target.vec = NULL;
    return duckdb_v2_vector_set_size((duckdb_v2_vector_handle)vec, (idx_t)n, NULL) == V2_OK ? 0 : -1;
}

static void *v2_data(void *vec) {
    void *data = NULL;
    duckdb_v2_vector_get_data_mutable((duckdb_v2_vector_handle)vec, &data, NULL);
    return data;
}

static uint64_t *v2_validity(void *vec) {
    uint64_t *validity = NULL;
    duckdb_v2_vector_flat_get_validity_mutable((duckdb_v2_vector_handle)vec, &validity, NULL);
    return validity;
}

static int v2_set_text(void *vec, size_t row, const char *p, size_t len) {
    if (text_target.vec != vec) {
        text_target.cells = (duckdb_v2_bytes *)v2_data(vec);
        text_target.arena = NULL;
        text_target.vec = vec;
    }
    duckdb_v2_bytes *c = &text_target.cells[row];
    memset(c, 0, sizeof(*c));
    c->value.inlined.length = (uint32_t)len;
    if (len <= DUCKDB_V2_BYTES_INLINE_LENGTH) {
        if (len > 0) {
            memcpy(c->value.inlined.inlined, p, len);
        }
        return 0;
    }
    uint8_t *copy = NULL;
    if ((text_target.arena == NULL &&
         duckdb_v2_vector_get_arena((duckdb_v2_vector_handle)vec, &text_target.arena, NULL) !=
             V2_OK) ||
        duckdb_v2_arena_allocate(text_target.arena, (idx_t)len, &copy, NULL) != V2_OK) {
        text_target.vec = NULL;
        return -1;
    }
    memcpy(copy, p, len);
    memcpy(c->value.pointer.prefix, p, 4);
    c->value.pointer.ptr = (char *)copy;
    return 0;
}

static void *v2_child(void *vec, size_t i) {
    duckdb_v2_vector_handle child = NULL;
    duckdb_v2_vector_get_child((duckdb_v2_vector_handle)vec, (idx_t)i, &child, NULL);
    return child;
}

static void *v2_list_resize(void *vec, size_t n) {
    void *child = v2_child(vec, 0);
    return child != NULL && v2_set_rows(child, n) == 0 ? child : NULL;
}

static void *v2_list_child(void *vec, size_t *count) {
    void *child = v2_child(vec, 0);
    idx_t n = 0;
    if (child != NULL) {
        duckdb_v2_vector_get_size((duckdb_v2_vector_handle)child, &n, NULL);
    }
    *count = (size_t)n;
    return child;
}

const vecops v2_vecops = {v2_set_rows,    v2_data,       v2_validity, v2_set_text,
                          v2_list_resize, v2_list_child, v2_child,    v2_list_resize};

static void scan_exec(duckdb_v2_table_function_exec_info_handle info, v2_ctx context, v2_err *err) {
    tfbind *b = NULL;
    tfglobal *g = NULL;
    tflocal *l = NULL;
    fninfo *fi = NULL;
    size_t cap = 0;
    void *vecs[64];
    if (duckdb_v2_table_function_exec_get_local_state(info, (void **)&l, err) != V2_OK ||
        v2_exec_start(info, (void **)&b, (void **)&g, NULL, 0, &cap, err) != 0) {
        return;
    }
    void **v = g->nproj <= 64 ? vecs : (void **)malloc((size_t)g->nproj * sizeof(void *));
    if (v == NULL || v2_exec_start(info, NULL, NULL, v, (size_t)g->nproj, &cap, err) != 0) {
        if (v == NULL) {
            v2_fail(err, DUCKDB_V2_ERROR_RESOURCE_OUT_OF_MEMORY, "out of memory");
        }
        if (v != vecs) {
            free(v);
        }
        return;
    }
    duckdb_v2_table_function_exec_get_user_data(info, (void **)&fi, NULL);
    size_t rows = 0;
    v2_scan_rows(b, g, l, v, cap, context, function_name(fi), &rows, err);
    if (v != vecs) {
        free(v);
    }
}

/* -- registration -------------------------------------------------------------------- */

static const v2_table scan_table = {NULL,           1,         0,
                                    1,              scan_bind, scan_init_global,
                                    scan_init_local, scan_exec, scan_report_progress};

/* FROM 'x.tfrecord' (or a glob over such files): tfrecord_scan('x.tfrecord'). */
static void replacement(duckdb_v2_replacement_scan_info_handle info, v2_ctx context, v2_err *err) {
    duckdb_v2_qname_handle name = NULL;
    idx_t parts = 0;
    duckdb_v2_identifier_t part = {NULL, 0};
    duckdb_v2_factory_handle f = NULL;
    if (duckdb_v2_replacement_scan_get_name(info, &name, NULL) != V2_OK) {
        return;
    }
    char *table = NULL;
    if (duckdb_v2_qname_get_part_count(name, &parts, NULL) == V2_OK && parts == 1 &&
        duckdb_v2_qname_get_part(name, 0, &part, NULL) == V2_OK) {
        table = str_dup(part);
    }
    duckdb_v2_qname_destroy(&name);
    if (table == NULL || !is_tfrecord_name(table) ||
        duckdb_v2_context_get_factory(context, &f, err) != V2_OK) {
        free(table);
        return;
    }
    duckdb_v2_identifier_t fn = v2_str("tfrecord_scan");
    duckdb_v2_qname_handle function = NULL;
    duckdb_v2_value_handle path = NULL;
    duckdb_v2_str text = v2_str(table);
    if (duckdb_v2_qname_create(&fn, 1, &function, err) == V2_OK &&
        duckdb_v2_replacement_scan_set_function_name(info, function, err) == V2_OK &&
        duckdb_v2_value_create_varchar(f, &text, &path, err) == V2_OK) {
        duckdb_v2_replacement_scan_add_argument(info, path, err);
    }
    duckdb_v2_value_destroy(&path);
    duckdb_v2_qname_destroy(&function);
    free(table);
}

DUCKDB_V2_ERROR register_scans(duckdb_v2_extension_handle ext, duckdb_v2_factory_handle f,
                               v2_err *err) {
    v2_table scan = scan_table, alias = scan_table;
    scan.name = "tfrecord_scan";
    alias.name = "read_tfrecord";
    DUCKDB_V2_ERROR rc = v2_register_table(ext, f, &scan, err);
    if (rc == V2_OK) {
        rc = v2_register_table(ext, f, &alias, err);
    }
    duckdb_v2_replacement_scan_handle by_name = NULL;
    if (rc == V2_OK) {
        rc = duckdb_v2_replacement_scan_create(f, &by_name, err);
    }
    if (rc == V2_OK) {
        rc = duckdb_v2_replacement_scan_set_callback(by_name, replacement, err);
    }
    if (rc == V2_OK) {
        rc = duckdb_v2_extension_register_replacement_scan(ext, by_name, err);
    }
    duckdb_v2_replacement_scan_destroy(&by_name);
    return rc;
}
