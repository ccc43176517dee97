/*
 * tfsql/_native_module.c -- the Python binding of the C core: the module
 * tfsql._native (contract: tfsql/_native.pyi). It holds only Python glue: the Buffer,
 * Decoder, Builder and Encoder types, DecodeError, argument parsing and the CRC /
 * framing functions, each calling the core through tfsql/core/tfsql_core.h.
 * Code between Py_BEGIN/END_ALLOW_THREADS touches no Python object.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#if !defined(_WIN32)
#include <errno.h>
#include <unistd.h>
#endif

#include "_native_reader.h"
#include "_native_rules.h"
#include "core/tfsql_core.h"

/* -- the Python Buffer type ----------------------------------------------- */

typedef struct {
    PyObject_HEAD
    uint8_t *data;
    Py_ssize_t len;
} BufferObject;

static PyTypeObject Buffer_Type;

static void Buffer_dealloc(BufferObject *self) {
    free(self->data);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int Buffer_getbuffer(BufferObject *self, Py_buffer *view, int flags) {
    return PyBuffer_FillInfo(view, (PyObject *)self, self->data, self->len, 0, flags);
}

static Py_ssize_t Buffer_length(BufferObject *self) { return self->len; }

static PyObject *Buffer_repr(BufferObject *self) {
    return PyUnicode_FromFormat("<tfsql._native.Buffer of %zd bytes>", self->len);
}

static PyBufferProcs Buffer_as_buffer = {
    (getbufferproc)Buffer_getbuffer,
    NULL,
};

static PySequenceMethods Buffer_as_sequence = {
    .sq_length = (lenfunc)Buffer_length,
};

static PyTypeObject Buffer_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "tfsql._native.Buffer",
    .tp_basicsize = sizeof(BufferObject),
    .tp_dealloc = (destructor)Buffer_dealloc,
    .tp_repr = (reprfunc)Buffer_repr,
    .tp_as_sequence = &Buffer_as_sequence,
    .tp_as_buffer = &Buffer_as_buffer,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Memory owned by the C core, exported through the buffer protocol.",
};

/* Hand the memory of `b` over to a new Buffer object (b is left empty). */
static PyObject *buffer_from_tbuf(tbuf *b) {
    BufferObject *self = PyObject_New(BufferObject, &Buffer_Type);
    if (self == NULL) {
        return NULL;
    }
    self->len = (Py_ssize_t)b->len;
    self->data = tbuf_take(b);
    if (self->data == NULL) {
        Py_DECREF(self);
        return PyErr_NoMemory();
    }
    return (PyObject *)self;
}

PyObject *tfsql_new_buffer(size_t n) {
    BufferObject *self = PyObject_New(BufferObject, &Buffer_Type);
    if (self == NULL) {
        return NULL;
    }
    self->data = (uint8_t *)malloc(n ? n : 1);
    self->len = (Py_ssize_t)n;
    if (self->data == NULL) {
        Py_DECREF(self);
        return PyErr_NoMemory();
    }
    return (PyObject *)self;
}

/* -- borrowing caller buffers --------------------------------------------- */

/* A C-contiguous byte view of any buffer-protocol object. */
static int get_bytes_view(PyObject *obj, Py_buffer *view, const char *what) {
    if (PyObject_GetBuffer(obj, view, PyBUF_SIMPLE) < 0) {
        PyErr_Clear();
        if (PyObject_GetBuffer(obj, view, PyBUF_C_CONTIGUOUS) < 0) {
            PyErr_Format(PyExc_TypeError,
                         "%s must be a C-contiguous object with the buffer protocol, got %s",
                         what, Py_TYPE(obj)->tp_name);
            return -1;
        }
    }
    return 0;
}

static PyObject *DecodeError;

/* Validate and compile `columns`; `what` is "Decoder" or "Encoder". */
static int schema_init(schema *s, int record_type, PyObject *columns, const char *what) {
    memset(s, 0, sizeof(*s));
    if (record_type != EXAMPLE && record_type != SEQUENCE_EXAMPLE && record_type != RAW) {
        PyErr_Format(PyExc_ValueError, "unknown record type %d (expected EXAMPLE=0, "
                     "SEQUENCE_EXAMPLE=1 or RAW=2)", record_type);
        return -1;
    }
    s->record_type = record_type;
    if (record_type == RAW && strcmp(what, "Decoder") == 0) {
        return 0; /* a RAW decoder ignores the columns */
    }
    PyObject *seq = PySequence_Fast(columns, "columns must be a sequence of "
                                             "(name, location, kind, shape) tuples");
    if (seq == NULL) {
        return -1;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    if (n > 0x7fffffff / 4) {
        Py_DECREF(seq);
        PyErr_SetString(PyExc_ValueError, "too many columns");
        return -1;
    }
    s->cols = (colspec *)calloc(n ? (size_t)n : 1, sizeof(colspec));
    if (s->cols == NULL) {
        Py_DECREF(seq);
        PyErr_NoMemory();
        return -1;
    }
    s->ncols = (int)n;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PySequence_Fast_GET_ITEM(seq, i);
        PyObject *name;
        int location, kind, shape;
        if (!PyTuple_Check(item) && !PyList_Check(item)) {
            PyErr_Format(PyExc_TypeError, "%s column %zd must be a (name, location, kind, "
                         "shape) tuple, got %s", what, i, Py_TYPE(item)->tp_name);
            goto fail;
        }
        PyObject *tuple = PySequence_Tuple(item);
        if (tuple == NULL) {
            goto fail;
        }
        if (!PyArg_ParseTuple(tuple, "Oiii;column must be (name, location, kind, shape)",
                              &name, &location, &kind, &shape)) {
            Py_DECREF(tuple);
            goto fail;
        }
        if (!PyBytes_Check(name)) {
            PyErr_Format(PyExc_TypeError, "%s column %zd: name must be bytes, got %s", what, i,
                         Py_TYPE(name)->tp_name);
            Py_DECREF(tuple);
            goto fail;
        }
        colspec *c = &s->cols[i];
        c->name_len = (size_t)PyBytes_GET_SIZE(name);
        c->name = (uint8_t *)malloc(c->name_len ? c->name_len : 1);
        if (c->name == NULL) {
            Py_DECREF(tuple);
            PyErr_NoMemory();
            goto fail;
        }
        memcpy(c->name, PyBytes_AS_STRING(name), c->name_len);
        c->location = location;
        c->kind = kind;
        c->shape = shape;
        if (kind != KIND_BYTES && kind != KIND_FLOAT && kind != KIND_INT64) {
            PyErr_Format(PyExc_ValueError, "%s column %zd (%R): unknown kind %d", what, i,
                         name, kind);
            Py_DECREF(tuple);
            goto fail;
        }
        if (location == FEATURES) {
            if (shape != SCALAR && shape != LIST) {
                PyErr_Format(PyExc_ValueError, "%s column %zd (%R): a FEATURES column is "
                             "SCALAR or LIST, got shape %d", what, i, name, shape);
                Py_DECREF(tuple);
                goto fail;
            }
        } else if (location == FEATURE_LISTS) {
            if (record_type != SEQUENCE_EXAMPLE || shape != LIST_OF_LIST) {
                PyErr_Format(PyExc_ValueError, "%s column %zd (%R): a FEATURE_LISTS column "
                             "needs SEQUENCE_EXAMPLE and shape LIST_OF_LIST", what, i, name);
                Py_DECREF(tuple);
                goto fail;
            }
        } else {
            PyErr_Format(PyExc_ValueError, "%s column %zd (%R): unknown location %d", what, i,
                         name, location);
            Py_DECREF(tuple);
            goto fail;
        }
        Py_DECREF(tuple);
    }
    Py_DECREF(seq);
    seq = NULL;
    if (record_type == RAW) {
        if (s->ncols != 1 || s->cols[0].kind != KIND_BYTES || s->cols[0].shape != SCALAR) {
            PyErr_SetString(PyExc_ValueError, "a RAW Encoder takes exactly one SCALAR BYTES "
                                              "column");
            goto fail;
        }
        return 0;
    }
    int dup = -1;
    int indexed = schema_index(s, &dup);
    if (indexed == -1) {
        PyErr_NoMemory();
        goto fail;
    }
    if (indexed == -2) {
        PyObject *name = PyBytes_FromStringAndSize((const char *)s->cols[dup].name,
                                                   (Py_ssize_t)s->cols[dup].name_len);
        if (name != NULL) {
            PyErr_Format(PyExc_ValueError, "%s column %d (%R) is listed twice", what, dup, name);
            Py_DECREF(name);
        }
        goto fail;
    }
    return 0;
fail:
    Py_XDECREF(seq);
    schema_free(s);
    return -1;
}

/* -- raising DecodeError -------------------------------------------------- */

/* Set obj.name to a new reference `value` and drop it; -1 (an error set) when `value`
 * is NULL or the attribute cannot be set. */
static int set_new_attr(PyObject *obj, const char *name, PyObject *value) {
    if (value == NULL) {
        return -1;
    }
    int rc = PyObject_SetAttrString(obj, name, value);
    Py_DECREF(value);
    return rc < 0 ? -1 : 0;
}

static void raise_decode_error(const char *reason, Py_ssize_t record, int column,
                               int found_kind, PyObject *message) {
    if (message == NULL) {
        return;
    }
    PyObject *exc = PyObject_CallOneArg(DecodeError, message);
    Py_DECREF(message);
    if (exc == NULL) {
        return;
    }
    if (set_new_attr(exc, "reason", PyUnicode_FromString(reason)) == 0 &&
        set_new_attr(exc, "record", PyLong_FromSsize_t(record)) == 0 &&
        set_new_attr(exc, "column", PyLong_FromLong(column)) == 0 &&
        set_new_attr(exc, "found_kind", PyLong_FromLong(found_kind)) == 0) {
        PyErr_SetObject(DecodeError, exc);
    }
    Py_DECREF(exc);
}

static const char *record_type_name(int record_type) {
    return record_type == SEQUENCE_EXAMPLE ? "SequenceExample"
           : record_type == EXAMPLE        ? "Example"
                                           : "raw";
}

/* Turn a dctx error into a Python exception. */
static void raise_dctx_error(const dctx *x, int record_type) {
    Py_ssize_t r = (Py_ssize_t)x->err_record;
    int c = x->err_column;
    PyObject *name = NULL;
    if (c >= 0 && x->sc->cols != NULL && c < x->sc->ncols) {
        name = PyBytes_FromStringAndSize((const char *)x->sc->cols[c].name,
                                         (Py_ssize_t)x->sc->cols[c].name_len);
        if (name == NULL) {
            return;
        }
    }
    switch (x->err) {
    case E_NOMEM:
        PyErr_NoMemory();
        break;
    case E_SPAN:
        PyErr_Format(PyExc_ValueError, "record %zd: its span (offset + length) lies outside "
                     "the buffer", r);
        break;
    case E_DATA_CRC:
        raise_decode_error("data_crc", r, -1, 0, PyUnicode_FromFormat(
            "record %zd: its data CRC does not match its footer; the record is corrupt", r));
        break;
    case E_MALFORMED:
        if (name != NULL) {
            raise_decode_error("malformed", r, c, 0, PyUnicode_FromFormat(
                "record %zd is not a valid %s protobuf (in feature %R, column %d); the "
                "record is corrupt", r, record_type_name(record_type), name, c));
        } else {
            raise_decode_error("malformed", r, -1, 0, PyUnicode_FromFormat(
                "record %zd is not a valid %s protobuf; the record is corrupt or of "
                "another record type", r, record_type_name(record_type)));
        }
        break;
    case E_KIND_MISMATCH: {
        int want = x->sc->cols[c].kind, found = x->err_found_kind;
        raise_decode_error("kind_mismatch", r, c, found, PyUnicode_FromFormat(
            "record %zd: feature %R holds a %s but column %d expects %s", r, name,
            kind_names[found & 3], c, kind_names[want & 3]));
        break;
    }
    case E_NOT_SCALAR:
        raise_decode_error("not_scalar", r, c, 0, PyUnicode_FromFormat(
            "record %zd: feature %R has %llu values but column %d is a scalar", r, name,
            (unsigned long long)x->err_count, c));
        break;
    case E_OVERFLOW:
        if (name != NULL) {
            raise_decode_error("overflow", r, c, 0, PyUnicode_FromFormat(
                "record %zd: column %d (%R) exceeds the 32-bit Arrow offsets of one batch; "
                "decode fewer records at a time", r, c, name));
        } else {
            raise_decode_error("overflow", r, c, 0, PyUnicode_FromFormat(
                "record %zd: the records exceed the 32-bit Arrow offsets of one batch; "
                "decode fewer records at a time", r));
        }
        break;
    default:
        PyErr_SetString(PyExc_SystemError, "tfsql._native: unknown decode error");
    }
    Py_XDECREF(name);
}

/* -- the Decoder type ----------------------------------------------------- */

/* Decoder and Encoder objects are the same thing: a schema (record type and columns)
 * compiled once. */
typedef struct {
    PyObject_HEAD
    schema sc;
    /* a Decoder's memory of its batches' buffer sizes (COL_SIZES per column, see
     * decode_note_sizes), made by its first Builder: NULL until then */
    size_t *sizes;
    int sizes_cols;
} SchemaObject;

typedef SchemaObject DecoderObject;
typedef SchemaObject EncoderObject;

static int schema_object_init(SchemaObject *self, PyObject *args, PyObject *kwds,
                              const char *format, const char *what) {
    static char *kwlist[] = {"record_type", "columns", NULL};
    int record_type;
    PyObject *columns;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, format, kwlist, &record_type, &columns)) {
        return -1;
    }
    schema_free(&self->sc);
    free(self->sizes);
    self->sizes = NULL;
    return schema_init(&self->sc, record_type, columns, what);
}

static void schema_object_dealloc(SchemaObject *self) {
    schema_free(&self->sc);
    free(self->sizes);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int Decoder_init(DecoderObject *self, PyObject *args, PyObject *kwds) {
    return schema_object_init(self, args, kwds, "iO:Decoder", "Decoder");
}

/* A record batch: the buffer and the (offsets, lengths) uint64 arrays of its records;
 * release_batch frees the three views of a batch got with 0. */
static void release_batch(Py_buffer *bv, Py_buffer *ov, Py_buffer *lv) {
    PyBuffer_Release(bv);
    PyBuffer_Release(ov);
    PyBuffer_Release(lv);
}

static int get_batch(PyObject *buf, PyObject *offsets, PyObject *lengths, Py_buffer *bv,
                     Py_buffer *ov, Py_buffer *lv, size_t *n) {
    if (get_bytes_view(buf, bv, "buf") < 0) {
        return -1;
    }
    if (get_bytes_view(offsets, ov, "offsets") < 0) {
        PyBuffer_Release(bv);
        return -1;
    }
    if (get_bytes_view(lengths, lv, "lengths") < 0) {
        PyBuffer_Release(bv);
        PyBuffer_Release(ov);
        return -1;
    }
    if ((ov->len & 7) || (lv->len & 7)) {
        PyErr_SetString(PyExc_ValueError, "offsets and lengths must be uint64 arrays");
    } else if (ov->len != lv->len) {
        PyErr_Format(PyExc_ValueError, "%zd offsets but %zd lengths", ov->len / 8,
                     lv->len / 8);
    } else {
        *n = (size_t)ov->len / 8;
        return 0;
    }
    release_batch(bv, ov, lv);
    return -1;
}

static PyObject *none_or_buffer(tbuf *b, int present) {
    if (!present) {
        Py_RETURN_NONE;
    }
    return buffer_from_tbuf(b);
}

/* The output tuple of one column. */
static PyObject *colbuild_result(colbuild *cb) {
    PyObject *items[8] = {NULL};
    items[0] = none_or_buffer(&cb->validity, cb->null_count != 0);
    items[1] = PyLong_FromLongLong(cb->null_count);
    items[2] = none_or_buffer(&cb->outer, cb->shape != SCALAR);
    items[3] = none_or_buffer(&cb->inner_validity,
                              cb->shape == LIST_OF_LIST && cb->inner_null_count != 0);
    items[4] = PyLong_FromLongLong(cb->inner_null_count);
    items[5] = none_or_buffer(&cb->inner, cb->shape == LIST_OF_LIST);
    items[6] = none_or_buffer(&cb->voffs, cb->kind == KIND_BYTES);
    items[7] = buffer_from_tbuf(&cb->values);
    PyObject *t = PyTuple_New(8);
    for (int i = 0; i < 8; i++) {
        if (items[i] == NULL || t == NULL) {
            for (int j = 0; j < 8; j++) {
                Py_XDECREF(items[j]);
            }
            Py_XDECREF(t);
            return NULL;
        }
    }
    for (int i = 0; i < 8; i++) {
        PyTuple_SET_ITEM(t, i, items[i]);
    }
    return t;
}

static int report_unknown(const dctx *x, PyObject *unknown) {
    for (int i = 0; i < x->n_unknown; i++) {
        PyObject *item = Py_BuildValue("(iy#)", x->unknown[i].loc, (const char *)x->unknown[i].key,
                                       (Py_ssize_t)x->unknown[i].len);
        if (item == NULL || PySet_Add(unknown, item) < 0) {
            Py_XDECREF(item);
            return -1;
        }
        Py_DECREF(item);
    }
    return 0;
}

/* The columns as Decoder.decode returns them (their buffers move to the result). */
static PyObject *decode_results(dctx *x) {
    int ncols = decode_ncols(x->sc);
    PyObject *result = PyList_New(ncols);
    if (result == NULL) {
        return NULL;
    }
    for (int c = 0; c < ncols; c++) {
        PyObject *t = colbuild_result(&x->cb[c]);
        if (t == NULL) {
            Py_DECREF(result);
            return NULL;
        }
        PyList_SET_ITEM(result, c, t);
    }
    return result;
}

static int check_decoder(const schema *sc, PyObject *unknown, const char *what) {
    if (unknown != Py_None && !PySet_Check(unknown)) {
        PyErr_Format(PyExc_TypeError, "%s: unknown must be a set or None", what);
        return -1;
    }
    if (sc->record_type != RAW && sc->cols == NULL) {
        PyErr_SetString(PyExc_ValueError, "Decoder is not initialized");
        return -1;
    }
    return 0;
}

/* The arguments of Decoder.decode and Builder.feed: the records (held until
 * release_batch), the set unknown feature names go into (None: not tracked) and
 * whether to check the data CRCs. */
typedef struct {
    Py_buffer bv, ov, lv;
    size_t n;
    PyObject *unknown;
    int verify;
} feed_args;

/* Parse and check them (`fmt` names the method); 0, or -1 with an exception set. */
static int parse_feed_args(PyObject *args, PyObject *kwds, const char *fmt, const schema *sc,
                           feed_args *fa) {
    static char *kwlist[] = {"buf", "offsets", "lengths", "unknown", "verify", NULL};
    PyObject *bufobj, *offobj, *lenobj;
    fa->unknown = Py_None;
    fa->verify = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, fmt, kwlist, &bufobj, &offobj, &lenobj,
                                     &fa->unknown, &fa->verify)) {
        return -1;
    }
    if (check_decoder(sc, fa->unknown, strchr(fmt, ':') + 1) < 0) {
        return -1;
    }
    return get_batch(bufobj, offobj, lenobj, &fa->bv, &fa->ov, &fa->lv, &fa->n);
}

static PyObject *Decoder_decode(DecoderObject *self, PyObject *args, PyObject *kwds) {
    const schema *sc = &self->sc;
    feed_args fa;
    if (parse_feed_args(args, kwds, "OOO|Op:decode", sc, &fa) < 0) {
        return NULL;
    }
    Py_buffer *bv = &fa.bv, *ov = &fa.ov, *lv = &fa.lv;
    size_t n = fa.n;
    PyObject *unknown = fa.unknown;
    int verify = fa.verify;
    PyObject *result = NULL;
    dctx x;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = decode_begin(&x, sc, n, records_payload((const uint8_t *)lv->buf, n, (size_t)bv->len));
    x.track_unknown = unknown != Py_None;
    if (rc == 0) {
        rc = decode_feed(&x, (const uint8_t *)bv->buf, (size_t)bv->len, (const uint8_t *)ov->buf,
                         (const uint8_t *)lv->buf, n, verify);
    }
    Py_END_ALLOW_THREADS
    x.err = rc;
    if (rc) {
        raise_dctx_error(&x, sc->record_type);
    } else if (unknown == Py_None || report_unknown(&x, unknown) == 0) {
        result = decode_results(&x);
    }
    decode_end(&x);
    release_batch(bv, ov, lv);
    return result;
}

/* -- the Builder type: one batch decoded from several buffers -------------------- */

typedef struct {
    PyObject_HEAD
    DecoderObject *decoder; /* holds the schema */
    dctx x;
    int busy;  /* a feed is running (a Builder is not for two threads at once) */
    int done;  /* finished, or failed: the columns hold a partial record */
} BuilderObject;

static PyTypeObject Builder_Type;

static PyObject *Decoder_builder(DecoderObject *self, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"rows", "payload", NULL};
    Py_ssize_t rows = 0, payload = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|nn:builder", kwlist, &rows, &payload)) {
        return NULL;
    }
    if (rows < 0 || payload < 0) {
        PyErr_SetString(PyExc_ValueError, "builder: rows and payload must be >= 0");
        return NULL;
    }
    if (check_decoder(&self->sc, Py_None, "builder") < 0) {
        return NULL;
    }
    BuilderObject *b = PyObject_New(BuilderObject, &Builder_Type);
    if (b == NULL) {
        return NULL;
    }
    Py_INCREF(self);
    b->decoder = self;
    b->busy = b->done = 0;
    if (self->sizes == NULL) { /* none (out of memory): the builders reserve as without */
        self->sizes_cols = decode_ncols(&self->sc);
        self->sizes = (size_t *)calloc((size_t)self->sizes_cols * COL_SIZES + 1, sizeof(size_t));
    }
    if (decode_begin_sized(&b->x, &self->sc, (size_t)rows, (size_t)payload, self->sizes)) {
        Py_DECREF(b);
        return PyErr_NoMemory();
    }
    return (PyObject *)b;
}

static void Builder_dealloc(BuilderObject *b) {
    decode_end(&b->x);
    Py_XDECREF(b->decoder);
    PyObject_Free(b);
}

static int builder_usable(BuilderObject *b) {
    if (b->busy) {
        PyErr_SetString(PyExc_RuntimeError, "this Builder is in use by another thread");
        return -1;
    }
    if (b->done) {
        PyErr_SetString(PyExc_ValueError, "this Builder is finished (or failed): start another");
        return -1;
    }
    return 0;
}

static PyObject *Builder_feed(BuilderObject *b, PyObject *args, PyObject *kwds) {
    feed_args fa;
    if (builder_usable(b) < 0 || parse_feed_args(args, kwds, "OOO|Op:feed", b->x.sc, &fa) < 0) {
        return NULL;
    }
    Py_buffer *bv = &fa.bv, *ov = &fa.ov, *lv = &fa.lv;
    size_t n = fa.n;
    PyObject *unknown = fa.unknown;
    int verify = fa.verify;
    dctx *x = &b->x;
    x->track_unknown = unknown != Py_None;
    b->busy = 1;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = decode_feed(x, (const uint8_t *)bv->buf, (size_t)bv->len, (const uint8_t *)ov->buf,
                     (const uint8_t *)lv->buf, n, verify);
    Py_END_ALLOW_THREADS
    b->busy = 0;
    x->err = rc;
    int failed = 0;
    if (rc) {
        b->done = 1;
        raise_dctx_error(x, x->sc->record_type);
        failed = 1;
    } else if (unknown != Py_None && report_unknown(x, unknown) < 0) {
        failed = 1;
    }
    release_batch(bv, ov, lv);
    if (failed) {
        return NULL;
    }
    Py_RETURN_NONE;
}

/* Let the decoder remember this batch's buffer sizes (with the GIL: its Builders may
 * run on several threads), so that the next batch starts at about them. */
static void builder_note_sizes(BuilderObject *b) {
    DecoderObject *d = b->decoder;
    if (d->sizes != NULL && d->sizes_cols == decode_ncols(b->x.sc)) {
        decode_note_sizes(&b->x, d->sizes);
    }
}

static PyObject *Builder_finish(BuilderObject *b, PyObject *unused) {
    (void)unused;
    if (builder_usable(b) < 0) {
        return NULL;
    }
    b->done = 1;
    builder_note_sizes(b);
    return decode_results(&b->x);
}

/* -- ArrowColumns: a Builder's columns as one Arrow C data interface struct array -- */

typedef struct {
    PyObject_HEAD
    tfsql_arrow_array arr; /* released (release NULL) once a consumer has taken it over */
    Py_ssize_t nbytes;     /* what the builders held */
} ArrowColumnsObject;

static void ArrowColumns_dealloc(ArrowColumnsObject *self) {
    if (self->arr.release != NULL) {
        self->arr.release(&self->arr);
    }
    PyObject_Free(self);
}

static PyObject *ArrowColumns_address(ArrowColumnsObject *self, void *unused) {
    (void)unused;
    return PyLong_FromVoidPtr(&self->arr);
}

static PyObject *ArrowColumns_length(ArrowColumnsObject *self, void *unused) {
    (void)unused;
    return PyLong_FromLongLong(self->arr.length);
}

static PyObject *ArrowColumns_nbytes(ArrowColumnsObject *self, void *unused) {
    (void)unused;
    return PyLong_FromSsize_t(self->nbytes);
}

static int arrow_columns_usable(ArrowColumnsObject *self) {
    if (self->arr.release == NULL) {
        PyErr_SetString(PyExc_ValueError, "these ArrowColumns were already taken over by a consumer");
        return -1;
    }
    return 0;
}

/* The capsule's destructor: releases the struct unless a consumer took it over. */
static void arrow_array_capsule_free(PyObject *capsule) {
    tfsql_arrow_array *a = (tfsql_arrow_array *)PyCapsule_GetPointer(capsule, "arrow_array");
    if (a == NULL) {
        PyErr_Clear();
        return;
    }
    if (a->release != NULL) {
        a->release(a);
    }
    free(a);
}

static PyObject *ArrowColumns_capsule(ArrowColumnsObject *self, PyObject *unused) {
    (void)unused;
    if (arrow_columns_usable(self) < 0) {
        return NULL;
    }
    tfsql_arrow_array *moved = (tfsql_arrow_array *)malloc(sizeof(*moved));
    if (moved == NULL) {
        return PyErr_NoMemory();
    }
    *moved = self->arr;
    PyObject *capsule = PyCapsule_New(moved, "arrow_array", arrow_array_capsule_free);
    if (capsule == NULL) {
        free(moved);
        return NULL;
    }
    self->arr.release = NULL; /* moved: the capsule (or its consumer) releases it */
    return capsule;
}

static PyObject *ArrowColumns_utf8_invalid(ArrowColumnsObject *self, PyObject *arg) {
    if (arrow_columns_usable(self) < 0) {
        return NULL;
    }
    PyObject *seq = PySequence_Fast(arg, "utf8_invalid: expected a sequence of column indices");
    if (seq == NULL) {
        return NULL;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    int64_t *cols = (int64_t *)malloc((size_t)(n > 0 ? n : 1) * sizeof(int64_t));
    if (cols == NULL) {
        Py_DECREF(seq);
        return PyErr_NoMemory();
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        cols[i] = (int64_t)PyLong_AsLongLong(PySequence_Fast_GET_ITEM(seq, i));
        if (cols[i] == -1 && PyErr_Occurred()) {
            free(cols);
            Py_DECREF(seq);
            return NULL;
        }
    }
    Py_DECREF(seq);
    int64_t bad;
    Py_BEGIN_ALLOW_THREADS
    bad = arrow_columns_utf8_invalid(&self->arr, cols, (size_t)n);
    Py_END_ALLOW_THREADS
    free(cols);
    return PyLong_FromLongLong(bad);
}

static PyMethodDef ArrowColumns_methods[] = {
    {"capsule", (PyCFunction)ArrowColumns_capsule, METH_NOARGS,
     "capsule()\n--\n\nThe struct ArrowArray moved into a PyCapsule named \"arrow_array\" (the\n"
     "Arrow PyCapsule interface), which releases it unless a consumer takes it over; these\n"
     "ArrowColumns are empty after it."},
    {"utf8_invalid", (PyCFunction)ArrowColumns_utf8_invalid, METH_O,
     "utf8_invalid(columns)\n--\n\nThe first position in ``columns`` (column indices) whose column\n"
     "holds a bytes value that is not valid UTF-8 (or is not a bytes column); -1 when none."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef ArrowColumns_getset[] = {
    {"address", (getter)ArrowColumns_address, NULL,
     "the address of the struct ArrowArray (for pyarrow.RecordBatch._import_from_c)", NULL},
    {"length", (getter)ArrowColumns_length, NULL, "rows", NULL},
    {"nbytes", (getter)ArrowColumns_nbytes, NULL, "bytes of its buffers (as the builders held them)", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject ArrowColumns_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "tfsql._native.ArrowColumns",
    .tp_basicsize = sizeof(ArrowColumnsObject),
    .tp_dealloc = (destructor)ArrowColumns_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A Builder's columns as one Arrow C data interface struct array, to be imported\n"
              "once (the importer takes it over); freed with this object otherwise.",
    .tp_getset = ArrowColumns_getset,
    .tp_methods = ArrowColumns_methods,
};

static PyObject *Builder_finish_arrow(BuilderObject *b, PyObject *unused) {
    (void)unused;
    if (builder_usable(b) < 0) {
        return NULL;
    }
    ArrowColumnsObject *out = PyObject_New(ArrowColumnsObject, &ArrowColumns_Type);
    if (out == NULL) {
        return NULL;
    }
    b->done = 1;
    builder_note_sizes(b);
    out->arr.release = NULL; /* nothing to release should the export fail */
    out->nbytes = (Py_ssize_t)decode_built_bytes(&b->x);
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = decode_export_arrow(&b->x, &out->arr);
    decode_end(&b->x); /* the column builders, emptied: freed before the import, not after */
    Py_END_ALLOW_THREADS
    if (rc) {
        Py_DECREF(out);
        return PyErr_NoMemory();
    }
    return (PyObject *)out;
}

static PyObject *Builder_rows(BuilderObject *b, void *unused) {
    (void)unused;
    return PyLong_FromSize_t(b->x.row_base);
}

static PyMethodDef Builder_methods[] = {
    {"feed", (PyCFunction)(void (*)(void))Builder_feed, METH_VARARGS | METH_KEYWORDS,
     "feed(buf, offsets, lengths, unknown=None, verify=False)\n--\n\n"
     "Decode more records (as ``Decoder.decode`` does) into the columns being built; a\n"
     "DecodeError counts records from this call's first and leaves the Builder failed.\n"
     "The buffers may be reused once it returns (nothing points into them)."},
    {"finish", (PyCFunction)Builder_finish, METH_NOARGS,
     "finish()\n--\n\nThe columns of every record fed, as ``Decoder.decode`` returns them."},
    {"finish_arrow", (PyCFunction)Builder_finish_arrow, METH_NOARGS,
     "finish_arrow()\n--\n\nThe columns of every record fed as ArrowColumns: one struct array\n"
     "(child i is column i, typed as Decoder.decode lays it out), imported without a copy."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef Builder_getset[] = {
    {"rows", (getter)Builder_rows, NULL, "records fed so far", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject Builder_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "tfsql._native.Builder",
    .tp_basicsize = sizeof(BuilderObject),
    .tp_dealloc = (destructor)Builder_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Columns decoded from several buffers of records: Decoder.builder().",
    .tp_methods = Builder_methods,
    .tp_getset = Builder_getset,
};

static PyMethodDef Decoder_methods[] = {
    {"decode", (PyCFunction)(void (*)(void))Decoder_decode, METH_VARARGS | METH_KEYWORDS,
     "decode(buf, offsets, lengths, unknown=None)\n--\n\n"
     "Decode the records ``buf[offsets[i]:offsets[i]+lengths[i]]`` (uint64 arrays) into\n"
     "one tuple per column: ``(validity, null_count, outer_offsets, inner_validity,\n"
     "inner_null_count, inner_offsets, value_offsets, values)``. When ``unknown`` is a\n"
     "set, ``(location, name)`` of features no column reads are added to it (up to 16).\n"
     "See ``_native.pyi``."},
    {"builder", (PyCFunction)(void (*)(void))Decoder_builder, METH_VARARGS | METH_KEYWORDS,
     "builder(rows=0, payload=0)\n--\n\n"
     "A Builder that decodes several buffers of records into one set of columns\n"
     "(reserving for about ``rows`` records of ``payload`` bytes). See ``_native.pyi``."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject Decoder_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "tfsql._native.Decoder",
    .tp_basicsize = sizeof(DecoderObject),
    .tp_dealloc = (destructor)schema_object_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Decoder(record_type, columns)\n--\n\n"
              "A decoder compiled once for a record type and ``(name: bytes, location, kind,\n"
              "shape)`` columns. For RAW the columns are ignored and the output is one\n"
              "SCALAR BYTES column of whole payloads.",
    .tp_methods = Decoder_methods,
    .tp_init = (initproc)Decoder_init,
    .tp_new = PyType_GenericNew,
};

static int Encoder_init(EncoderObject *self, PyObject *args, PyObject *kwds) {
    return schema_object_init(self, args, kwds, "iO:Encoder", "Encoder");
}

/* Borrow and check the five arrays of column `c`. `views` has 5 slots. */
static int encoder_column(const colspec *spec, int c, PyObject *item, Py_ssize_t n_rows,
                          Py_buffer *views, int *held, ecol *e) {
    static const char *const names[5] = {"validity", "outer_offsets", "inner_offsets",
                                         "value_offsets", "values"};
    PyObject *seq = PySequence_Fast(item, "each column's arrays must be a tuple");
    if (seq == NULL) {
        return -1;
    }
    if (PySequence_Fast_GET_SIZE(seq) != 5) {
        PyErr_Format(PyExc_ValueError, "Encoder column %d: expected (validity, outer_offsets, "
                     "inner_offsets, value_offsets, values), got %zd items", c,
                     PySequence_Fast_GET_SIZE(seq));
        Py_DECREF(seq);
        return -1;
    }
    for (int k = 0; k < 5; k++) {
        PyObject *obj = PySequence_Fast_GET_ITEM(seq, k);
        if (obj == Py_None) {
            continue;
        }
        char what[64];
        PyOS_snprintf(what, sizeof(what), "Encoder column %d %s", c, names[k]);
        if (get_bytes_view(obj, &views[k], what) < 0) {
            Py_DECREF(seq);
            return -1;
        }
        held[k] = 1;
    }
    Py_DECREF(seq);
    memset(e, 0, sizeof(*e));
    e->spec = spec;
#define COLERR(...)                                                                         \
    do {                                                                                    \
        char msg_[256];                                                                     \
        PyOS_snprintf(msg_, sizeof(msg_), __VA_ARGS__);                                      \
        PyObject *name_ = PyBytes_FromStringAndSize((const char *)spec->name,                \
                                                    (Py_ssize_t)spec->name_len);            \
        if (name_ != NULL) {                                                                \
            PyErr_Format(PyExc_ValueError, "Encoder column %d (%R): %s", c, name_, msg_);    \
            Py_DECREF(name_);                                                               \
        }                                                                                   \
        return -1;                                                                          \
    } while (0)
    if (held[0]) {
        if (views[0].len < n_rows) {
            COLERR("validity has %zd bytes for %zd rows", views[0].len, n_rows);
        }
        e->validity = (const uint8_t *)views[0].buf;
    }
    if (!held[4]) {
        COLERR("values is None");
    }
    e->values = (const uint8_t *)views[4].buf;
    e->values_len = (size_t)views[4].len;
    int64_t items;
    if (spec->kind == KIND_BYTES) {
        if (!held[3]) {
            COLERR("BYTES needs value_offsets");
        }
        if (views[3].len & 7) {
            COLERR("value_offsets must be an int64 array");
        }
        size_t count = (size_t)views[3].len / 8;
        e->vo = (const uint8_t *)views[3].buf;
        if (check_offsets(e->vo, count, (int64_t)e->values_len)) {
            COLERR("value_offsets are decreasing or point outside the %zd bytes of values",
                   (Py_ssize_t)e->values_len);
        }
        items = count ? (int64_t)count - 1 : 0;
    } else {
        size_t width = spec->kind == KIND_INT64 ? 8 : 4;
        if (e->values_len % width) {
            COLERR("values must be an %s array", spec->kind == KIND_INT64 ? "int64" : "float32");
        }
        items = (int64_t)(e->values_len / width);
    }
    if (spec->shape == LIST_OF_LIST) {
        if (!held[2]) {
            COLERR("LIST_OF_LIST needs inner_offsets");
        }
        if (views[2].len & 7) {
            COLERR("inner_offsets must be an int64 array");
        }
        size_t count = (size_t)views[2].len / 8;
        e->inner = (const uint8_t *)views[2].buf;
        if (check_offsets(e->inner, count, items)) {
            COLERR("inner_offsets are decreasing or point outside the %lld values",
                   (long long)items);
        }
        items = count ? (int64_t)count - 1 : 0;
    }
    if (spec->shape != SCALAR) {
        if (!held[1]) {
            COLERR("%s needs outer_offsets", spec->shape == LIST ? "LIST" : "LIST_OF_LIST");
        }
        if (views[1].len & 7) {
            COLERR("outer_offsets must be an int64 array");
        }
        size_t count = (size_t)views[1].len / 8;
        if (count < (size_t)n_rows + 1) {
            COLERR("outer_offsets has %zd items for %zd rows", (Py_ssize_t)count, n_rows);
        }
        e->outer = (const uint8_t *)views[1].buf;
        if (check_offsets(e->outer, count, items)) {
            COLERR("outer_offsets are decreasing or point outside the %lld items",
                   (long long)items);
        }
    } else if (items < n_rows) {
        COLERR("%lld values for %zd rows", (long long)items, n_rows);
    }
#undef COLERR
    return 0;
}

static PyObject *Encoder_encode(EncoderObject *self, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"arrays", "n_rows", NULL};
    PyObject *arrays;
    Py_ssize_t n_rows;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "On:encode", kwlist, &arrays, &n_rows)) {
        return NULL;
    }
    const schema *sc = &self->sc;
    if (sc->cols == NULL) {
        PyErr_SetString(PyExc_ValueError, "Encoder is not initialized");
        return NULL;
    }
    if (n_rows < 0) {
        PyErr_Format(PyExc_ValueError, "n_rows must be >= 0, got %zd", n_rows);
        return NULL;
    }
    PyObject *seq = PySequence_Fast(arrays, "arrays must be a sequence of tuples");
    if (seq == NULL) {
        return NULL;
    }
    int ncols = sc->ncols;
    if (PySequence_Fast_GET_SIZE(seq) != ncols) {
        PyErr_Format(PyExc_ValueError, "expected %d column arrays, got %zd", ncols,
                     PySequence_Fast_GET_SIZE(seq));
        Py_DECREF(seq);
        return NULL;
    }
    PyObject *result = NULL;
    size_t nviews = 5 * (size_t)ncols + 1;
    Py_buffer *views = (Py_buffer *)calloc(nviews, sizeof(Py_buffer));
    int *held = (int *)calloc(nviews, sizeof(int));
    ecol *cols = (ecol *)calloc((size_t)ncols + 1, sizeof(ecol));
    tbuf out = {0}, ends = {0};
    if (views == NULL || held == NULL || cols == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (int c = 0; c < ncols; c++) {
        if (encoder_column(&sc->cols[c], c, PySequence_Fast_GET_ITEM(seq, c), n_rows,
                           views + 5 * c, held + 5 * c, &cols[c]) < 0) {
            goto done;
        }
    }
    int rc;
    size_t bad_row = 0;
    Py_BEGIN_ALLOW_THREADS
    rc = tbuf_reserve(&ends, 8 * (size_t)n_rows + 8) ? EE_NOMEM : 0;
    if (!rc) {
        rc = encode_core(sc, cols, (size_t)n_rows, &out, &ends, &bad_row);
    }
    Py_END_ALLOW_THREADS
    if (rc == EE_NOMEM) {
        PyErr_NoMemory();
        goto done;
    }
    if (rc == EE_NULL_RAW) {
        PyErr_Format(PyExc_ValueError, "RAW record %zd is null; a record cannot be null",
                     (Py_ssize_t)bad_row);
        goto done;
    }
    PyObject *framed = buffer_from_tbuf(&out);
    PyObject *ends_obj = framed ? buffer_from_tbuf(&ends) : NULL;
    if (ends_obj == NULL) {
        Py_XDECREF(framed);
        goto done;
    }
    result = PyTuple_Pack(2, framed, ends_obj);
    Py_DECREF(framed);
    Py_DECREF(ends_obj);
done:
    if (views != NULL && held != NULL) {
        for (size_t k = 0; k < nviews; k++) {
            if (held[k]) {
                PyBuffer_Release(&views[k]);
            }
        }
    }
    free(views);
    free(held);
    free(cols);
    tbuf_free(&out);
    tbuf_free(&ends);
    Py_DECREF(seq);
    return result;
}

static PyMethodDef Encoder_methods[] = {
    {"encode", (PyCFunction)(void (*)(void))Encoder_encode, METH_VARARGS | METH_KEYWORDS,
     "encode(arrays, n_rows)\n--\n\n"
     "Encode ``n_rows`` records from one ``(validity, outer_offsets, inner_offsets,\n"
     "value_offsets, values)`` tuple per column and frame them. Returns ``(framed,\n"
     "ends)``. See ``_native.pyi``."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject Encoder_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "tfsql._native.Encoder",
    .tp_basicsize = sizeof(EncoderObject),
    .tp_dealloc = (destructor)schema_object_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Encoder(record_type, columns)\n--\n\n"
              "An encoder compiled once for a record type and ``(name, location, kind,\n"
              "shape)`` columns (RAW takes one SCALAR BYTES column).",
    .tp_methods = Encoder_methods,
    .tp_init = (initproc)Encoder_init,
    .tp_new = PyType_GenericNew,
};

static PyObject *summarize_result(sctx *s) {
    PyObject *dict = PyDict_New();
    if (dict == NULL) {
        return NULL;
    }
    size_t n = s->stats.len / sizeof(sstat);
    for (size_t i = 0; i < n; i++) {
        sstat *st = sctx_stat(s, (int32_t)i);
        PyObject *key = Py_BuildValue("(iy#)", st->location, (const char *)st->name,
                                      (Py_ssize_t)st->name_len);
        PyObject *val = Py_BuildValue("[KKKKOK]", (unsigned long long)st->kinds,
                                      (unsigned long long)st->present,
                                      (unsigned long long)st->min_len,
                                      (unsigned long long)st->max_len,
                                      st->utf8 ? Py_True : Py_False,
                                      (unsigned long long)st->max_inner);
        if (key == NULL || val == NULL || PyDict_SetItem(dict, key, val) < 0) {
            Py_XDECREF(key);
            Py_XDECREF(val);
            Py_DECREF(dict);
            return NULL;
        }
        Py_DECREF(key);
        Py_DECREF(val);
    }
    return dict;
}

static PyObject *mod_summarize(PyObject *self, PyObject *args, PyObject *kwds) {
    (void)self;
    static char *kwlist[] = {"buf", "offsets", "lengths", "record_type", NULL};
    PyObject *bufobj, *offobj, *lenobj;
    int record_type;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OOOi:summarize", kwlist, &bufobj, &offobj,
                                     &lenobj, &record_type)) {
        return NULL;
    }
    if (record_type != EXAMPLE && record_type != SEQUENCE_EXAMPLE && record_type != RAW) {
        PyErr_Format(PyExc_ValueError, "unknown record type %d", record_type);
        return NULL;
    }
    Py_buffer bv, ov, lv;
    size_t n;
    if (get_batch(bufobj, offobj, lenobj, &bv, &ov, &lv, &n) < 0) {
        return NULL;
    }
    sctx s;
    memset(&s, 0, sizeof(s));
    size_t bad = 0;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = summarize_core(&s, record_type, (const uint8_t *)bv.buf, (size_t)bv.len,
                        (const uint8_t *)ov.buf, (const uint8_t *)lv.buf, n, &bad);
    Py_END_ALLOW_THREADS
    PyObject *result = NULL;
    if (rc == E_NOMEM) {
        PyErr_NoMemory();
    } else if (rc == E_SPAN) {
        PyErr_Format(PyExc_ValueError, "record %zd: its span (offset + length) lies outside "
                     "the buffer", (Py_ssize_t)bad);
    } else if (rc) {
        raise_decode_error("malformed", (Py_ssize_t)bad, -1, 0, PyUnicode_FromFormat(
            "record %zd is not a valid %s protobuf; the record is corrupt or of another "
            "record type", (Py_ssize_t)bad, record_type_name(record_type)));
    } else {
        result = summarize_result(&s);
    }
    tbuf_free(&s.stats);
    tbuf_free(&s.touched);
    free(s.table);
    release_batch(&bv, &ov, &lv);
    return result;
}

/* ======================================================================== */
/* Inference (tfsql/core/infer.c)                                            */
/* ======================================================================== */

static PyObject *InferenceError;

/* The core's inference error as an InferenceError with its fields (NULL with the
 * exception set: out of memory). */
static PyObject *infer_error_object(const infer_error *e) {
    if (e->code == INFER_NOMEM) {
        return PyErr_NoMemory();
    }
    PyObject *exc = PyObject_CallFunction(InferenceError, "s", e->message);
    if (exc == NULL) {
        return NULL;
    }
    if (set_new_attr(exc, "reason", PyUnicode_FromString(infer_reason(e->code))) == 0 &&
        set_new_attr(exc, "feature", PyUnicode_DecodeUTF8(e->feature, (Py_ssize_t)strlen(e->feature), "backslashreplace")) == 0 &&
        set_new_attr(exc, "path", PyUnicode_DecodeUTF8(e->path, (Py_ssize_t)strlen(e->path), "surrogateescape")) == 0 &&
        set_new_attr(exc, "record", PyLong_FromLongLong(e->record)) == 0 &&
        set_new_attr(exc, "offset", PyLong_FromLongLong(e->record >= 0 ? (long long)e->offset : -1)) == 0) {
        return exc;
    }
    Py_DECREF(exc);
    return NULL;
}

/* Raise the core's inference error: InferenceError with its fields. */
static void raise_infer_error(const infer_error *e) {
    PyObject *exc = infer_error_object(e);
    if (exc != NULL) {
        PyErr_SetObject(InferenceError, exc);
        Py_DECREF(exc);
    }
}

typedef struct {
    PyObject_HEAD
    infer_state *state;
    int record_type;
} InferenceObject;

static long long optional_count(PyObject *obj, const char *name, int *failed) {
    *failed = 0;
    if (obj == NULL || obj == Py_None) {
        return -1;
    }
    long long v = PyLong_AsLongLong(obj);
    if (v == -1 && PyErr_Occurred()) {
        *failed = 1;
        return -1;
    }
    if (v < 0) {
        PyErr_Format(PyExc_ValueError, "%s must be None or >= 0, not %lld", name, v);
        *failed = 1;
    }
    return v;
}

static int Inference_init(InferenceObject *self, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"record_type", "infer_sample", "infer_bytes", NULL};
    int record_type;
    PyObject *sample_obj, *bytes_obj;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "iOO:Inference", kwlist, &record_type,
                                     &sample_obj, &bytes_obj)) {
        return -1;
    }
    if (record_type != EXAMPLE && record_type != SEQUENCE_EXAMPLE && record_type != RAW) {
        PyErr_Format(PyExc_ValueError, "unknown record type %d", record_type);
        return -1;
    }
    int failed;
    long long sample = optional_count(sample_obj, "infer_sample", &failed);
    if (failed) {
        return -1;
    }
    long long bytes = optional_count(bytes_obj, "infer_bytes", &failed);
    if (failed) {
        return -1;
    }
    infer_free(self->state);
    self->state = infer_new(record_type, sample, bytes);
    self->record_type = record_type;
    if (self->state == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}

static void Inference_dealloc(InferenceObject *self) {
    infer_free(self->state);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *Inference_begin_file(InferenceObject *self, PyObject *arg) {
    const char *path = PyUnicode_AsUTF8(arg);
    if (path == NULL) {
        return NULL;
    }
    if (infer_begin_file(self->state, path) != INFER_OK) {
        return PyErr_NoMemory();
    }
    Py_RETURN_NONE;
}

static PyObject *Inference_add(InferenceObject *self, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"buf", "offsets", "lengths", "first_index", "base", NULL};
    PyObject *bufobj, *offobj, *lenobj;
    Py_ssize_t first_index;
    unsigned long long base;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OOOnK:add", kwlist, &bufobj, &offobj, &lenobj,
                                     &first_index, &base)) {
        return NULL;
    }
    Py_buffer bv, ov, lv;
    size_t n;
    if (get_batch(bufobj, offobj, lenobj, &bv, &ov, &lv, &n) < 0) {
        return NULL;
    }
    size_t taken = 0;
    int done = 0, rc;
    infer_error err;
    memset(&err, 0, sizeof(err));
    Py_BEGIN_ALLOW_THREADS
    rc = infer_add(self->state, (const uint8_t *)bv.buf, (size_t)bv.len, (const uint8_t *)ov.buf,
                   (const uint8_t *)lv.buf, n, (size_t)first_index, (uint64_t)base, &taken, &done,
                   &err);
    Py_END_ALLOW_THREADS
    release_batch(&bv, &ov, &lv);
    if (rc == INFER_MALFORMED) {
        Py_ssize_t bad = (Py_ssize_t)(err.record - first_index);
        raise_decode_error("malformed", bad, -1, 0, PyUnicode_FromFormat(
            "record %zd is not a valid %s protobuf; the record is corrupt or of another "
            "record type", bad, record_type_name(self->record_type)));
        return NULL;
    }
    if (rc != INFER_OK) {
        raise_infer_error(&err);
        return NULL;
    }
    return Py_BuildValue("(nO)", (Py_ssize_t)taken, done ? Py_True : Py_False);
}

/* sample_file(reader, max_record_bytes, verify, skip_corrupt, tolerant) -> (status,
 * sampled, sequence_hint, error): the core's sample loop (infer_sample_file) over a
 * RecordReader. */
static PyObject *Inference_sample_file(InferenceObject *self, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"reader", "max_record_bytes", "verify", "skip_corrupt", "tolerant", NULL};
    PyObject *reader;
    unsigned long long max_record_bytes;
    infer_sample_options o;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OKppp:sample_file", kwlist, &reader,
                                     &max_record_bytes, &o.verify, &o.skip_corrupt, &o.tolerant)) {
        return NULL;
    }
    o.max_record_bytes = max_record_bytes;
    record_reader *r = (record_reader *)tfsql_reader_core(reader);
    if (r == NULL) {
        PyErr_SetString(PyExc_TypeError, "sample_file needs a started tfsql._native.RecordReader");
        return NULL;
    }
    int sampled = 0, hint = 0, rc;
    infer_error e;
    char err[READER_ERRLEN];
    err[0] = 0;
    Py_BEGIN_ALLOW_THREADS
    rc = infer_sample_file(self->state, r, &o, &sampled, &hint, &e, err);
    Py_END_ALLOW_THREADS
    if (tfsql_reader_failed(reader, rc == INFER_SAMPLE_FAILED ? -1 : 0, err)) {
        return NULL;
    }
    PyObject *error = Py_None;
    Py_INCREF(error);
    if (rc == INFER_SAMPLE_REFUSED) {
        Py_DECREF(error);
        error = infer_error_object(&e);
        if (error == NULL) {
            return NULL;
        }
    }
    return Py_BuildValue("(iOON)", rc, sampled ? Py_True : Py_False, hint ? Py_True : Py_False,
                         error);
}

static PyObject *Inference_resolve(InferenceObject *self, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"lists_always", "schema_hint", NULL};
    int lists_always;
    const char *hint;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "ps:resolve", kwlist, &lists_always, &hint)) {
        return NULL;
    }
    infer_column *cols;
    size_t n;
    infer_error err;
    memset(&err, 0, sizeof(err));
    if (infer_resolve(self->state, lists_always, hint, &cols, &n, &err) != INFER_OK) {
        raise_infer_error(&err);
        return NULL;
    }
    PyObject *list = PyList_New((Py_ssize_t)n);
    for (size_t i = 0; list != NULL && i < n; i++) {
        const infer_column *c = &cols[i];
        PyObject *column = PyUnicode_DecodeUTF8(c->column, (Py_ssize_t)strlen(c->column), "surrogateescape");
        PyObject *item = column == NULL ? NULL : Py_BuildValue("(y#Niiii)", c->name, (Py_ssize_t)c->name_len,
                                                               column, c->location, c->kind, c->shape, c->utf8);
        if (item == NULL) {
            Py_CLEAR(list);
            break;
        }
        PyList_SET_ITEM(list, (Py_ssize_t)i, item);
    }
    infer_columns_free(cols, n);
    return list;
}

/* A sequence of str as UTF-8 names (*names: PyMem_Free it; they live while *seq does). */
static int utf8_names(PyObject *obj, PyObject **seq, const char ***names, Py_ssize_t *n) {
    *seq = PySequence_Fast(obj, "expected a sequence of names");
    if (*seq == NULL) {
        return -1;
    }
    *n = PySequence_Fast_GET_SIZE(*seq);
    *names = (const char **)PyMem_Malloc(((size_t)*n + 1) * sizeof(char *));
    if (*names == NULL) {
        Py_CLEAR(*seq);
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < *n; i++) {
        (*names)[i] = PyUnicode_AsUTF8(PySequence_Fast_GET_ITEM(*seq, i));
        if ((*names)[i] == NULL) {
            PyMem_Free(*names);
            Py_CLEAR(*seq);
            return -1;
        }
    }
    return 0;
}

static PyObject *Inference_check_missing(InferenceObject *self, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"columns", "schema_name", "hint", "described", NULL};
    PyObject *cols_obj, *described_obj = NULL;
    const char *schema_name, *hint;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "Oss|O:check_missing", kwlist, &cols_obj,
                                     &schema_name, &hint, &described_obj)) {
        return NULL;
    }
    PyObject *seq, *dseq = NULL;
    const char **names, **described = NULL;
    Py_ssize_t n, ndescribed = 0;
    if (utf8_names(cols_obj, &seq, &names, &n)) {
        return NULL;
    }
    if (described_obj != NULL && utf8_names(described_obj, &dseq, &described, &ndescribed)) {
        PyMem_Free(names);
        Py_DECREF(seq);
        return NULL;
    }
    infer_error err;
    memset(&err, 0, sizeof(err));
    int rc = infer_check_missing(self->state, names, (size_t)n, described, (size_t)ndescribed,
                                 schema_name, hint, &err);
    PyMem_Free(names);
    PyMem_Free(described);
    Py_DECREF(seq);
    Py_XDECREF(dseq);
    if (rc == INFER_NOMEM) {
        return PyErr_NoMemory();
    }
    if (rc != INFER_OK) {
        raise_infer_error(&err);
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyObject *Inference_get_records_wanted(InferenceObject *self, void *closure) {
    (void)closure;
    long long wanted = infer_records_wanted(self->state);
    if (wanted < 0) {
        Py_RETURN_NONE;
    }
    return PyLong_FromLongLong(wanted);
}

static PyObject *Inference_get_sampled_records(InferenceObject *self, void *closure) {
    (void)closure;
    return PyLong_FromUnsignedLongLong(infer_sampled_records(self->state));
}

static PyObject *Inference_get_sampled_bytes(InferenceObject *self, void *closure) {
    (void)closure;
    return PyLong_FromUnsignedLongLong(infer_sampled_bytes(self->state));
}

static PyMethodDef Inference_methods[] = {
    {"begin_file", (PyCFunction)Inference_begin_file, METH_O,
     "begin_file(path)\n--\n\nStart the sample of the next chosen file."},
    {"add", (PyCFunction)(void (*)(void))Inference_add, METH_VARARGS | METH_KEYWORDS,
     "add(buf, offsets, lengths, first_index, base)\n--\n\nFold the framed records within the "
     "file's budget; returns (records taken, the file's sample is complete)."},
    {"sample_file", (PyCFunction)(void (*)(void))Inference_sample_file, METH_VARARGS | METH_KEYWORDS,
     "sample_file(reader, max_record_bytes, verify, skip_corrupt, tolerant)\n--\n\nRead the current "
     "file's sample through a RecordReader (the core's loop): (status, sampled, sequence_hint, "
     "error)."},
    {"resolve", (PyCFunction)(void (*)(void))Inference_resolve, METH_VARARGS | METH_KEYWORDS,
     "resolve(lists_always, schema_hint)\n--\n\nThe sample's features and their columns: "
     "[(name, column, location, kind, shape, utf8)] in first-seen order."},
    {"check_missing", (PyCFunction)(void (*)(void))Inference_check_missing, METH_VARARGS | METH_KEYWORDS,
     "check_missing(columns, schema_name, hint, described=())\n--\n\nRaise InferenceError (reason "
     "'missing') naming the columns no sampled feature holds and the dataset's description does "
     "not name (none raised when the sample holds no feature)."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef Inference_getset[] = {
    {"records_wanted", (getter)Inference_get_records_wanted, NULL,
     "records the current file's sample still takes (None: all)", NULL},
    {"sampled_records", (getter)Inference_get_sampled_records, NULL, "records sampled", NULL},
    {"sampled_bytes", (getter)Inference_get_sampled_bytes, NULL, "payload bytes sampled", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject InferenceType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "tfsql._native.Inference",
    .tp_basicsize = sizeof(InferenceObject),
    .tp_dealloc = (destructor)Inference_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Inference(record_type, infer_sample, infer_bytes)\n--\n\n"
              "Schema inference over framed records, file by file (tfsql/core/infer.c).",
    .tp_methods = Inference_methods,
    .tp_getset = Inference_getset,
    .tp_init = (initproc)Inference_init,
    .tp_new = PyType_GenericNew,
};

static PyObject *mod_pick_files(PyObject *self, PyObject *args, PyObject *kwds) {
    (void)self;
    static char *kwlist[] = {"sizes", "infer_files", NULL};
    PyObject *sizes_obj, *files_obj;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OO:pick_files", kwlist, &sizes_obj, &files_obj)) {
        return NULL;
    }
    int failed;
    long long want = optional_count(files_obj, "infer_files", &failed);
    if (failed) {
        return NULL;
    }
    PyObject *seq = PySequence_Fast(sizes_obj, "sizes must be a sequence of integers");
    if (seq == NULL) {
        return NULL;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    int64_t *sizes = (int64_t *)PyMem_Malloc(((size_t)n + 1) * sizeof(int64_t));
    size_t *out = (size_t *)PyMem_Malloc(((size_t)n + 1) * sizeof(size_t));
    PyObject *result = NULL;
    if (sizes == NULL || out == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PySequence_Fast_GET_ITEM(seq, i);
        sizes[i] = item == Py_None ? -1 : PyLong_AsLongLong(item);
        if (sizes[i] == -1 && PyErr_Occurred()) {
            goto done;
        }
    }
    size_t m = infer_pick_files(sizes, (size_t)n, want, out);
    result = PyList_New((Py_ssize_t)m);
    for (size_t i = 0; result != NULL && i < m; i++) {
        PyObject *v = PyLong_FromSize_t(out[i]);
        if (v == NULL) {
            Py_CLEAR(result);
            break;
        }
        PyList_SET_ITEM(result, (Py_ssize_t)i, v);
    }
done:
    PyMem_Free(sizes);
    PyMem_Free(out);
    Py_DECREF(seq);
    return result;
}

/* ======================================================================== */
/* 9. Module                                                                */
/* ======================================================================== */

/* CRCs of more than this many bytes release the GIL. */
#define CRC_NOGIL_MIN (1 << 16)

static int parse_crc_arg(PyObject *obj, uint32_t *crc) {
    if (obj == NULL) {
        *crc = 0;
        return 0;
    }
    unsigned long long v = PyLong_AsUnsignedLongLong(obj);
    if (v == (unsigned long long)-1 && PyErr_Occurred()) {
        if (PyErr_ExceptionMatches(PyExc_OverflowError)) {
            PyErr_SetString(PyExc_ValueError, "crc must be in [0, 2**32)");
        }
        return -1;
    }
    if (v > 0xffffffffull) {
        PyErr_SetString(PyExc_ValueError, "crc must be in [0, 2**32)");
        return -1;
    }
    *crc = (uint32_t)v;
    return 0;
}

static PyObject *crc_common(PyObject *args, PyObject *kwds, const char *fmt, int software) {
    static char *kwlist[] = {"data", "crc", NULL};
    PyObject *dataobj, *crcobj = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, fmt, kwlist, &dataobj, &crcobj)) {
        return NULL;
    }
    uint32_t crc;
    if (parse_crc_arg(crcobj, &crc) < 0) {
        return NULL;
    }
    Py_buffer v;
    if (get_bytes_view(dataobj, &v, "data") < 0) {
        return NULL;
    }
    const uint8_t *p = (const uint8_t *)v.buf;
    size_t n = (size_t)v.len;
    if (software) {
        crc = ~crc32c_update_sw(~crc, p, n);
    } else if (n >= CRC_NOGIL_MIN) {
        Py_BEGIN_ALLOW_THREADS
        crc = crc32c_value(crc, p, n);
        Py_END_ALLOW_THREADS
    } else {
        crc = crc32c_value(crc, p, n);
    }
    PyBuffer_Release(&v);
    return PyLong_FromUnsignedLong(crc);
}

static PyObject *mod_crc32c(PyObject *self, PyObject *args, PyObject *kwds) {
    (void)self;
    return crc_common(args, kwds, "O|O:crc32c", 0);
}

static PyObject *mod_crc32c_sw(PyObject *self, PyObject *args, PyObject *kwds) {
    (void)self;
    return crc_common(args, kwds, "O|O:_crc32c_sw", 1);
}

static PyObject *mod_masked_crc32c(PyObject *self, PyObject *arg) {
    (void)self;
    Py_buffer v;
    if (get_bytes_view(arg, &v, "data") < 0) {
        return NULL;
    }
    uint32_t crc;
    if (v.len >= CRC_NOGIL_MIN) {
        Py_BEGIN_ALLOW_THREADS
        crc = masked_crc((const uint8_t *)v.buf, (size_t)v.len);
        Py_END_ALLOW_THREADS
    } else {
        crc = masked_crc((const uint8_t *)v.buf, (size_t)v.len);
    }
    PyBuffer_Release(&v);
    return PyLong_FromUnsignedLong(crc);
}

static PyObject *mod_hardware_crc(PyObject *self, PyObject *unused) {
    (void)self;
    (void)unused;
    return PyBool_FromLong(crc_is_hardware);
}

#if !defined(_WIN32)
/* count_headers and header_offsets: walk the headers of a plain file (count_core). */
static PyObject *walk_headers(PyObject *args, PyObject *kwds, const char *format, int with_offsets) {
    static char *kwlist[] = {"fd", "start", "size", "max_length", NULL};
    int fd;
    unsigned long long start, size, max_length;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, format, kwlist, &fd, &start, &size,
                                     &max_length)) {
        return NULL;
    }
    long long count = 0;
    uint64_t end = 0, length = 0;
    int status = 0, rc;
    tbuf offsets = {0};
    Py_BEGIN_ALLOW_THREADS
    rc = count_core(fd, (uint64_t)start, (uint64_t)size, (uint64_t)max_length,
                    with_offsets ? &offsets : NULL, &count, &end, &length, &status);
    Py_END_ALLOW_THREADS
    if (rc) {
        tbuf_free(&offsets);
        return rc == -2 ? PyErr_NoMemory() : PyErr_SetFromErrno(PyExc_OSError);
    }
    if (!with_offsets) {
        return Py_BuildValue("(LKiK)", count, (unsigned long long)end, status,
                             (unsigned long long)length);
    }
    PyObject *o = buffer_from_tbuf(&offsets);
    tbuf_free(&offsets);
    if (o == NULL) {
        return NULL;
    }
    PyObject *result = Py_BuildValue("(OKiK)", o, (unsigned long long)end, status,
                                     (unsigned long long)length);
    Py_DECREF(o);
    return result;
}

static PyObject *mod_count_headers(PyObject *self, PyObject *args, PyObject *kwds) {
    (void)self;
    return walk_headers(args, kwds, "iKKK:count_headers", 0);
}

static PyObject *mod_header_offsets(PyObject *self, PyObject *args, PyObject *kwds) {
    (void)self;
    return walk_headers(args, kwds, "iKKK:header_offsets", 1);
}
#endif

static PyObject *mod_scan_frames(PyObject *self, PyObject *args, PyObject *kwds) {
    (void)self;
    static char *kwlist[] = {"buf", "start", "max_records", "max_bytes", "verify", NULL};
    PyObject *bufobj;
    Py_ssize_t start = 0;
    long long max_records = -1, max_bytes = -1;
    int verify = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O|nLLp:scan_frames", kwlist, &bufobj, &start,
                                     &max_records, &max_bytes, &verify)) {
        return NULL;
    }
    Py_buffer v;
    if (get_bytes_view(bufobj, &v, "buf") < 0) {
        return NULL;
    }
    if (start < 0 || start > v.len) {
        PyErr_Format(PyExc_ValueError, "start=%zd is outside the buffer of %zd bytes", start,
                     v.len);
        PyBuffer_Release(&v);
        return NULL;
    }
    tbuf offsets = {0}, lengths = {0};
    size_t end = 0;
    int status = 0, rc;
    Py_BEGIN_ALLOW_THREADS
    rc = scan_core((const uint8_t *)v.buf, (size_t)v.len, (size_t)start, max_records, max_bytes,
                   verify, &offsets, &lengths, &end, &status);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&v);
    PyObject *result = NULL;
    if (rc) {
        PyErr_NoMemory();
    } else {
        PyObject *o = buffer_from_tbuf(&offsets);
        PyObject *l = o ? buffer_from_tbuf(&lengths) : NULL;
        if (l != NULL) {
            result = Py_BuildValue("(OOni)", o, l, (Py_ssize_t)end, status);
        }
        Py_XDECREF(o);
        Py_XDECREF(l);
    }
    tbuf_free(&offsets);
    tbuf_free(&lengths);
    return result;
}

static PyObject *mod_find_boundary(PyObject *self, PyObject *args, PyObject *kwds) {
    (void)self;
    static char *kwlist[] = {"buf", "start", "stop", "at_eof", "lookahead", "max_length", NULL};
    PyObject *bufobj;
    Py_ssize_t start = 0, stop = -1, lookahead = 256 << 10;
    long long max_length = -1; /* negative: no limit */
    int at_eof = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O|nnpnL:find_boundary", kwlist, &bufobj,
                                     &start, &stop, &at_eof, &lookahead, &max_length)) {
        return NULL;
    }
    Py_buffer v;
    if (get_bytes_view(bufobj, &v, "buf") < 0) {
        return NULL;
    }
    if (stop < 0) {
        stop = v.len;
    }
    if (start < 0 || start > v.len || stop < start || lookahead < 0) {
        PyErr_Format(PyExc_ValueError, "find_boundary: start=%zd, stop=%zd, lookahead=%zd do "
                     "not fit a buffer of %zd bytes", start, stop, lookahead, v.len);
        PyBuffer_Release(&v);
        return NULL;
    }
    size_t found = 0;
    int status;
    Py_BEGIN_ALLOW_THREADS
    status = find_boundary_core((const uint8_t *)v.buf, (size_t)v.len, (size_t)start,
                                (size_t)stop, at_eof, (size_t)lookahead,
                                max_length < 0 ? UINT64_MAX : (uint64_t)max_length, &found);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&v);
    return Py_BuildValue("(in)", status, (Py_ssize_t)found);
}

static PyObject *mod_plan_pieces(PyObject *self, PyObject *args) {
    (void)self;
    unsigned long long start, stop, piece;
    if (!PyArg_ParseTuple(args, "KKK:plan_pieces", &start, &stop, &piece)) {
        return NULL;
    }
    if (piece == 0) {
        return PyErr_Format(PyExc_ValueError, "plan_pieces: the piece size must be positive");
    }
    size_t n = tfsql_range_count(start, stop, piece);
    PyObject *list = PyList_New((Py_ssize_t)n);
    for (size_t k = 0; list != NULL && k < n; k++) {
        uint64_t from, to;
        tfsql_range_at(start, stop, piece, k, &from, &to);
        PyObject *item = Py_BuildValue("(KK)", (unsigned long long)from, (unsigned long long)to);
        if (item == NULL) {
            Py_CLEAR(list);
            break;
        }
        PyList_SET_ITEM(list, (Py_ssize_t)k, item);
    }
    return list;
}

static PyObject *mod_encode_frames(PyObject *self, PyObject *args, PyObject *kwds) {
    (void)self;
    static char *kwlist[] = {"data", "value_offsets", NULL};
    PyObject *dataobj, *offobj;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OO:encode_frames", kwlist, &dataobj,
                                     &offobj)) {
        return NULL;
    }
    Py_buffer dv, ov;
    if (get_bytes_view(dataobj, &dv, "data") < 0) {
        return NULL;
    }
    if (get_bytes_view(offobj, &ov, "value_offsets") < 0) {
        PyBuffer_Release(&dv);
        return NULL;
    }
    PyObject *result = NULL;
    tbuf out = {0}, ends = {0};
    size_t count = (size_t)ov.len / 8;
    const uint8_t *offs = (const uint8_t *)ov.buf;
    const uint8_t *data = (const uint8_t *)dv.buf;
    if (ov.len & 7) {
        PyErr_SetString(PyExc_ValueError, "value_offsets must be an int64 array");
        goto done;
    }
    if (check_offsets(offs, count, (int64_t)dv.len)) {
        PyErr_Format(PyExc_ValueError, "value_offsets are decreasing or point outside the "
                     "%zd bytes of data", dv.len);
        goto done;
    }
    size_t n = count ? count - 1 : 0;
    int nomem = 0;
    Py_BEGIN_ALLOW_THREADS
    uint64_t first = count ? (uint64_t)load_i64(offs) : 0;
    uint64_t last = count ? (uint64_t)load_i64(offs + 8 * (count - 1)) : 0;
    nomem = tbuf_reserve(&out, (size_t)(last - first) + 16 * n) ||
            tbuf_reserve(&ends, 8 * n + 8);
    for (size_t i = 0; i < n && !nomem; i++) {
        int64_t a = load_i64(offs + 8 * i), b = load_i64(offs + 8 * i + 8);
        size_t len = (size_t)(b - a);
        uint8_t *o = out.data + out.len;
        write_frame_header(o, len);
        memcpy(o + 12, data + a, len);
        store_le32(o + 12 + len, masked_crc(data + a, len));
        out.len += 16 + len;
        uint64_t e = out.len;
        memcpy(ends.data + ends.len, &e, 8);
        ends.len += 8;
    }
    Py_END_ALLOW_THREADS
    if (nomem) {
        PyErr_NoMemory();
        goto done;
    }
    PyObject *framed = buffer_from_tbuf(&out);
    PyObject *ends_obj = framed ? buffer_from_tbuf(&ends) : NULL;
    if (ends_obj != NULL) {
        result = PyTuple_Pack(2, framed, ends_obj);
    }
    Py_XDECREF(framed);
    Py_XDECREF(ends_obj);
done:
    tbuf_free(&out);
    tbuf_free(&ends);
    PyBuffer_Release(&dv);
    PyBuffer_Release(&ov);
    return result;
}

/* A TLOCK_* status as Python: the descriptor held, None (no flock on this mount), or
 * OSError (BlockingIOError when busy; errno e otherwise) naming the path. Takes path_obj. */
static PyObject *lock_result(int rc, int fd, int e, PyObject *path_obj) {
    PyObject *result = NULL;
    if (rc == TLOCK_HELD) {
        result = PyLong_FromLong(fd);
    } else if (rc == TLOCK_UNSUPPORTED) {
        result = Py_NewRef(Py_None);
    } else {
        errno = rc == TLOCK_BUSY ? EWOULDBLOCK : e;
        PyErr_SetFromErrnoWithFilenameObject(PyExc_OSError, path_obj);
    }
    Py_DECREF(path_obj);
    return result;
}

/* target_lock(path, exclusive, wait): the lock of a target directory (tfsql/core/
 * target_lock.c), waiting without the GIL; a signal during the wait runs its Python
 * handler (KeyboardInterrupt raises out of here) and the wait goes on. */
static PyObject *mod_target_lock(PyObject *self, PyObject *args, PyObject *kwargs) {
    (void)self;
    static char *kwlist[] = {"path", "exclusive", "wait", NULL};
    PyObject *path_obj = NULL;
    int exclusive = 1, wait = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O&|pp:target_lock", kwlist, PyUnicode_FSConverter, &path_obj,
                                     &exclusive, &wait)) {
        return NULL;
    }
    const char *path = PyBytes_AS_STRING(path_obj);
    int fd = -1, rc, e;
    for (;;) {
        Py_BEGIN_ALLOW_THREADS
        rc = tfsql_target_lock(path, exclusive, wait, &fd);
        e = errno;
        Py_END_ALLOW_THREADS
        if (rc != TLOCK_ERROR || e != EINTR) {
            break;
        }
        if (PyErr_CheckSignals() < 0) {
            Py_DECREF(path_obj);
            return NULL;
        }
    }
    return lock_result(rc, fd, e, path_obj);
}

/* owner_lock(path): hold the owner lock of a staging directory (tfsql/core/target_lock.c). */
static PyObject *mod_owner_lock(PyObject *self, PyObject *arg) {
    (void)self;
    PyObject *path_obj = NULL;
    if (!PyUnicode_FSConverter(arg, &path_obj)) {
        return NULL;
    }
    int fd = -1;
    int rc = tfsql_owner_lock(PyBytes_AS_STRING(path_obj), &fd);
    return lock_result(rc, fd, errno, path_obj);
}

/* owner_alive(path): whether a staging directory's owner lock is held. */
static PyObject *mod_owner_alive(PyObject *self, PyObject *arg) {
    (void)self;
    PyObject *path_obj = NULL;
    if (!PyUnicode_FSConverter(arg, &path_obj)) {
        return NULL;
    }
    int alive = tfsql_owner_alive(PyBytes_AS_STRING(path_obj));
    Py_DECREF(path_obj);
    return PyBool_FromLong(alive);
}

/* buffer_pool(): (buffers, bytes, reuses, limit) of the core's pool of large freed
 * buffers. */
static PyObject *mod_buffer_pool(PyObject *self, PyObject *unused) {
    (void)self;
    (void)unused;
    size_t count, bytes, reuses;
    tfsql_pool_stats(&count, &bytes, &reuses);
    size_t limit = tfsql_pool_limit();
    return Py_BuildValue("(nnnn)", (Py_ssize_t)count, (Py_ssize_t)bytes, (Py_ssize_t)reuses,
                         (Py_ssize_t)(limit > (size_t)PY_SSIZE_T_MAX ? (size_t)PY_SSIZE_T_MAX : limit));
}

/* buffer_pool_widen(bytes) / buffer_pool_narrow(bytes): a scan's widening of the pool
 * (tfsql_pool_widen), taken back at its end. */
static PyObject *mod_buffer_pool_change(PyObject *arg, int widen) {
    Py_ssize_t bytes = PyLong_AsSsize_t(arg);
    if (bytes == -1 && PyErr_Occurred()) {
        return NULL;
    }
    if (bytes < 0) {
        PyErr_Format(PyExc_ValueError, "bytes must be >= 0, not %zd", bytes);
        return NULL;
    }
    Py_BEGIN_ALLOW_THREADS
    if (widen) {
        tfsql_pool_widen((size_t)bytes);
    } else {
        tfsql_pool_narrow((size_t)bytes);
    }
    Py_END_ALLOW_THREADS
    Py_RETURN_NONE;
}

static PyObject *mod_buffer_pool_widen(PyObject *self, PyObject *arg) {
    (void)self;
    return mod_buffer_pool_change(arg, 1);
}

static PyObject *mod_buffer_pool_narrow(PyObject *self, PyObject *arg) {
    (void)self;
    return mod_buffer_pool_change(arg, 0);
}

/* buffer_pool_clear(): free every buffer the pool keeps. */
/* _buffer_pool_hold(milliseconds): hold the pool's lock that long, without the GIL
 * (tests only: a fork meanwhile must leave the child a usable pool). */
static PyObject *mod_buffer_pool_hold(PyObject *self, PyObject *arg) {
    (void)self;
    unsigned long ms = PyLong_AsUnsignedLong(arg);
    if (ms == (unsigned long)-1 && PyErr_Occurred()) {
        return NULL;
    }
    Py_BEGIN_ALLOW_THREADS
    tfsql_pool_hold((unsigned)ms);
    Py_END_ALLOW_THREADS
    Py_RETURN_NONE;
}

static PyObject *mod_buffer_pool_clear(PyObject *self, PyObject *unused) {
    (void)self;
    (void)unused;
    Py_BEGIN_ALLOW_THREADS
    tfsql_pool_clear();
    Py_END_ALLOW_THREADS
    Py_RETURN_NONE;
}

static PyMethodDef module_methods[] = {
    {"crc32c", (PyCFunction)(void (*)(void))mod_crc32c, METH_VARARGS | METH_KEYWORDS,
     "crc32c(data, crc=0)\n--\n\nUnmasked CRC-32C of ``data``, continuing from ``crc``.\n\n"
     "Examples\n--------\n>>> hex(crc32c(b'123456789'))\n'0xe3069283'"},
    {"_crc32c_sw", (PyCFunction)(void (*)(void))mod_crc32c_sw, METH_VARARGS | METH_KEYWORDS,
     "_crc32c_sw(data, crc=0)\n--\n\nThe portable (table) CRC-32C, for tests."},
    {"masked_crc32c", (PyCFunction)mod_masked_crc32c, METH_O,
     "masked_crc32c(data)\n--\n\nTensorFlow's masked CRC-32C: ``((c >> 15 | c << 17) + "
     "0xa282ead8) & 0xffffffff``."},
    {"hardware_crc", (PyCFunction)mod_hardware_crc, METH_NOARGS,
     "hardware_crc()\n--\n\nWhether the CPU's CRC-32C instruction is in use (decided at "
     "import time;\nset TFSQL_NO_HW_CRC=1 before import to force the portable code)."},
    {"scan_frames", (PyCFunction)(void (*)(void))mod_scan_frames, METH_VARARGS | METH_KEYWORDS,
     "scan_frames(buf, start=0, max_records=-1, max_bytes=-1, verify=True)\n--\n\n"
     "Index the TFRecord frames in ``buf`` from byte ``start``. Returns ``(offsets,\n"
     "lengths, end, status)``; see ``_native.pyi``."},
#if !defined(_WIN32)
    {"count_headers", (PyCFunction)(void (*)(void))mod_count_headers,
     METH_VARARGS | METH_KEYWORDS,
     "count_headers(fd, start, size, max_length)\n--\n\nCount the frames of a plain file "
     "reading only their headers.\nReturns ``(count, end, status, length)``; see "
     "``_native.pyi``."},
    {"header_offsets", (PyCFunction)(void (*)(void))mod_header_offsets,
     METH_VARARGS | METH_KEYWORDS,
     "header_offsets(fd, start, size, max_length)\n--\n\nThe header offsets of the frames of a "
     "plain file, reading only their headers.\nReturns ``(offsets, end, status, length)``; "
     "see ``_native.pyi``."},
#endif
    {"find_boundary", (PyCFunction)(void (*)(void))mod_find_boundary,
     METH_VARARGS | METH_KEYWORDS,
     "find_boundary(buf, start=0, stop=-1, at_eof=True, lookahead=262144)\n--\n\n"
     "The first TFRecord boundary in ``buf[start:stop]`` (resynchronising inside a\n"
     "file). Returns ``(status, pos)``; see ``_native.pyi``."},
    {"plan_pieces", (PyCFunction)mod_plan_pieces, METH_VARARGS,
     "plan_pieces(start, stop, piece)\n--\n\nThe byte ranges ``[start, stop)`` is cut into, "
     "``piece`` bytes each; see ``_native.pyi``."},
    {"encode_frames", (PyCFunction)(void (*)(void))mod_encode_frames,
     METH_VARARGS | METH_KEYWORDS,
     "encode_frames(data, value_offsets)\n--\n\nFrame raw payloads; returns ``(framed, "
     "ends)``."},
    {"summarize", (PyCFunction)(void (*)(void))mod_summarize, METH_VARARGS | METH_KEYWORDS,
     "summarize(buf, offsets, lengths, record_type)\n--\n\nStatistics for schema inference: "
     "``{(location, name): [kinds_mask, present,\nmin_len, max_len, utf8, max_inner_len]}`` "
     "in first-seen order."},
    {"pick_files", (PyCFunction)(void (*)(void))mod_pick_files, METH_VARARGS | METH_KEYWORDS,
     "pick_files(sizes, infer_files)\n--\n\nPositions of the files schema inference samples "
     "(tfsql/core/infer.c)."},
    {"target_lock", (PyCFunction)(void (*)(void))mod_target_lock, METH_VARARGS | METH_KEYWORDS,
     "target_lock(path, exclusive=True, wait=True)\n--\n\nLock the directory ``path`` (a flock "
     "on a descriptor of it; tfsql/core/target_lock.c).\nReturns the descriptor holding it (close "
     "it to release), or None when the mount has no\nflock; BlockingIOError when ``wait`` is false "
     "and another holds it."},
    {"owner_lock", (PyCFunction)mod_owner_lock, METH_O,
     "owner_lock(path)\n--\n\nCreate a staging directory's owner file ``path`` and hold its lock "
     "(the descriptor;\nNone when the mount has no flock)."},
    {"buffer_pool", (PyCFunction)mod_buffer_pool, METH_NOARGS,
     "buffer_pool()\n--\n\n(buffers, bytes, reuses, limit): the large freed output buffers the core "
     "keeps for later\nbatches (tfsql/core/buffer_pool.c), how often one was reused, and the most "
     "bytes kept\n(64 MiB plus the running scans' widening)."},
    {"buffer_pool_widen", (PyCFunction)mod_buffer_pool_widen, METH_O,
     "buffer_pool_widen(bytes)\n--\n\nLet the pool keep `bytes` more while a scan holding several "
     "batches runs."},
    {"buffer_pool_narrow", (PyCFunction)mod_buffer_pool_narrow, METH_O,
     "buffer_pool_narrow(bytes)\n--\n\nTake a scan's widening back (never below 64 MiB), freeing "
     "the oldest buffers above the limit."},
    {"buffer_pool_clear", (PyCFunction)mod_buffer_pool_clear, METH_NOARGS,
     "buffer_pool_clear()\n--\n\nFree every buffer the pool keeps."},
    {"_buffer_pool_hold", (PyCFunction)mod_buffer_pool_hold, METH_O,
     "_buffer_pool_hold(milliseconds)\n--\n\nHold the pool's lock that long (tests only)."},
    {"owner_alive", (PyCFunction)mod_owner_alive, METH_O,
     "owner_alive(path)\n--\n\nWhether the owner file ``path`` exists and its lock is held."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef native_module = {
    PyModuleDef_HEAD_INIT,
    "tfsql._native",
    "tfsql's C core: CRC-32C, TFRecord framing, Example/SequenceExample decode into\n"
    "Arrow buffers and encode. The contract is tfsql/_native.pyi.",
    -1,
    module_methods,
    NULL, /* m_slots */
    NULL, /* m_traverse */
    NULL, /* m_clear */
    NULL, /* m_free */
};

PyMODINIT_FUNC PyInit__native(void) {
    crc_init();
    if (PyType_Ready(&Buffer_Type) < 0 || PyType_Ready(&Decoder_Type) < 0 ||
        PyType_Ready(&Builder_Type) < 0 || PyType_Ready(&ArrowColumns_Type) < 0 ||
        PyType_Ready(&Encoder_Type) < 0 || PyType_Ready(&InferenceType) < 0) {
        return NULL;
    }
    PyObject *m = PyModule_Create(&native_module);
    if (m == NULL) {
        return NULL;
    }
    if (PyModule_AddFunctions(m, tfsql_rules_methods) < 0 || tfsql_rules_add_constants(m) < 0 ||
        tfsql_reader_add_types(m) < 0) {
        goto fail;
    }
    PyObject *attrs = Py_BuildValue("{s:s,s:i,s:i,s:i}", "reason", "malformed", "record", -1,
                                    "column", -1, "found_kind", 0);
    if (attrs == NULL) {
        goto fail;
    }
    DecodeError = PyErr_NewExceptionWithDoc(
        "tfsql._native.DecodeError",
        "A record does not decode for the requested columns.\n\n"
        "Attributes: reason (\"malformed\", \"kind_mismatch\", \"not_scalar\", \"overflow\",\n"
        "\"data_crc\"),\n"
        "record (index in the batch), column (index or -1), found_kind.",
        PyExc_ValueError, attrs);
    Py_DECREF(attrs);
    if (DecodeError == NULL) {
        goto fail;
    }
    Py_INCREF(DecodeError);
    if (PyModule_AddObject(m, "DecodeError", DecodeError) < 0) {
        Py_DECREF(DecodeError);
        goto fail;
    }
    attrs = Py_BuildValue("{s:s,s:s,s:s,s:i,s:i}", "reason", "", "feature", "", "path", "",
                          "record", -1, "offset", -1);
    if (attrs == NULL) {
        goto fail;
    }
    InferenceError = PyErr_NewExceptionWithDoc(
        "tfsql._native.InferenceError",
        "The inference sample does not resolve to columns (tfsql/core/infer.c).\n\n"
        "Attributes: reason (\"kind_conflict\", \"name_taken\", \"name_not_utf8\", \"missing\"),\n"
        "feature, path, record and offset (-1 when none).",
        PyExc_ValueError, attrs);
    Py_DECREF(attrs);
    if (InferenceError == NULL) {
        goto fail;
    }
    Py_INCREF(InferenceError);
    if (PyModule_AddObject(m, "InferenceError", InferenceError) < 0) {
        Py_DECREF(InferenceError);
        goto fail;
    }
    Py_INCREF(&InferenceType);
    if (PyModule_AddObject(m, "Inference", (PyObject *)&InferenceType) < 0) {
        goto fail;
    }
    Py_INCREF(&Buffer_Type);
    Py_INCREF(&Decoder_Type);
    Py_INCREF(&Builder_Type);
    Py_INCREF(&Encoder_Type);
    if (PyModule_AddObject(m, "Buffer", (PyObject *)&Buffer_Type) < 0 ||
        PyModule_AddObject(m, "Decoder", (PyObject *)&Decoder_Type) < 0 ||
        PyModule_AddObject(m, "Builder", (PyObject *)&Builder_Type) < 0 ||
        PyModule_AddObject(m, "Encoder", (PyObject *)&Encoder_Type) < 0) {
        goto fail;
    }
    struct {
        const char *name;
        int value;
    } constants[] = {
        {"EXAMPLE", EXAMPLE},
        {"SEQUENCE_EXAMPLE", SEQUENCE_EXAMPLE},
        {"RAW", RAW},
        {"FEATURES", FEATURES},
        {"FEATURE_LISTS", FEATURE_LISTS},
        {"KIND_NONE", KIND_NONE},
        {"BYTES", KIND_BYTES},
        {"FLOAT", KIND_FLOAT},
        {"INT64", KIND_INT64},
        {"SCALAR", SCALAR},
        {"LIST", LIST},
        {"LIST_OF_LIST", LIST_OF_LIST},
        {"FRAME_OK", FRAME_OK},
        {"FRAME_TRUNCATED", FRAME_TRUNCATED},
        {"FRAME_BAD_LENGTH_CRC", FRAME_BAD_LENGTH_CRC},
        {"FRAME_BAD_DATA_CRC", FRAME_BAD_DATA_CRC},
        {"FRAME_TOO_LONG", FRAME_TOO_LONG},
        {"BOUNDARY_FOUND", BOUNDARY_FOUND},
        {"BOUNDARY_NONE", BOUNDARY_NONE},
        {"BOUNDARY_MORE", BOUNDARY_MORE},
        {"RESYNC_LOOKAHEAD", (int)READER_RESYNC_LOOKAHEAD},
        {"SAMPLE_OK", INFER_SAMPLE_OK},
        {"SAMPLE_DAMAGE", INFER_SAMPLE_DAMAGE},
        {"SAMPLE_REFUSED", INFER_SAMPLE_REFUSED},
    };
    for (size_t i = 0; i < sizeof(constants) / sizeof(constants[0]); i++) {
        if (PyModule_AddIntConstant(m, constants[i].name, constants[i].value) < 0) {
            goto fail;
        }
    }
    return m;
fail:
    Py_DECREF(m);
    return NULL;
}
