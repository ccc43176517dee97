/* A file's compression from its first bytes. */
#include "tfsql_core.h"

int tfsql_detect_compression(const uint8_t *head, size_t n) {
    if (n >= 12) {
        if (masked_crc(head, 8) == load_le32(head + 8)) {
            return TFSQL_DETECT_NONE;
        }
    }
    if (n >= 2 && head[0] == 0x1f && head[1] == 0x8b) {
        return TFSQL_DETECT_GZIP;
    }
    if (n >= 2 && (head[0] & 0x0f) == 8 && (head[0] >> 4) <= 7 &&
        ((unsigned)head[0] * 256 + head[1]) % 31 == 0) {
        return TFSQL_DETECT_ZLIB;
    }
    return TFSQL_DETECT_NONE;
}
