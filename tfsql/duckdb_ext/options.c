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

duckdb_logical_type logical_type(tftype t) {
    if (t.leaf == TT_TEXT_MAP) {
        duckdb_logical_type text = duckdb_create_logical_type(DUCKDB_TYPE_VARCHAR);
        duckdb_logical_type map = duckdb_create_map_type(text, text);
        duckdb_destroy_logical_type(&text);
        return map;
    }
    static const duckdb_type ids[TT_COUNT] = {
        DUCKDB_TYPE_BIGINT,       DUCKDB_TYPE_FLOAT,        DUCKDB_TYPE_VARCHAR,
        DUCKDB_TYPE_BLOB,         DUCKDB_TYPE_BOOLEAN,      DUCKDB_TYPE_INVALID, /* a MAP */
        DUCKDB_TYPE_UBIGINT,      DUCKDB_TYPE_TINYINT,      DUCKDB_TYPE_SMALLINT,
        DUCKDB_TYPE_INTEGER,      DUCKDB_TYPE_UTINYINT,     DUCKDB_TYPE_USMALLINT,
        DUCKDB_TYPE_UINTEGER,     DUCKDB_TYPE_DATE,         DUCKDB_TYPE_DOUBLE,
        DUCKDB_TYPE_TIME,         DUCKDB_TYPE_TIMESTAMP_S,  DUCKDB_TYPE_TIMESTAMP_MS,
        DUCKDB_TYPE_TIMESTAMP,    DUCKDB_TYPE_TIMESTAMP_NS, DUCKDB_TYPE_TIMESTAMP_TZ,
        DUCKDB_TYPE_INTERVAL,     DUCKDB_TYPE_DECIMAL,      DUCKDB_TYPE_SQLNULL,
        DUCKDB_TYPE_TIME_NS,
    };
    duckdb_type id = t.leaf >= 0 && t.leaf < TT_COUNT ? ids[t.leaf] : DUCKDB_TYPE_ANY;
    if (t.leaf == TT_TIME_NS && !capi_has_v156()) {
        id = DUCKDB_TYPE_BIGINT; /* an engine without TIME_NS: the stored nanoseconds */
    }
    duckdb_logical_type r = t.leaf == TT_DECIMAL
                                ? duckdb_create_decimal_type((uint8_t)t.width, (uint8_t)t.scale)
                                : duckdb_create_logical_type(id);
    if (t.array > 0) { /* a described fixed-size list (or nested ones) or tensor */
        for (int i = TT_MAX_INNER - 1; i >= 0; i--) {
            if (t.inner[i] > 0) {
                duckdb_logical_type a = duckdb_create_array_type(r, (idx_t)t.inner[i]);
                duckdb_destroy_logical_type(&r);
                r = a;
            }
        }
        duckdb_logical_type a = duckdb_create_array_type(r, (idx_t)t.array);
        duckdb_destroy_logical_type(&r);
        return a;
    }
    for (int s = 0; s < t.lists; s++) {
        duckdb_logical_type l = duckdb_create_list_type(r);
        duckdb_destroy_logical_type(&r);
        r = l;
    }
    return r;
}

void add_named_parameters(duckdb_table_function f) {
    for (const scan_param *p = scan_parameters(); p->name != NULL; p++) {
        tftype t = TFTYPE_OF(p->type);
        duckdb_logical_type lt = logical_type(t);
        duckdb_table_function_add_named_parameter(f, p->name, lt);
        duckdb_destroy_logical_type(&lt);
    }
}

/* Whether the VARCHAR `v`, whose text duckdb_get_varchar showed as `s`, holds a NUL
 * byte: 1 yes, 0 no, -1 when this engine cannot tell. duckdb_value_to_string (C API
 * v1.5.6; its slot is NULL on older engines) gives the value as SQL -- quoted, with
 * quotes doubled -- copied whole and NUL-terminated, so a NUL inside the value cuts it
 * before its closing quote. Any other spelling (an engine that escapes more) is -1. */
static int varchar_has_nul(duckdb_value v, const char *s) {
    if (duckdb_value_to_string == NULL) { /* the macro names the table slot */
        return -1;
    }
    char *sql = duckdb_value_to_string(v);
    if (sql == NULL) {
        return -1;
    }
    int verdict = -1;
    const char *q = sql;
    if (*q++ == '\'') {
        const char *p = s;
        while (*p != 0 && *q == *p && (*p != '\'' || *++q == '\'')) {
            p++;
            q++;
        }
        if (*p == 0 && q[0] == '\'' && q[1] == 0) {
            verdict = 0;
        } else if (*p == 0 && q[0] == 0) {
            verdict = 1; /* cut where the value's NUL is */
        }
    }
    duckdb_free(sql);
    return verdict;
}

/* Whether VARCHAR `v` (text `s`) holds a NUL byte. The value's SQL spelling shows the
 * NUL (varchar_has_nul); on engines without it (DuckDB 1.4), DuckDB's BLOB cast shows
 * the whole text, but refuses bytes over 0x7f and reads backslash escapes: it is asked
 * when the text before any NUL has neither (there a NUL after a non-ASCII prefix is not
 * seen). */
static int text_has_nul(duckdb_value v, const char *s) {
    int nul = varchar_has_nul(v, s);
    int plain = nul < 0;
    for (const char *p = s; *p != 0 && plain; p++) {
        plain = (unsigned char)*p < 0x80 && *p != '\\';
    }
    if (plain) {
        duckdb_blob blob = duckdb_get_blob(v);
        nul = blob.data != NULL && tfsql_path_has_nul((const char *)blob.data, (size_t)blob.size);
        duckdb_free(blob.data);
    }
    return nul > 0;
}

/* v as a tfval (out); -1 when out of memory. */
static int to_tfval(duckdb_value v, tfval *out) {
    memset(out, 0, sizeof(*out));
    if (v == NULL || duckdb_is_null_value(v)) {
        return 0;
    }
    duckdb_logical_type t = duckdb_get_value_type(v); /* owned by the value */
    duckdb_type id = duckdb_get_type_id(t);
    if (id == DUCKDB_TYPE_LIST || id == DUCKDB_TYPE_STRUCT) {
        int is_struct = id == DUCKDB_TYPE_STRUCT;
        size_t n = is_struct ? (size_t)duckdb_struct_type_child_count(t)
                             : (size_t)duckdb_get_list_size(v);
        out->kind = is_struct ? TFV_STRUCT : TFV_LIST;
        out->items = (tfval *)calloc(n ? n : 1, sizeof(tfval));
        out->names = is_struct ? (char **)calloc(n ? n : 1, sizeof(char *)) : NULL;
        if (out->items == NULL || (is_struct && out->names == NULL)) {
            return -1;
        }
        out->n = n;
        for (size_t i = 0; i < n; i++) {
            duckdb_value child = is_struct ? duckdb_get_struct_child(v, (idx_t)i)
                                           : duckdb_get_list_child(v, (idx_t)i);
            int rc = to_tfval(child, &out->items[i]);
            duckdb_destroy_value(&child);
            if (is_struct) {
                char *name = duckdb_struct_type_child_name(t, (idx_t)i);
                out->names[i] = xstrdup(name != NULL ? name : "");
                duckdb_free(name);
                rc |= out->names[i] == NULL ? -1 : 0;
            }
            if (rc) {
                return -1;
            }
        }
        return 0;
    }
    out->text = value_text(v);
    if (out->text == NULL) {
        return -1;
    }
    if (id == DUCKDB_TYPE_BOOLEAN) {
        out->kind = TFV_BOOL;
        out->i = duckdb_get_bool(v);
    } else if (id == DUCKDB_TYPE_BIGINT || id == DUCKDB_TYPE_INTEGER || id == DUCKDB_TYPE_SMALLINT ||
               id == DUCKDB_TYPE_TINYINT || id == DUCKDB_TYPE_UBIGINT || id == DUCKDB_TYPE_UINTEGER ||
               id == DUCKDB_TYPE_USMALLINT || id == DUCKDB_TYPE_UTINYINT) {
        out->kind = TFV_INT;
        out->i = duckdb_get_int64(v);
    } else if (id == DUCKDB_TYPE_VARCHAR) {
        out->kind = TFV_TEXT;
        out->has_nul = text_has_nul(v, out->text);
    } else {
        out->kind = TFV_OTHER;
    }
    return 0;
}

/* The named parameter `name` of the call, when given, into a; -1 when out of memory. */
static int add_arg(duckdb_bind_info info, const char *name, tfargs *a) {
    duckdb_value v = duckdb_bind_get_named_parameter(info, name);
    if (v == NULL) {
        return 0;
    }
    tfval tv;
    int rc = to_tfval(v, &tv);
    duckdb_destroy_value(&v);
    return rc != 0 || tfargs_add(a, name, &tv) != 0 ? -1 : 0;
}

int bind_args(duckdb_bind_info info, const char *const *extra, tfargs *a) {
    memset(a, 0, sizeof(*a));
    duckdb_value src = duckdb_bind_get_parameter(info, 0);
    int rc = to_tfval(src, &a->source);
    duckdb_destroy_value(&src);
    for (const scan_param *p = scan_parameters(); rc == 0 && p->name != NULL; p++) {
        rc = add_arg(info, p->name, a);
    }
    for (size_t i = 0; rc == 0 && extra != NULL && extra[i] != NULL; i++) {
        rc = add_arg(info, extra[i], a);
    }
    return rc;
}
