/*
 * tfsql/duckdb_v2/tables.c -- the plumbing every V2 table function of the extension
 * shares: registration (v2_table), its parameters, the start of its bind and exec
 * callbacks, result columns, a one-thread cursor.
 */
#include "v2_ext.h"

/* A named parameter the call leaves out arrives as its registered default: the V2 API
 * does not say whether the call gave it (duckdb_v2.h, duckdb_v2_function_bind_info: "A
 * parameter the call omitted is present with its default value"). So the default is a
 * value no one types -- this text for VARCHAR and untyped parameters, INT64_MIN for
 * BIGINT ones -- and an explicit NULL stays NULL, to be refused naming its parameter as
 * the v1 build refuses it (parse_options). BOOLEAN has no spare value: a BOOLEAN
 * parameter is registered untyped (ANY) and v2_named_arg casts its value as DuckDB casts
 * to BOOLEAN. */
#define OMITTED_TEXT "\x1f" "(default)" "\x1f" /* shown in DuckDB's candidate lists */
#define OMITTED_COUNT INT64_MIN

/* The default that marks parameter type `type` left out (owned), NULL on failure. */
static duckdb_v2_value_handle omitted_value(duckdb_v2_factory_handle f, int type, v2_err *err) {
    duckdb_v2_value_handle v = NULL;
    duckdb_v2_str text = v2_str(OMITTED_TEXT);
    if (type == TT_BIGINT) {
        duckdb_v2_value_create_bigint(f, OMITTED_COUNT, &v, err);
    } else {
        duckdb_v2_value_create_varchar(f, &text, &v, err);
    }
    return v;
}

/* tfrecord_scan's parameters (the source and the named options) on signature `sig`;
 * tfrecord_schema, tfrecord_metadata take the same. */
DUCKDB_V2_ERROR v2_add_scan_parameters(duckdb_v2_function_signature_handle sig,
                                       duckdb_v2_factory_handle f, v2_err *err) {
    tftype any = TFTYPE_OF(TT_ANY);
    duckdb_v2_logical_type_handle t = v2_type(f, any);
    duckdb_v2_str source = v2_str("source");
    DUCKDB_V2_ERROR rc = duckdb_v2_function_signature_add_parameter(
        sig, &source, t, NULL, DUCKDB_V2_FUNCTION_PARAMETER_KIND_POSITIONAL_ONLY, err);
    duckdb_v2_logical_type_destroy(&t);
    for (const scan_param *p = scan_parameters(); rc == V2_OK && p->name != NULL; p++) {
        tftype pt = TFTYPE_OF(p->type == TT_BOOLEAN ? TT_ANY : p->type);
        duckdb_v2_str name = v2_str(p->name);
        duckdb_v2_value_handle omitted = omitted_value(f, p->type, err);
        t = v2_type(f, pt);
        rc = omitted != NULL && t != NULL ? V2_OK : DUCKDB_V2_ERROR_API;
        if (rc == V2_OK) {
            rc = duckdb_v2_function_signature_add_parameter(
                sig, &name, t, omitted, DUCKDB_V2_FUNCTION_PARAMETER_KIND_NAMED_ONLY, err);
        }
        duckdb_v2_value_destroy(&omitted);
        duckdb_v2_logical_type_destroy(&t);
    }
    return rc;
}

/* The registered type of scan parameter `name`; TT_ANY for any other name. */
static int scan_param_type(const char *name) {
    for (const scan_param *p = scan_parameters(); p->name != NULL; p++) {
        if (strcmp(p->name, name) == 0) {
            return p->type;
        }
    }
    return TT_ANY;
}

/* DuckDB's VARCHAR -> BOOLEAN words (any case): 1 true, 0 false, -1 none. */
static int boolean_word(const char *s) {
    static const char *const words[] = {"true", "t", "yes", "y", "1", "false", "f", "no", "n", "0"};
    for (int i = 0; i < 10; i++) {
        if (strcasecmp(s, words[i]) == 0) {
            return i < 5;
        }
    }
    return -1;
}

/* `tv` (value `v` of type id `id`) cast to BOOLEAN as DuckDB casts a named parameter's
 * value: numbers are true when not zero, text by DuckDB's words; -1 with err set. */
static int cast_boolean(tfval *tv, duckdb_v2_value_handle v, DUCKDB_V2_LOGICAL_TYPE_ID id,
                        duckdb_v2_logical_type_handle type, const char *name, v2_err *err) {
    int numeric = (id >= DUCKDB_V2_LOGICAL_TYPE_ID_TINYINT && id <= DUCKDB_V2_LOGICAL_TYPE_ID_BIGINT) ||
                  (id >= DUCKDB_V2_LOGICAL_TYPE_ID_DECIMAL && id <= DUCKDB_V2_LOGICAL_TYPE_ID_DOUBLE) ||
                  (id >= DUCKDB_V2_LOGICAL_TYPE_ID_UTINYINT && id <= DUCKDB_V2_LOGICAL_TYPE_ID_UBIGINT) ||
                  id == DUCKDB_V2_LOGICAL_TYPE_ID_HUGEINT || id == DUCKDB_V2_LOGICAL_TYPE_ID_UHUGEINT;
    int x = tv->kind == TFV_BOOL ? (int)tv->i
            : numeric && tv->text != NULL ? strtod(tv->text, NULL) != 0.0
            : id == DUCKDB_V2_LOGICAL_TYPE_ID_VARCHAR && tv->text != NULL ? boolean_word(tv->text)
                                                                           : -2;
    if (tv->kind == TFV_NULL || x >= 0) {
        if (tv->kind != TFV_NULL) {
            tfval_free(tv);
            tv->kind = TFV_BOOL;
            tv->i = x;
        }
        return 0;
    }
    char message[ERRLEN], why[160], text[96] = "?", value[200] = "";
    idx_t len = 0;
    if (x == -1) {
        snprintf(value, sizeof value, "'%.150s'", tv->text);
        snprintf(why, sizeof why, "Could not convert string %s to BOOL", value);
    } else {
        duckdb_v2_value_to_string(v, value, sizeof value, &len, NULL);
        duckdb_v2_logical_type_to_text(type, text, sizeof text, &len, NULL);
        snprintf(why, sizeof why, "Unimplemented type for cast (%s -> BOOLEAN)", text);
    }
    snprintf(message, ERRLEN, "Could not cast value %s to named parameter \"%s\" of type BOOLEAN: %s",
             value, name, why);
    v2_fail(err, DUCKDB_V2_ERROR_INPUT_INVALID, message);
    return -1;
}

int v2_named_arg(duckdb_v2_value_handle v, const char *name, tfval *tv, v2_err *err) {
    duckdb_v2_logical_type_handle type = NULL;
    DUCKDB_V2_LOGICAL_TYPE_ID id = DUCKDB_V2_LOGICAL_TYPE_ID_INVALID;
    if (duckdb_v2_value_get_logical_type(v, &type, NULL) == V2_OK) {
        duckdb_v2_logical_type_get_id(type, &id, NULL);
    }
    int ptype = scan_param_type(name);
    int rc = v2_tfval(v, tv);
    if (rc != 0) {
        v2_fail(err, DUCKDB_V2_ERROR_RESOURCE_OUT_OF_MEMORY, "out of memory");
    } else if ((tv->kind == TFV_TEXT && strcmp(tv->text, OMITTED_TEXT) == 0) ||
               (ptype == TT_BIGINT && tv->kind == TFV_INT && tv->i == OMITTED_COUNT)) {
        tfval_free(tv);
        rc = 1;
    } else if (ptype == TT_BOOLEAN) {
        rc = cast_boolean(tv, v, id, type, name, err);
    }
    duckdb_v2_logical_type_destroy(&type);
    return rc;
}

duckdb_v2_table_function_handle v2_new_table_function(duckdb_v2_factory_handle f, const char *name,
                                                      v2_err *err) {
    duckdb_v2_table_function_handle tf = NULL;
    duckdb_v2_str n = v2_str(name);
    if (duckdb_v2_table_function_create(f, &tf, err) != V2_OK) {
        return NULL;
    }
    fninfo *fi = (fninfo *)malloc(sizeof(fninfo));
    if (fi != NULL) {
        fi->name = name;
        fi->database = 0;
    }
    duckdb_v2_opaque data = {fi, free, NULL};
    if (fi == NULL || duckdb_v2_table_function_set_name(tf, &n, err) != V2_OK ||
        duckdb_v2_table_function_set_user_data(tf, &data, err) != V2_OK) {
        if (fi == NULL) {
            v2_fail(err, DUCKDB_V2_ERROR_RESOURCE_OUT_OF_MEMORY, "out of memory");
        }
        duckdb_v2_table_function_destroy(&tf);
        return NULL;
    }
    return tf;
}

DUCKDB_V2_ERROR v2_register_table(duckdb_v2_extension_handle ext, duckdb_v2_factory_handle f,
                                  const v2_table *t, v2_err *err) {
    duckdb_v2_table_function_handle tf = v2_new_table_function(f, t->name, err);
    duckdb_v2_function_signature_handle sig = NULL;
    if (tf == NULL) {
        return DUCKDB_V2_ERROR_API;
    }
    DUCKDB_V2_ERROR rc = duckdb_v2_table_function_get_signature(tf, &sig, err);
    if (rc == V2_OK && t->scan_parameters) {
        rc = v2_add_scan_parameters(sig, f, err);
    }
    if (rc == V2_OK && t->count_parameter) {
        tftype boolean = TFTYPE_OF(TT_BOOLEAN);
        duckdb_v2_logical_type_handle type = v2_type(f, boolean);
        duckdb_v2_value_handle none = NULL;
        duckdb_v2_str count = v2_str("count");
        rc = duckdb_v2_value_create_null(f, type, &none, err);
        if (rc == V2_OK) {
            rc = duckdb_v2_function_signature_add_parameter(
                sig, &count, type, none, DUCKDB_V2_FUNCTION_PARAMETER_KIND_NAMED_ONLY, err);
        }
        duckdb_v2_value_destroy(&none);
        duckdb_v2_logical_type_destroy(&type);
    }
    if (rc == V2_OK && t->pushdown) {
        rc = duckdb_v2_table_function_set_projection_pushdown(tf, true, err);
        if (rc == V2_OK) {
            rc = v2_set_filter_pushdown(tf, err);
        }
    }
    if (rc == V2_OK) {
        rc = duckdb_v2_table_function_set_bind_callback(tf, t->bind, err);
    }
    if (rc == V2_OK) {
        rc = duckdb_v2_table_function_set_init_global_callback(tf, t->init_global, err);
    }
    if (rc == V2_OK && t->init_local != NULL) {
        rc = duckdb_v2_table_function_set_init_local_callback(tf, t->init_local, err);
    }
    if (rc == V2_OK) {
        rc = duckdb_v2_table_function_set_exec_callback(tf, t->exec, err);
    }
    if (rc == V2_OK && t->progress != NULL) {
        rc = duckdb_v2_table_function_set_progress_callback(tf, t->progress, err);
    }
    if (rc == V2_OK) {
        rc = duckdb_v2_extension_register_table_function(ext, tf, err);
    }
    duckdb_v2_table_function_destroy(&tf);
    return rc;
}

int v2_bind_start(duckdb_v2_function_bind_info_handle info, v2_ctx context, fninfo **fi,
                  duckdb_v2_factory_handle *f, v2_err *err) {
    *fi = NULL;
    duckdb_v2_function_bind_get_user_data(info, (void **)fi, NULL);
    return *fi != NULL && duckdb_v2_context_get_factory(context, f, err) == V2_OK ? 0 : -1;
}

int v2_add_columns(duckdb_v2_table_function_bind_info_handle result, duckdb_v2_factory_handle f,
                   const tfcolumn *columns, v2_err *err) {
    for (; columns->name != NULL; columns++) {
        duckdb_v2_logical_type_handle t = v2_type(f, columns->type);
        duckdb_v2_str name = v2_str(columns->name);
        DUCKDB_V2_ERROR rc = duckdb_v2_table_function_bind_add_result_column(result, &name, t, err);
        duckdb_v2_logical_type_destroy(&t);
        if (rc != V2_OK) {
            return -1;
        }
    }
    return 0;
}

int v2_exec_start(duckdb_v2_table_function_exec_info_handle info, void **bind, void **global,
                  void **vecs, size_t nvecs, size_t *cap, v2_err *err) {
    duckdb_v2_data_chunk_handle out = NULL;
    idx_t capacity = 0;
    if ((bind != NULL && duckdb_v2_table_function_exec_get_bind_data(info, bind, err) != V2_OK) ||
        (global != NULL &&
         duckdb_v2_table_function_exec_get_global_state(info, global, err) != V2_OK) ||
        duckdb_v2_table_function_exec_get_output_chunk(info, &out, err) != V2_OK ||
        duckdb_v2_data_chunk_get_capacity(out, &capacity, err) != V2_OK) {
        return -1;
    }
    for (size_t i = 0; i < nvecs; i++) {
        duckdb_v2_vector_handle vec = NULL;
        if (duckdb_v2_data_chunk_get_vector(out, (idx_t)i, &vec, err) != V2_OK) {
            return -1;
        }
        vecs[i] = vec;
    }
    *cap = (size_t)capacity;
    return 0;
}

void v2_cursor_init(duckdb_v2_table_function_init_global_info_handle info, v2_ctx context,
                    v2_err *err) {
    (void)context;
    size_t *next = (size_t *)calloc(1, sizeof(size_t));
    duckdb_v2_opaque state = {next, free, NULL};
    if (next == NULL) {
        v2_fail(err, DUCKDB_V2_ERROR_RESOURCE_OUT_OF_MEMORY, "out of memory");
        return;
    }
    if (duckdb_v2_table_function_init_global_set_global_state(info, &state, err) != V2_OK) {
        free(next);
        return;
    }
    duckdb_v2_table_function_init_global_set_max_threads(info, 1, NULL);
}
