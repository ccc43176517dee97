/*
 * tfsql/_core_nopy.h -- what tfsql/_native.c needs from Python.h when it is compiled
 * without Python (TFSQL_NO_PYTHON), as the C core of the DuckDB extension
 * (tfsql/_duckdb_ext.c): the allocators become the C library's.
 */
#ifndef TFSQL_CORE_NOPY_H
#define TFSQL_CORE_NOPY_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

typedef ptrdiff_t Py_ssize_t;
#define PY_SSIZE_T_MAX PTRDIFF_MAX
#define PyMem_RawMalloc malloc
#define PyMem_RawRealloc realloc
#define PyMem_RawFree free
#define PyMem_Malloc malloc
#define PyMem_Calloc calloc
#define PyMem_Free free

#endif
