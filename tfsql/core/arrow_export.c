/*
 * tfsql/core/arrow_export.c -- the columns a decode built, handed over as one Arrow C
 * data interface struct array (no copy, nothing per column for a binding to wrap): a
 * record with a million features becomes one import instead of a million arrays built
 * one by one.
 */

#include "core_internal.h"

/* The private data of one exported array: its buffers and the memory it owns, and the
 * struct of its child (lists have one), which it owns as its parent owns its own. A
 * consumer that moves a struct out (copies it, marking the original released) may
 * release the copy before or after the parent: a release frees only the private data
 * of its array and the structs of its children. */
typedef struct {
    const void *buffers[3];
    void *owned[3];
    size_t owned_cap[3]; /* their sizes: a released buffer goes back to the pool */
    tfsql_arrow_array child;
    tfsql_arrow_array *children[1];
} node;

/* The private data of the struct array of all columns: the children's structs. */
typedef struct {
    tfsql_arrow_array *slots;
    tfsql_arrow_array **children;
    const void *buffers[1];
} root;

static void release_child(tfsql_arrow_array *a) {
    if (a->release != NULL) {
        a->release(a);
    }
}

static void release_node(tfsql_arrow_array *a) {
    node *nd = (node *)a->private_data;
    release_child(&nd->child);
    for (int i = 0; i < 3; i++) {
        pool_give(nd->owned[i], nd->owned_cap[i]);
    }
    free(nd);
    a->release = NULL;
}

static void release_root(tfsql_arrow_array *a) {
    root *r = (root *)a->private_data;
    for (int64_t i = 0; i < a->n_children; i++) {
        release_child(&r->slots[i]);
    }
    free(r->slots);
    free(r->children);
    free(r);
    a->release = NULL;
}

/* Fill `dst` with an array of `length` rows whose buffers move out of the builders'
 * (NULL: none; an absent validity bitmap, null_count 0, is freed at once); its child, if
 * any, is built by the caller into node->child. -1 when out of memory (dst untouched). */
static int new_node(tfsql_arrow_array *dst, int64_t length, int64_t null_count, tbuf *validity,
                    tbuf *b1, tbuf *b2, int has_child) {
    node *nd = (node *)calloc(1, sizeof(node));
    if (nd == NULL) {
        return -1;
    }
    tbuf *bufs[3] = {validity, b1, b2};
    int64_t n_buffers = b2 != NULL ? 3 : 2;
    for (int i = 0; i < n_buffers; i++) {
        if (bufs[i] == NULL || (i == 0 && null_count == 0)) {
            if (bufs[i] != NULL) {
                tbuf_free(bufs[i]);
            }
            continue;
        }
        nd->owned[i] = tbuf_take_sized(bufs[i], &nd->owned_cap[i]);
        if (nd->owned[i] == NULL) {
            for (int j = 0; j < i; j++) {
                free(nd->owned[j]);
            }
            free(nd);
            return -1;
        }
        nd->buffers[i] = nd->owned[i];
    }
    memset(dst, 0, sizeof(*dst));
    dst->length = length;
    dst->null_count = null_count;
    dst->n_buffers = n_buffers;
    dst->buffers = nd->buffers;
    nd->children[0] = &nd->child;
    dst->n_children = has_child ? 1 : 0;
    dst->children = has_child ? nd->children : NULL;
    dst->release = release_node;
    dst->private_data = nd;
    return 0;
}

/* The values of a column into dst (int64, float32 or binary, no nulls). */
static int values_node(tfsql_arrow_array *dst, colbuild *cb) {
    if (cb->kind == KIND_BYTES) {
        return new_node(dst, (int64_t)(cb->voffs.len / 4) - 1, 0, NULL, &cb->voffs, &cb->values, 0);
    }
    size_t width = cb->kind == KIND_INT64 ? 8 : 4;
    return new_node(dst, (int64_t)(cb->values.len / width), 0, NULL, &cb->values, NULL, 0);
}

/* A column of n rows into dst: 0, or -1 when out of memory (what was taken is freed). */
static int column_node(tfsql_arrow_array *dst, colbuild *cb, int64_t n) {
    if (cb->shape == SCALAR) {
        if (cb->kind == KIND_BYTES) {
            return new_node(dst, n, cb->null_count, &cb->validity, &cb->voffs, &cb->values, 0);
        }
        return new_node(dst, n, cb->null_count, &cb->validity, &cb->values, NULL, 0);
    }
    if (new_node(dst, n, cb->null_count, &cb->validity, &cb->outer, NULL, 1)) {
        return -1;
    }
    tfsql_arrow_array *items = &((node *)dst->private_data)->child;
    int rc;
    if (cb->shape == LIST_OF_LIST) {
        rc = new_node(items, (int64_t)(cb->inner.len / 4) - 1, cb->inner_null_count,
                      &cb->inner_validity, &cb->inner, NULL, 1);
        if (rc == 0) {
            rc = values_node(&((node *)items->private_data)->child, cb);
        }
    } else {
        rc = values_node(items, cb);
    }
    if (rc) {
        release_node(dst);
    }
    return rc;
}

int decode_export_arrow(dctx *x, tfsql_arrow_array *out) {
    int ncols = decode_ncols(x->sc);
    size_t slots = ncols > 0 ? (size_t)ncols : 1;
    memset(out, 0, sizeof(*out));
    root *r = (root *)calloc(1, sizeof(root));
    if (r == NULL) {
        return -1;
    }
    r->slots = (tfsql_arrow_array *)calloc(slots, sizeof(*r->slots));
    r->children = (tfsql_arrow_array **)malloc(slots * sizeof(*r->children));
    if (r->slots == NULL || r->children == NULL) {
        free(r->slots);
        free(r->children);
        free(r);
        return -1;
    }
    out->length = (int64_t)x->row_base;
    out->n_buffers = 1;
    out->buffers = r->buffers;
    out->n_children = ncols;
    out->children = r->children;
    out->release = release_root;
    out->private_data = r;
    for (int c = 0; c < ncols; c++) {
        r->children[c] = &r->slots[c];
        if (column_node(&r->slots[c], &x->cb[c], (int64_t)x->row_base)) {
            release_root(out);
            return -1;
        }
    }
    return 0;
}
