/*
 * tfsql/core/crc32c.c -- CRC-32C (Castagnoli): slicing-by-8 fallback,
 * SSE4.2 (3-way interleaved, PCLMUL folding) and ARMv8 paths, chosen once by crc_init.
 */

#include "core_internal.h"

/* All update functions work on the raw CRC register (no pre/post inversion). */
#define CRC32C_POLY 0x82F63B78u
#define CRC_BLOCK 1024 /* bytes per lane of the 3-way interleaved hardware loop */

static uint32_t crc_table[8][256];
/* crc_shift_table[k][b]: the register after CRC_BLOCK zero bytes, from (b << 8k). */
static uint32_t crc_shift_table[4][256];

typedef uint32_t (*crc_update_fn)(uint32_t crc, const uint8_t *p, size_t n);

uint32_t crc32c_update_sw(uint32_t crc, const uint8_t *p, size_t n) {
    while (n && ((uintptr_t)p & 7)) {
        crc = crc_table[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
        n--;
    }
    while (n >= 8) {
        uint64_t v = load_le64(p) ^ crc;
        crc = crc_table[7][v & 0xff] ^ crc_table[6][(v >> 8) & 0xff] ^
              crc_table[5][(v >> 16) & 0xff] ^ crc_table[4][(v >> 24) & 0xff] ^
              crc_table[3][(v >> 32) & 0xff] ^ crc_table[2][(v >> 40) & 0xff] ^
              crc_table[1][(v >> 48) & 0xff] ^ crc_table[0][v >> 56];
        p += 8;
        n -= 8;
    }
    while (n--) {
        crc = crc_table[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
    }
    return crc;
}

/* The register after CRC_BLOCK more zero bytes (a linear map, table driven). */
static inline uint32_t crc_shift_block(uint32_t crc) {
    return crc_shift_table[0][crc & 0xff] ^ crc_shift_table[1][(crc >> 8) & 0xff] ^
           crc_shift_table[2][(crc >> 16) & 0xff] ^ crc_shift_table[3][crc >> 24];
}

#if TFSQL_X86_CRC
/* The register after the bytes of a short run (the CRC32 instruction, word by word). */
__attribute__((target("sse4.2"), always_inline)) static inline uint32_t
crc32c_hw_short(uint64_t c0, const uint8_t *p, size_t n) {
    while (n >= 8) {
        c0 = _mm_crc32_u64(c0, load_le64(p));
        p += 8;
        n -= 8;
    }
    uint32_t c = (uint32_t)c0;
    if (n & 4) {
        c = _mm_crc32_u32(c, load_le32(p));
        p += 4;
    }
    if (n & 2) {
        uint16_t h;
        memcpy(&h, p, 2);
        c = _mm_crc32_u16(c, h);
        p += 2;
    }
    if (n & 1) {
        c = _mm_crc32_u8(c, *p);
    }
    return c;
}

__attribute__((target("sse4.2"))) static uint32_t crc32c_update_hw(uint32_t crc,
                                                                    const uint8_t *p,
                                                                    size_t n) {
    uint64_t c0 = crc; /* x86 loads words at any alignment at no extra cost */
    /* Three independent lanes hide the instruction's 3-cycle latency; the lanes are
     * then joined with the zero-shift operator: crc(A|B) = shift(crc(A)) ^ crc0(B). */
    while (n >= 3 * CRC_BLOCK) {
        uint64_t c1 = 0, c2 = 0;
        const uint8_t *p1 = p + CRC_BLOCK, *p2 = p + 2 * CRC_BLOCK;
        for (size_t i = 0; i < CRC_BLOCK; i += 8) {
            c0 = _mm_crc32_u64(c0, load_le64(p + i));
            c1 = _mm_crc32_u64(c1, load_le64(p1 + i));
            c2 = _mm_crc32_u64(c2, load_le64(p2 + i));
        }
        c0 = crc_shift_block((uint32_t)c0) ^ (uint32_t)c1;
        c0 = crc_shift_block((uint32_t)c0) ^ (uint32_t)c2;
        p += 3 * CRC_BLOCK;
        n -= 3 * CRC_BLOCK;
    }
    return crc32c_hw_short(c0, p, n);
}
#endif

#if TFSQL_X86_CRC
/* Carry-less multiplication folding (PCLMULQDQ), after Intel's "Fast CRC Computation
 * for Generic Polynomials Using PCLMULQDQ Instruction" (Gopal et al., 2009), for the
 * bit-reflected CRC-32C. Four 128-bit accumulators fold 64 bytes per step; they are
 * folded into one, then reduced to 64 and 32 bits, and a Barrett reduction gives the
 * register. It beats the CRC32 instruction where that one issues only every third
 * cycle (AMD Zen: about 3x). Constants, with k(n) = reflect32(x^n mod P) << 1 and P
 * the CRC-32C polynomial 0x11EDC6F41 (tests/unit/test_native.py derives them again):
 * fold by 512 bits k(544), k(480); by 128 bits k(160), k(96); k(64); and the Barrett
 * pair reflect33(x^64 div P) and reflect33(P). */
#define CLMUL_K1 0x740eef02ull   /* k(4*128+32) */
#define CLMUL_K2 0x9e4addf8ull   /* k(4*128-32) */
#define CLMUL_K3 0xf20c0dfeull   /* k(128+32) */
#define CLMUL_K4 0x14cd00bd6ull  /* k(128-32) */
#define CLMUL_K5 0xdd45aab8ull   /* k(64) */
#define CLMUL_MU 0xdea713f1ull   /* reflect33(x^64 div P) */
#define CLMUL_POLY 0x105ec76f1ull /* reflect33(P) */
#define CLMUL_MIN 256            /* below this the CRC32 instruction is as fast */

__attribute__((target("sse4.2,pclmul"))) static inline __m128i clmul_fold(__m128i x, __m128i k) {
    return _mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x00), _mm_clmulepi64_si128(x, k, 0x11));
}

__attribute__((target("sse4.2,pclmul"))) static uint32_t crc32c_update_clmul(uint32_t crc,
                                                                             const uint8_t *p,
                                                                             size_t n) {
    if (n < CLMUL_MIN) {
        return crc32c_update_hw(crc, p, n);
    }
    size_t folded = n & ~(size_t)15; /* whole 16-byte blocks, at least 64 bytes */
    const uint8_t *end = p + folded;
    __m128i x1 = _mm_loadu_si128((const __m128i *)p);
    __m128i x2 = _mm_loadu_si128((const __m128i *)(p + 16));
    __m128i x3 = _mm_loadu_si128((const __m128i *)(p + 32));
    __m128i x4 = _mm_loadu_si128((const __m128i *)(p + 48));
    x1 = _mm_xor_si128(x1, _mm_cvtsi32_si128((int)crc));
    p += 64;
    __m128i k = _mm_set_epi64x((long long)CLMUL_K2, (long long)CLMUL_K1);
    while (end - p >= 64) {
        x1 = _mm_xor_si128(clmul_fold(x1, k), _mm_loadu_si128((const __m128i *)p));
        x2 = _mm_xor_si128(clmul_fold(x2, k), _mm_loadu_si128((const __m128i *)(p + 16)));
        x3 = _mm_xor_si128(clmul_fold(x3, k), _mm_loadu_si128((const __m128i *)(p + 32)));
        x4 = _mm_xor_si128(clmul_fold(x4, k), _mm_loadu_si128((const __m128i *)(p + 48)));
        p += 64;
    }
    k = _mm_set_epi64x((long long)CLMUL_K4, (long long)CLMUL_K3);
    x1 = _mm_xor_si128(clmul_fold(x1, k), x2);
    x1 = _mm_xor_si128(clmul_fold(x1, k), x3);
    x1 = _mm_xor_si128(clmul_fold(x1, k), x4);
    while (p < end) {
        x1 = _mm_xor_si128(clmul_fold(x1, k), _mm_loadu_si128((const __m128i *)p));
        p += 16;
    }
    /* 128 -> 64 bits (appending the 32 zero bits of the CRC's definition) */
    x1 = _mm_xor_si128(_mm_srli_si128(x1, 8), _mm_clmulepi64_si128(x1, k, 0x10));
    /* 64 -> 32 bits */
    const __m128i mask32 = _mm_set_epi32(0, 0, 0, -1);
    __m128i k5 = _mm_set_epi64x(0, (long long)CLMUL_K5);
    x1 = _mm_xor_si128(_mm_srli_si128(x1, 4),
                       _mm_clmulepi64_si128(_mm_and_si128(x1, mask32), k5, 0x00));
    /* Barrett reduction to the 32-bit register */
    __m128i b = _mm_set_epi64x((long long)CLMUL_MU, (long long)CLMUL_POLY);
    __m128i t = _mm_clmulepi64_si128(_mm_and_si128(x1, mask32), b, 0x10);
    t = _mm_clmulepi64_si128(_mm_and_si128(t, mask32), b, 0x00);
    uint32_t reg = (uint32_t)_mm_extract_epi32(_mm_xor_si128(x1, t), 1);
    return crc32c_update_hw(reg, end, n - folded);
}
#endif

#if TFSQL_ARM_CRC
static uint32_t crc32c_update_hw(uint32_t crc, const uint8_t *p, size_t n) {
    while (n && ((uintptr_t)p & 7)) {
        crc = __crc32cb(crc, *p++);
        n--;
    }
    while (n >= 8) {
        crc = __crc32cd(crc, load_le64(p));
        p += 8;
        n -= 8;
    }
    while (n--) {
        crc = __crc32cb(crc, *p++);
    }
    return crc;
}
#endif

static crc_update_fn crc_update = crc32c_update_sw;
int crc_is_hardware = 0;

void crc_init(void) {
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++) {
            c = (c & 1) ? (c >> 1) ^ CRC32C_POLY : c >> 1;
        }
        crc_table[0][i] = c;
    }
    for (int t = 1; t < 8; t++) {
        for (int i = 0; i < 256; i++) {
            uint32_t c = crc_table[t - 1][i];
            crc_table[t][i] = (c >> 8) ^ crc_table[0][c & 0xff];
        }
    }
    static const uint8_t zeros[CRC_BLOCK];
    uint32_t basis[32];
    for (int bit = 0; bit < 32; bit++) {
        basis[bit] = crc32c_update_sw(1u << bit, zeros, CRC_BLOCK);
    }
    for (int k = 0; k < 4; k++) {
        for (int b = 0; b < 256; b++) {
            uint32_t v = 0;
            for (int i = 0; i < 8; i++) {
                if (b & (1 << i)) {
                    v ^= basis[8 * k + i];
                }
            }
            crc_shift_table[k][b] = v;
        }
    }
    const char *no_hw = getenv("TFSQL_NO_HW_CRC");
    if (no_hw != NULL && no_hw[0] != '\0' && strcmp(no_hw, "0") != 0) {
        return;
    }
#if TFSQL_X86_CRC
    __builtin_cpu_init();
    if (__builtin_cpu_supports("sse4.2")) {
        crc_update = crc32c_update_hw;
        crc_is_hardware = 1;
        const char *no_clmul = getenv("TFSQL_NO_CLMUL_CRC");
        int clmul_off = no_clmul != NULL && no_clmul[0] != '\0' && strcmp(no_clmul, "0") != 0;
        if (__builtin_cpu_supports("pclmul") && !clmul_off) {
            crc_update = crc32c_update_clmul;
        }
    }
#elif TFSQL_ARM_CRC
    crc_update = crc32c_update_hw;
    crc_is_hardware = 1;
#endif
}

uint32_t crc32c_value(uint32_t crc, const uint8_t *p, size_t n) {
    return ~crc_update(~crc, p, n);
}

#if TFSQL_X86_CRC
/* The unmasked CRCs of three buffers at once. The CRC32 instruction issues every cycle
 * but takes three to finish, so one buffer's CRC (a chain of dependent steps) runs at a
 * third of the unit's speed; three chains interleaved fill the gaps. For records too
 * short for the lane and folding loops above (rows of a few hundred bytes). Each
 * buffer's tail beyond the shortest whole 8-byte words is finished alone. */
__attribute__((target("sse4.2"))) static void crc32c_hw_x3(const uint8_t *const p[3],
                                                          const size_t n[3], uint32_t out[3]) {
    size_t common = n[0] < n[1] ? n[0] : n[1];
    common = (common < n[2] ? common : n[2]) & ~(size_t)7;
    uint64_t c0 = 0xffffffffu, c1 = 0xffffffffu, c2 = 0xffffffffu;
    for (size_t i = 0; i < common; i += 8) {
        c0 = _mm_crc32_u64(c0, load_le64(p[0] + i));
        c1 = _mm_crc32_u64(c1, load_le64(p[1] + i));
        c2 = _mm_crc32_u64(c2, load_le64(p[2] + i));
    }
    uint64_t c[3] = {c0, c1, c2};
    for (int i = 0; i < 3; i++) { /* a short tail: the instruction directly, no dispatch */
        size_t tail = n[i] - common;
        out[i] = ~(tail < CLMUL_MIN ? crc32c_hw_short(c[i], p[i] + common, tail)
                                    : crc_update((uint32_t)c[i], p[i] + common, tail));
    }
}

__attribute__((target("sse4.2"))) static uint32_t crc32c_8_hw(const uint8_t *p) {
    return ~(uint32_t)_mm_crc32_u64(0xffffffffu, load_le64(p));
}
#endif

uint32_t masked_crc8(const uint8_t *p) {
#if TFSQL_X86_CRC
    if (crc_is_hardware) {
        return crc_mask(crc32c_8_hw(p));
    }
#elif TFSQL_ARM_CRC
    return crc_mask(~__crc32cd(0xffffffffu, load_le64(p)));
#endif
    return masked_crc(p, 8);
}

/* The CRC-32C values of three buffers (interleaved where the CPU's instruction is used). */
void crc32c_values3(const uint8_t *const p[3], const size_t n[3], uint32_t out[3]) {
#if TFSQL_X86_CRC
    if (crc_is_hardware) {
        crc32c_hw_x3(p, n, out);
        return;
    }
#endif
    for (int i = 0; i < 3; i++) {
        out[i] = crc32c_value(0, p[i], n[i]);
    }
}
