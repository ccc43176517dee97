/* The column description tfsql writers keep beside their data (features.json, TFDS's
 * FeaturesDict JSON with each column's Arrow type in its "description"): type text,
 * rendering the document, and reading it back. The contract is in tfsql_core.h; the
 * pure-Python twin is tfsql/_reference/description.py (same bytes). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core_internal.h"

static const char *const leaf_names[] = {
    NULL,       "null",       "bool",         "int8",    "int16",        "int32",
    "int64",    "uint8",      "uint16",       "uint32",  "uint64",       "float16",
    "float32",  "float64",    "string",       "large_string", "binary",  "large_binary",
    "date32",   "date64",     "fixed_size_binary", "decimal128", "decimal256", "timestamp",
    "time32",   "time64",     "duration",
};
#define NLEAF ((int)(sizeof(leaf_names) / sizeof(leaf_names[0])))
static const char *const unit_names[] = {"s", "ms", "us", "ns"};

#define DATA_PREFIX "tfsql type: "
#define PARTITION_PREFIX "tfsql partition type: "

int tfsql_is_description_name(const char *name, size_t n) {
    return n == sizeof(TFSQL_DESCRIPTION_NAME) - 1 &&
           memcmp(name, TFSQL_DESCRIPTION_NAME, n) == 0;
}

/* -- type text ------------------------------------------------------------------------ */

typedef struct {
    const char *p, *end;
} cursor;

static int eat(cursor *c, const char *word) {
    size_t k = strlen(word);
    if ((size_t)(c->end - c->p) < k || memcmp(c->p, word, k) != 0) {
        return 0;
    }
    c->p += k;
    return 1;
}

static int number(cursor *c, int64_t *out, int allow_negative) {
    int negative = allow_negative && eat(c, "-");
    int64_t v = 0;
    const char *start = c->p;
    while (c->p < c->end && *c->p >= '0' && *c->p <= '9' && c->p - start < 18) {
        v = v * 10 + (*c->p - '0');
        c->p++;
    }
    *out = negative ? -v : v;
    return c->p > start && !(c->p < c->end && *c->p >= '0' && *c->p <= '9');
}

static int comma(cursor *c) {
    if (!eat(c, ",")) {
        return 0;
    }
    eat(c, " ");
    return 1;
}

static int parse_leaf(cursor *c, tfsql_type *t) {
    /* the longest name that matches (int8 before int16 ... are distinct by length) */
    int best = 0;
    size_t best_len = 0;
    for (int i = 1; i < NLEAF; i++) {
        size_t k = strlen(leaf_names[i]);
        if (k > best_len && (size_t)(c->end - c->p) >= k && memcmp(c->p, leaf_names[i], k) == 0) {
            best = i;
            best_len = k;
        }
    }
    if (best == 0) {
        return -1;
    }
    c->p += best_len;
    t->leaf = best;
    int64_t a, b;
    switch (best) {
    case TFSQL_TYPE_FIXED_BINARY:
        if (!eat(c, "[") || !number(c, &a, 0) || a < 1 || a > INT32_MAX || !eat(c, "]")) {
            return -1;
        }
        t->width = a;
        return 0;
    case TFSQL_TYPE_DECIMAL128:
    case TFSQL_TYPE_DECIMAL256:
        if (!eat(c, "(") || !number(c, &a, 0) || !comma(c) || !number(c, &b, 1) || !eat(c, ")") ||
            a < 1 || a > (best == TFSQL_TYPE_DECIMAL128 ? 38 : 76) || b > a || b < -a) {
            return -1;
        }
        t->precision = (int)a;
        t->scale = (int)b;
        return 0;
    case TFSQL_TYPE_TIMESTAMP:
    case TFSQL_TYPE_TIME32:
    case TFSQL_TYPE_TIME64:
    case TFSQL_TYPE_DURATION: {
        if (!eat(c, "[")) {
            return -1;
        }
        int unit = -1;
        for (int u = 3; u >= 0 && unit < 0; u--) { /* "ms" "us" "ns" before "s" */
            if (eat(c, unit_names[u])) {
                unit = u;
            }
        }
        if (unit < 0 || (best == TFSQL_TYPE_TIME32 && unit > TFSQL_UNIT_MS) ||
            (best == TFSQL_TYPE_TIME64 && unit < TFSQL_UNIT_US)) {
            return -1;
        }
        t->unit = unit;
        if (best == TFSQL_TYPE_TIMESTAMP && comma(c)) {
            if (!eat(c, "tz=")) {
                return -1;
            }
            const char *z = c->p;
            while (c->p < c->end && *c->p != ']') {
                c->p++;
            }
            size_t zn = (size_t)(c->p - z);
            if (zn == 0 || zn >= TFSQL_TYPE_TZ_MAX) {
                return -1;
            }
            memcpy(t->tz, z, zn);
            t->tz[zn] = 0;
        }
        return eat(c, "]") ? 0 : -1;
    }
    default:
        return 0;
    }
}

static int parse_type(cursor *c, tfsql_type *t) {
    if (eat(c, "fixed_shape_tensor<")) {
        if (t->nwrap == TFSQL_TYPE_MAX_WRAP || parse_leaf(c, t) || t->leaf == TFSQL_TYPE_NULL ||
            !eat(c, ">[")) {
            return -1;
        }
        t->wrap[t->nwrap++] = TFSQL_WRAP_TENSOR;
        do {
            int64_t d;
            if (t->ndim == TFSQL_TYPE_MAX_DIMS || !number(c, &d, 0) || d < 1) {
                return -1;
            }
            t->shape[t->ndim++] = d;
        } while (eat(c, ","));
        return eat(c, "]") ? 0 : -1;
    }
    int wrap = eat(c, "list<")                ? TFSQL_WRAP_LIST
               : eat(c, "large_list<")        ? TFSQL_WRAP_LARGE_LIST
               : eat(c, "fixed_size_list<")   ? TFSQL_WRAP_FIXED_LIST
                                              : 0;
    if (wrap == 0) {
        return parse_leaf(c, t);
    }
    if (t->nwrap == TFSQL_TYPE_MAX_WRAP) {
        return -1;
    }
    int at = t->nwrap++;
    t->wrap[at] = wrap;
    if (parse_type(c, t) || !eat(c, ">")) {
        return -1;
    }
    if (wrap == TFSQL_WRAP_FIXED_LIST) {
        int64_t size;
        if (!eat(c, "[") || !number(c, &size, 0) || size < 1 || size > INT32_MAX || !eat(c, "]")) {
            return -1;
        }
        t->wrap_size[at] = size;
    }
    return 0;
}

int tfsql_type_parse(const char *text, size_t n, tfsql_type *out) {
    memset(out, 0, sizeof(*out));
    cursor c = {text, text + n};
    if (parse_type(&c, out) || c.p != c.end) {
        memset(out, 0, sizeof(*out));
        return -1;
    }
    return 0;
}

static int valid(const tfsql_type *t) {
    if (t->leaf <= TFSQL_TYPE_NONE || t->leaf >= NLEAF || t->nwrap < 0 ||
        t->nwrap > TFSQL_TYPE_MAX_WRAP || t->unit < 0 || t->unit > TFSQL_UNIT_NS) {
        return 0;
    }
    for (int i = 0; i < t->nwrap; i++) {
        if (t->wrap[i] < TFSQL_WRAP_LIST || t->wrap[i] > TFSQL_WRAP_TENSOR ||
            (t->wrap[i] == TFSQL_WRAP_TENSOR && (i != t->nwrap - 1 || t->ndim < 1 ||
                                                 t->ndim > TFSQL_TYPE_MAX_DIMS))) {
            return 0;
        }
    }
    return memchr(t->tz, 0, sizeof(t->tz)) != NULL;
}

int tfsql_type_render(const tfsql_type *t, char *out, size_t cap) {
    if (!valid(t)) {
        return -1;
    }
    char leaf[TFSQL_TYPE_TEXT_MAX];
    const char *name = leaf_names[t->leaf];
    const char *unit = unit_names[t->unit];
    switch (t->leaf) {
    case TFSQL_TYPE_FIXED_BINARY:
        snprintf(leaf, sizeof(leaf), "%s[%lld]", name, (long long)t->width);
        break;
    case TFSQL_TYPE_DECIMAL128:
    case TFSQL_TYPE_DECIMAL256:
        snprintf(leaf, sizeof(leaf), "%s(%d, %d)", name, t->precision, t->scale);
        break;
    case TFSQL_TYPE_TIMESTAMP:
        if (t->tz[0]) {
            snprintf(leaf, sizeof(leaf), "%s[%s, tz=%s]", name, unit, t->tz);
        } else {
            snprintf(leaf, sizeof(leaf), "%s[%s]", name, unit);
        }
        break;
    case TFSQL_TYPE_TIME32:
    case TFSQL_TYPE_TIME64:
    case TFSQL_TYPE_DURATION:
        snprintf(leaf, sizeof(leaf), "%s[%s]", name, unit);
        break;
    default:
        snprintf(leaf, sizeof(leaf), "%s", name);
    }
    /* wrappers, outermost first: prefixes, then the leaf, then suffixes inside out */
    char text[TFSQL_TYPE_TEXT_MAX * 2];
    size_t o = 0;
    text[0] = 0;
    for (int i = 0; i < t->nwrap; i++) {
        static const char *const opens[] = {"", "list<", "large_list<", "fixed_size_list<",
                                            "fixed_shape_tensor<"};
        o += (size_t)snprintf(text + o, sizeof(text) - o, "%s", opens[t->wrap[i]]);
    }
    o += (size_t)snprintf(text + o, sizeof(text) - o, "%s", leaf);
    for (int i = t->nwrap - 1; i >= 0 && o < sizeof(text); i--) {
        if (t->wrap[i] == TFSQL_WRAP_FIXED_LIST) {
            o += (size_t)snprintf(text + o, sizeof(text) - o, ">[%lld]", (long long)t->wrap_size[i]);
        } else if (t->wrap[i] == TFSQL_WRAP_TENSOR) {
            o += (size_t)snprintf(text + o, sizeof(text) - o, ">[");
            for (int d = 0; d < t->ndim && o < sizeof(text); d++) {
                o += (size_t)snprintf(text + o, sizeof(text) - o, d ? ",%lld" : "%lld",
                                      (long long)t->shape[d]);
            }
            o += (size_t)snprintf(text + o, sizeof(text) - o, "]");
        } else {
            o += (size_t)snprintf(text + o, sizeof(text) - o, ">");
        }
    }
    if (o >= sizeof(text) || o + 1 > cap) {
        return -1;
    }
    memcpy(out, text, o + 1);
    return (int)o;
}

/* -- rendering the document ------------------------------------------------------------- */

typedef struct {
    char *data;
    size_t len, cap;
} text_buffer;

static int text_put(text_buffer *b, const char *s, size_t n) {
    if (b->cap - b->len < n + 1) {
        size_t cap = b->cap ? b->cap : 1024;
        while (cap - b->len < n + 1) {
            cap *= 2;
        }
        char *data = (char *)realloc(b->data, cap);
        if (data == NULL) {
            return -1;
        }
        b->data = data;
        b->cap = cap;
    }
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = 0;
    return 0;
}

/* The TFDS dtype of the kind the records hold for a leaf. */
static const char *tfds_dtype(int leaf) {
    switch (leaf) {
    case TFSQL_TYPE_BOOL:
    case TFSQL_TYPE_INT8:
    case TFSQL_TYPE_INT16:
    case TFSQL_TYPE_INT32:
    case TFSQL_TYPE_INT64:
    case TFSQL_TYPE_UINT8:
    case TFSQL_TYPE_UINT16:
    case TFSQL_TYPE_UINT32:
    case TFSQL_TYPE_UINT64:
    case TFSQL_TYPE_FLOAT16:
    case TFSQL_TYPE_FLOAT32:
    case TFSQL_TYPE_FLOAT64:
        return leaf_names[leaf];
    case TFSQL_TYPE_STRING:
    case TFSQL_TYPE_LARGE_STRING:
    case TFSQL_TYPE_BINARY:
    case TFSQL_TYPE_LARGE_BINARY:
    case TFSQL_TYPE_FIXED_BINARY:
        return "string";
    case TFSQL_TYPE_DECIMAL128:
    case TFSQL_TYPE_DECIMAL256:
        return "float32";
    default: /* null, dates, times, timestamps, durations: the stored integer */
        return "int64";
    }
}

/* JSON string text as Python's json.dumps(ensure_ascii=False) writes it. */
static int put_json_string(text_buffer *b, const char *s, size_t n) {
    if (text_put(b, "\"", 1)) {
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        char esc[8];
        const char *piece = NULL;
        size_t k = 2;
        switch (ch) {
        case '"': piece = "\\\""; break;
        case '\\': piece = "\\\\"; break;
        case '\n': piece = "\\n"; break;
        case '\r': piece = "\\r"; break;
        case '\t': piece = "\\t"; break;
        case '\b': piece = "\\b"; break;
        case '\f': piece = "\\f"; break;
        default:
            if (ch < 0x20) {
                snprintf(esc, sizeof(esc), "\\u%04x", ch);
                piece = esc;
                k = 6;
            }
        }
        if (piece != NULL ? text_put(b, piece, k) : text_put(b, &s[i], 1)) {
            return -1;
        }
    }
    return text_put(b, "\"", 1);
}

static int put(text_buffer *b, const char *s) { return text_put(b, s, strlen(s)); }

static int put_column(text_buffer *b, const tfsql_column *c, int last) {
    char text[TFSQL_TYPE_TEXT_MAX * 2];
    if (tfsql_type_render(&c->type, text, sizeof(text)) < 0) {
        return -1;
    }
    char dims[TFSQL_TYPE_MAX_WRAP + TFSQL_TYPE_MAX_DIMS][24];
    int ndims = 0;
    for (int i = 0; i < c->type.nwrap; i++) {
        if (c->type.wrap[i] == TFSQL_WRAP_TENSOR) {
            for (int d = 0; d < c->type.ndim; d++) {
                snprintf(dims[ndims++], sizeof(dims[0]), "%lld", (long long)c->type.shape[d]);
            }
        } else if (c->type.wrap[i] == TFSQL_WRAP_FIXED_LIST) {
            snprintf(dims[ndims++], sizeof(dims[0]), "%lld", (long long)c->type.wrap_size[i]);
        } else {
            snprintf(dims[ndims++], sizeof(dims[0]), "-1");
        }
    }
    char description[TFSQL_TYPE_TEXT_MAX * 2 + 32];
    snprintf(description, sizeof(description), "%s%s", c->partition ? PARTITION_PREFIX : DATA_PREFIX,
             text);
    if (put(b, "      ") || put_json_string(b, c->name, c->name_len) || put(b, ": {\n        \"description\": ") ||
        put_json_string(b, description, strlen(description)) ||
        put(b, ",\n        \"pythonClassName\": "
               "\"tensorflow_datasets.core.features.tensor_feature.Tensor\",\n"
               "        \"tensor\": {\n          \"dtype\": \"") ||
        put(b, tfds_dtype(c->type.leaf)) ||
        put(b, "\",\n          \"encoding\": \"none\",\n          \"shape\": {")) {
        return -1;
    }
    if (ndims > 0) {
        if (put(b, "\n            \"dimensions\": [")) {
            return -1;
        }
        for (int d = 0; d < ndims; d++) {
            if (put(b, d ? ",\n              \"" : "\n              \"") || put(b, dims[d]) ||
                put(b, "\"")) {
                return -1;
            }
        }
        if (put(b, "\n            ]\n          ")) {
            return -1;
        }
    }
    return put(b, "}\n        }\n      }") || put(b, last ? "\n" : ",\n");
}

int tfsql_description_render(const tfsql_column *columns, size_t n, char **out, size_t *len) {
    text_buffer b = {NULL, 0, 0};
    *out = NULL;
    *len = 0;
    int rc = put(&b, n ? "{\n  \"featuresDict\": {\n    \"features\": {\n"
                       : "{\n  \"featuresDict\": {\n    \"features\": {}\n  },\n");
    for (size_t i = 0; rc == 0 && i < n; i++) {
        rc = put_column(&b, &columns[i], i + 1 == n);
    }
    if (rc == 0 && n) {
        rc = put(&b, "    }\n  },\n");
    }
    if (rc == 0) {
        rc = put(&b, "  \"pythonClassName\": "
                     "\"tensorflow_datasets.core.features.features_dict.FeaturesDict\"\n}\n");
    }
    if (rc) {
        free(b.data);
        return -1;
    }
    *len = b.len;
    *out = b.data;
    return 0;
}

/* -- reading it back --------------------------------------------------------------------- */

void tfsql_description_free(tfsql_column *columns, size_t n) {
    for (size_t i = 0; columns != NULL && i < n; i++) {
        free(columns[i].name);
    }
    free(columns);
}

static int starts(const char *s, size_t n, const char *prefix) {
    size_t k = strlen(prefix);
    return n >= k && memcmp(s, prefix, k) == 0;
}

int tfsql_description_parse(const char *data, size_t n, tfsql_column **out, size_t *count) {
    tfsql_tfds_feature *features = NULL;
    size_t nf = 0;
    *out = NULL;
    *count = 0;
    if (tfsql_tfds_features(data, n, &features, &nf)) {
        return -1;
    }
    if (nf == 0) { /* no column: nothing a tfsql writer writes (a TFDS stub, say) */
        tfsql_tfds_features_free(features, nf);
        return 1;
    }
    tfsql_column *cols = (tfsql_column *)calloc(nf ? nf : 1, sizeof(tfsql_column));
    int rc = cols == NULL ? -1 : 0;
    for (size_t i = 0; rc == 0 && i < nf; i++) {
        const tfsql_tfds_feature *f = &features[i];
        const char *d = f->description;
        size_t dn = f->description_len, skip;
        if (d != NULL && starts(d, dn, DATA_PREFIX)) {
            skip = strlen(DATA_PREFIX);
        } else if (d != NULL && starts(d, dn, PARTITION_PREFIX)) {
            skip = strlen(PARTITION_PREFIX);
            cols[i].partition = 1;
        } else {
            rc = 1; /* a feature without a tfsql type: TFDS's own features.json */
            break;
        }
        if (tfsql_type_parse(d + skip, dn - skip, &cols[i].type)) {
            rc = 1;
            break;
        }
        cols[i].name = f->name;
        cols[i].name_len = f->name_len;
        features[i].name = NULL; /* moved */
        *count = i + 1;
    }
    tfsql_tfds_features_free(features, nf);
    if (rc) {
        tfsql_description_free(cols, *count);
        *count = 0;
        return rc;
    }
    *out = cols;
    *count = nf;
    return 0;
}

size_t tfsql_written_partitions(int user_typed, int hive_off, const char *const *hive,
                                const size_t *hlens, size_t nhive, const char *const *described,
                                const size_t *dlens, size_t ndescribed, long long *typed_by) {
    int applies = !user_typed && !hive_off;
    for (size_t i = 0; i < nhive; i++) {
        typed_by[i] = -1;
        for (size_t d = 0; applies && d < ndescribed && typed_by[i] < 0; d++) {
            if (hlens[i] == dlens[d] && memcmp(hive[i], described[d], dlens[d]) == 0) {
                typed_by[i] = (long long)d; /* the write's type, not the values' look */
            }
        }
    }
    return applies && nhive == 0 ? ndescribed : 0; /* no key=value directory: null columns */
}

int tfsql_description_root(const char *const *roots, const size_t *lens, size_t n, int layout) {
    if (n == 0 || layout != TFSQL_LAYOUT_NONE || roots[0] == NULL) {
        return 0;
    }
    for (size_t i = 1; i < n; i++) {
        if (roots[i] == NULL || lens[i] != lens[0] || memcmp(roots[i], roots[0], lens[0]) != 0) {
            return 0; /* named directly, or below another root */
        }
    }
    return 1;
}
