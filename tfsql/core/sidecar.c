/* Index sidecars (tfsql/record_index.py): validate one whole before it is trusted.
 *
 * A sidecar ".<name>.idx" holds one line "<offset> <size>\n" per record of the
 * uncompressed file <name>: the byte offset of the record's header and its framed size
 * (12 + payload + 4). tfsql trusts one only when every line agrees with its neighbours
 * and with the file: the first record starts at 0, each size is at least 16 and ends
 * where the next line starts (so offsets strictly increase and no line is dropped or
 * repeated), the last ends at the file's size, no number overflows, and a valid record
 * header of the last line's size starts at its offset. One pass over the text and one
 * 12-byte read of the file; the Python package and the DuckDB extension both call it. */
#include <stdio.h>
#include <string.h>

#include "core_internal.h"

static int64_t refuse(char *why, size_t whylen, const char *fmt, unsigned long long a,
                      unsigned long long b) {
    if (why != NULL && whylen > 0) {
        snprintf(why, whylen, fmt, a, b);
    }
    return -1;
}

/* A decimal number of at most 19 digits (so below 10^19, then checked against 2^63). */
static int read_number(const char **p, const char *end, uint64_t *out) {
    const char *s = *p;
    uint64_t v = 0;
    int digits = 0;
    while (s < end && *s >= '0' && *s <= '9') {
        if (++digits > 19) {
            return -1;
        }
        v = v * 10 + (uint64_t)(*s++ - '0');
    }
    if (digits == 0 || v > (uint64_t)INT64_MAX) {
        return -1;
    }
    *p = s;
    *out = v;
    return 0;
}

int64_t tfsql_index_check(const char *text, size_t n, uint64_t file_size, tfsql_read_at read_at,
                          void *ctx, uint64_t *offsets, uint64_t *sizes, char *why, size_t whylen) {
    const char *p = text, *end = text + n;
    uint64_t expected = 0, last_offset = 0, last_size = 0;
    int64_t lines = 0;
    while (p < end) {
        uint64_t offset, size;
        /* the last line's '\n' may be missing */
        if (read_number(&p, end, &offset) || p >= end || *p++ != ' ' ||
            read_number(&p, end, &size) || (p < end && *p++ != '\n')) {
            return refuse(why, whylen, "line %llu is not 'offset size' (two decimal numbers below 2^63)%.0llu",
                          (unsigned long long)lines + 1, 0);
        }
        if (offset != expected) {
            return refuse(why, whylen,
                          offset < expected ? "line %llu goes back to byte %llu: the lines must follow the records in order"
                                            : "line %llu skips to byte %llu: a record is missing",
                          (unsigned long long)lines + 1, (unsigned long long)offset);
        }
        if (size < 16 || offset > file_size || size > file_size - offset) {
            return refuse(why, whylen, "line %llu's record of %llu bytes does not fit the file",
                          (unsigned long long)lines + 1, (unsigned long long)size);
        }
        if (offsets != NULL) {
            offsets[lines] = offset;
            sizes[lines] = size;
        }
        expected = offset + size;
        last_offset = offset;
        last_size = size;
        lines++;
    }
    if (expected != file_size) {
        return refuse(why, whylen, "its last record ends at byte %llu, the file has %llu bytes",
                      (unsigned long long)expected, (unsigned long long)file_size);
    }
    if (lines > 0 && read_at != NULL) {
        uint8_t head[12];
        if (read_at(ctx, last_offset, head, sizeof(head)) != (int64_t)sizeof(head) ||
            masked_crc(head, 8) != load_le32(head + 8)) {
            return refuse(why, whylen, "no record header at byte %llu (its last line)%.0llu",
                          (unsigned long long)last_offset, 0);
        }
        if (load_le64(head) > last_size - 16 || load_le64(head) + 16 != last_size) {
            return refuse(why, whylen, "the record at byte %llu is not %llu bytes long",
                          (unsigned long long)last_offset, (unsigned long long)last_size);
        }
    }
    return lines;
}

size_t tfsql_index_sidecar_path(const char *path, size_t n, char *out) {
    size_t dir = n;
    while (dir > 0 && path[dir - 1] != '/') {
        dir--;
    }
    memcpy(out, path, dir);
    out[dir] = '.';
    memcpy(out + dir + 1, path + dir, n - dir);
    memcpy(out + n + 1, ".idx", 5);
    return n + 5;
}

int tfsql_index_fresh(int64_t index_mtime_ns, int64_t file_mtime_ns) {
    return index_mtime_ns >= file_mtime_ns;
}
