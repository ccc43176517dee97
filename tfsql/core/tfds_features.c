/* A TFDS version directory's features.json: the column type of each top-level feature
 * (tfsql.tfds documents the mapping), read with the bounded JSON reader of json.c.
 *
 * The document is {"featuresDict": {"features": {name: feature, ...}}, ...}. A feature
 * is typed by the first of these that applies:
 *   "image" whose "encodingFormat" is png or jpeg (or absent)   binary (encoded bytes)
 *   "text"                                                      string
 *   "classLabel"                                                int64 (class_label set)
 *   "tensor" with "encoding" "none" (or absent) and a known     its dtype ("string" is
 *   "dtype"; a non-empty "shape"/"dimensions" makes it a list   binary, float16 and
 *                                                               bfloat16 are float32)
 * and is undescribed otherwise (the binding infers it from the records). */
#include <stdlib.h>
#include <string.h>

#include "core_internal.h"

static const char *const type_names[] = {
    NULL,     "binary", "string", "bool",   "int8",   "int16",   "int32",
    "int64",  "uint8",  "uint16", "uint32", "float32", "float64",
};

int tfsql_tfds_features_complete(const tfsql_tfds_feature *features, size_t n) {
    for (size_t i = 0; i < n; i++) {
        if (features[i].type == TFSQL_TFDS_UNDESCRIBED) {
            return 0;
        }
    }
    return 1;
}

const char *tfsql_tfds_type_name(int type) {
    return type > TFSQL_TFDS_UNDESCRIBED && type <= TFSQL_TFDS_FLOAT64 ? type_names[type] : NULL;
}

static int str_is(const json_str *s, const char *text) {
    return s->n == strlen(text) && memcmp(s->s, text, s->n) == 0;
}

static int dtype_type(const json_str *dtype) {
    if (str_is(dtype, "string")) {
        return TFSQL_TFDS_BINARY;
    }
    if (str_is(dtype, "float16") || str_is(dtype, "bfloat16")) {
        return TFSQL_TFDS_FLOAT32;
    }
    for (int t = TFSQL_TFDS_BOOL; t <= TFSQL_TFDS_FLOAT64; t++) {
        if (str_is(dtype, type_names[t])) {
            return t;
        }
    }
    return TFSQL_TFDS_UNDESCRIBED;
}

static int at(json_reader *r, char c) {
    json_skip_ws(r);
    return r->p < r->end && *r->p == c;
}

/* Read the object at r->p, calling `member` for each key (positioned at its value);
 * `member` reads or skips the value. A value that is not an object is skipped and
 * *is_object cleared. */
static int read_object(json_reader *r, int depth, int *is_object,
                       int (*member)(json_reader *, const json_str *, int, void *), void *ctx) {
    if (!at(r, '{')) {
        *is_object = 0;
        return json_skip_value(r, depth);
    }
    *is_object = 1;
    if (depth > JSON_MAX_DEPTH) {
        return json_fail(r, "JSON nested too deeply");
    }
    r->p++;
    if (at(r, '}')) {
        r->p++;
        return 0;
    }
    for (;;) {
        json_str key = {0};
        if (json_read_string(r, &key) || json_expect(r, ':')) {
            free(key.s);
            return -1;
        }
        int rc = member(r, &key, depth + 1, ctx);
        free(key.s);
        if (rc) {
            return -1;
        }
        if (at(r, ',')) {
            r->p++;
            continue;
        }
        return json_expect(r, '}');
    }
}

/* A string value into *out (replacing it), or skip another value (left NULL). */
static int read_text(json_reader *r, int depth, json_str *out) {
    free(out->s);
    out->s = NULL;
    out->n = 0;
    return at(r, '"') ? json_read_string(r, out) : json_skip_value(r, depth);
}

typedef struct {
    int image, image_ok, text, class_label, tensor, shaped;
    json_str encoding_format, encoding, dtype, description;
    int has_encoding;
} feature_desc;

static int image_member(json_reader *r, const json_str *key, int depth, void *ctx) {
    feature_desc *d = (feature_desc *)ctx;
    return str_is(key, "encodingFormat") ? read_text(r, depth, &d->encoding_format)
                                         : json_skip_value(r, depth);
}

static int shape_member(json_reader *r, const json_str *key, int depth, void *ctx) {
    feature_desc *d = (feature_desc *)ctx;
    if (!str_is(key, "dimensions")) {
        return json_skip_value(r, depth);
    }
    d->shaped = 0;
    if (at(r, '[')) {
        const char *open = r->p;
        r->p++;
        d->shaped = !at(r, ']');
        r->p = open;
    }
    return json_skip_value(r, depth);
}

static int tensor_member(json_reader *r, const json_str *key, int depth, void *ctx) {
    feature_desc *d = (feature_desc *)ctx;
    int object;
    if (str_is(key, "encoding")) {
        d->has_encoding = 1;
        return read_text(r, depth, &d->encoding);
    }
    if (str_is(key, "dtype")) {
        return read_text(r, depth, &d->dtype);
    }
    if (str_is(key, "shape")) {
        d->shaped = 0;
        return read_object(r, depth, &object, shape_member, d);
    }
    return json_skip_value(r, depth);
}

static int feature_member(json_reader *r, const json_str *key, int depth, void *ctx) {
    feature_desc *d = (feature_desc *)ctx;
    int object;
    if (str_is(key, "image")) {
        d->image = 1;
        free(d->encoding_format.s);
        d->encoding_format.s = NULL;
        if (read_object(r, depth, &object, image_member, d)) {
            return -1;
        }
        d->image_ok = object && (d->encoding_format.s == NULL ||
                                 str_is(&d->encoding_format, "png") ||
                                 str_is(&d->encoding_format, "jpeg"));
        return 0;
    }
    if (str_is(key, "text")) {
        d->text = 1;
        return json_skip_value(r, depth);
    }
    if (str_is(key, "classLabel")) {
        d->class_label = 1;
        return json_skip_value(r, depth);
    }
    if (str_is(key, "description")) {
        return read_text(r, depth, &d->description);
    }
    if (str_is(key, "tensor")) {
        if (read_object(r, depth, &object, tensor_member, d)) {
            return -1;
        }
        d->tensor = object;
        return 0;
    }
    return json_skip_value(r, depth);
}

typedef struct {
    tfsql_tfds_feature *items;
    size_t n, cap;
} feature_list;

static int features_member(json_reader *r, const json_str *key, int depth, void *ctx) {
    feature_list *l = (feature_list *)ctx;
    feature_desc d;
    memset(&d, 0, sizeof(d));
    int object;
    int rc = read_object(r, depth, &object, feature_member, &d);
    tfsql_tfds_feature f = {NULL, key->n, TFSQL_TFDS_UNDESCRIBED, 0, 0, NULL, 0};
    if (rc == 0 && object) {
        if (d.image_ok) {
            f.type = TFSQL_TFDS_BINARY;
        } else if (d.text) {
            f.type = TFSQL_TFDS_STRING;
        } else if (d.class_label) {
            f.type = TFSQL_TFDS_INT64;
            f.class_label = 1;
        } else if (d.tensor && (!d.has_encoding || (d.encoding.s != NULL &&
                                                   str_is(&d.encoding, "none")))) {
            f.type = d.dtype.s != NULL ? dtype_type(&d.dtype) : TFSQL_TFDS_UNDESCRIBED;
            f.is_list = f.type != TFSQL_TFDS_UNDESCRIBED && d.shaped;
        }
    }
    free(d.encoding_format.s);
    free(d.encoding.s);
    free(d.dtype.s);
    if (rc) {
        free(d.description.s);
        return -1;
    }
    f.description = d.description.s; /* the feature's "description" text, or NULL */
    f.description_len = d.description.n;
    f.name = (char *)malloc(key->n + 1);
    if (f.name == NULL) {
        free(f.description);
        return json_fail(r, "out of memory");
    }
    memcpy(f.name, key->s, key->n + 1);
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 16;
        tfsql_tfds_feature *items =
            (tfsql_tfds_feature *)realloc(l->items, cap * sizeof(tfsql_tfds_feature));
        if (items == NULL) {
            free(f.name);
            free(f.description);
            return json_fail(r, "out of memory");
        }
        l->items = items;
        l->cap = cap;
    }
    l->items[l->n++] = f;
    return 0;
}

typedef struct {
    feature_list list;
    int found;
} document;

static int dict_member(json_reader *r, const json_str *key, int depth, void *ctx) {
    document *doc = (document *)ctx;
    if (!str_is(key, "features")) {
        return json_skip_value(r, depth);
    }
    tfsql_tfds_features_free(doc->list.items, doc->list.n);
    memset(&doc->list, 0, sizeof(doc->list));
    return read_object(r, depth, &doc->found, features_member, &doc->list);
}

static int top_member(json_reader *r, const json_str *key, int depth, void *ctx) {
    document *doc = (document *)ctx;
    int object;
    if (!str_is(key, "featuresDict")) {
        return json_skip_value(r, depth);
    }
    tfsql_tfds_features_free(doc->list.items, doc->list.n);
    memset(&doc->list, 0, sizeof(doc->list));
    doc->found = 0;
    return read_object(r, depth, &object, dict_member, doc);
}

void tfsql_tfds_features_free(tfsql_tfds_feature *features, size_t n) {
    for (size_t i = 0; features != NULL && i < n; i++) {
        free(features[i].name);
        free(features[i].description);
    }
    free(features);
}

int tfsql_tfds_features(const char *data, size_t n, tfsql_tfds_feature **out, size_t *count) {
    json_reader r = {data, data + n, NULL};
    document doc;
    memset(&doc, 0, sizeof(doc));
    int object = 0;
    *out = NULL;
    *count = 0;
    int rc = n > TFSQL_TFDS_FEATURES_MAX_BYTES ? -1 : read_object(&r, 1, &object, top_member, &doc);
    if (rc == 0) {
        json_skip_ws(&r);
        rc = r.p == r.end ? 0 : -1;
    }
    if (rc || !object || !doc.found) {
        tfsql_tfds_features_free(doc.list.items, doc.list.n);
        return -1;
    }
    *out = doc.list.items;
    *count = doc.list.n;
    return 0;
}
