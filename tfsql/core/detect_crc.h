/* Placeholder until the core header exists: the masked CRC-32C of TFRecord framing. */
#include <stddef.h>
#include <stdint.h>
uint32_t tfsql_detect_masked_crc(const uint8_t *p, size_t n);
