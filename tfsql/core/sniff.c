/* What a file that is not TFRecord is, from its first bytes (for the messages that say
 * so): the magic numbers of the formats a TFRecord reader is most often handed by
 * mistake, and text. */
#include "tfsql_core.h"

static int starts(const uint8_t *head, size_t n, const char *magic, size_t m) {
    return n >= m && memcmp(head, magic, m) == 0;
}

/* 1 when every byte of head is printable ASCII, whitespace or part of UTF-8 (no NUL or
 * other control byte): text such as CSV or JSON. */
static int is_text(const uint8_t *head, size_t n) {
    if (n == 0) {
        return 0;
    }
    for (size_t i = 0; i < n; i++) {
        uint8_t c = head[i];
        if (c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\f') {
            return 0;
        }
        if (c == 0x7f) {
            return 0;
        }
    }
    return 1;
}

const char *tfsql_sniff_format(const uint8_t *head, size_t n) {
    if (n >= 12 && masked_crc(head, 8) == load_le32(head + 8)) {
        return NULL; /* a TFRecord header */
    }
    if (starts(head, n, "PAR1", 4)) {
        return "parquet";
    }
    if (starts(head, n, "ORC", 3)) {
        return "orc";
    }
    if (starts(head, n, "ARROW1", 6) || starts(head, n, "\xff\xff\xff\xff", 4)) {
        return "arrow";
    }
    if (starts(head, n, "\x89PNG\r\n\x1a\n", 8)) {
        return "png";
    }
    if (starts(head, n, "\xff\xd8\xff", 3)) {
        return "jpeg";
    }
    if (starts(head, n, "\x1f\x8b", 2)) {
        return "gzip";
    }
    size_t i = starts(head, n, "\xef\xbb\xbf", 3) ? 3 : 0; /* a UTF-8 byte order mark */
    if (!is_text(head + i, n - i)) {
        return NULL;
    }
    while (i < n && (head[i] == ' ' || head[i] == '\t' || head[i] == '\n' || head[i] == '\r')) {
        i++;
    }
    return i < n && (head[i] == '{' || head[i] == '[') ? "json" : "text";
}
