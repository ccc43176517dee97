/* TFDS and TFX layouts: the split of each file, and TFDS metadata files. */
#include <string.h>

#include "tfsql_core.h"

static int is_digit(char c) { return c >= '0' && c <= '9'; }

static int ends_with_ci(const char *s, size_t n, const char *suffix) {
    size_t k = strlen(suffix);
    if (n < k) {
        return 0;
    }
    for (size_t i = 0; i < k; i++) {
        char c = s[n - k + i];
        if (c >= 'A' && c <= 'Z') {
            c = (char)(c - 'A' + 'a');
        }
        if (c != suffix[i]) {
            return 0;
        }
    }
    return 1;
}

int tfsql_tfds_split(const char *path, size_t n, size_t *start, size_t *len) {
    size_t base = n;
    while (base > 0 && path[base - 1] != '/') {
        base--;
    }
    size_t e = n;
    while (e > base && is_digit(path[e - 1])) {
        e--;
    }
    if (e == n || e < base + 4 || memcmp(path + e - 4, "-of-", 4) != 0) {
        return 0;
    }
    size_t i = e - 4, d = i;
    while (d > base && is_digit(path[d - 1])) {
        d--;
    }
    if (d == i || d < base + 10 || memcmp(path + d - 10, ".tfrecord-", 10) != 0) {
        return 0;
    }
    size_t split_end = d - 10, k = split_end;
    while (k > base && path[k - 1] != '-' && path[k - 1] != '.') {
        k--;
    }
    /* the split follows '-' after a non-empty dataset name */
    if (k == split_end || k < base + 2 || path[k - 1] != '-') {
        return 0;
    }
    *start = k;
    *len = split_end - k;
    return 1;
}

int tfsql_tfx_split(const char *rel_dir, size_t n, size_t *start, size_t *len) {
    size_t end = n;
    while (end > 0) {
        size_t s = end;
        while (s > 0 && rel_dir[s - 1] != '/') {
            s--;
        }
        if (end - s > 6 && memcmp(rel_dir + s, "Split-", 6) == 0) {
            *start = s + 6;
            *len = end - s - 6;
            return 1;
        }
        if (s == 0) {
            break;
        }
        end = s - 1;
    }
    return 0;
}

int tfsql_detect_layout(const char *const *paths, const char *const *rel_dirs, size_t n) {
    size_t s, l;
    if (n == 0) {
        return TFSQL_LAYOUT_NONE;
    }
    for (size_t i = 0; i < n; i++) {
        if (rel_dirs[i] == NULL) { /* a file named itself reads as its own records */
            return TFSQL_LAYOUT_NONE;
        }
    }
    size_t i = 0;
    while (i < n && tfsql_tfds_split(paths[i], strlen(paths[i]), &s, &l)) {
        i++;
    }
    if (i == n) {
        return TFSQL_LAYOUT_TFDS;
    }
    i = 0;
    while (i < n && tfsql_tfx_split(rel_dirs[i], strlen(rel_dirs[i]), &s, &l)) {
        i++;
    }
    return i == n ? TFSQL_LAYOUT_TFX : TFSQL_LAYOUT_NONE;
}

int tfsql_is_tfds_info_name(const char *name, size_t n) {
    return n == 17 && memcmp(name, "dataset_info.json", 17) == 0;
}

int tfsql_is_tfds_metadata_name(const char *name, size_t n) {
    return ends_with_ci(name, n, ".json") || ends_with_ci(name, n, ".txt");
}
