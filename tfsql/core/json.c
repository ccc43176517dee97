/* A small, bounded JSON reader shared by the core's JSON documents (the intent record
 * in intent.c, a TFDS directory's features.json in tfds_features.c): strings with their
 * escapes undone (\uXXXX as UTF-8; a lone surrogate U+DC80..U+DCFF as the byte it stands
 * for, as Python's surrogateescape writes undecodable file names; other lone surrogates
 * as 3 bytes that match no file), skipping of any value nested at most JSON_MAX_DEPTH
 * deep, arrays read element by element. The first error is kept in the reader. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core_internal.h"

void json_skip_ws(json_reader *r) {
    while (r->p < r->end && (*r->p == ' ' || *r->p == '\t' || *r->p == '\n' || *r->p == '\r')) {
        r->p++;
    }
}

int json_fail(json_reader *r, const char *why) {
    if (r->why == NULL) {
        r->why = why;
    }
    return -1;
}

int json_expect(json_reader *r, char c) {
    json_skip_ws(r);
    if (r->p >= r->end || *r->p != c) {
        return json_fail(r, "malformed JSON");
    }
    r->p++;
    return 0;
}

static int json_hex4(json_reader *r, unsigned *v) {
    if (r->end - r->p < 4) {
        return json_fail(r, "malformed JSON string");
    }
    *v = 0;
    for (int i = 0; i < 4; i++) {
        char c = r->p[i];
        int d = c >= '0' && c <= '9' ? c - '0'
                : c >= 'a' && c <= 'f' ? c - 'a' + 10
                : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                       : -1;
        if (d < 0) {
            return json_fail(r, "malformed JSON string");
        }
        *v = *v * 16 + (unsigned)d;
    }
    r->p += 4;
    return 0;
}

static void put_utf8(char *out, size_t *o, unsigned cp) {
    if (cp < 0x80) {
        out[(*o)++] = (char)cp;
    } else if (cp < 0x800) {
        out[(*o)++] = (char)(0xc0 | (cp >> 6));
        out[(*o)++] = (char)(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
        out[(*o)++] = (char)(0xe0 | (cp >> 12));
        out[(*o)++] = (char)(0x80 | ((cp >> 6) & 0x3f));
        out[(*o)++] = (char)(0x80 | (cp & 0x3f));
    } else {
        out[(*o)++] = (char)(0xf0 | (cp >> 18));
        out[(*o)++] = (char)(0x80 | ((cp >> 12) & 0x3f));
        out[(*o)++] = (char)(0x80 | ((cp >> 6) & 0x3f));
        out[(*o)++] = (char)(0x80 | (cp & 0x3f));
    }
}

/* A JSON string at r->p; `out` (may be NULL to skip) gets a malloc'ed copy. */
int json_read_string(json_reader *r, json_str *out) {
    if (json_expect(r, '"')) {
        return -1;
    }
    const char *start = r->p;
    while (r->p < r->end && *r->p != '"') {
        r->p += *r->p == '\\' ? 2 : 1;
    }
    if (r->p >= r->end) {
        return json_fail(r, "malformed JSON string");
    }
    const char *stop = r->p;
    r->p = start;
    /* an escape never grows: \uXXXX (6 bytes) gives at most 3, a pair (12) gives 4 */
    char *s = out != NULL ? (char *)malloc((size_t)(stop - start) + 1) : NULL;
    if (out != NULL && s == NULL) {
        return json_fail(r, "out of memory");
    }
    char scratch[4];
    size_t o = 0;
    while (r->p < stop) {
        char c = *r->p++;
        if ((unsigned char)c < 0x20) {
            free(s);
            return json_fail(r, "malformed JSON string");
        }
        if (c != '\\') {
            if (s != NULL) {
                s[o] = c;
            }
            o++;
            continue;
        }
        char e = *r->p++;
        unsigned cp;
        switch (e) {
        case '"': case '\\': case '/': cp = (unsigned char)e; break;
        case 'b': cp = '\b'; break;
        case 'f': cp = '\f'; break;
        case 'n': cp = '\n'; break;
        case 'r': cp = '\r'; break;
        case 't': cp = '\t'; break;
        case 'u':
            if (json_hex4(r, &cp)) {
                free(s);
                return -1;
            }
            if (cp >= 0xd800 && cp < 0xdc00 && stop - r->p >= 6 && r->p[0] == '\\' &&
                r->p[1] == 'u') {
                const char *back = r->p;
                unsigned lo;
                r->p += 2;
                if (json_hex4(r, &lo)) {
                    free(s);
                    return -1;
                }
                if (lo >= 0xdc00 && lo < 0xe000) {
                    cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
                } else {
                    r->p = back;
                }
            }
            if (cp >= 0xdc80 && cp <= 0xdcff) { /* surrogateescape: the raw byte */
                if (s != NULL) {
                    s[o] = (char)(cp - 0xdc00);
                }
                o++;
                continue;
            }
            break; /* another lone surrogate: 3 bytes no file name holds, as in Python */
        default:
            free(s);
            return json_fail(r, "malformed JSON string");
        }
        size_t k = 0;
        put_utf8(scratch, &k, cp);
        if (s != NULL) {
            memcpy(s + o, scratch, k);
        }
        o += k;
    }
    r->p = stop + 1;
    if (s != NULL) {
        s[o] = 0;
        out->s = s;
        out->n = o;
    }
    return 0;
}

/* Skip any JSON value (for keys the record does not need). */
int json_skip_value(json_reader *r, int depth) {
    if (depth > JSON_MAX_DEPTH) {
        return json_fail(r, "JSON nested too deeply");
    }
    json_skip_ws(r);
    if (r->p >= r->end) {
        return json_fail(r, "malformed JSON");
    }
    char c = *r->p;
    if (c == '"') {
        return json_read_string(r, NULL);
    }
    if (c == '{' || c == '[') {
        char close = c == '{' ? '}' : ']';
        r->p++;
        json_skip_ws(r);
        if (r->p < r->end && *r->p == close) {
            r->p++;
            return 0;
        }
        for (;;) {
            if (c == '{' && (json_read_string(r, NULL) || json_expect(r, ':'))) {
                return -1;
            }
            if (json_skip_value(r, depth + 1)) {
                return -1;
            }
            json_skip_ws(r);
            if (r->p < r->end && *r->p == ',') {
                r->p++;
                continue;
            }
            return json_expect(r, close);
        }
    }
    /* a number, true, false or null */
    const char *start = r->p;
    while (r->p < r->end && strchr("+-.0123456789eEtrufalsn", *r->p) != NULL) {
        r->p++;
    }
    return r->p > start ? 0 : json_fail(r, "malformed JSON");
}

/* A JSON array; each element read by `element` (depth counted from the array). */
int json_read_array(json_reader *r, int (*element)(json_reader *, void *), void *ctx) {
    if (json_expect(r, '[')) {
        return -1;
    }
    json_skip_ws(r);
    if (r->p < r->end && *r->p == ']') {
        r->p++;
        return 0;
    }
    for (;;) {
        if (element(r, ctx)) {
            return -1;
        }
        json_skip_ws(r);
        if (r->p < r->end && *r->p == ',') {
            r->p++;
            continue;
        }
        return json_expect(r, ']');
    }
}

