/* tfsql._native.RecordReader (tfsql/_native_reader.c). */
#ifndef TFSQL_NATIVE_READER_H
#define TFSQL_NATIVE_READER_H
#include <Python.h>
#include <stddef.h>
/* Add the RecordReader type and its constants (READER_*) to the module. */
int tfsql_reader_add_types(PyObject *module);
/* A new Buffer of n uninitialised bytes (_native_module.c). */
PyObject *tfsql_new_buffer(size_t n);
/* The core reader (a record_reader *) of a started RecordReader, its previous window dropped (NULL: `obj`
 * is not one); after a core call on it that returned rc (-1: err), 1 with the Python
 * exception set when it failed (a callback's exception, or err), else 0. The GIL may be
 * released around the call: the reader's callbacks take it. */
void *tfsql_reader_core(PyObject *obj);
int tfsql_reader_failed(PyObject *obj, int rc, const char *err);
#endif
