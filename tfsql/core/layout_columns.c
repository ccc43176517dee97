/* The columns a TFDS / TFX layout gives a read (tfsql.layouts, tfsql.tfds): its `split`
 * column, and a features.json's types merged into the inferred columns. The bindings
 * build their engine's columns from these answers. */
#include <string.h>

#include "tfsql_core.h"

static int same(const char *a, size_t alen, const char *b, size_t blen) {
    return alen == blen && memcmp(a, b, alen) == 0;
}

int tfsql_layout_owns_column(int layout, const char *name, size_t len) {
    return layout != TFSQL_LAYOUT_NONE &&
           same(name, len, TFSQL_SPLIT_COLUMN, sizeof(TFSQL_SPLIT_COLUMN) - 1);
}

int tfsql_layout_adds_split(int layout, const char *const *columns, const size_t *lens, size_t n) {
    if (layout == TFSQL_LAYOUT_NONE) {
        return 0;
    }
    for (size_t i = 0; i < n; i++) {
        if (tfsql_layout_owns_column(layout, columns[i], lens[i])) {
            return 0; /* hive directories or the records already have it */
        }
    }
    return 1;
}

void tfsql_tfds_merge(const char *const *columns, const size_t *lens, size_t n,
                      const char *const *described, const size_t *dlens, size_t ndescribed,
                      long long *typed_by, size_t *appended, size_t *nappended) {
    *nappended = 0;
    for (size_t i = 0; i < n; i++) {
        typed_by[i] = -1;
    }
    for (size_t d = 0; d < ndescribed; d++) {
        size_t i = 0;
        while (i < n && !same(columns[i], lens[i], described[d], dlens[d])) {
            i++;
        }
        if (i < n) {
            typed_by[i] = (long long)d; /* in place of the inferred column */
        } else {
            appended[(*nappended)++] = d; /* after the inferred columns */
        }
    }
}
