/* A record read as an Example that is really a SequenceExample (tfsql_looks_like_sequence_example):
 * Example has no field 2, so a SequenceExample's feature lists would be dropped without a
 * word; each binding warns when a file's first record looks like one. */
#include <stdlib.h>
#include <string.h>

#include "core_internal.h"

/* One FeatureLists entry: its key (the last field 1; "" when missing) and whether a step
 * of its value (every field 2, merged as protobuf merges a repeated message field) has a
 * kind set. */
typedef struct {
    const uint8_t *key;
    size_t key_len, order;
    int kind;
} list_entry;

typedef struct {
    list_entry *items;
    size_t n, cap;
    int nomem;
} entry_list;

/* A Feature field that sets the kind: bytes_list, float_list or int64_list. */
static int feature_field_kind(void *ctx, uint32_t tag, const uint8_t *body, const uint8_t *end) {
    (void)ctx, (void)body, (void)end;
    return feature_kind_field(tag) != KIND_NONE;
}

/* A FeatureList field (feature = 1) that is a Feature with a kind. */
static int step_kind(void *ctx, uint32_t tag, const uint8_t *body, const uint8_t *end) {
    (void)ctx;
    return tag == TAG(1, WT_LEN) && each_len_field(body, end, feature_field_kind, NULL, 0) == 1;
}

/* One field of a FeatureLists entry into the entry. */
static int entry_field(void *ctx, uint32_t tag, const uint8_t *body, const uint8_t *end) {
    list_entry *e = (list_entry *)ctx;
    if (tag == TAG(1, WT_LEN)) {
        e->key = body;
        e->key_len = (size_t)(end - body);
    } else if (tag == TAG(2, WT_LEN) && !e->kind) {
        e->kind = each_len_field(body, end, step_kind, NULL, 0) == 1;
    }
    return 0;
}

/* A FeatureLists field (feature_list = 1: a map entry) onto the list. */
static int lists_field(void *ctx, uint32_t tag, const uint8_t *body, const uint8_t *end) {
    entry_list *l = (entry_list *)ctx;
    if (tag != TAG(1, WT_LEN)) {
        return 0;
    }
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 16;
        list_entry *items = (list_entry *)realloc(l->items, cap * sizeof(*items));
        if (items == NULL) {
            l->nomem = 1;
            return 1;
        }
        l->items = items;
        l->cap = cap;
    }
    list_entry e = {(const uint8_t *)"", 0, l->n, 0};
    (void)each_len_field(body, end, entry_field, &e, 0); /* well formed: checked first */
    l->items[l->n++] = e;
    return 0;
}

/* A SequenceExample field: each feature_lists (2) adds its entries (repeated pieces merge). */
static int record_field(void *ctx, uint32_t tag, const uint8_t *body, const uint8_t *end) {
    return tag == TAG(2, WT_LEN) ? each_len_field(body, end, lists_field, ctx, 0) : 0;
}

static int same_key(const list_entry *x, const list_entry *y) {
    return x->key_len == y->key_len && (x->key_len == 0 || memcmp(x->key, y->key, x->key_len) == 0);
}

/* Entries by key (bytes), then in wire order. */
static int by_key_then_order(const void *a, const void *b) {
    const list_entry *x = (const list_entry *)a, *y = (const list_entry *)b;
    size_t n = x->key_len < y->key_len ? x->key_len : y->key_len;
    int c = n ? memcmp(x->key, y->key, n) : 0;
    if (c != 0) {
        return c;
    }
    if (x->key_len != y->key_len) {
        return x->key_len < y->key_len ? -1 : 1;
    }
    return x->order < y->order ? -1 : x->order > y->order;
}

int tfsql_looks_like_sequence_example(const uint8_t *record, size_t len) {
    const uint8_t *end = record + len;
    if (len == 0 || record_well_formed(record, end, 1)) {
        return 0; /* not a SequenceExample either: decoding says what is wrong */
    }
    entry_list l = {NULL, 0, 0, 0};
    (void)each_len_field(record, end, record_field, &l, 0);
    int found = 0;
    if (!l.nomem && l.n > 0) {
        /* a map's repeated key keeps its last entry */
        qsort(l.items, l.n, sizeof(*l.items), by_key_then_order);
        for (size_t i = 0; i < l.n && !found; i++) {
            int last = i + 1 == l.n || !same_key(&l.items[i], &l.items[i + 1]);
            found = last && l.items[i].kind;
        }
    }
    free(l.items);
    return found;
}
