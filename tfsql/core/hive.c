/* Hive key=value directories: find, unescape and type partition values. */
#include <string.h>

#include "tfsql_core.h"

size_t tfsql_hive_segments(const char *dir, size_t n, tfsql_hive_segment *out, size_t cap) {
    static const char def[] = TFSQL_HIVE_DEFAULT_PARTITION;
    size_t count = 0, i = 0;
    while (i < n) {
        size_t j = i;
        while (j < n && dir[j] != '/' && dir[j] != '\\') {
            j++;
        }
        const char *eq = (const char *)memchr(dir + i, '=', j - i);
        if (eq != NULL && eq > dir + i) {
            if (count < cap) {
                tfsql_hive_segment *s = &out[count];
                s->key_start = i;
                s->key_len = (size_t)(eq - (dir + i));
                s->value_start = s->key_start + s->key_len + 1;
                s->value_len = j - s->value_start;
                s->is_null = s->value_len == sizeof(def) - 1 &&
                             memcmp(dir + s->value_start, def, sizeof(def) - 1) == 0;
            }
            count++;
        }
        i = j + 1;
    }
    return count;
}

static int hex_value(char c) {
    if (c >= '0' && c <= '9') {
        return c - '0';
    }
    if (c >= 'a' && c <= 'f') {
        return c - 'a' + 10;
    }
    if (c >= 'A' && c <= 'F') {
        return c - 'A' + 10;
    }
    return -1;
}

size_t tfsql_hive_unescape(const char *s, size_t n, char *out) {
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '%' && i + 2 < n && hex_value(s[i + 1]) >= 0 && hex_value(s[i + 2]) >= 0) {
            unsigned v = (unsigned)(hex_value(s[i + 1]) * 16 + hex_value(s[i + 2]));
            if (v < 0x80) {
                out[o++] = (char)v;
            } else { /* the code point U+00XX in UTF-8 */
                out[o++] = (char)(0xc0 | (v >> 6));
                out[o++] = (char)(0x80 | (v & 0x3f));
            }
            i += 2;
        } else {
            out[o++] = s[i];
        }
    }
    return o;
}

int tfsql_hive_int64(const char *s, size_t n, int64_t *value) {
    size_t i = 0;
    int negative = n > 0 && s[0] == '-';
    i += (size_t)negative;
    if (i == n) {
        return 0;
    }
    uint64_t limit = negative ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    uint64_t v = 0;
    for (; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') {
            return 0;
        }
        unsigned d = (unsigned)(s[i] - '0');
        if (v > (limit - d) / 10) {
            return 0;
        }
        v = v * 10 + d;
    }
    *value = negative ? (int64_t)(0 - v) : (int64_t)v;
    return 1;
}

void tfsql_hive_directory(const char *path, const char *root, int hive_rule, size_t *start,
                          size_t *len) {
    const char *slash = strrchr(path, '/');
    size_t end = slash == NULL ? 0 : (size_t)(slash - path);
    size_t from = 0;
    if (hive_rule != TFSQL_HIVE_WHOLE_PATH) {
        if (root == NULL) {
            *start = *len = 0;
            return;
        }
        size_t r = strlen(root);
        while (r > 0 && root[r - 1] == '/') {
            r--;
        }
        if (r <= end && memcmp(path, root, r) == 0 && (r == end || path[r] == '/')) {
            from = r;
        } else { /* not below its root: no directories */
            *start = *len = 0;
            return;
        }
    }
    while (from < end && path[from] == '/') {
        from++;
    }
    *start = from;
    *len = end > from ? end - from : 0;
}
