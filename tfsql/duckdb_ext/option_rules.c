/*
 * tfsql/duckdb_ext/option_rules.c -- the options of a bind and of COPY ... TO, from the
 * tables generated from the option spec (tfsql/options.py -> options_gen.h): defaults,
 * vocabularies, values, the names' suffixes. No DuckDB here: both DuckDB bindings (v1:
 * options.c, V2: tfsql/duckdb_v2/) read their engine's values into these.
 */

#include "ext_common.h"

#include "option_rules.h"

/* The generated record type codes are the core's. */
typedef char record_codes_agree[((int)TFSQL_RECORD_TYPE_EXAMPLE == (int)EXAMPLE &&
                                 (int)TFSQL_RECORD_TYPE_SEQUENCE_EXAMPLE == (int)SEQUENCE_EXAMPLE &&
                                 (int)TFSQL_RECORD_TYPE_BYTES == (int)RAW) ? 1 : -1];


void set_default_options(tfbind *b) {
    b->record_type = TFSQL_DEFAULT_RECORD_TYPE;
    b->compression = COMP_INFER;
    b->verify = TFSQL_DEFAULT_VERIFY_CHECKSUMS;
    b->skip_corrupt = TFSQL_DEFAULT_ON_CORRUPT == TFSQL_ON_CORRUPT_SKIP;
    b->hive = HIVE_AUTO;
    b->glob = TFSQL_DEFAULT_GLOB;
    b->infer_sample = TFSQL_DEFAULT_INFER_SAMPLE;
    b->infer_files = TFSQL_DEFAULT_INFER_FILES;
    b->infer_bytes = TFSQL_DEFAULT_INFER_BYTES;
    b->lists_always = TFSQL_DEFAULT_LISTS == TFSQL_LISTS_ALWAYS;
    b->missing_insert = TFSQL_DEFAULT_MISSING_COLUMNS == TFSQL_MISSING_COLUMNS_INSERT;
    b->max_record_bytes = TFSQL_DEFAULT_MAX_RECORD_BYTES;
    b->batch_bytes = TFSQL_DEFAULT_BATCH_BYTES;
}

/* The code of `text` in `words` (matched as Python's checks do: trimmed, any case). */
int find_word(const tfsql_word *words, const char *text, int *code) {
    while (*text == ' ' || *text == '\t' || *text == '\n') {
        text++;
    }
    size_t n = strlen(text);
    while (n > 0 && (text[n - 1] == ' ' || text[n - 1] == '\t' || text[n - 1] == '\n')) {
        n--;
    }
    for (const tfsql_word *w = words; w->word != NULL; w++) {
        if (strlen(w->word) == n && strncasecmp(w->word, text, n) == 0) {
            *code = w->code;
            return 1;
        }
    }
    return 0;
}

/* Store option `option`'s value: a code (choices), 0/1 (booleans), a count (-1: all)
 * or a name (owned). */
void set_option(tfbind *b, int option, long long value, char *name) {
    switch (option) {
    case TFSQL_OPTION_RECORD_TYPE:
        b->record_type = (int)value;
        break;
    case TFSQL_OPTION_COMPRESSION:
        b->compression = value == TFSQL_COMPRESSION_GZIP   ? COMP_GZIP
                         : value == TFSQL_COMPRESSION_ZLIB ? COMP_ZLIB
                         : value == TFSQL_COMPRESSION_NONE ? COMP_NONE
                                                           : COMP_INFER;
        break;
    case TFSQL_OPTION_VERIFY_CHECKSUMS:
        b->verify = (int)value;
        break;
    case TFSQL_OPTION_ON_CORRUPT:
        b->skip_corrupt = value == TFSQL_ON_CORRUPT_SKIP;
        break;
    case TFSQL_OPTION_HIVE_PARTITIONING:
        b->hive = value ? HIVE_ON : HIVE_OFF;
        break;
    case TFSQL_OPTION_INCLUDE_FILE_PATHS:
        free(b->filename_col);
        b->filename_col = name;
        name = NULL;
        break;
    case TFSQL_OPTION_INFER_SAMPLE:
        b->infer_sample = value;
        break;
    case TFSQL_OPTION_INFER_FILES:
        b->infer_files = value;
        break;
    case TFSQL_OPTION_INFER_BYTES:
        b->infer_bytes = value;
        break;
    case TFSQL_OPTION_LISTS:
        b->lists_always = value == TFSQL_LISTS_ALWAYS;
        break;
    case TFSQL_OPTION_MISSING_COLUMNS:
        b->missing_insert = value == TFSQL_MISSING_COLUMNS_INSERT;
        break;
    case TFSQL_OPTION_GLOB:
        b->glob = (int)value;
        break;
    case TFSQL_OPTION_MAX_RECORD_BYTES:
        b->max_record_bytes = value;
        break;
    case TFSQL_OPTION_BATCH_BYTES:
        b->batch_bytes = value;
        break;
    default: /* schema := / columns := are read by the bind (user_columns) */
        break;
    }
    free(name);
}

/* ------------------------------------------------------------------------------------ */
/* COPY ... TO (FORMAT tfrecord): its options, from the generated table                */
/* ------------------------------------------------------------------------------------ */

/* The generated COPY codes are the core's and the extension's. */
typedef char copy_codes_agree[((int)TFSQL_COPY_COMPRESSION_NONE == (int)COMP_NONE &&
                               (int)TFSQL_COPY_COMPRESSION_GZIP == (int)COMP_GZIP &&
                               (int)TFSQL_COPY_COMPRESSION_ZLIB == (int)COMP_ZLIB &&
                               (int)TFSQL_COPY_COMPRESSION_AUTO == (int)COMP_INFER) ? 1 : -1];

static int flag_value(const char *text) {
    if (text == NULL) {
        return 1; /* a flag given alone */
    }
    if (!strcasecmp(text, "true") || !strcmp(text, "1") || !strcasecmp(text, "on")) {
        return 1;
    }
    if (!strcasecmp(text, "false") || !strcmp(text, "0") || !strcasecmp(text, "off")) {
        return 0;
    }
    return -1;
}

static int copy_value(const tfsql_copy_param *p, const char *text, int *value, char *err);

int read_copy_option(copy_settings *s, const char *name, const char *text, char *err) {
    const tfsql_copy_param *p = tfsql_copy_params;
    while (p->name != NULL && strcasecmp(p->name, name) != 0) {
        p++;
    }
    if (p->name == NULL) {
        snprintf(err, ERRLEN,
                 "Unrecognized option \"%s\" for COPY ... (FORMAT tfrecord); valid options: %s",
                 name, TFSQL_COPY_VALID);
        return -1;
    }
    if (p->option < 0) {
        snprintf(err, ERRLEN,
                 "COPY option %s (%s) is not available in the extension's native COPY, where "
                 "DuckDB decides the files; tfsql.write_tfrecord (Python) and tfsql convert "
                 "(the command line) take it, writing the query's rows themselves",
                 p->name, p->doc);
        return -1;
    }
    int value = 0;
    if (copy_value(p, text, &value, err)) {
        return -1;
    }
    switch (p->option) {
    case TFSQL_COPY_OPTION_RECORD_TYPE:
        s->record_type = value;
        break;
    case TFSQL_COPY_OPTION_COMPRESSION:
        if (s->compression_by != NULL) {
            snprintf(err, ERRLEN, "COPY options %s and %s contradict each other; give one",
                     s->compression_by, p->name);
            return -1;
        }
        s->compression_by = p->name;
        s->compression = value;
        break;
    case TFSQL_COPY_OPTION_COMPRESSION_LEVEL:
        s->level = value;
        break;
    default:
        s->index = value;
        break;
    }
    return 0;
}

/* The value of COPY option `p` given as `text`: a choice's code, a level, 0 or 1. */
static int copy_value(const tfsql_copy_param *p, const char *text, int *value, char *err) {
    if (p->value == TFSQL_VALUE_CHOICE) {
        if (text == NULL || !find_word(p->words, text, value)) {
            snprintf(err, ERRLEN, "COPY option %s expects %s, got '%s'", p->name, p->choices,
                     text ? text : "");
            return -1;
        }
        return 0;
    }
    if (p->value == TFSQL_VALUE_LEVEL) {
        char *end = NULL;
        long level = text ? strtol(text, &end, 10) : -1;
        if (text == NULL || *end != '\0' || level < 0 || level > 9) {
            snprintf(err, ERRLEN, "COPY option %s expects 0 to 9, got %s", p->name,
                     text ? text : "no value");
            return -1;
        }
        *value = (int)level;
        return 0;
    }
    *value = flag_value(text); /* TFSQL_VALUE_FLAG */
    if (*value < 0) {
        snprintf(err, ERRLEN, "COPY option %s expects a boolean, got %s", p->name, text);
        return -1;
    }
    return 0;
}

int name_compression(const char *name, size_t *suffix_len) {
    for (const tfsql_word *w = tfsql_name_compressions; w->word != NULL; w++) {
        if (ends_with_ci(name, w->word)) {
            if (suffix_len != NULL) {
                *suffix_len = strlen(w->word);
            }
            return w->code == TFSQL_COMPRESSION_GZIP ? COMP_GZIP : COMP_ZLIB;
        }
    }
    return COMP_NONE;
}

int is_tfrecord_suffix(const char *name) {
    size_t n = strlen(name);
    for (int b = 0; tfsql_tfrecord_bases[b] != NULL; b++) {
        if (ends_with_ci(name, tfsql_tfrecord_bases[b])) {
            return 1;
        }
        for (const tfsql_word *w = tfsql_name_compressions; w->word != NULL; w++) {
            size_t k = strlen(w->word), m = strlen(tfsql_tfrecord_bases[b]);
            if (n >= k + m && ends_with_ci(name, w->word) &&
                strncasecmp(name + n - k - m, tfsql_tfrecord_bases[b], m) == 0) {
                return 1;
            }
        }
    }
    return 0;
}

/* -- the named parameters of tfrecord_scan (both bindings read their values into tfargs) -- */

/* Read one given parameter; -1 with err set when its value is refused. */
static int read_param(tfbind *b, const tfsql_param *p, const tfval *v, const char *fname,
                      char *err) {
    switch (p->value) {
    case TFSQL_VALUE_BOOL: {
        int x = v->i != 0;
        set_option(b, p->option, p->words != NULL ? (x ? p->if_true : p->if_false) : x, NULL);
        return 0;
    }
    case TFSQL_VALUE_COUNT: {
        int64_t x = v->i;
        if (x < 1) {
            snprintf(err, ERRLEN, "%s: %s must be a positive integer, not %lld", fname, p->name,
                     (long long)x);
            return -1;
        }
        set_option(b, p->option, x, NULL);
        return 0;
    }
    case TFSQL_VALUE_COUNT_OR_ALL: {
        int64_t x = v->i;
        if (x == 0) {
            snprintf(err, ERRLEN, "%s: %s must be a positive integer or None (all of them), not 0",
                     fname, p->name);
            return -1;
        }
        set_option(b, p->option, x < 0 ? -1 : x, NULL);
        return 0;
    }
    case TFSQL_VALUE_CHOICE: {
        const char *text = v->text != NULL ? v->text : "";
        int code;
        if (!find_word(p->words, text, &code)) {
            if (p->unknown_wording) {
                snprintf(err, ERRLEN, "%s: unknown %s '%s'; use %s", fname, p->name, text, p->what);
            } else {
                snprintf(err, ERRLEN, "%s: %s must be %s, not '%s'", fname, p->name, p->what, text);
            }
            return -1;
        }
        set_option(b, p->option, code, NULL);
        return 0;
    }
    case TFSQL_VALUE_BOOL_OR_NAME:
        if (v->kind == TFV_BOOL) {
            int x = v->i != 0;
            set_option(b, p->option, x, x && p->true_text ? xstrdup(p->true_text) : NULL);
            return 0;
        }
        if (v->kind == TFV_TEXT) {
            if (v->text == NULL || v->text[0] == 0) {
                snprintf(err, ERRLEN, "%s: %s must be a column name, not ''", fname, p->name);
                return -1;
            }
            set_option(b, p->option, 1, xstrdup(v->text));
            return 0;
        }
        snprintf(err, ERRLEN, "%s: parameter %s expects BOOLEAN or VARCHAR", fname, p->name);
        return -1;
    default: /* TFSQL_VALUE_TYPES: the bind reads schema := / columns := */
        return 0;
    }
}

/* A NULL argument is refused naming its parameter. */
static int refuse_null(const tfval *v, const char *name, const char *fname, char *err) {
    if (v->kind != TFV_NULL) {
        return 0;
    }
    snprintf(err, ERRLEN, "%s: parameter %s is NULL; give it a value, or leave it out for its "
                          "default", fname, name);
    return -1;
}

int parse_options(const tfargs *a, tfbind *b, const char *fname, char *err) {
    const char *given_by[TFSQL_OPTION_COUNT] = {0};
    for (const tfsql_param *p = tfsql_params; p->name != NULL; p++) {
        const tfval *v = tfargs_get(a, p->name);
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
        if (rc) {
            return -1;
        }
    }
    for (int i = 0; tfsql_compat_params[i] != NULL; i++) {
        const tfval *v = tfargs_get(a, tfsql_compat_params[i]);
        if (v != NULL && refuse_null(v, tfsql_compat_params[i], fname, err)) {
            return -1;
        }
    }
    return 0;
}

/* The type a parameter is registered with. */
static int param_type(int value) {
    switch (value) {
    case TFSQL_VALUE_BOOL:
        return TT_BOOLEAN;
    case TFSQL_VALUE_COUNT:
    case TFSQL_VALUE_COUNT_OR_ALL:
        return TT_BIGINT;
    case TFSQL_VALUE_CHOICE:
    case TFSQL_VALUE_NAME:
        return TT_VARCHAR;
    default:
        return TT_ANY;
    }
}

const scan_param *scan_parameters(void) {
    static scan_param params[sizeof(tfsql_params) / sizeof(tfsql_params[0]) +
                             sizeof(tfsql_compat_params) / sizeof(tfsql_compat_params[0])];
    static int done;
    if (!__atomic_load_n(&done, __ATOMIC_ACQUIRE)) {
        size_t n = 0;
        for (const tfsql_param *p = tfsql_params; p->name != NULL; p++) {
            params[n].name = p->name;
            params[n++].type = param_type(p->value);
        }
        for (int i = 0; tfsql_compat_params[i] != NULL; i++) {
            params[n].name = tfsql_compat_params[i];
            params[n++].type = TT_BOOLEAN;
        }
        params[n].name = NULL;
        __atomic_store_n(&done, 1, __ATOMIC_RELEASE);
    }
    return params;
}
