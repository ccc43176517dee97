/* tfsql._native.RecordReader (tfsql/_native_reader.c). */
#ifndef TFSQL_NATIVE_READER_H
#define TFSQL_NATIVE_READER_H
#include <Python.h>
#include <stddef.h>
/* Add the RecordReader type and its constants (READER_*) to the module. */
int tfsql_reader_add_types(PyObject *module);
/* A new Buffer of n uninitialised bytes (_native_module.c). */
PyObject *tfsql_new_buffer(size_t n);
#endif
