/*
 * tfsql/core/arrow_export.c -- the columns a decode built, handed over as one Arrow C
 * data interface struct array (no copy, nothing per column for a binding to wrap): a
 * record with a million features becomes one import instead of a million arrays built
 * one by one. The arrays' private data is one allocation for all of them, and their small
 * buffers (a wide record's one-row columns) are copied into one shared block, so a
 * column costs no allocation of its own: only buffers larger than SMALL_BUFFER move out
 * of the builders as they are.
 */

#include "core_internal.h"

/* Buffers up to this many bytes are copied into the shared block; larger ones move. */
#define SMALL_BUFFER 256

struct root;

/* The private data of one exported array: its buffers, those of them it owns (the large
 * ones), and its child's struct (lists have one; the structs of all children sit in
 * their root's `inner`). Every node sits in its root's array; a release drops the node's
 * reference to the root, which frees everything once the last is dropped. So a consumer
 * that moves a struct out (copies it, marking the original released) may release it
 * before or after the parent. */
typedef struct {
    const void *buffers[3];
    void *owned[3];
    size_t owned_cap[3]; /* their sizes: a released buffer goes back to the pool */
    tfsql_arrow_array *children[1];
    struct root *owner;
} node;

/* The private data of the struct array of all columns: the children's structs, every
 * node, the shared block of small buffers, and the references still held (its own, plus
 * one per node not yet released). */
typedef struct root {
    tfsql_arrow_array *slots;
    tfsql_arrow_array **children;
    node *nodes;
    size_t used_nodes;
    tfsql_arrow_array *inner; /* the structs of lists' children */
    size_t used_inner;
    uint8_t *block;
    size_t used_block;
    int64_t refs;
    const void *buffers[1];
} root;

/* One array of a column, outermost first: its rows, nulls and buffers (a NULL validity,
 * or one with no nulls, is not exported). */
typedef struct {
    int64_t length, null_count;
    tbuf *buf[3];
    int n_buffers;
} nodespec;

static void unref_root(root *r) {
    if (__atomic_sub_fetch(&r->refs, 1, __ATOMIC_ACQ_REL) != 0) {
        return;
    }
    free(r->nodes);
    free(r->inner);
    free(r->block);
    free(r->slots);
    free(r->children);
    free(r);
}

static void release_child(tfsql_arrow_array *a) {
    if (a->release != NULL) {
        a->release(a);
    }
}

static void release_node(tfsql_arrow_array *a) {
    node *nd = (node *)a->private_data;
    if (nd->children[0] != NULL) {
        release_child(nd->children[0]);
    }
    for (int i = 0; i < 3; i++) {
        pool_give(nd->owned[i], nd->owned_cap[i]);
        nd->owned[i] = NULL;
    }
    a->release = NULL;
    unref_root(nd->owner);
}

static void release_root(tfsql_arrow_array *a) {
    root *r = (root *)a->private_data;
    for (int64_t i = 0; i < a->n_children; i++) {
        release_child(&r->slots[i]);
    }
    a->release = NULL;
    unref_root(r);
}

/* The values of a column (int64, float32 or binary, no nulls). */
static nodespec values_spec(colbuild *cb) {
    if (cb->kind == KIND_BYTES) {
        return (nodespec){(int64_t)(cb->voffs.len / 4) - 1, 0, {NULL, &cb->voffs, &cb->values}, 3};
    }
    size_t width = cb->kind == KIND_INT64 ? 8 : 4;
    return (nodespec){(int64_t)(cb->values.len / width), 0, {NULL, &cb->values, NULL}, 2};
}

/* The arrays of a column of n rows into out (1 to 3 of them, outermost first). */
static int column_specs(colbuild *cb, int64_t n, nodespec out[3]) {
    if (cb->shape == SCALAR) {
        if (cb->kind == KIND_BYTES) {
            out[0] = (nodespec){n, cb->null_count, {&cb->validity, &cb->voffs, &cb->values}, 3};
        } else {
            out[0] = (nodespec){n, cb->null_count, {&cb->validity, &cb->values, NULL}, 2};
        }
        return 1;
    }
    out[0] = (nodespec){n, cb->null_count, {&cb->validity, &cb->outer, NULL}, 2};
    if (cb->shape == LIST_OF_LIST) {
        out[1] = (nodespec){(int64_t)(cb->inner.len / 4) - 1, cb->inner_null_count,
                            {&cb->inner_validity, &cb->inner, NULL}, 2};
        out[2] = values_spec(cb);
        return 3;
    }
    out[1] = values_spec(cb);
    return 2;
}

/* Whether buffer i of s is exported (a validity bitmap only with nulls). */
static int exported(const nodespec *s, int i) {
    return s->buf[i] != NULL && (i != 0 || s->null_count != 0);
}

static size_t aligned(size_t n) {
    return (n + 7) & ~(size_t)7;
}

/* Fill dst with the next node of r for s, its buffers copied into r's block (small) or
 * moved out of the builders (large; an unexported validity is freed at once). -1 when
 * out of memory (dst untouched; what was moved is freed). */
static int fill_node(root *r, tfsql_arrow_array *dst, const nodespec *s, int has_child) {
    node *nd = &r->nodes[r->used_nodes];
    for (int i = 0; i < s->n_buffers; i++) {
        tbuf *b = s->buf[i];
        if (!exported(s, i)) {
            if (b != NULL) {
                tbuf_free(b);
            }
            continue;
        }
        if (b->len <= SMALL_BUFFER) {
            uint8_t *at = r->block + r->used_block;
            if (b->len) {
                memcpy(at, b->data, b->len);
            }
            r->used_block += aligned(b->len);
            nd->buffers[i] = at;
            tbuf_free(b);
            continue;
        }
        nd->owned[i] = tbuf_take_sized(b, &nd->owned_cap[i]);
        if (nd->owned[i] == NULL) {
            for (int j = 0; j < i; j++) {
                free(nd->owned[j]);
            }
            memset(nd, 0, sizeof(*nd));
            return -1;
        }
        nd->buffers[i] = nd->owned[i];
    }
    r->used_nodes++;
    r->refs++; /* not yet shared: no consumer has it */
    nd->owner = r;
    memset(dst, 0, sizeof(*dst));
    dst->length = s->length;
    dst->null_count = s->null_count;
    dst->n_buffers = s->n_buffers;
    dst->buffers = nd->buffers;
    nd->children[0] = has_child ? &r->inner[r->used_inner++] : NULL;
    dst->n_children = has_child ? 1 : 0;
    dst->children = has_child ? nd->children : NULL;
    dst->release = release_node;
    dst->private_data = nd;
    return 0;
}

int decode_export_arrow(dctx *x, tfsql_arrow_array *out) {
    int ncols = decode_ncols(x->sc);
    size_t slots = ncols > 0 ? (size_t)ncols : 1;
    int64_t rows = (int64_t)x->row_base;
    memset(out, 0, sizeof(*out));
    /* what every column needs: its nodes, and the bytes of its small buffers */
    size_t nodes = 0, block = 8;
    for (int c = 0; c < ncols; c++) {
        nodespec s[3];
        int k = column_specs(&x->cb[c], rows, s);
        nodes += (size_t)k;
        for (int j = 0; j < k; j++) {
            for (int i = 0; i < s[j].n_buffers; i++) {
                if (exported(&s[j], i) && s[j].buf[i]->len <= SMALL_BUFFER) {
                    block += aligned(s[j].buf[i]->len);
                }
            }
        }
    }
    root *r = (root *)calloc(1, sizeof(root));
    if (r == NULL) {
        return -1;
    }
    r->refs = 1;
    r->slots = (tfsql_arrow_array *)calloc(slots, sizeof(*r->slots));
    r->children = (tfsql_arrow_array **)malloc(slots * sizeof(*r->children));
    r->nodes = (node *)calloc(nodes ? nodes : 1, sizeof(node));
    size_t inner = nodes > (size_t)ncols ? nodes - (size_t)ncols : 1;
    r->inner = (tfsql_arrow_array *)calloc(inner, sizeof(*r->inner));
    r->block = (uint8_t *)malloc(block);
    if (r->slots == NULL || r->children == NULL || r->nodes == NULL || r->inner == NULL ||
        r->block == NULL) {
        unref_root(r);
        return -1;
    }
    out->length = rows;
    out->n_buffers = 1;
    out->buffers = r->buffers;
    out->n_children = ncols;
    out->children = r->children;
    out->release = release_root;
    out->private_data = r;
    for (int c = 0; c < ncols; c++) {
        r->children[c] = &r->slots[c];
        nodespec s[3];
        int k = column_specs(&x->cb[c], rows, s);
        tfsql_arrow_array *dst = &r->slots[c];
        for (int j = 0; j < k; j++) {
            if (fill_node(r, dst, &s[j], j + 1 < k)) {
                release_root(out);
                return -1;
            }
            dst = ((node *)dst->private_data)->children[0];
        }
    }
    return 0;
}

size_t decode_built_bytes(const dctx *x) {
    size_t total = 0;
    int ncols = decode_ncols(x->sc);
    for (int c = 0; c < ncols; c++) {
        const colbuild *cb = &x->cb[c];
        total += cb->validity.len + cb->outer.len + cb->inner_validity.len + cb->inner.len +
                 cb->voffs.len + cb->values.len;
    }
    return total;
}

/* Whether leaf array a holds bytes (validity, int32 offsets, data) each valid UTF-8. */
static int leaf_utf8_valid(const tfsql_arrow_array *a) {
    if (a->n_buffers != 3) {
        return 0; /* not bytes */
    }
    if (a->length <= 0) {
        return 1;
    }
    const int32_t *offsets = (const int32_t *)a->buffers[1];
    const uint8_t *data = (const uint8_t *)a->buffers[2];
    for (int64_t i = a->offset; i < a->offset + a->length; i++) {
        int32_t start = offsets[i], end = offsets[i + 1];
        if (end > start && !utf8_valid(data + start, (size_t)(end - start))) {
            return 0;
        }
    }
    return 1;
}

int64_t arrow_columns_utf8_invalid(const tfsql_arrow_array *columns, const int64_t *cols, size_t n) {
    for (size_t i = 0; i < n; i++) {
        if (cols[i] < 0 || cols[i] >= columns->n_children) {
            return (int64_t)i;
        }
        const tfsql_arrow_array *a = columns->children[cols[i]];
        while (a->n_children == 1) { /* a list's values, a list of lists' innermost */
            a = a->children[0];
        }
        if (a->n_children != 0 || !leaf_utf8_valid(a)) {
            return (int64_t)i;
        }
    }
    return -1;
}
