/*
 * tfsql/_native_reader.c -- tfsql._native.RecordReader: the core's record reader
 * (tfsql/core/reader.c) for Python, over a read callback.
 *
 * The bytes come from a file descriptor (pread, the GIL released: local files) or from
 * a Python callable read(view, offset) -> bytes read (any file object: fsspec, a
 * progress counter, an interrupt check). Every window is fresh -- a buffer from the
 * caller's window(n) callable, or one of the module's Buffers -- so the records handed
 * out stay valid while the caller holds them (decode threads do) and nothing is copied
 * but the start of a record that straddles two windows. gzip / zlib files are inflated
 * with zlib loaded at run time (tfsql/core/zlib_load.c).
 *
 * The GIL is released around the core's calls; a Python callback takes it back for
 * its own call (PyGILState_Ensure), and an exception it raises ends the call.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdio.h>
#include <string.h>
#if !defined(_WIN32)
#include <errno.h>
#include <unistd.h>
#endif

#include "_native_reader.h"
#include "core/tfsql_core.h"

typedef struct {
    PyObject_HEAD
    record_reader r;
    int fd;
    PyObject *read;   /* callable(view, offset) -> int, or NULL (fd) */
    PyObject *window; /* callable(n) -> writable buffer, or NULL (a Buffer) */
    PyObject *check;  /* callable() before each read (an interrupt check), or NULL */
    PyObject *cur, *prev; /* the windows the reader reads from (prev: while copying) */
    Py_buffer cur_view, prev_view;
    int py_error;
    char *path;
    int started;
} ReaderObject;

/* -- callbacks (called with the GIL released) ------------------------------ */

static int fd_read(ReaderObject *self, uint64_t offset, uint8_t *buf, size_t n, char *err) {
#if defined(_WIN32)
    (void)self;
    (void)offset;
    (void)buf;
    (void)n;
    snprintf(err, READER_ERRLEN, "positioned reads are not available on this platform");
    return -1;
#else
    size_t have = 0;
    while (have < n) {
        ssize_t got = pread(self->fd, buf + have, n - have, (off_t)(offset + have));
        if (got < 0 && errno == EINTR) {
            continue;
        }
        if (got < 0) {
            snprintf(err, READER_ERRLEN, "cannot read %s: %s", self->path, strerror(errno));
            return -1;
        }
        if (got == 0) {
            snprintf(err, READER_ERRLEN, "short read: %s ended at byte %llu", self->path,
                     (unsigned long long)(offset + have));
            return -1;
        }
        have += (size_t)got;
    }
    return 0;
#endif
}

static int py_read(ReaderObject *self, uint64_t offset, uint8_t *buf, size_t n, char *err) {
    PyGILState_STATE g = PyGILState_Ensure();
    int rc = -1;
    size_t have = 0;
    while (have < n) {
        PyObject *view = PyMemoryView_FromMemory((char *)buf + have, (Py_ssize_t)(n - have),
                                                 PyBUF_WRITE);
        PyObject *got = view ? PyObject_CallFunction(self->read, "OK", view,
                                                     (unsigned long long)(offset + have))
                             : NULL;
        if (got != NULL) { /* the callee must not keep it: its memory is the window's */
            PyObject *rel = PyObject_CallMethod(view, "release", NULL);
            if (rel == NULL) {
                Py_CLEAR(got);
            }
            Py_XDECREF(rel);
        }
        Py_XDECREF(view);
        if (got == NULL) {
            self->py_error = 1;
            goto done;
        }
        Py_ssize_t k = PyLong_AsSsize_t(got);
        Py_DECREF(got);
        if (k < 0 && PyErr_Occurred()) {
            self->py_error = 1;
            goto done;
        }
        if (k <= 0 || (size_t)k > n - have) {
            snprintf(err, READER_ERRLEN, "short read: %s ended at byte %llu", self->path,
                     (unsigned long long)(offset + have));
            goto done;
        }
        have += (size_t)k;
    }
    rc = 0;
done:
    PyGILState_Release(g);
    return rc;
}

/* threading.main_thread().ident, known once the first reader is made (with the GIL);
 * reads on that thread also run Python's signal handlers. */
static unsigned long main_ident = 0;

/* Before each read: the interrupt check, and on the main thread Python's signal
 * handlers (Ctrl-C), which otherwise would wait for the core to return -- after a
 * resync through all of a file's damage, however large. */
static int interrupted(ReaderObject *self) {
    int on_main = PyThread_get_thread_ident() == main_ident;
    if (self->check == NULL && !on_main) {
        return 0;
    }
    PyGILState_STATE g = PyGILState_Ensure();
    int failed = on_main && PyErr_CheckSignals() < 0;
    if (!failed && self->check != NULL) {
        PyObject *ok = PyObject_CallNoArgs(self->check);
        failed = ok == NULL;
        Py_XDECREF(ok);
    }
    PyGILState_Release(g);
    if (failed) {
        self->py_error = 1;
    }
    return failed;
}

static int reader_read(void *ctx, uint64_t offset, uint8_t *buf, size_t n, char *err) {
    ReaderObject *self = (ReaderObject *)ctx;
    if (interrupted(self)) {
        return -1;
    }
    return self->read != NULL ? py_read(self, offset, buf, n, err)
                              : fd_read(self, offset, buf, n, err);
}

/* Drop the window before the current one (the reader copied what it needed from it),
 * so that a pool can hand its buffer out again once no block holds it. */
static void drop_previous(ReaderObject *self) {
    if (self->prev != NULL) {
        PyBuffer_Release(&self->prev_view);
        Py_CLEAR(self->prev);
    }
}

static uint8_t *reader_window(void *ctx, size_t n, char *err) {
    ReaderObject *self = (ReaderObject *)ctx;
    PyGILState_STATE g = PyGILState_Ensure();
    uint8_t *data = NULL;
    drop_previous(self);
    PyObject *obj = self->window != NULL ? PyObject_CallFunction(self->window, "n", (Py_ssize_t)n)
                                         : tfsql_new_buffer(n);
    Py_buffer view;
    if (obj == NULL) {
        self->py_error = 1;
        goto done;
    }
    if (PyObject_GetBuffer(obj, &view, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS) < 0) {
        Py_DECREF(obj);
        self->py_error = 1;
        goto done;
    }
    if ((size_t)view.len < n) {
        snprintf(err, READER_ERRLEN, "window(%zu) gave a buffer of %zd bytes", n, view.len);
        PyBuffer_Release(&view);
        Py_DECREF(obj);
        goto done;
    }
    self->prev = self->cur; /* the reader copies its unread bytes from it */
    self->prev_view = self->cur_view;
    self->cur = obj;
    self->cur_view = view;
    data = (uint8_t *)view.buf;
done:
    PyGILState_Release(g);
    return data;
}

/* -- the reader's own buffers, kept for the next file ---------------------- */

/* A scan opens a reader per file (or piece): the buffers of readers that are done (the
 * chunk's offsets and lengths, compressed input) are kept for the next reader, so that
 * their pages are not faulted in afresh per file. Touched only with the GIL held. */
#define SPARE_READERS 4
static tbuf spare[SPARE_READERS][3];
static int spares;

static void keep_buffers(record_reader *r) {
    if (spares < SPARE_READERS) {
        tbuf *kept = spare[spares++];
        kept[0] = r->offs;
        kept[1] = r->lens;
        kept[2] = r->in;
        memset(&r->offs, 0, sizeof(tbuf));
        memset(&r->lens, 0, sizeof(tbuf));
        memset(&r->in, 0, sizeof(tbuf));
    }
}

static void reuse_buffers(record_reader *r) {
    if (spares > 0) {
        tbuf *kept = spare[--spares];
        r->offs = kept[0];
        r->lens = kept[1];
        r->in = kept[2];
        r->offs.len = r->lens.len = r->in.len = 0;
    }
}

/* -- the type ------------------------------------------------------------- */

static void Reader_release(ReaderObject *self) {
    keep_buffers(&self->r);
    reader_free(&self->r);
    drop_previous(self);
    if (self->cur != NULL) {
        PyBuffer_Release(&self->cur_view);
        Py_CLEAR(self->cur);
    }
}

static void Reader_dealloc(ReaderObject *self) {
    if (self->started) {
        Reader_release(self);
    }
    Py_XDECREF(self->read);
    Py_XDECREF(self->window);
    Py_XDECREF(self->check);
    PyMem_Free(self->path);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* Learn main_ident (the GIL held): 0, or -1 with an exception set. */
static int know_main_thread(void) {
    if (main_ident == 0) {
        PyObject *threading = PyImport_ImportModule("threading");
        PyObject *main = threading ? PyObject_CallMethod(threading, "main_thread", NULL) : NULL;
        PyObject *id = main ? PyObject_GetAttrString(main, "ident") : NULL;
        unsigned long ident = id ? PyLong_AsUnsignedLong(id) : 0;
        Py_XDECREF(id);
        Py_XDECREF(main);
        Py_XDECREF(threading);
        if (PyErr_Occurred()) {
            return -1;
        }
        main_ident = ident;
    }
    return 0;
}

static int Reader_init(ReaderObject *self, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"size", "compression", "path", "read", "fd", "window", "start",
                             "first_index", "stop", "read_size", "read_max", "budget", "check",
                             NULL};
    unsigned long long size, start = 0;
    Py_ssize_t first_index = 0, read_size = (Py_ssize_t)READER_WINDOW_READ, read_max = -1;
    long long stop = -1, budget = -1;
    int compression, fd = -1;
    const char *path;
    PyObject *read = Py_None, *window = Py_None, *check = Py_None;
    if (self->started) {
        PyErr_SetString(PyExc_RuntimeError, "RecordReader.__init__ called twice");
        return -1;
    }
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "Kis|$OiOKnLnnLO:RecordReader", kwlist, &size,
                                     &compression, &path, &read, &fd, &window, &start,
                                     &first_index, &stop, &read_size, &read_max, &budget,
                                     &check)) {
        return -1;
    }
    if (compression != READER_PLAIN && compression != READER_GZIP && compression != READER_ZLIB) {
        PyErr_Format(PyExc_ValueError, "unknown compression %d", compression);
        return -1;
    }
    if ((read == Py_None) == (fd < 0)) {
        PyErr_SetString(PyExc_ValueError, "RecordReader needs one of read= and fd=");
        return -1;
    }
    if (read != Py_None && !PyCallable_Check(read)) {
        PyErr_SetString(PyExc_TypeError, "read must be callable");
        return -1;
    }
    if ((window != Py_None && !PyCallable_Check(window)) ||
        (check != Py_None && !PyCallable_Check(check))) {
        PyErr_SetString(PyExc_TypeError, "window and check must be callable");
        return -1;
    }
    if (start > size || read_size <= 0 || first_index < 0 ||
        (start > 0 && compression != READER_PLAIN)) {
        PyErr_SetString(PyExc_ValueError, "RecordReader: start, first_index or read_size out "
                                          "of range (start: plain files only)");
        return -1;
    }
    const reader_zlib *zlib = NULL;
    if (compression != READER_PLAIN && (zlib = tfsql_inflate_zlib()) == NULL) {
        PyErr_Format(PyExc_OSError, "%s: reading compressed files needs the zlib library "
                     "(libz.so.1), which was not found", path);
        return -1;
    }
    size_t n = strlen(path) + 1;
    self->path = (char *)PyMem_Malloc(n);
    if (self->path == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    memcpy(self->path, path, n);
    self->fd = fd;
    if (read != Py_None) {
        Py_INCREF(read);
        self->read = read;
    }
    if (window != Py_None) {
        Py_INCREF(window);
        self->window = window;
    }
    if (check != Py_None) {
        Py_INCREF(check);
        self->check = check;
    }
    if (know_main_thread() != 0) {
        return -1;
    }
    reader_init(&self->r, reader_read, self, size, compression, zlib, self->path);
    reader_start(&self->r, start, (size_t)first_index);
    reuse_buffers(&self->r);
    self->r.window = reader_window;
    self->r.read_size = (size_t)read_size;
    self->r.read_max = read_max < read_size ? (size_t)read_size : (size_t)read_max;
    self->r.budget = budget < 0 ? UINT64_MAX : (uint64_t)budget;
    self->r.stop = stop < 0 ? UINT64_MAX : (uint64_t)stop;
    self->started = 1;
    return 0;
}

/* After a core call: an exception from a callback, the core's error, or NULL-free. */
static int call_failed(ReaderObject *self, int rc, const char *err) {
    if (self->py_error) {
        self->py_error = 0;
        if (!PyErr_Occurred()) {
            PyErr_SetString(PyExc_RuntimeError, "RecordReader: a callback failed");
        }
        return 1;
    }
    if (rc == -1) {
        PyErr_SetString(PyExc_OSError, err);
        return 1;
    }
    return 0;
}

static PyObject *Reader_next(ReaderObject *self, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"max_records", "max_bytes", "max_record_bytes", "verify", NULL};
    reader_limits o = {-1, -1, UINT64_MAX, 1};
    unsigned long long max_record_bytes = UINT64_MAX;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|LLKp:next", kwlist, &o.max_records,
                                     &o.max_bytes, &max_record_bytes, &o.verify)) {
        return NULL;
    }
    if (!self->started) {
        PyErr_SetString(PyExc_RuntimeError, "RecordReader is not initialised");
        return NULL;
    }
    o.max_record_bytes = max_record_bytes;
    drop_previous(self);
    char err[READER_ERRLEN];
    err[0] = 0;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = reader_next(&self->r, &o, err);
    Py_END_ALLOW_THREADS
    if (call_failed(self, rc, err)) {
        return NULL;
    }
    if (rc == 0) {
        Py_RETURN_NONE;
    }
    if (rc == READER_DAMAGE) {
        return PyLong_FromLong(READER_DAMAGE);
    }
    PyObject *offs = PyBytes_FromStringAndSize((const char *)self->r.offs.data,
                                               (Py_ssize_t)self->r.offs.len);
    PyObject *lens = offs ? PyBytes_FromStringAndSize((const char *)self->r.lens.data,
                                                      (Py_ssize_t)self->r.lens.len)
                          : NULL;
    PyObject *result = NULL;
    if (lens != NULL) {
        result = Py_BuildValue("(OOOnK)", self->cur, offs, lens, (Py_ssize_t)self->r.first,
                               (unsigned long long)self->r.base);
    }
    Py_XDECREF(offs);
    Py_XDECREF(lens);
    return result;
}

static PyObject *Reader_skip(ReaderObject *self, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"max_record_bytes", NULL};
    unsigned long long max_record_bytes = UINT64_MAX;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|K:skip", kwlist, &max_record_bytes)) {
        return NULL;
    }
    if (!self->started) {
        PyErr_SetString(PyExc_RuntimeError, "RecordReader is not initialised");
        return NULL;
    }
    drop_previous(self);
    char err[READER_ERRLEN];
    err[0] = 0;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = reader_skip(&self->r, max_record_bytes, err);
    Py_END_ALLOW_THREADS
    if (call_failed(self, rc, err)) {
        return NULL;
    }
    return PyLong_FromLong(rc);
}

static PyObject *Reader_get_damage(ReaderObject *self, void *closure) {
    (void)closure;
    const reader_damage *d = &self->r.damage;
    return Py_BuildValue("(inKKKiKs)", d->status, (Py_ssize_t)d->index,
                         (unsigned long long)d->offset, (unsigned long long)d->length,
                         (unsigned long long)d->limit, d->rest_of_file,
                         (unsigned long long)d->skipped_to, d->detail);
}

static PyObject *Reader_get_chain_end(ReaderObject *self, void *closure) {
    (void)closure;
    if (!self->r.chained) {
        Py_RETURN_NONE;
    }
    return PyLong_FromUnsignedLongLong(self->r.chain_end);
}

static PyObject *Reader_get_consumed(ReaderObject *self, void *closure) {
    (void)closure;
    return PyLong_FromUnsignedLongLong(self->r.consumed);
}

static PyMethodDef Reader_methods[] = {
    {"next", (PyCFunction)(void (*)(void))Reader_next, METH_VARARGS | METH_KEYWORDS,
     "next(max_records=-1, max_bytes=-1, max_record_bytes=2**64-1, verify=True)\n--\n\n"
     "The next chunk of records: ``(window, offsets, lengths, first_index, base)``,\n"
     "None at the end, or ``READER_DAMAGE`` (see ``damage``); see ``_native.pyi``."},
    {"skip", (PyCFunction)(void (*)(void))Reader_skip, METH_VARARGS | METH_KEYWORDS,
     "skip(max_record_bytes=2**64-1)\n--\n\nGo past the damage (``on_corrupt='skip'``): 0, or "
     "``READER_DAMAGE`` when the compressed\nstream itself is damaged on the way."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef Reader_getset[] = {
    {"damage", (getter)Reader_get_damage, NULL,
     "(status, index, offset, length, limit, rest_of_file, skipped_to, detail)", NULL},
    {"chain_end", (getter)Reader_get_chain_end, NULL,
     "Where the next range's first record starts once reading ended cleanly, else None.",
     NULL},
    {"consumed", (getter)Reader_get_consumed, NULL, "Stream bytes read so far.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject Reader_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "tfsql._native.RecordReader",
    .tp_basicsize = sizeof(ReaderObject),
    .tp_dealloc = (destructor)Reader_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "RecordReader(size, compression, path, *, read=None, fd=-1, window=None, "
              "start=0,\n    first_index=0, stop=-1, read_size=262144, read_max=-1, budget=-1, check=None)\n"
              "--\n\nOne file's records through the core's record reader "
              "(tfsql/core/reader.c); see ``_native.pyi``.",
    .tp_methods = Reader_methods,
    .tp_getset = Reader_getset,
    .tp_init = (initproc)Reader_init,
    .tp_new = PyType_GenericNew,
};

int tfsql_reader_add_types(PyObject *module) {
    if (PyType_Ready(&Reader_Type) < 0) {
        return -1;
    }
    Py_INCREF(&Reader_Type);
    if (PyModule_AddObject(module, "RecordReader", (PyObject *)&Reader_Type) < 0) {
        Py_DECREF(&Reader_Type);
        return -1;
    }
    static const struct {
        const char *name;
        int value;
    } constants[] = {
        {"READER_PLAIN", READER_PLAIN},
        {"READER_GZIP", READER_GZIP},
        {"READER_ZLIB", READER_ZLIB},
        {"READER_DAMAGE", READER_DAMAGE},
        {"FRAME_PAST_END", FRAME_PAST_END},
        {"READER_STREAM_CORRUPT", READER_STREAM_CORRUPT},
        {"READER_STREAM_TRUNCATED", READER_STREAM_TRUNCATED},
        {"READER_WINDOW_READ", (int)READER_WINDOW_READ},
    };
    for (size_t i = 0; i < sizeof(constants) / sizeof(constants[0]); i++) {
        if (PyModule_AddIntConstant(module, constants[i].name, constants[i].value) < 0) {
            return -1;
        }
    }
    return 0;
}

/* -- the reader for the module's other core calls (the inference sample loop) ------ */

void *tfsql_reader_core(PyObject *obj) {
    if (!PyObject_TypeCheck(obj, &Reader_Type) || !((ReaderObject *)obj)->started) {
        return NULL;
    }
    drop_previous((ReaderObject *)obj);
    return &((ReaderObject *)obj)->r;
}

int tfsql_reader_failed(PyObject *obj, int rc, const char *err) {
    return call_failed((ReaderObject *)obj, rc, err);
}
