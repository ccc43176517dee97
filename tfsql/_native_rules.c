/*
 * tfsql/_native_rules.c -- the Python binding of the core's dataset rules
 * (tfsql/core: paths.c, hive.c, layout.c, tfds_features.c, detect.c, intent.c): which listed paths are
 * data, hive key=value directories, TFDS / TFX splits, compression detection and the
 * crash-recovery intent record. Part of the module tfsql._native (contract:
 * tfsql/_native.pyi); the module's init adds tfsql_rules_methods.
 *
 * Paths cross as str; they are encoded as UTF-8 with surrogateescape (the form Python
 * gives local file names it could not decode), and decoded the same way.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdlib.h>
#include <string.h>

#include "_native_rules.h"
#include "core/tfsql_core.h"

static PyObject *encode_path(PyObject *text) {
    if (!PyUnicode_Check(text)) {
        PyErr_Format(PyExc_TypeError, "expected str, not %.100s", Py_TYPE(text)->tp_name);
        return NULL;
    }
    return PyUnicode_AsEncodedString(text, "utf-8", "surrogateescape");
}

/* `text` encoded, kept alive by the list `keep`: its bytes, or NULL with an exception. */
static const char *encode_kept(PyObject *keep, PyObject *text) {
    PyObject *b = encode_path(text);
    if (b == NULL || PyList_Append(keep, b)) {
        Py_XDECREF(b);
        return NULL;
    }
    Py_DECREF(b);
    return PyBytes_AS_STRING(b);
}

static PyObject *decode_path(const char *s, size_t n) {
    return PyUnicode_DecodeUTF8(s, (Py_ssize_t)n, "surrogateescape");
}

/* A yes / no rule over one name. */
static PyObject *name_rule(PyObject *arg, int (*rule)(const char *, size_t)) {
    PyObject *b = encode_path(arg);
    if (b == NULL) {
        return NULL;
    }
    int yes = rule(PyBytes_AS_STRING(b), (size_t)PyBytes_GET_SIZE(b));
    Py_DECREF(b);
    return PyBool_FromLong(yes);
}

static PyObject *rules_is_hidden_name(PyObject *self, PyObject *arg) {
    (void)self;
    return name_rule(arg, tfsql_is_hidden_name);
}

static PyObject *rules_glob_root(PyObject *self, PyObject *arg) {
    (void)self;
    PyObject *b = encode_path(arg);
    if (b == NULL) {
        return NULL;
    }
    size_t n = tfsql_glob_root(PyBytes_AS_STRING(b), (size_t)PyBytes_GET_SIZE(b));
    PyObject *out = decode_path(PyBytes_AS_STRING(b), n);
    Py_DECREF(b);
    return out;
}

static PyObject *rules_glob_exempts(PyObject *self, PyObject *arg) {
    (void)self;
    return name_rule(arg, tfsql_glob_exempts);
}

/* keep_listed(rel, exempt): exempt a tuple of glob components */
static PyObject *rules_keep_listed(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *rel, *exempt;
    if (!PyArg_ParseTuple(args, "UO!:keep_listed", &rel, &PyTuple_Type, &exempt)) {
        return NULL;
    }
    Py_ssize_t n = PyTuple_GET_SIZE(exempt);
    PyObject *keep = PyList_New(0);
    const char **patterns = (const char **)malloc(((size_t)n + 1) * sizeof(char *));
    PyObject *result = NULL;
    if (keep == NULL || patterns == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        if ((patterns[i] = encode_kept(keep, PyTuple_GET_ITEM(exempt, i))) == NULL) {
            goto done;
        }
    }
    const char *r = encode_kept(keep, rel);
    if (r != NULL) {
        result = PyBool_FromLong(tfsql_keep_listed(r, strlen(r), patterns, (size_t)n));
    }
done:
    free(patterns);
    Py_XDECREF(keep);
    return result;
}

static PyObject *unescaped(const char *s, size_t n) {
    char stack[256];
    char *buf = 2 * n <= sizeof(stack) ? stack : (char *)malloc(2 * n + 1);
    if (buf == NULL) {
        return PyErr_NoMemory();
    }
    size_t len = tfsql_hive_unescape(s, n, buf);
    PyObject *out = decode_path(buf, len);
    if (buf != stack) {
        free(buf);
    }
    return out;
}

/* A sequence of str encoded (kept alive by `keep`), in names[0 .. *n) with their lengths
 * (both PyMem_Malloc'ed: PyMem_Free them); with none_ok, a None item is a NULL name of
 * length 0. 0, or -1 with an exception. */
static int encoded_names_or_none(PyObject *seq_arg, PyObject *keep, int none_ok, const char ***names,
                                 size_t **lens, size_t *n) {
    PyObject *seq = PySequence_Fast(seq_arg, "expected a sequence of names");
    if (seq == NULL) {
        return -1;
    }
    *n = (size_t)PySequence_Fast_GET_SIZE(seq);
    *names = (const char **)PyMem_Malloc((*n + 1) * sizeof(char *));
    *lens = (size_t *)PyMem_Malloc((*n + 1) * sizeof(size_t));
    int rc = *names != NULL && *lens != NULL ? 0 : (PyErr_NoMemory(), -1);
    for (size_t i = 0; rc == 0 && i < *n; i++) {
        PyObject *item = PySequence_Fast_GET_ITEM(seq, (Py_ssize_t)i);
        int none = none_ok && item == Py_None;
        (*names)[i] = none ? NULL : encode_kept(keep, item);
        rc = none || (*names)[i] != NULL ? 0 : -1;
        (*lens)[i] = (*names)[i] != NULL ? (size_t)PyBytes_GET_SIZE(PyList_GET_ITEM(keep, PyList_GET_SIZE(keep) - 1)) : 0;
    }
    Py_DECREF(seq);
    if (rc) {
        PyMem_Free(*names);
        PyMem_Free(*lens);
        *names = NULL;
        *lens = NULL;
    }
    return rc;
}

static int encoded_names(PyObject *seq_arg, PyObject *keep, const char ***names, size_t **lens,
                         size_t *n) {
    return encoded_names_or_none(seq_arg, keep, 0, names, lens, n);
}

/* layout_owns_column(layout, name) -> bool */
static PyObject *rules_layout_owns_column(PyObject *self, PyObject *args) {
    (void)self;
    int layout;
    PyObject *name;
    if (!PyArg_ParseTuple(args, "iU:layout_owns_column", &layout, &name)) {
        return NULL;
    }
    PyObject *b = encode_path(name);
    if (b == NULL) {
        return NULL;
    }
    int yes = tfsql_layout_owns_column(layout, PyBytes_AS_STRING(b), (size_t)PyBytes_GET_SIZE(b));
    Py_DECREF(b);
    return PyBool_FromLong(yes);
}

/* layout_adds_split(layout, columns) -> bool */
static PyObject *rules_layout_adds_split(PyObject *self, PyObject *args) {
    (void)self;
    int layout;
    PyObject *columns;
    if (!PyArg_ParseTuple(args, "iO:layout_adds_split", &layout, &columns)) {
        return NULL;
    }
    PyObject *keep = PyList_New(0);
    const char **names = NULL;
    size_t *lens = NULL, n = 0;
    if (keep == NULL || encoded_names(columns, keep, &names, &lens, &n)) {
        Py_XDECREF(keep);
        return NULL;
    }
    int yes = tfsql_layout_adds_split(layout, names, lens, n);
    PyMem_Free(names);
    PyMem_Free(lens);
    Py_DECREF(keep);
    return PyBool_FromLong(yes);
}

/* tfsql_feature_list_name's question, asked of a Python container of context names */
static int in_context(void *ctx, const char *name, size_t len) {
    PyObject *text = PyUnicode_DecodeUTF8(name, (Py_ssize_t)len, "surrogateescape");
    int found = text != NULL ? PySequence_Contains((PyObject *)ctx, text) : -1;
    Py_XDECREF(text);
    return found > 0; /* an error stays set: the caller raises it */
}

/* feature_list_name(column, context) -> str */
static PyObject *rules_feature_list_name(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *column, *context;
    if (!PyArg_ParseTuple(args, "UO:feature_list_name", &column, &context)) {
        return NULL;
    }
    PyObject *b = encode_path(column);
    if (b == NULL) {
        return NULL;
    }
    size_t n = tfsql_feature_list_name(PyBytes_AS_STRING(b), (size_t)PyBytes_GET_SIZE(b),
                                       in_context, context);
    PyObject *result = PyErr_Occurred() ? NULL
                       : n == (size_t)PyBytes_GET_SIZE(b)
                           ? Py_NewRef(column)
                           : PyUnicode_DecodeUTF8(PyBytes_AS_STRING(b), (Py_ssize_t)n, "surrogateescape");
    Py_DECREF(b);
    return result;
}

/* description_root(roots, layout) -> bool (a root None: a file named itself) */
static PyObject *rules_description_root(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *roots_arg;
    int layout;
    if (!PyArg_ParseTuple(args, "Oi:description_root", &roots_arg, &layout)) {
        return NULL;
    }
    PyObject *keep = PyList_New(0), *result = NULL;
    const char **roots = NULL;
    size_t *lens = NULL, n = 0;
    if (keep != NULL && encoded_names_or_none(roots_arg, keep, 1, &roots, &lens, &n) == 0) {
        result = PyBool_FromLong(tfsql_description_root(roots, lens, n, layout));
    }
    PyMem_Free(roots);
    PyMem_Free(lens);
    Py_XDECREF(keep);
    return result;
}

/* written_partitions(user_typed, hive_off, hive, described) -> ([described index or -1
 * per hive column], number of described columns null in every file) */
static PyObject *rules_written_partitions(PyObject *self, PyObject *args) {
    (void)self;
    int user_typed, hive_off;
    PyObject *hive_arg, *described_arg;
    if (!PyArg_ParseTuple(args, "ppOO:written_partitions", &user_typed, &hive_off, &hive_arg,
                          &described_arg)) {
        return NULL;
    }
    PyObject *keep = PyList_New(0), *result = NULL;
    const char **hive = NULL, **described = NULL;
    size_t *hlens = NULL, *dlens = NULL, n = 0, nd = 0;
    if (keep == NULL || encoded_names(hive_arg, keep, &hive, &hlens, &n) ||
        encoded_names(described_arg, keep, &described, &dlens, &nd)) {
        goto done;
    }
    long long *typed_by = (long long *)PyMem_Malloc((n + 1) * sizeof(long long));
    if (typed_by == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    size_t nulls = tfsql_written_partitions(user_typed, hive_off, hive, hlens, n, described, dlens,
                                            nd, typed_by);
    PyObject *typed = PyList_New((Py_ssize_t)n);
    for (size_t i = 0; typed != NULL && i < n; i++) {
        PyList_SET_ITEM(typed, (Py_ssize_t)i, PyLong_FromLongLong(typed_by[i]));
    }
    result = typed != NULL ? Py_BuildValue("(Nn)", typed, (Py_ssize_t)nulls) : NULL;
    PyMem_Free(typed_by);
done:
    PyMem_Free(hive);
    PyMem_Free(hlens);
    PyMem_Free(described);
    PyMem_Free(dlens);
    Py_XDECREF(keep);
    return result;
}

/* tfds_merge(columns, described) -> ([described index or -1 per column], [appended]) */
static PyObject *rules_tfds_merge(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *columns_arg, *described_arg;
    if (!PyArg_ParseTuple(args, "OO:tfds_merge", &columns_arg, &described_arg)) {
        return NULL;
    }
    PyObject *keep = PyList_New(0), *result = NULL;
    const char **columns = NULL, **described = NULL;
    size_t *lens = NULL, *dlens = NULL, n = 0, nd = 0, nappended = 0;
    if (keep == NULL || encoded_names(columns_arg, keep, &columns, &lens, &n) ||
        encoded_names(described_arg, keep, &described, &dlens, &nd)) {
        goto done;
    }
    long long *typed_by = (long long *)PyMem_Malloc((n + 1) * sizeof(long long));
    size_t *appended = (size_t *)PyMem_Malloc((nd + 1) * sizeof(size_t));
    if (typed_by != NULL && appended != NULL) {
        tfsql_tfds_merge(columns, lens, n, described, dlens, nd, typed_by, appended, &nappended);
        PyObject *typed = PyList_New((Py_ssize_t)n), *after = PyList_New((Py_ssize_t)nappended);
        for (size_t i = 0; typed != NULL && i < n; i++) {
            PyList_SET_ITEM(typed, (Py_ssize_t)i, PyLong_FromLongLong(typed_by[i]));
        }
        for (size_t i = 0; after != NULL && i < nappended; i++) {
            PyList_SET_ITEM(after, (Py_ssize_t)i, PyLong_FromSize_t(appended[i]));
        }
        result = typed != NULL && after != NULL ? Py_BuildValue("(NN)", typed, after) : NULL;
        if (result == NULL) {
            Py_XDECREF(typed);
            Py_XDECREF(after);
        }
    } else {
        PyErr_NoMemory();
    }
    PyMem_Free(typed_by);
    PyMem_Free(appended);
done:
    PyMem_Free(columns);
    PyMem_Free(lens);
    PyMem_Free(described);
    PyMem_Free(dlens);
    Py_XDECREF(keep);
    return result;
}

/* hive_segments(directory) -> [(key, value or None)], unescaped */
static PyObject *rules_hive_segments(PyObject *self, PyObject *arg) {
    (void)self;
    PyObject *b = encode_path(arg);
    if (b == NULL) {
        return NULL;
    }
    const char *dir = PyBytes_AS_STRING(b);
    size_t n = (size_t)PyBytes_GET_SIZE(b);
    size_t count = tfsql_hive_segments(dir, n, NULL, 0);
    tfsql_hive_segment *segs = (tfsql_hive_segment *)malloc((count ? count : 1) * sizeof(*segs));
    PyObject *out = segs != NULL ? PyList_New((Py_ssize_t)count) : PyErr_NoMemory();
    if (out != NULL) {
        tfsql_hive_segments(dir, n, segs, count);
        for (size_t i = 0; i < count; i++) {
            PyObject *key = unescaped(dir + segs[i].key_start, segs[i].key_len);
            PyObject *value = segs[i].is_null ? Py_NewRef(Py_None)
                                              : unescaped(dir + segs[i].value_start, segs[i].value_len);
            PyObject *pair = key != NULL && value != NULL ? PyTuple_Pack(2, key, value) : NULL;
            Py_XDECREF(key);
            Py_XDECREF(value);
            if (pair == NULL) {
                Py_CLEAR(out);
                break;
            }
            PyList_SET_ITEM(out, (Py_ssize_t)i, pair);
        }
    }
    free(segs);
    Py_DECREF(b);
    return out;
}

static PyObject *rules_hive_unescape(PyObject *self, PyObject *arg) {
    (void)self;
    PyObject *b = encode_path(arg);
    if (b == NULL) {
        return NULL;
    }
    PyObject *out = unescaped(PyBytes_AS_STRING(b), (size_t)PyBytes_GET_SIZE(b));
    Py_DECREF(b);
    return out;
}

/* hive_int64(text) -> int or None: the value when text types as int64 */
static PyObject *rules_hive_int64(PyObject *self, PyObject *arg) {
    (void)self;
    PyObject *b = encode_path(arg);
    if (b == NULL) {
        return NULL;
    }
    int64_t v = 0;
    int ok = tfsql_hive_int64(PyBytes_AS_STRING(b), (size_t)PyBytes_GET_SIZE(b), &v);
    Py_DECREF(b);
    return ok ? PyLong_FromLongLong((long long)v) : Py_NewRef(Py_None);
}

/* hive_directory(path, root, whole_path) -> str: the directory text hive columns come from */
static PyObject *rules_hive_directory(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *path, *root;
    int whole_path;
    if (!PyArg_ParseTuple(args, "UOp:hive_directory", &path, &root, &whole_path)) {
        return NULL;
    }
    PyObject *p = encode_path(path);
    PyObject *r = root == Py_None ? Py_NewRef(Py_None) : encode_path(root);
    PyObject *out = NULL;
    if (p != NULL && r != NULL) {
        size_t start, len;
        tfsql_hive_directory(PyBytes_AS_STRING(p), r == Py_None ? NULL : PyBytes_AS_STRING(r),
                             whole_path ? TFSQL_HIVE_WHOLE_PATH : TFSQL_HIVE_BELOW_ROOT, &start, &len);
        out = decode_path(PyBytes_AS_STRING(p) + start, len);
    }
    Py_XDECREF(p);
    Py_XDECREF(r);
    return out;
}

/* tfds_split(path) / tfx_split(rel_dir) -> str or None */
static PyObject *split_of(PyObject *arg, int (*rule)(const char *, size_t, size_t *, size_t *)) {
    PyObject *b = encode_path(arg);
    if (b == NULL) {
        return NULL;
    }
    size_t start, len;
    PyObject *out = rule(PyBytes_AS_STRING(b), (size_t)PyBytes_GET_SIZE(b), &start, &len)
                        ? decode_path(PyBytes_AS_STRING(b) + start, len)
                        : Py_NewRef(Py_None);
    Py_DECREF(b);
    return out;
}

static PyObject *rules_tfds_split(PyObject *self, PyObject *arg) {
    (void)self;
    return split_of(arg, tfsql_tfds_split);
}

static PyObject *rules_tfx_split(PyObject *self, PyObject *arg) {
    (void)self;
    return split_of(arg, tfsql_tfx_split);
}

/* detect_layout(paths, rel_dirs) -> 0 none, 1 TFDS, 2 TFX; rel_dirs items str or None */
static PyObject *rules_detect_layout(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *paths, *rel_dirs;
    if (!PyArg_ParseTuple(args, "O!O!:detect_layout", &PyList_Type, &paths, &PyList_Type, &rel_dirs)) {
        return NULL;
    }
    Py_ssize_t n = PyList_GET_SIZE(paths);
    if (PyList_GET_SIZE(rel_dirs) != n) {
        PyErr_SetString(PyExc_ValueError, "detect_layout needs one rel_dir per path");
        return NULL;
    }
    PyObject *keep = PyList_New(0);
    const char **p = (const char **)calloc((size_t)n + 1, sizeof(char *));
    const char **d = (const char **)calloc((size_t)n + 1, sizeof(char *));
    PyObject *result = NULL;
    if (keep == NULL || p == NULL || d == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *rd = PyList_GET_ITEM(rel_dirs, i);
        if ((p[i] = encode_kept(keep, PyList_GET_ITEM(paths, i))) == NULL ||
            (rd != Py_None && (d[i] = encode_kept(keep, rd)) == NULL)) {
            goto done;
        }
    }
    result = PyLong_FromLong(tfsql_detect_layout(p, d, (size_t)n));
done:
    free(p);
    free(d);
    Py_XDECREF(keep);
    return result;
}

static PyObject *rules_has_glob_magic(PyObject *self, PyObject *arg) {
    (void)self;
    return name_rule(arg, tfsql_has_glob_magic);
}

static PyObject *rules_is_tfds_metadata_name(PyObject *self, PyObject *arg) {
    (void)self;
    return name_rule(arg, tfsql_is_tfds_metadata_name);
}

static PyObject *rules_is_tfds_info_name(PyObject *self, PyObject *arg) {
    (void)self;
    return name_rule(arg, tfsql_is_tfds_info_name);
}

/* tfds_features(document: bytes-like) -> [(name, arrow type name or None, is_list,
 * class_label)] or None when it is not a features.json document */
static PyObject *rules_tfds_features(PyObject *self, PyObject *arg) {
    (void)self;
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0) {
        return NULL;
    }
    tfsql_tfds_feature *features = NULL;
    size_t n = 0;
    int rc = tfsql_tfds_features((const char *)view.buf, (size_t)view.len, &features, &n);
    PyBuffer_Release(&view);
    if (rc) {
        Py_RETURN_NONE;
    }
    PyObject *result = PyList_New((Py_ssize_t)n);
    for (size_t i = 0; result != NULL && i < n; i++) {
        const tfsql_tfds_feature *f = &features[i];
        const char *type = tfsql_tfds_type_name(f->type);
        PyObject *name = decode_path(f->name, f->name_len);
        PyObject *item = name == NULL ? NULL
                                      : Py_BuildValue("(NsNN)", name, type, PyBool_FromLong(f->is_list),
                                                      PyBool_FromLong(f->class_label));
        if (item == NULL) {
            Py_CLEAR(result);
            break;
        }
        PyList_SET_ITEM(result, (Py_ssize_t)i, item);
    }
    int complete = tfsql_tfds_features_complete(features, n);
    tfsql_tfds_features_free(features, n);
    return result == NULL ? NULL : Py_BuildValue("(NN)", result, PyBool_FromLong(complete));
}

static PyObject *rules_is_description_name(PyObject *self, PyObject *arg) {
    (void)self;
    return name_rule(arg, tfsql_is_description_name);
}

/* render_description([(name, type text, partition)]) -> bytes (tfsql_description_render);
 * ValueError naming a column whose type text is not the core's grammar */
static PyObject *rules_render_description(PyObject *self, PyObject *arg) {
    (void)self;
    PyObject *seq = PySequence_Fast(arg, "render_description expects a list of (name, type, partition)");
    if (seq == NULL) {
        return NULL;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    tfsql_column *cols = (tfsql_column *)calloc(n ? (size_t)n : 1, sizeof(tfsql_column));
    PyObject *result = NULL;
    if (cols == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        const char *name, *text;
        Py_ssize_t name_len, text_len;
        int partition;
        if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(seq, i), "s#s#p", &name, &name_len, &text,
                              &text_len, &partition)) {
            goto done;
        }
        if (tfsql_type_parse(text, (size_t)text_len, &cols[i].type)) {
            PyErr_Format(PyExc_ValueError, "column %R: %R is not a tfsql type", PyTuple_GET_ITEM(PySequence_Fast_GET_ITEM(seq, i), 0), PyTuple_GET_ITEM(PySequence_Fast_GET_ITEM(seq, i), 1));
            goto done;
        }
        cols[i].name = (char *)name; /* borrowed for the call */
        cols[i].name_len = (size_t)name_len;
        cols[i].partition = partition;
    }
    char *out = NULL;
    size_t len = 0;
    if (tfsql_description_render(cols, (size_t)n, &out, &len)) {
        PyErr_NoMemory();
        goto done;
    }
    result = PyBytes_FromStringAndSize(out, (Py_ssize_t)len);
    free(out);
done:
    free(cols);
    Py_DECREF(seq);
    return result;
}

/* parse_description(document) -> [(name, type text, partition)], or None when it is not
 * a tfsql description (tfsql_description_parse) */
static PyObject *rules_parse_description(PyObject *self, PyObject *arg) {
    (void)self;
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0) {
        return NULL;
    }
    tfsql_column *cols = NULL;
    size_t n = 0;
    int rc = tfsql_description_parse((const char *)view.buf, (size_t)view.len, &cols, &n);
    PyBuffer_Release(&view);
    if (rc) {
        Py_RETURN_NONE;
    }
    PyObject *result = PyList_New((Py_ssize_t)n);
    for (size_t i = 0; result != NULL && i < n; i++) {
        char text[TFSQL_TYPE_TEXT_MAX];
        int k = tfsql_type_render(&cols[i].type, text, sizeof(text));
        PyObject *item = k < 0 ? NULL
                               : Py_BuildValue("(s#s#N)", cols[i].name, (Py_ssize_t)cols[i].name_len,
                                               text, (Py_ssize_t)k, PyBool_FromLong(cols[i].partition));
        if (item == NULL) {
            if (!PyErr_Occurred()) {
                PyErr_SetString(PyExc_ValueError, "a column type too long to render");
            }
            Py_CLEAR(result);
            break;
        }
        PyList_SET_ITEM(result, (Py_ssize_t)i, item);
    }
    tfsql_description_free(cols, n);
    return result;
}

/* type_parts(text) -> (leaf, unit, tz, precision, scale, width, ((wrap, size), ...), shape)
 * or None when it is not type text (tfsql_type_parse) */
static PyObject *rules_type_parts(PyObject *self, PyObject *arg) {
    (void)self;
    static const char *const units[] = {"s", "ms", "us", "ns"};
    static const char *const wraps[] = {"", "list", "large_list", "fixed_size_list",
                                        "fixed_shape_tensor"};
    Py_ssize_t n;
    const char *text = PyUnicode_AsUTF8AndSize(arg, &n);
    if (text == NULL) {
        return NULL;
    }
    tfsql_type t;
    char leaf[TFSQL_TYPE_TEXT_MAX];
    if (tfsql_type_parse(text, (size_t)n, &t)) {
        Py_RETURN_NONE;
    }
    tfsql_type bare = t; /* the leaf's own text up to its parameters */
    bare.nwrap = 0;
    bare.ndim = 0;
    int k = tfsql_type_render(&bare, leaf, sizeof(leaf));
    size_t cut = 0;
    while ((int)cut < k && leaf[cut] != '[' && leaf[cut] != '(') {
        cut++;
    }
    PyObject *w = PyTuple_New(t.nwrap), *shape = PyTuple_New(t.ndim);
    for (int i = 0; w != NULL && i < t.nwrap; i++) {
        PyTuple_SET_ITEM(w, i, Py_BuildValue("(sL)", wraps[t.wrap[i]], (long long)t.wrap_size[i]));
    }
    for (int d = 0; shape != NULL && d < t.ndim; d++) {
        PyTuple_SET_ITEM(shape, d, PyLong_FromLongLong((long long)t.shape[d]));
    }
    if (w == NULL || shape == NULL) {
        Py_XDECREF(w);
        Py_XDECREF(shape);
        return NULL;
    }
    return Py_BuildValue("(s#ssiiLNN)", leaf, (Py_ssize_t)cut, units[t.unit], t.tz, t.precision,
                         t.scale, (long long)t.width, w, shape);
}

/* detect_compression(head: bytes-like) -> "gzip", "zlib" or None */
static PyObject *rules_detect_compression(PyObject *self, PyObject *arg) {
    (void)self;
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE)) {
        return NULL;
    }
    int kind = tfsql_detect_compression((const uint8_t *)view.buf, (size_t)view.len);
    PyBuffer_Release(&view);
    return kind == TFSQL_DETECT_GZIP   ? PyUnicode_FromString("gzip")
           : kind == TFSQL_DETECT_ZLIB ? PyUnicode_FromString("zlib")
                                       : Py_NewRef(Py_None);
}

/* sniff_format(head: bytes-like) -> "parquet", "png", "text"... or None (tfsql_sniff_format) */
static PyObject *rules_sniff_format(PyObject *self, PyObject *arg) {
    (void)self;
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE)) {
        return NULL;
    }
    const char *format = tfsql_sniff_format((const uint8_t *)view.buf, (size_t)view.len);
    PyBuffer_Release(&view);
    return format != NULL ? PyUnicode_FromString(format) : Py_NewRef(Py_None);
}

/* index_sidecar_path(path: str) -> str (tfsql_index_sidecar_path) */
static PyObject *rules_index_sidecar_path(PyObject *self, PyObject *arg) {
    (void)self;
    PyObject *b = encode_path(arg);
    if (b == NULL) {
        return NULL;
    }
    size_t n = (size_t)PyBytes_GET_SIZE(b);
    char *out = (char *)malloc(n + TFSQL_INDEX_SIDECAR_EXTRA);
    PyObject *result = NULL;
    if (out == NULL) {
        PyErr_NoMemory();
    } else {
        result = decode_path(out, tfsql_index_sidecar_path(PyBytes_AS_STRING(b), n, out));
    }
    free(out);
    Py_DECREF(b);
    return result;
}

/* index_fresh(index_mtime_ns, file_mtime_ns) -> bool (tfsql_index_fresh) */
static PyObject *rules_index_fresh(PyObject *self, PyObject *args) {
    (void)self;
    long long index_ns, file_ns;
    if (!PyArg_ParseTuple(args, "LL:index_fresh", &index_ns, &file_ns)) {
        return NULL;
    }
    return PyBool_FromLong(tfsql_index_fresh((int64_t)index_ns, (int64_t)file_ns));
}

/* looks_like_sequence_example(record: bytes-like) -> bool
 * (tfsql_looks_like_sequence_example) */
static PyObject *rules_looks_like_sequence_example(PyObject *self, PyObject *arg) {
    (void)self;
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE)) {
        return NULL;
    }
    int looks = tfsql_looks_like_sequence_example((const uint8_t *)view.buf, (size_t)view.len);
    PyBuffer_Release(&view);
    return PyBool_FromLong(looks);
}

/* walk_action(kind, context) -> action (see tfsql_walk_action) */
static PyObject *rules_walk_action(PyObject *self, PyObject *args) {
    (void)self;
    int kind, context;
    if (!PyArg_ParseTuple(args, "ii:walk_action", &kind, &context)) {
        return NULL;
    }
    return PyLong_FromLong(tfsql_walk_action(kind, context));
}

/* The list of strings `which` of a parsed intent record. */
static PyObject *intent_strings(const tfsql_intent *intent, int which) {
    size_t n = tfsql_intent_count(intent, which);
    PyObject *list = PyList_New((Py_ssize_t)n);
    for (size_t i = 0; list != NULL && i < n; i++) {
        size_t len;
        const char *s = tfsql_intent_path(intent, which, i, &len);
        PyObject *item = decode_path(s, len);
        if (item == NULL) {
            Py_CLEAR(list);
            break;
        }
        PyList_SET_ITEM(list, (Py_ssize_t)i, item);
    }
    return list;
}

/* intent_parse(record: bytes) -> dict with state, job, trash, replaced, new (a list of
 * (staged, final) tuples) and created; raises ValueError when the record is not one
 * tfsql wrote. The one parser of the record: tfsql.commit's recovery reads it here. */
static PyObject *rules_intent_parse(PyObject *self, PyObject *arg) {
    (void)self;
    Py_buffer record;
    if (PyObject_GetBuffer(arg, &record, PyBUF_SIMPLE)) {
        return NULL;
    }
    char why[200];
    tfsql_intent *intent = tfsql_intent_parse((const char *)record.buf, (size_t)record.len, why, sizeof(why));
    PyBuffer_Release(&record);
    if (intent == NULL) {
        PyErr_Format(PyExc_ValueError, "%s", why);
        return NULL;
    }
    PyObject *out = NULL, *job = intent_strings(intent, TFSQL_INTENT_JOB);
    PyObject *trash = intent_strings(intent, TFSQL_INTENT_TRASH);
    PyObject *replaced = intent_strings(intent, TFSQL_INTENT_REPLACED);
    PyObject *created = intent_strings(intent, TFSQL_INTENT_CREATED);
    PyObject *staged = intent_strings(intent, TFSQL_INTENT_NEW_STAGED);
    PyObject *final = intent_strings(intent, TFSQL_INTENT_NEW_FINAL);
    PyObject *pairs = staged != NULL ? PyList_New(PyList_GET_SIZE(staged)) : NULL;
    if (job != NULL && trash != NULL && replaced != NULL && created != NULL && final != NULL &&
        pairs != NULL) {
        Py_ssize_t i = 0;
        for (; i < PyList_GET_SIZE(staged); i++) {
            PyObject *pair = PyTuple_Pack(2, PyList_GET_ITEM(staged, i), PyList_GET_ITEM(final, i));
            if (pair == NULL) {
                break;
            }
            PyList_SET_ITEM(pairs, i, pair);
        }
        if (i == PyList_GET_SIZE(staged)) {
            out = Py_BuildValue("{s:s,s:O,s:O,s:O,s:O,s:O}", "state",
                                tfsql_intent_prepared(intent) ? "prepared" : "committed", "job",
                                PyList_GET_ITEM(job, 0), "trash", PyList_GET_ITEM(trash, 0),
                                "replaced", replaced, "new", pairs, "created", created);
        }
    }
    Py_XDECREF(job);
    Py_XDECREF(trash);
    Py_XDECREF(replaced);
    Py_XDECREF(created);
    Py_XDECREF(staged);
    Py_XDECREF(final);
    Py_XDECREF(pairs);
    tfsql_intent_free(intent);
    return out;
}

/* intent_view(record: bytes, rels: list[str]) -> list of None (as is), False (leave out)
 * or the str old path; raises ValueError when the record is not one tfsql wrote. */
static PyObject *rules_intent_view(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer record;
    PyObject *rels;
    if (!PyArg_ParseTuple(args, "y*O!:intent_view", &record, &PyList_Type, &rels)) {
        return NULL;
    }
    char why[200];
    tfsql_intent *intent = tfsql_intent_parse((const char *)record.buf, (size_t)record.len, why, sizeof(why));
    PyBuffer_Release(&record);
    if (intent == NULL) {
        PyErr_Format(PyExc_ValueError, "%s", why);
        return NULL;
    }
    Py_ssize_t n = PyList_GET_SIZE(rels);
    PyObject *keep = PyList_New(0);
    const char **r = (const char **)calloc((size_t)n + 1, sizeof(char *));
    int *actions = (int *)calloc((size_t)n + 1, sizeof(int));
    size_t *old = (size_t *)calloc((size_t)n + 1, sizeof(size_t));
    PyObject *out = NULL;
    if (keep == NULL || r == NULL || actions == NULL || old == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        if ((r[i] = encode_kept(keep, PyList_GET_ITEM(rels, i))) == NULL) {
            goto done;
        }
    }
    if (tfsql_intent_view(intent, r, (size_t)n, actions, old)) {
        PyErr_NoMemory();
        goto done;
    }
    out = PyList_New(n);
    for (Py_ssize_t i = 0; out != NULL && i < n; i++) {
        PyObject *item = actions[i] == TFSQL_VIEW_LEAVE_OUT ? Py_NewRef(Py_False)
                         : actions[i] == TFSQL_VIEW_MOVED
                             ? decode_path(r[i] + old[i], strlen(r[i]) - old[i])
                             : Py_NewRef(Py_None);
        if (item == NULL) {
            Py_CLEAR(out);
            break;
        }
        PyList_SET_ITEM(out, i, item);
    }
done:
    free(r);
    free(actions);
    free(old);
    Py_XDECREF(keep);
    tfsql_intent_free(intent);
    return out;
}

/* path_order(paths) -> the indices of the paths sorted by bytes, repeats dropped */
static PyObject *rules_path_order(PyObject *self, PyObject *arg) {
    (void)self;
    PyObject *seq = PySequence_Fast(arg, "path_order expects a sequence of str");
    if (seq == NULL) {
        return NULL;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    PyObject *keep = PyList_New(0);
    const char **paths = (const char **)malloc(((size_t)n + 1) * sizeof(char *));
    size_t *lens = (size_t *)malloc(((size_t)n + 1) * sizeof(size_t));
    size_t *order = (size_t *)malloc(((size_t)n + 1) * sizeof(size_t));
    PyObject *out = NULL;
    if (keep == NULL || paths == NULL || lens == NULL || order == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        if ((paths[i] = encode_kept(keep, PySequence_Fast_GET_ITEM(seq, i))) == NULL) {
            goto done;
        }
        lens[i] = (size_t)PyBytes_GET_SIZE(PyList_GET_ITEM(keep, i));
    }
    long k = tfsql_plan_order(paths, lens, (size_t)n, order);
    if (k < 0) {
        PyErr_NoMemory();
        goto done;
    }
    out = PyList_New(k);
    for (long i = 0; out != NULL && i < k; i++) {
        PyList_SET_ITEM(out, i, PyLong_FromSize_t(order[i]));
    }
done:
    free(paths);
    free(lens);
    free(order);
    Py_XDECREF(keep);
    Py_DECREF(seq);
    return out;
}

/* path_display(path) -> str: the path as shown (bytes not UTF-8 as \xNN) */
static PyObject *rules_path_display(PyObject *self, PyObject *arg) {
    (void)self;
    PyObject *b = encode_path(arg);
    if (b == NULL) {
        return NULL;
    }
    size_t n = (size_t)PyBytes_GET_SIZE(b);
    char *buf = (char *)malloc(4 * n + 1);
    PyObject *out = buf == NULL ? PyErr_NoMemory() : NULL;
    if (buf != NULL) {
        size_t len = tfsql_path_display(PyBytes_AS_STRING(b), n, buf);
        out = PyUnicode_DecodeUTF8(buf, (Py_ssize_t)len, "strict");
        free(buf);
    }
    Py_DECREF(b);
    return out;
}

/* hive_plan(files, whole_path, required, typed, phrases): files a sequence of
 * (path, root or None, display or None). Returns (names, raw, ints): the keys, per
 * column the values as str or None, and per column the int64 values (None for a string
 * column); or ("refused", reason, fields, message). */
static PyObject *rules_hive_plan(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *files_arg, *typed_arg, *phrases_arg;
    int whole_path, required;
    if (!PyArg_ParseTuple(args, "OppOO!:hive_plan", &files_arg, &whole_path, &required, &typed_arg,
                          &PyDict_Type, &phrases_arg)) {
        return NULL;
    }
    PyObject *files = PySequence_Fast(files_arg, "hive_plan expects a sequence of files");
    PyObject *typed = files == NULL ? NULL : PySequence_Fast(typed_arg, "typed: a sequence of str");
    if (typed == NULL) {
        Py_XDECREF(files);
        return NULL;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(files), nt = PySequence_Fast_GET_SIZE(typed);
    PyObject *keep = PyList_New(0);
    tfsql_plan_file *pf = (tfsql_plan_file *)calloc((size_t)n + 1, sizeof(*pf));
    Py_ssize_t nphrases = PyDict_GET_SIZE(phrases_arg);
    tfsql_field *phrases = (tfsql_field *)calloc((size_t)nphrases + 1, sizeof(*phrases));
    const char **tnames = (const char **)calloc((size_t)nt + 1, sizeof(char *));
    size_t *tlens = (size_t *)calloc((size_t)nt + 1, sizeof(size_t));
    PyObject *out = NULL;
    tfsql_hive_plan plan;
    tfsql_plan_error err;
    memset(&plan, 0, sizeof(plan));
    memset(&err, 0, sizeof(err));
    if (keep == NULL || pf == NULL || phrases == NULL || tnames == NULL || tlens == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    Py_ssize_t pos = 0, k = 0;
    PyObject *pkey, *ptext;
    while (PyDict_Next(phrases_arg, &pos, &pkey, &ptext)) {
        if ((phrases[k].name = encode_kept(keep, pkey)) == NULL ||
            (phrases[k].text = encode_kept(keep, ptext)) == NULL) {
            goto done;
        }
        k++;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PySequence_Fast_GET_ITEM(files, i);
        if (!PyTuple_Check(item) || PyTuple_GET_SIZE(item) != 3) {
            PyErr_SetString(PyExc_TypeError, "hive_plan: each file is (path, root, display)");
            goto done;
        }
        const char **slots[3] = {&pf[i].path, &pf[i].root, &pf[i].display};
        size_t *lens[3] = {&pf[i].path_len, &pf[i].root_len, &pf[i].display_len};
        for (int j = 0; j < 3; j++) {
            PyObject *text = PyTuple_GET_ITEM(item, j);
            if (text == Py_None && j > 0) {
                continue;
            }
            if ((*slots[j] = encode_kept(keep, text)) == NULL) {
                goto done;
            }
            *lens[j] = (size_t)PyBytes_GET_SIZE(PyList_GET_ITEM(keep, PyList_GET_SIZE(keep) - 1));
        }
    }
    for (Py_ssize_t t = 0; t < nt; t++) {
        if ((tnames[t] = encode_kept(keep, PySequence_Fast_GET_ITEM(typed, t))) == NULL) {
            goto done;
        }
        tlens[t] = (size_t)PyBytes_GET_SIZE(PyList_GET_ITEM(keep, PyList_GET_SIZE(keep) - 1));
    }
    int rc = tfsql_plan_hive(pf, (size_t)n, whole_path ? TFSQL_HIVE_WHOLE_PATH : TFSQL_HIVE_BELOW_ROOT,
                             required, tnames, tlens, (size_t)nt, phrases, &plan, &err);
    if (rc == TFSQL_PLAN_NOMEM) {
        PyErr_NoMemory();
        goto done;
    }
    if (rc == TFSQL_PLAN_REFUSED) {
        PyObject *fields = PyDict_New();
        for (size_t i = 0; fields != NULL && i < err.nfields; i++) {
            PyObject *v = PyUnicode_FromString(err.field_texts[i]);
            if (v == NULL || PyDict_SetItemString(fields, err.field_names[i], v)) {
                Py_XDECREF(v);
                Py_CLEAR(fields);
                break;
            }
            Py_DECREF(v);
        }
        if (fields != NULL) {
            out = Py_BuildValue("(ssNs)", "refused", err.reason, fields, err.message);
        }
        goto done;
    }
    size_t nc = plan.ncols;
    PyObject *names = PyList_New((Py_ssize_t)nc), *raw = PyList_New((Py_ssize_t)nc),
             *ints = PyList_New((Py_ssize_t)nc);
    int failed = names == NULL || raw == NULL || ints == NULL;
    for (size_t k = 0; !failed && k < nc; k++) {
        PyObject *name = decode_path(plan.names[k], plan.name_lens[k]);
        PyObject *column = PyList_New(n);
        PyObject *numbers = plan.is_int64[k] ? PyList_New(n) : Py_NewRef(Py_None);
        failed = name == NULL || column == NULL || numbers == NULL;
        for (Py_ssize_t i = 0; !failed && i < n; i++) {
            size_t at = (size_t)i * nc + k;
            const char *v = plan.values[at];
            PyObject *value = v == NULL ? Py_NewRef(Py_None) : decode_path(v, plan.value_lens[at]);
            failed = value == NULL;
            if (!failed) {
                PyList_SET_ITEM(column, i, value);
            }
            if (!failed && numbers != Py_None) {
                PyObject *number = v == NULL ? Py_NewRef(Py_None) : PyLong_FromLongLong(plan.ints[at]);
                failed = number == NULL;
                if (!failed) {
                    PyList_SET_ITEM(numbers, i, number);
                }
            }
        }
        if (name != NULL) {
            PyList_SET_ITEM(names, (Py_ssize_t)k, name);
        }
        if (column != NULL) {
            PyList_SET_ITEM(raw, (Py_ssize_t)k, column);
        }
        if (numbers != NULL) {
            PyList_SET_ITEM(ints, (Py_ssize_t)k, numbers);
        }
    }
    if (failed) {
        Py_XDECREF(names);
        Py_XDECREF(raw);
        Py_XDECREF(ints);
    } else {
        out = Py_BuildValue("(NNN)", names, raw, ints);
    }
done:
    tfsql_hive_plan_free(&plan);
    tfsql_plan_error_free(&err);
    free(pf);
    free(phrases);
    free(tnames);
    free(tlens);
    Py_XDECREF(keep);
    Py_DECREF(files);
    Py_DECREF(typed);
    return out;
}

/* listing_key(seed, entries) -> int: entries a sequence of (path, size, mtime_ns) */
static PyObject *rules_listing_key(PyObject *self, PyObject *args) {
    (void)self;
    unsigned long long seed;
    PyObject *entries_arg;
    if (!PyArg_ParseTuple(args, "KO:listing_key", &seed, &entries_arg)) {
        return NULL;
    }
    PyObject *entries = PySequence_Fast(entries_arg, "listing_key expects a sequence of entries");
    if (entries == NULL) {
        return NULL;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(entries);
    PyObject *keep = PyList_New(0);
    tfsql_stamp *stamps = (tfsql_stamp *)calloc((size_t)n + 1, sizeof(*stamps));
    PyObject *out = NULL;
    if (keep == NULL || stamps == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *path;
        unsigned long long size, mtime;
        if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(entries, i), "UKK:listing_key entry", &path,
                              &size, &mtime) ||
            (stamps[i].path = encode_kept(keep, path)) == NULL) {
            goto done;
        }
        stamps[i].path_len = (size_t)PyBytes_GET_SIZE(PyList_GET_ITEM(keep, i));
        stamps[i].size = size;
        stamps[i].mtime_ns = mtime;
    }
    out = PyLong_FromUnsignedLongLong(tfsql_listing_key(seed, stamps, (size_t)n));
done:
    free(stamps);
    Py_XDECREF(keep);
    Py_DECREF(entries);
    return out;
}

static int64_t pread_at(void *ctx, uint64_t offset, uint8_t *buf, size_t n) {
    ssize_t got = pread(*(int *)ctx, buf, n, (off_t)offset);
    return got < 0 ? -1 : (int64_t)got;
}

/* index_check(text: bytes, fd: int, file_size: int, spans: bool) -> (count, offsets,
 * sizes): offsets and sizes native uint64 bytes when spans, else None; ValueError(why)
 * when the sidecar does not describe the file (fd < 0: its last header is not read). */
static PyObject *rules_index_check(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer text;
    int fd, spans;
    unsigned long long file_size;
    if (!PyArg_ParseTuple(args, "y*iKp:index_check", &text, &fd, &file_size, &spans)) {
        return NULL;
    }
    size_t lines = 0;
    const char *t = (const char *)text.buf;
    for (Py_ssize_t i = 0; spans && i < text.len; i++) {
        lines += t[i] == '\n';
    }
    lines += 1; /* a last line without its '\n' */
    PyObject *offsets = spans ? PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(lines * 8)) : NULL;
    PyObject *sizes = spans ? PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(lines * 8)) : NULL;
    if (spans && (offsets == NULL || sizes == NULL)) {
        PyBuffer_Release(&text);
        Py_XDECREF(offsets);
        Py_XDECREF(sizes);
        return NULL;
    }
    char why[200];
    int64_t count;
    Py_BEGIN_ALLOW_THREADS
    count = tfsql_index_check(t, (size_t)text.len, (uint64_t)file_size, fd >= 0 ? pread_at : NULL, &fd,
                              spans ? (uint64_t *)PyBytes_AS_STRING(offsets) : NULL,
                              spans ? (uint64_t *)PyBytes_AS_STRING(sizes) : NULL, why, sizeof(why));
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&text);
    if (count < 0) {
        Py_XDECREF(offsets);
        Py_XDECREF(sizes);
        PyErr_Format(PyExc_ValueError, "%s", why);
        return NULL;
    }
    if (spans && (_PyBytes_Resize(&offsets, (Py_ssize_t)count * 8) || _PyBytes_Resize(&sizes, (Py_ssize_t)count * 8))) {
        Py_XDECREF(offsets);
        Py_XDECREF(sizes);
        return NULL;
    }
    return Py_BuildValue("(LNN)", (long long)count, spans ? offsets : Py_NewRef(Py_None),
                         spans ? sizes : Py_NewRef(Py_None));
}

/* plan_matches(paths, kinds, globstar) -> the action for each glob match
 * (tfsql_plan_matches: a directory below another walked match is WALK_SKIP) */
static PyObject *rules_plan_matches(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *paths_arg, *kinds_arg;
    int globstar;
    if (!PyArg_ParseTuple(args, "OOp:plan_matches", &paths_arg, &kinds_arg, &globstar)) {
        return NULL;
    }
    PyObject *seq = PySequence_Fast(paths_arg, "plan_matches expects a sequence of paths");
    PyObject *kseq = seq ? PySequence_Fast(kinds_arg, "plan_matches expects a sequence of kinds") : NULL;
    if (kseq == NULL) {
        Py_XDECREF(seq);
        return NULL;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    PyObject *keep = PyList_New(0), *out = NULL;
    const char **paths = (const char **)malloc(((size_t)n + 1) * sizeof(char *));
    size_t *lens = (size_t *)malloc(((size_t)n + 1) * sizeof(size_t));
    int *kinds = (int *)malloc(((size_t)n + 1) * sizeof(int));
    int *actions = (int *)malloc(((size_t)n + 1) * sizeof(int));
    if (keep == NULL || paths == NULL || lens == NULL || kinds == NULL || actions == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    if (PySequence_Fast_GET_SIZE(kseq) != n) {
        PyErr_SetString(PyExc_ValueError, "plan_matches needs one kind per path");
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        if ((paths[i] = encode_kept(keep, PySequence_Fast_GET_ITEM(seq, i))) == NULL) {
            goto done;
        }
        lens[i] = (size_t)PyBytes_GET_SIZE(PyList_GET_ITEM(keep, i));
        kinds[i] = (int)PyLong_AsLong(PySequence_Fast_GET_ITEM(kseq, i));
        if (kinds[i] == -1 && PyErr_Occurred()) {
            goto done;
        }
    }
    if (tfsql_plan_matches(paths, lens, kinds, (size_t)n, globstar, actions)) {
        PyErr_NoMemory();
        goto done;
    }
    out = PyList_New(n);
    for (Py_ssize_t i = 0; out != NULL && i < n; i++) {
        PyList_SET_ITEM(out, i, PyLong_FromLong(actions[i]));
    }
done:
    free(paths);
    free(lens);
    free(kinds);
    free(actions);
    Py_XDECREF(keep);
    Py_DECREF(seq);
    Py_DECREF(kseq);
    return out;
}

/* An optional str of a listed entry, encoded into `keep` (the previous entry's when it
 * is the same object: roots and patterns repeat). */
static int entry_text(PyObject *keep, PyObject *obj, PyObject **last, const char **s, size_t *n) {
    if (obj == Py_None || obj == *last) { /* None: the caller sets NULL, keeping *s for later */
        return 0;
    }
    if ((*s = encode_kept(keep, obj)) == NULL) {
        return -1;
    }
    *n = (size_t)PyBytes_GET_SIZE(PyList_GET_ITEM(keep, PyList_GET_SIZE(keep) - 1));
    *last = obj;
    return 0;
}

/* plan(entries, nitems, prefixes, infer_files): entries a sequence of (path, root,
 * pattern, intent, size, mtime_ns, item, fallback). Returns (files, empty_item, layout,
 * splits, tfds_dir, picks): see tfsql/_native.pyi. */
static PyObject *rules_plan(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *entries_arg, *prefixes_arg, *infer_arg;
    Py_ssize_t nitems;
    if (!PyArg_ParseTuple(args, "OnOO:plan", &entries_arg, &nitems, &prefixes_arg, &infer_arg)) {
        return NULL;
    }
    long long infer_files = infer_arg == Py_None ? -1 : PyLong_AsLongLong(infer_arg);
    if (infer_files == -1 && PyErr_Occurred()) {
        return NULL;
    }
    PyObject *seq = PySequence_Fast(entries_arg, "plan expects a sequence of entries");
    PyObject *pseq = seq ? PySequence_Fast(prefixes_arg, "plan expects a sequence of prefixes") : NULL;
    if (pseq == NULL) {
        Py_XDECREF(seq);
        return NULL;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq), np = PySequence_Fast_GET_SIZE(pseq);
    PyObject *keep = PyList_New(0), *out = NULL;
    tfsql_listed *entries = (tfsql_listed *)calloc((size_t)n + 1, sizeof(tfsql_listed));
    const char **prefixes = (const char **)malloc(((size_t)np + 1) * sizeof(char *));
    tfsql_plan_result r;
    memset(&r, 0, sizeof(r));
    int planned = 0;
    if (keep == NULL || entries == NULL || prefixes == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < np; i++) {
        if ((prefixes[i] = encode_kept(keep, PySequence_Fast_GET_ITEM(pseq, i))) == NULL) {
            goto done;
        }
    }
    PyObject *last_root = NULL, *last_pattern = NULL;
    const char *root = NULL, *pattern = NULL;
    size_t root_len = 0, pattern_len = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *t = PySequence_Fast_GET_ITEM(seq, i), *path, *root_obj, *pattern_obj, *intent;
        unsigned long long size, mtime;
        Py_ssize_t item;
        int fallback;
        tfsql_listed *e = &entries[i];
        if (!PyTuple_Check(t) || !PyArg_ParseTuple(t, "UOOOKKnp:plan entry", &path, &root_obj, &pattern_obj,
                                                   &intent, &size, &mtime, &item, &fallback)) {
            if (!PyErr_Occurred()) {
                PyErr_SetString(PyExc_TypeError, "plan: each entry is (path, root, pattern, intent, size, "
                                                 "mtime_ns, item, fallback)");
            }
            goto done;
        }
        if ((e->path = encode_kept(keep, path)) == NULL) {
            goto done;
        }
        e->path_len = (size_t)PyBytes_GET_SIZE(PyList_GET_ITEM(keep, PyList_GET_SIZE(keep) - 1));
        if (entry_text(keep, root_obj, &last_root, &root, &root_len) ||
            entry_text(keep, pattern_obj, &last_pattern, &pattern, &pattern_len)) {
            goto done;
        }
        e->root = root_obj == Py_None ? NULL : root;
        e->root_len = root_obj == Py_None ? 0 : root_len;
        e->pattern = pattern_obj == Py_None ? NULL : pattern;
        e->pattern_len = pattern_obj == Py_None ? 0 : pattern_len;
        if (intent != Py_None) {
            if (!PyBytes_Check(intent)) {
                PyErr_SetString(PyExc_TypeError, "plan: an entry's intent is bytes or None");
                goto done;
            }
            e->intent = PyBytes_AS_STRING(intent);
            e->intent_len = (size_t)PyBytes_GET_SIZE(intent);
        }
        e->size = size;
        e->mtime_ns = mtime;
        e->item = (size_t)item;
        e->fallback = fallback;
    }
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = tfsql_plan(entries, (size_t)n, (size_t)nitems, prefixes, (size_t)np, infer_files, &r);
    Py_END_ALLOW_THREADS
    if (rc != TFSQL_PLAN_OK) {
        PyErr_NoMemory();
        goto done;
    }
    planned = 1;
    PyObject *files = PyList_New((Py_ssize_t)r.n), *picks = PyList_New((Py_ssize_t)r.npicks);
    PyObject *splits = r.layout != TFSQL_LAYOUT_NONE ? PyList_New((Py_ssize_t)r.n) : Py_NewRef(Py_None);
    PyObject *tfds_dir = Py_None;
    Py_INCREF(tfds_dir);
    int bad = files == NULL || picks == NULL || splits == NULL;
    for (size_t i = 0; !bad && i < r.n; i++) {
        const tfsql_listed *e = &entries[r.files[i]];
        PyList_SET_ITEM(files, (Py_ssize_t)i, PyLong_FromSize_t(r.files[i]));
        if (r.layout != TFSQL_LAYOUT_NONE) {
            PyObject *split = decode_path(e->path + r.split_start[i], r.split_len[i]);
            bad = split == NULL;
            if (!bad) {
                PyList_SET_ITEM(splits, (Py_ssize_t)i, split);
            }
        }
    }
    for (size_t i = 0; !bad && i < r.npicks; i++) {
        PyList_SET_ITEM(picks, (Py_ssize_t)i, PyLong_FromSize_t(r.picks[i]));
    }
    if (!bad && r.has_tfds_dir) {
        Py_DECREF(tfds_dir);
        tfds_dir = decode_path(entries[r.files[0]].path, r.tfds_dir_len);
        bad = tfds_dir == NULL;
    }
    if (bad) {
        Py_XDECREF(files);
        Py_XDECREF(picks);
        Py_XDECREF(splits);
        Py_XDECREF(tfds_dir);
        goto done;
    }
    out = Py_BuildValue("(NNiNNN)", files, r.empty_item < 0 ? Py_NewRef(Py_None) : PyLong_FromLong(r.empty_item),
                        r.layout, splits, tfds_dir, picks);
done:
    if (planned) {
        tfsql_plan_result_free(&r);
    }
    free(entries);
    free(prefixes);
    Py_XDECREF(keep);
    Py_DECREF(seq);
    Py_DECREF(pseq);
    return out;
}

PyMethodDef tfsql_rules_methods[] = {
    {"glob_root", rules_glob_root, METH_O,
     "glob_root(pattern) -> str: its longest directory prefix without glob characters"},
    {"glob_exempts", rules_glob_exempts, METH_O,
     "glob_exempts(component) -> bool: a pattern component that opts hidden names in"},
    {"listing_key", rules_listing_key, METH_VARARGS,
     "listing_key(seed, [(path, size, mtime_ns)]) -> int: re-infer only when it changes"},
    {"plan", rules_plan, METH_VARARGS,
     "plan(entries, nitems, prefixes, infer_files) -> (files, empty_item, layout, splits, tfds_dir, picks)"},
    {"plan_matches", rules_plan_matches, METH_VARARGS,
     "plan_matches(paths, kinds, globstar) -> the action for each glob match"},
    {"path_order", rules_path_order, METH_O,
     "path_order(paths) -> the indices of the paths sorted by bytes, repeats dropped"},
    {"path_display", rules_path_display, METH_O,
     "path_display(path) -> str: bytes that are not UTF-8 shown as \\xNN"},
    {"hive_plan", rules_hive_plan, METH_VARARGS,
     "hive_plan(files, whole_path, required, typed, phrases) -> (names, raw, ints) or "
     "('refused', reason, fields, message)"},
    {"index_check", rules_index_check, METH_VARARGS,
     "index_check(text, fd, file_size, spans) -> (count, offsets or None, sizes or None)"},
    {"is_hidden_name", rules_is_hidden_name, METH_O,
     "is_hidden_name(name) -> bool: a path component readers skip"},
    {"has_glob_magic", rules_has_glob_magic, METH_O,
     "has_glob_magic(path) -> bool: the path holds *, ? or ["},
    {"keep_listed", rules_keep_listed, METH_VARARGS,
     "keep_listed(rel, exempt) -> bool: a listed file (path below the root) is data"},
    {"hive_segments", rules_hive_segments, METH_O,
     "hive_segments(directory) -> list of (key, value or None), unescaped"},
    {"hive_unescape", rules_hive_unescape, METH_O,
     "hive_unescape(text) -> str: every %XX (two hex digits) becomes U+00XX"},
    {"hive_int64", rules_hive_int64, METH_O,
     "hive_int64(text) -> int or None: the value when a partition value types as int64"},
    {"hive_directory", rules_hive_directory, METH_VARARGS,
     "hive_directory(path, root, whole_path) -> str: the directories hive columns come from"},
    {"tfds_split", rules_tfds_split, METH_O, "tfds_split(path) -> str or None"},
    {"tfx_split", rules_tfx_split, METH_O, "tfx_split(rel_dir) -> str or None"},
    {"detect_layout", rules_detect_layout, METH_VARARGS,
     "detect_layout(paths, rel_dirs) -> 0 (none), 1 (TFDS) or 2 (TFX)"},
    {"is_tfds_metadata_name", rules_is_tfds_metadata_name, METH_O,
     "is_tfds_metadata_name(name) -> bool: .json / .txt beside dataset_info.json"},
    {"is_tfds_info_name", rules_is_tfds_info_name, METH_O,
     "is_tfds_info_name(name) -> bool: dataset_info.json"},
    {"layout_owns_column", rules_layout_owns_column, METH_VARARGS,
     "layout_owns_column(layout, name) -> bool: the layout's own split column"},
    {"layout_adds_split", rules_layout_adds_split, METH_VARARGS,
     "layout_adds_split(layout, columns) -> bool: the layout adds its split column"},
    {"feature_list_name", rules_feature_list_name, METH_VARARGS,
     "feature_list_name(column, context) -> str: the feature list a list-of-lists column reads"},
    {"description_root", rules_description_root, METH_VARARGS,
     "description_root(roots, layout) -> bool: the read takes the description in roots[0]"},
    {"written_partitions", rules_written_partitions, METH_VARARGS,
     "written_partitions(user_typed, hive_off, hive, described) -> (described index or -1 per "
     "hive column, number of described columns null in every file)"},
    {"tfds_merge", rules_tfds_merge, METH_VARARGS,
     "tfds_merge(columns, described) -> (described index or -1 per column, appended indices)"},
    {"tfds_features", rules_tfds_features, METH_O,
     "tfds_features(document) -> ([(name, type or None, is_list, class_label)], complete) or None"},
    {"is_description_name", rules_is_description_name, METH_O,
     "is_description_name(name) -> bool: features.json, metadata below a root"},
    {"render_description", rules_render_description, METH_O,
     "render_description([(name, type text, partition)]) -> bytes: features.json"},
    {"parse_description", rules_parse_description, METH_O,
     "parse_description(document) -> [(name, type text, partition)] or None"},
    {"type_parts", rules_type_parts, METH_O,
     "type_parts(text) -> (leaf, unit, tz, precision, scale, width, wraps, shape) or None"},
    {"detect_compression", rules_detect_compression, METH_O,
     "detect_compression(head) -> 'gzip', 'zlib' or None"},
    {"sniff_format", rules_sniff_format, METH_O,
     "sniff_format(head) -> 'parquet', 'orc', 'arrow', 'png', 'jpeg', 'gzip', 'json', 'text' or None"},
    {"index_sidecar_path", rules_index_sidecar_path, METH_O,
     "index_sidecar_path(path) -> str: the index sidecar '.<name>.idx' beside the file"},
    {"index_fresh", rules_index_fresh, METH_VARARGS,
     "index_fresh(index_mtime_ns, file_mtime_ns) -> bool: the sidecar is not older than the file"},
    {"looks_like_sequence_example", rules_looks_like_sequence_example, METH_O,
     "looks_like_sequence_example(record) -> bool: an Example record that is a SequenceExample"},
    {"walk_action", rules_walk_action, METH_VARARGS,
     "walk_action(kind, context) -> what a listing does with an entry"},
    {"intent_parse", rules_intent_parse, METH_O,
     "intent_parse(record) -> dict: the intent record's state, job, trash and paths"},
    {"intent_view", rules_intent_view, METH_VARARGS,
     "intent_view(record, rels) -> per path None (as is), False (left out) or its old path"},
    {NULL, NULL, 0, NULL},
};

int tfsql_rules_add_constants(PyObject *module) {
    static const struct {
        const char *name;
        int value;
    } constants[] = {
        {"ENTRY_FILE", TFSQL_ENTRY_FILE},   {"ENTRY_DIR", TFSQL_ENTRY_DIR},
        {"ENTRY_DIR_LINK", TFSQL_ENTRY_DIR_LINK}, {"ENTRY_OTHER", TFSQL_ENTRY_OTHER},
        {"ENTRY_MISSING", TFSQL_ENTRY_MISSING}, {"NAMED", TFSQL_NAMED},
        {"MATCHED", TFSQL_MATCHED},         {"IN_WALK", TFSQL_IN_WALK},
        {"WALK_READ", TFSQL_WALK_READ},     {"WALK_DESCEND", TFSQL_WALK_DESCEND},
        {"WALK_SKIP", TFSQL_WALK_SKIP},     {"WALK_REFUSE", TFSQL_WALK_REFUSE},
        {"LAYOUT_NONE", TFSQL_LAYOUT_NONE}, {"LAYOUT_TFDS", TFSQL_LAYOUT_TFDS},
        {"LAYOUT_TFX", TFSQL_LAYOUT_TFX},
    };
    for (size_t i = 0; i < sizeof(constants) / sizeof(constants[0]); i++) {
        if (PyModule_AddIntConstant(module, constants[i].name, constants[i].value)) {
            return -1;
        }
    }
    if (PyModule_AddStringConstant(module, "SPLIT_COLUMN", TFSQL_SPLIT_COLUMN)) {
        return -1;
    }
    return PyModule_AddStringConstant(module, "FEATURE_LIST_SUFFIX", TFSQL_FEATURE_LIST_SUFFIX);
}
