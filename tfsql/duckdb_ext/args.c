/*
 * tfsql/duckdb_ext/args.c -- a call's arguments as the neutral files read them (tfval,
 * tfargs: ext_common.h); each binding fills them from its engine's values.
 */

#include "ext_common.h"

void tfval_free(tfval *v) {
    if (v == NULL) {
        return;
    }
    free(v->text);
    for (size_t i = 0; i < v->n; i++) {
        tfval_free(&v->items[i]);
        if (v->names != NULL) {
            free(v->names[i]);
        }
    }
    free(v->items);
    free(v->names);
    memset(v, 0, sizeof(*v));
}

void tfargs_free(tfargs *a) {
    tfval_free(&a->source);
    for (size_t i = 0; i < a->n; i++) {
        free(a->names[i]);
        tfval_free(&a->values[i]);
    }
    free(a->names);
    free(a->values);
    memset(a, 0, sizeof(*a));
}

int tfargs_add(tfargs *a, const char *name, tfval *v) {
    char **names = (char **)realloc(a->names, (a->n + 1) * sizeof(char *));
    if (names != NULL) {
        a->names = names;
    }
    tfval *values = (tfval *)realloc(a->values, (a->n + 1) * sizeof(tfval));
    if (values != NULL) {
        a->values = values;
    }
    char *copy = xstrdup(name);
    if (names == NULL || values == NULL || copy == NULL) {
        free(copy);
        tfval_free(v);
        return -1;
    }
    a->names[a->n] = copy;
    a->values[a->n] = *v;
    memset(v, 0, sizeof(*v));
    a->n++;
    return 0;
}

const tfval *tfargs_get(const tfargs *a, const char *name) {
    for (size_t i = 0; i < a->n; i++) {
        if (strcasecmp(a->names[i], name) == 0) {
            return &a->values[i];
        }
    }
    return NULL;
}
