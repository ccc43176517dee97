/* The dataset-rule functions of tfsql._native (tfsql/_native_rules.c). */
#ifndef TFSQL_NATIVE_RULES_H
#define TFSQL_NATIVE_RULES_H
#include <Python.h>
extern PyMethodDef tfsql_rules_methods[];
/* Add the rules' constants (ENTRY_*, NAMED, WALK_*, LAYOUT_*) to the module. */
int tfsql_rules_add_constants(PyObject *module);
#endif
