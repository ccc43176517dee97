/*
 * tfsql/duckdb_ext/options.c -- tfrecord_scan's named parameters -> the options of a
 * bind. The parameters, their vocabularies, error wording and defaults are generated
 * from the option spec (tfsql/options.py -> options_gen.h): this file only reads
 * DuckDB values into them (option_rules.c stores them).
 */

#include "duckdb_ext.h"

#include "option_rules.h"

char *value_text(duckdb_value v) {
    char *s = duckdb_get_varchar(v);
    char *r = xstrdup(s ? s : "");
    duckdb_free(s);
    return r;
}

duckdb_type value_type_id(duckdb_value v) {
    duckdb_logical_type t = duckdb_get_value_type(v); /* owned by the value */
    return duckdb_get_type_id(t);
}

/* Read one given parameter; -1 with err set when its value is refused. */
static int read_param(tfbind *b, const tfsql_param *p, duckdb_value v, const char *fname,
                      char *err) {
    duckdb_type id = value_type_id(v);
    switch (p->value) {
    case TFSQL_VALUE_BOOL: {
        int x = duckdb_get_bool(v);
        set_option(b, p->option, p->words != NULL ? (x ? p->if_true : p->if_false) : x, NULL);
        return 0;
    }
    case TFSQL_VALUE_COUNT: {
        int64_t x = duckdb_get_int64(v);
        if (x < 1) {
            snprintf(err, ERRLEN, "%s: %s must be a positive integer, not %lld", fname, p->name,
                     (long long)x);
            return -1;
        }
        set_option(b, p->option, x, NULL);
        return 0;
    }
    case TFSQL_VALUE_COUNT_OR_ALL: {
        int64_t x = duckdb_get_int64(v);
        if (x == 0) {
            snprintf(err, ERRLEN, "%s: %s must be a positive integer or None (all of them), not 0",
                     fname, p->name);
            return -1;
        }
        set_option(b, p->option, x < 0 ? -1 : x, NULL);
        return 0;
    }
    case TFSQL_VALUE_CHOICE: {
        char *text = value_text(v);
        int code;
        if (text == NULL || !find_word(p->words, text, &code)) {
            if (p->unknown_wording) {
                snprintf(err, ERRLEN, "%s: unknown %s '%s'; use %s", fname, p->name,
                         text ? text : "", p->what);
            } else {
                snprintf(err, ERRLEN, "%s: %s must be %s, not '%s'", fname, p->name, p->what,
                         text ? text : "");
            }
            free(text);
            return -1;
        }
        free(text);
        set_option(b, p->option, code, NULL);
        return 0;
    }
    case TFSQL_VALUE_BOOL_OR_NAME:
        if (id == DUCKDB_TYPE_BOOLEAN) {
            int x = duckdb_get_bool(v);
            set_option(b, p->option, x, x && p->true_text ? xstrdup(p->true_text) : NULL);
            return 0;
        }
        if (id == DUCKDB_TYPE_VARCHAR) {
            char *name = value_text(v);
            if (name == NULL || name[0] == 0) {
                snprintf(err, ERRLEN, "%s: %s must be a column name, not ''", fname, p->name);
                free(name);
                return -1;
            }
            set_option(b, p->option, 1, name);
            return 0;
        }
        snprintf(err, ERRLEN, "%s: parameter %s expects BOOLEAN or VARCHAR", fname, p->name);
        return -1;
    default: /* TFSQL_VALUE_TYPES: the bind reads schema := / columns := */
        return 0;
    }
}

/* The DuckDB type a parameter is registered with. */
duckdb_type param_type(int value) {
    switch (value) {
    case TFSQL_VALUE_BOOL:
        return DUCKDB_TYPE_BOOLEAN;
    case TFSQL_VALUE_COUNT:
    case TFSQL_VALUE_COUNT_OR_ALL:
        return DUCKDB_TYPE_BIGINT;
    case TFSQL_VALUE_CHOICE:
    case TFSQL_VALUE_NAME:
        return DUCKDB_TYPE_VARCHAR;
    default:
        return DUCKDB_TYPE_ANY;
    }
}

void add_named_parameters(duckdb_table_function f) {
    for (const tfsql_param *p = tfsql_params; p->name != NULL; p++) {
        duckdb_logical_type t = duckdb_create_logical_type(param_type(p->value));
        duckdb_table_function_add_named_parameter(f, p->name, t);
        duckdb_destroy_logical_type(&t);
    }
    duckdb_logical_type boolean = duckdb_create_logical_type(DUCKDB_TYPE_BOOLEAN);
    for (int i = 0; tfsql_compat_params[i] != NULL; i++) {
        duckdb_table_function_add_named_parameter(f, tfsql_compat_params[i], boolean);
    }
    duckdb_destroy_logical_type(&boolean);
}

/* A NULL argument is refused naming its parameter (DuckDB would hand the bind a NULL
 * value whose text cannot be read). */
static int refuse_null(duckdb_value v, const char *name, const char *fname, char *err) {
    if (!duckdb_is_null_value(v)) {
        return 0;
    }
    snprintf(err, ERRLEN, "%s: parameter %s is NULL; give it a value, or leave it out for its "
                          "default", fname, name);
    return -1;
}

int parse_options(duckdb_bind_info info, tfbind *b, const char *fname, char *err) {
    const char *given_by[TFSQL_OPTION_COUNT] = {0};
    for (const tfsql_param *p = tfsql_params; p->name != NULL; p++) {
        duckdb_value v = duckdb_bind_get_named_parameter(info, p->name);
        if (v == NULL) {
            continue;
        }
        int rc = refuse_null(v, p->name, fname, err);
        if (rc == 0 && given_by[p->option] != NULL) {
            snprintf(err, ERRLEN, "%s: give either %s or %s, not both", fname,
                     given_by[p->option], p->name);
            rc = -1;
        }
        given_by[p->option] = p->name;
        if (rc == 0) {
            rc = read_param(b, p, v, fname, err);
        }
        duckdb_destroy_value(&v);
        if (rc) {
            return -1;
        }
    }
    for (int i = 0; tfsql_compat_params[i] != NULL; i++) {
        duckdb_value v = duckdb_bind_get_named_parameter(info, tfsql_compat_params[i]);
        if (v == NULL) {
            continue;
        }
        int rc = refuse_null(v, tfsql_compat_params[i], fname, err);
        duckdb_destroy_value(&v);
        if (rc) {
            return -1;
        }
    }
    return 0;
}
