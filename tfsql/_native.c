/*
 * tfsql/_native.c -- the C core of tfsql.
 *
 * TFRecord framing with CRC-32C, and tf.train.Example / SequenceExample decoding
 * straight into Arrow column buffers (and encoding back). The contract is
 * tfsql/_native.pyi; the pure-Python oracle is the tfsql/_reference/ package.
 *
 * Layout of this file (one bannered section per job):
 *
 *   1. Platform        includes, endianness, loads and stores
 *   2. Buffer helpers  growable byte buffers (PyMem_Raw*, usable without the GIL)
 *                      and the Python `Buffer` type that exports them
 *   3. CRC-32C         slicing-by-8 fallback, SSE4.2 (3-way interleaved) / ARMv8 paths
 *   4. Framing         scan_frames, count_headers / header_offsets, find_boundary (resync),
 *                      frame headers
 *   5. Wire reader     varints, tags, lengths, skipping unknown fields, UTF-8 checks,
 *                      validating and counting a feature's values
 *   6. Decoder         compiled column table, per-record map scan, column builders,
 *                      DecodeError, the Decoder type
 *   7. Encoder         two-pass (size, then write) Example / SequenceExample / RAW,
 *                      the Encoder type
 *   8. Summarize       statistics for schema inference, summarize()
 *   9. Module          the CRC and framing functions, exception class, constants,
 *                      method table, init
 *
 * Safety rules followed everywhere: every length read from input is checked against
 * the bytes remaining before it is used; nothing is allocated from an unchecked size;
 * malformed input only ever produces an error code, turned into DecodeError once the
 * GIL is held again. Code between Py_BEGIN/END_ALLOW_THREADS touches no Python object.
 */

#ifndef TFSQL_NO_PYTHON
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#else
#include "_core_nopy.h" /* the DuckDB extension compiles this file without Python */
#endif

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif
#if !defined(_WIN32)
#include <errno.h>
#include <unistd.h>
#endif

/* ======================================================================== */
/* 1. Platform                                                              */
/* ======================================================================== */

#if defined(__BYTE_ORDER__) && defined(__ORDER_BIG_ENDIAN__) && \
    __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define TFSQL_BIG_ENDIAN 1
#else
#define TFSQL_BIG_ENDIAN 0
#endif

#if defined(__GNUC__) || defined(__clang__)
#define LIKELY(x) __builtin_expect(!!(x), 1)
#define UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define LIKELY(x) (x)
#define UNLIKELY(x) (x)
#endif

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define TFSQL_X86_CRC 1
#include <nmmintrin.h>
#include <wmmintrin.h>
#else
#define TFSQL_X86_CRC 0
#endif

#if defined(__aarch64__) && defined(__ARM_FEATURE_CRC32)
/* Compiled for a CPU that has the CRC extension (e.g. Apple silicon, -march=...+crc). */
#define TFSQL_ARM_CRC 1
#include <arm_acle.h>
#else
#define TFSQL_ARM_CRC 0
#endif

static inline uint32_t bswap32(uint32_t v) {
    return (v >> 24) | ((v >> 8) & 0xff00u) | ((v << 8) & 0xff0000u) | (v << 24);
}

static inline uint64_t bswap64(uint64_t v) {
    return ((uint64_t)bswap32((uint32_t)v) << 32) | bswap32((uint32_t)(v >> 32));
}

static inline uint64_t load_le64(const uint8_t *p) {
    uint64_t v;
    memcpy(&v, p, 8);
#if TFSQL_BIG_ENDIAN
    v = bswap64(v);
#endif
    return v;
}

static inline uint32_t load_le32(const uint8_t *p) {
    uint32_t v;
    memcpy(&v, p, 4);
#if TFSQL_BIG_ENDIAN
    v = bswap32(v);
#endif
    return v;
}

static inline void store_le64(uint8_t *p, uint64_t v) {
#if TFSQL_BIG_ENDIAN
    v = bswap64(v);
#endif
    memcpy(p, &v, 8);
}

static inline void store_le32(uint8_t *p, uint32_t v) {
#if TFSQL_BIG_ENDIAN
    v = bswap32(v);
#endif
    memcpy(p, &v, 4);
}

/* Native-endian loads from possibly unaligned caller arrays. */
static inline int64_t load_i64(const uint8_t *p) {
    int64_t v;
    memcpy(&v, p, 8);
    return v;
}

static inline uint64_t load_u64(const uint8_t *p) {
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

/* Copy `n` little-endian 32-bit words to native order (a memcpy on LE hosts). */
static inline void copy_le32_words(uint8_t *dst, const uint8_t *src, size_t n) {
#if TFSQL_BIG_ENDIAN
    for (size_t i = 0; i < n; i++) {
        uint32_t v = load_le32(src + 4 * i);
        memcpy(dst + 4 * i, &v, 4);
    }
#else
    memcpy(dst, src, 4 * n);
#endif
}

/* ======================================================================== */
/* 2. Buffer helpers                                                        */
/* ======================================================================== */

/* A growable byte buffer. Allocated with PyMem_Raw*, so it may grow without the GIL. */
typedef struct {
    uint8_t *data;
    size_t len;
    size_t cap;
} tbuf;

#if defined(__linux__) && defined(MADV_HUGEPAGE)
#define HUGE_PAGE ((size_t)2 << 20)
/* Ask for transparent huge pages on a large buffer, as numpy does: first touching
 * fresh memory then costs one fault per 2 MiB instead of per 4 KiB. */
static void advise_huge_pages(uint8_t *data, size_t cap) {
    uintptr_t start = ((uintptr_t)data + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1);
    uintptr_t end = ((uintptr_t)data + cap) & ~(uintptr_t)(HUGE_PAGE - 1);
    if (end > start) {
        (void)madvise((void *)start, end - start, MADV_HUGEPAGE);
    }
}
#else
static void advise_huge_pages(uint8_t *data, size_t cap) {
    (void)data;
    (void)cap;
}
#endif

static int tbuf_grow(tbuf *b, size_t extra) {
    size_t need = b->len + extra;
    if (need < b->len || need > (size_t)PY_SSIZE_T_MAX) {
        return -1;
    }
    size_t cap = b->cap ? b->cap : 64;
    while (cap < need) {
        cap = (cap > (size_t)PY_SSIZE_T_MAX / 2) ? need : cap * 2;
    }
    uint8_t *data = (uint8_t *)PyMem_RawRealloc(b->data, cap);
    if (data == NULL) {
        return -1;
    }
    if (cap >= ((size_t)4 << 20)) {
        advise_huge_pages(data, cap);
    }
    b->data = data;
    b->cap = cap;
    return 0;
}

/* Make room for `extra` more bytes; -1 when out of memory. */
static inline int tbuf_reserve(tbuf *b, size_t extra) {
    if (LIKELY(b->cap - b->len >= extra)) {
        return 0;
    }
    return tbuf_grow(b, extra);
}

static inline int tbuf_put_i32(tbuf *b, int32_t v) {
    if (tbuf_reserve(b, 4)) {
        return -1;
    }
    memcpy(b->data + b->len, &v, 4);
    b->len += 4;
    return 0;
}

static inline int tbuf_put_u64(tbuf *b, uint64_t v) {
    if (tbuf_reserve(b, 8)) {
        return -1;
    }
    memcpy(b->data + b->len, &v, 8);
    b->len += 8;
    return 0;
}

static void tbuf_free(tbuf *b) {
    PyMem_RawFree(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

#ifndef TFSQL_NO_PYTHON
/* -- the Python Buffer type ----------------------------------------------- */

typedef struct {
    PyObject_HEAD
    uint8_t *data;
    Py_ssize_t len;
} BufferObject;

static PyTypeObject Buffer_Type;

static void Buffer_dealloc(BufferObject *self) {
    PyMem_RawFree(self->data);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int Buffer_getbuffer(BufferObject *self, Py_buffer *view, int flags) {
    return PyBuffer_FillInfo(view, (PyObject *)self, self->data, self->len, 0, flags);
}

static Py_ssize_t Buffer_length(BufferObject *self) { return self->len; }

static PyObject *Buffer_repr(BufferObject *self) {
    return PyUnicode_FromFormat("<tfsql._native.Buffer of %zd bytes>", self->len);
}

static PyBufferProcs Buffer_as_buffer = {
    (getbufferproc)Buffer_getbuffer,
    NULL,
};

static PySequenceMethods Buffer_as_sequence = {
    .sq_length = (lenfunc)Buffer_length,
};

static PyTypeObject Buffer_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "tfsql._native.Buffer",
    .tp_basicsize = sizeof(BufferObject),
    .tp_dealloc = (destructor)Buffer_dealloc,
    .tp_repr = (reprfunc)Buffer_repr,
    .tp_as_sequence = &Buffer_as_sequence,
    .tp_as_buffer = &Buffer_as_buffer,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Memory owned by the C core, exported through the buffer protocol.",
};

/* Hand the memory of `b` over to a new Buffer object (b is left empty). */
static PyObject *buffer_from_tbuf(tbuf *b) {
    BufferObject *self = PyObject_New(BufferObject, &Buffer_Type);
    if (self == NULL) {
        return NULL;
    }
    if (b->data == NULL) {
        b->data = (uint8_t *)PyMem_RawMalloc(8);
        if (b->data == NULL) {
            Py_DECREF(self);
            return PyErr_NoMemory();
        }
        b->cap = 8;
    } else if (b->cap - b->len > 4096 && b->cap / 8 > b->len / 7) {
        /* Give back a large unused tail (more than ~1/8 of the allocation). */
        uint8_t *data = (uint8_t *)PyMem_RawRealloc(b->data, b->len ? b->len : 8);
        if (data != NULL) {
            b->data = data;
        }
    }
    self->data = b->data;
    self->len = (Py_ssize_t)b->len;
    b->data = NULL;
    b->len = b->cap = 0;
    return (PyObject *)self;
}

/* -- borrowing caller buffers --------------------------------------------- */

/* A C-contiguous byte view of any buffer-protocol object. */
static int get_bytes_view(PyObject *obj, Py_buffer *view, const char *what) {
    if (PyObject_GetBuffer(obj, view, PyBUF_SIMPLE) < 0) {
        PyErr_Clear();
        if (PyObject_GetBuffer(obj, view, PyBUF_C_CONTIGUOUS) < 0) {
            PyErr_Format(PyExc_TypeError,
                         "%s must be a C-contiguous object with the buffer protocol, got %s",
                         what, Py_TYPE(obj)->tp_name);
            return -1;
        }
    }
    return 0;
}
#endif /* TFSQL_NO_PYTHON */

/* ======================================================================== */
/* 3. CRC-32C (Castagnoli)                                                  */
/* ======================================================================== */

/* All update functions work on the raw CRC register (no pre/post inversion). */
#define CRC32C_POLY 0x82F63B78u
#define CRC_BLOCK 1024 /* bytes per lane of the 3-way interleaved hardware loop */

static uint32_t crc_table[8][256];
/* crc_shift_table[k][b]: the register after CRC_BLOCK zero bytes, from (b << 8k). */
static uint32_t crc_shift_table[4][256];

typedef uint32_t (*crc_update_fn)(uint32_t crc, const uint8_t *p, size_t n);

static uint32_t crc32c_update_sw(uint32_t crc, const uint8_t *p, size_t n) {
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
static int crc_is_hardware = 0;

static void crc_init(void) {
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

static inline uint32_t crc32c_value(uint32_t crc, const uint8_t *p, size_t n) {
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
    out[0] = ~crc_update((uint32_t)c0, p[0] + common, n[0] - common);
    out[1] = ~crc_update((uint32_t)c1, p[1] + common, n[1] - common);
    out[2] = ~crc_update((uint32_t)c2, p[2] + common, n[2] - common);
}
#endif

/* The CRC-32C values of three buffers (interleaved where the CPU's instruction is used). */
static void crc32c_values3(const uint8_t *const p[3], const size_t n[3], uint32_t out[3]) {
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

static inline uint32_t crc_mask(uint32_t c) {
    return ((c >> 15) | (c << 17)) + 0xa282ead8u;
}

static inline uint32_t masked_crc(const uint8_t *p, size_t n) {
    return crc_mask(crc32c_value(0, p, n));
}

/* ======================================================================== */
/* 4. Framing                                                               */
/* ======================================================================== */

enum { FRAME_OK = 0, FRAME_TRUNCATED = 1, FRAME_BAD_LENGTH_CRC = 2, FRAME_BAD_DATA_CRC = 3,
       FRAME_TOO_LONG = 4 };

/* Index frames from `pos`; returns -1 only when out of memory. */
static int scan_core(const uint8_t *buf, size_t size, size_t pos, long long max_records,
                     long long max_bytes, int verify, tbuf *offsets, tbuf *lengths,
                     size_t *end_out, int *status_out) {
    long long count = 0;
    uint64_t total = 0;
    int status = FRAME_OK;
    while (pos < size) {
        if (max_records >= 0 && count >= max_records) {
            break;
        }
        if (size - pos < 12) {
            status = FRAME_TRUNCATED;
            break;
        }
        const uint8_t *head = buf + pos;
        if (masked_crc(head, 8) != load_le32(head + 8)) {
            status = FRAME_BAD_LENGTH_CRC;
            break;
        }
        uint64_t length = load_le64(head);
        if (max_bytes >= 0 && count > 0 && (length > (uint64_t)max_bytes ||
                                            total > (uint64_t)max_bytes - length)) {
            break;
        }
        size_t room = size - pos - 12;
        if (room < 4 || length > room - 4) {
            status = FRAME_TRUNCATED;
            break;
        }
        if (verify && masked_crc(head + 12, (size_t)length) != load_le32(head + 12 + length)) {
            status = FRAME_BAD_DATA_CRC;
            break;
        }
        if (tbuf_put_u64(offsets, (uint64_t)(pos + 12)) || tbuf_put_u64(lengths, length)) {
            return -1;
        }
        total += length;
        count++;
        pos += 12 + (size_t)length + 4;
    }
    *end_out = pos;
    *status_out = status;
    return 0;
}

#if !defined(_WIN32)
/* Fill head[0:want) from the file at `pos`, up to `want` bytes; returns the bytes read
   (fewer at the end of the file) or -1 with errno set. */
static ssize_t pread_full(int fd, uint8_t *head, size_t want, uint64_t pos) {
    size_t have = 0;
    while (have < want) {
        ssize_t got = pread(fd, head + have, want - have, (off_t)(pos + have));
        if (got < 0) {
            if (errno == EINTR) {
                continue;
            }
            return -1;
        }
        if (got == 0) {
            break; /* the file shrank while being read */
        }
        have += (size_t)got;
    }
    return (ssize_t)have;
}

/* Count the frames of a plain file from byte `pos` to `size` reading only their
   12-byte headers (positioned reads; payloads are never read), appending each record's
   header offset to `offsets` when it is not NULL. The length CRC is checked; a length
   above `max_length`, or running past `size`, stops the count. After a record smaller
   than 4 KiB a read takes 64 KiB (the next headers are likely inside: small records
   cost a fraction of a read each); otherwise it takes the 12-byte header alone.
   Returns -1 with errno set when a read fails, -2 when out of memory. */
#define COUNT_WINDOW_MAX ((size_t)64 << 10)
static int count_core(int fd, uint64_t pos, uint64_t size, uint64_t max_length, tbuf *offsets,
                      long long *count_out, uint64_t *end_out, uint64_t *length_out,
                      int *status_out) {
    long long count = 0;
    int status = FRAME_OK;
    uint8_t *window = (uint8_t *)PyMem_RawMalloc(COUNT_WINDOW_MAX);
    size_t have = 0;
    uint64_t base = 0, last = pos; /* window[0:have) holds the file from `base` */
    if (window == NULL) {
        return -2;
    }
    *length_out = 0;
    while (pos < size) {
        if (size - pos < 12) {
            status = FRAME_TRUNCATED;
            break;
        }
        const uint8_t *head;
        if (pos >= base && pos - base <= have && have - (pos - base) >= 12) {
            head = window + (pos - base);
        } else {
            /* Records smaller than a page: read 64 KiB at once; larger ones: the header. */
            size_t want = count && pos - last < 4096 ? COUNT_WINDOW_MAX : 12;
            size_t take = size - pos < (uint64_t)want ? (size_t)(size - pos) : want;
            ssize_t got = pread_full(fd, window, take, pos);
            if (got < 0) {
                PyMem_RawFree(window);
                return -1;
            }
            base = pos;
            have = (size_t)got;
            if (have < 12) {
                status = FRAME_TRUNCATED;
                break;
            }
            head = window;
        }
        if (masked_crc(head, 8) != load_le32(head + 8)) {
            status = FRAME_BAD_LENGTH_CRC;
            break;
        }
        uint64_t length = load_le64(head);
        *length_out = length;
        if (length > max_length) {
            status = FRAME_TOO_LONG;
            break;
        }
        if (size - pos - 12 < 4 || length > size - pos - 16) {
            status = FRAME_TRUNCATED;
            break;
        }
        if (offsets != NULL) {
            if (tbuf_reserve(offsets, 8) < 0) {
                PyMem_RawFree(window);
                return -2;
            }
            memcpy(offsets->data + offsets->len, &pos, 8);
            offsets->len += 8;
        }
        last = pos;
        pos += 16 + length;
        count++;
    }
    PyMem_RawFree(window);
    *count_out = count;
    *end_out = pos;
    *status_out = status;
    return 0;
}
#endif

/* -- resynchronising inside a file (splittable reads) ---------------------- */

/* A reader that starts at an arbitrary byte of an uncompressed file finds the next
 * record boundary with find_boundary_core: the first position p in [pos, stop) where
 *
 *   1. the 8-byte length at p matches its masked CRC-32C (a random position passes
 *      with probability 2^-32),
 *   2. the whole record fits in the file and its data matches its CRC (another
 *      2^-32; checked whatever the caller's verify_checksums, so a random position is
 *      taken for a boundary with probability about 2^-64), and
 *   3. the chain of records that follows stays well framed (each header's length CRC
 *      and data CRC match) until it has covered `lookahead` bytes from p or ends
 *      exactly at the end of the file. This rejects whole frames stored inside a
 *      record's payload (a TFRecord file kept as a bytes feature): their chain breaks
 *      where the enclosing payload ends. Only such a nested chain longer than
 *      `lookahead` bytes could still be taken for a boundary.
 *
 * A range owns the records whose header starts in it, and its reader, on reaching the
 * first header past its end, reads on until a header this function accepts (so a
 * record the next range's search rejects, e.g. one cut short by the end of the file,
 * is read, or reported, by the range before): the ranges of a file partition its
 * records. Pure C (no Python API): the DuckDB
 * extension compiles it too.
 */
enum { BOUNDARY_FOUND = 0, BOUNDARY_NONE = 1, BOUNDARY_MORE = 2 };
enum { CHAIN_NO = 0, CHAIN_YES = 1, CHAIN_MORE = 2 };

/* Rule 3 for the record at p, whose header and data (rules 1 and 2) are verified and
 * which ends at `next`. */
static int chain_holds(const uint8_t *buf, size_t size, size_t p, size_t next, int at_eof,
                       size_t lookahead) {
    size_t goal = lookahead > (size_t)-1 - p ? (size_t)-1 : p + lookahead;
    size_t at = next;
    while (at < goal) {
        if (at == size) {
            return at_eof ? CHAIN_YES : CHAIN_MORE;
        }
        if (size - at < 12) {
            /* Too few bytes left for a header: at the end of the file these are more
             * likely the CRC of a record enclosing p than a header cut short. */
            return at_eof ? CHAIN_NO : CHAIN_MORE;
        }
        const uint8_t *head = buf + at;
        if (masked_crc(head, 8) != load_le32(head + 8)) {
            return CHAIN_NO;
        }
        uint64_t length = load_le64(head);
        size_t room = size - at - 12;
        if (room < 4 || length > room - 4) {
            /* A record cut short by the end of the file: not a chain to trust (the
             * range before reads on through it and reports the truncation). */
            return at_eof ? CHAIN_NO : CHAIN_MORE;
        }
        if (masked_crc(head + 12, (size_t)length) != load_le32(head + 12 + length)) {
            return CHAIN_NO;
        }
        at += 12 + (size_t)length + 4;
    }
    return CHAIN_YES;
}

/* The first record boundary at or after `pos` and before `stop` in buf[0:size).
 * `at_eof` says that buf ends where the file ends. Returns BOUNDARY_FOUND with the
 * position in *found_out; BOUNDARY_NONE when no boundary starts before `stop`
 * (*found_out = stop); BOUNDARY_MORE when the candidate at *found_out needs bytes past
 * `size` to decide (read more, starting at or before it, and call again). */
static int find_boundary_core(const uint8_t *buf, size_t size, size_t pos, size_t stop,
                              int at_eof, size_t lookahead, size_t *found_out) {
    if (stop > size && at_eof) {
        stop = size;
    }
    for (size_t p = pos; p < stop; p++) {
        if (p > size || size - p < 12) {
            if (at_eof) {
                break; /* too short for a header: no boundary */
            }
            *found_out = p;
            return BOUNDARY_MORE;
        }
        const uint8_t *head = buf + p;
        if (masked_crc(head, 8) != load_le32(head + 8)) {
            continue;
        }
        uint64_t length = load_le64(head);
        size_t room = size - p - 12;
        if (room < 4 || length > room - 4) {
            if (at_eof) {
                continue; /* runs past the end of the file: not a whole record */
            }
            *found_out = p;
            return BOUNDARY_MORE;
        }
        if (masked_crc(head + 12, (size_t)length) != load_le32(head + 12 + length)) {
            continue;
        }
        int chain = chain_holds(buf, size, p, p + 12 + (size_t)length + 4, at_eof, lookahead);
        if (chain == CHAIN_NO) {
            continue;
        }
        *found_out = p;
        return chain == CHAIN_YES ? BOUNDARY_FOUND : BOUNDARY_MORE;
    }
    *found_out = stop;
    return BOUNDARY_NONE;
}

/* Write one frame header for a payload of `length` bytes at `out` (12 bytes). */
static inline void write_frame_header(uint8_t *out, uint64_t length) {
    store_le64(out, length);
    store_le32(out + 8, masked_crc(out, 8));
}

/* ======================================================================== */
/* 5. Wire reader                                                           */
/* ======================================================================== */

enum { WT_VARINT = 0, WT_I64 = 1, WT_LEN = 2, WT_SGROUP = 3, WT_EGROUP = 4, WT_I32 = 5 };

#define TAG(field, wt) (((uint32_t)(field) << 3) | (uint32_t)(wt))

/* Read a varint of at most 10 bytes; -1 when longer or running past `end`.
 * Bits beyond 64 in a 10th byte are dropped, as protobuf does. */
static inline int rd_varint(const uint8_t **pp, const uint8_t *end, uint64_t *out) {
    const uint8_t *p = *pp;
    if (LIKELY(p < end && *p < 0x80)) {
        *out = *p;
        *pp = p + 1;
        return 0;
    }
    size_t avail = (size_t)(end - p);
    size_t limit = avail < 10 ? avail : 10;
    uint64_t v = 0;
    for (size_t i = 0; i < limit; i++) {
        uint64_t b = p[i];
        v |= (b & 0x7f) << (7 * i);
        if (b < 0x80) {
            *out = v;
            *pp = p + i + 1;
            return 0;
        }
    }
    return -1;
}

/* A field tag: a varint that fits 32 bits with a non-zero field number. */
static inline int rd_tag(const uint8_t **pp, const uint8_t *end, uint32_t *tag) {
    const uint8_t *p = *pp;
    if (LIKELY(p < end && *p < 0x80)) {
        if (UNLIKELY(*p < 8)) {
            return -1; /* field number 0 */
        }
        *tag = *p;
        *pp = p + 1;
        return 0;
    }
    uint64_t v;
    if (rd_varint(pp, end, &v) || v > 0xffffffffu || (v >> 3) == 0) {
        return -1;
    }
    *tag = (uint32_t)v;
    return 0;
}

/* A length prefix, checked against the bytes left. */
static inline int rd_len(const uint8_t **pp, const uint8_t *end, size_t *len) {
    const uint8_t *p = *pp;
    uint64_t v;
    if (LIKELY(p < end && *p < 0x80)) {
        v = *p++;
    } else if (rd_varint(&p, end, &v)) {
        return -1;
    }
    if (v > (uint64_t)(end - p)) {
        return -1;
    }
    *len = (size_t)v;
    *pp = p;
    return 0;
}

#define MAX_GROUP_DEPTH 64

/* Skip one value of wire type `wt` (not a group); 0 on success. */
static inline int skip_scalar_value(const uint8_t **pp, const uint8_t *end, uint32_t wt) {
    const uint8_t *p = *pp;
    switch (wt) {
    case WT_VARINT: {
        uint64_t v;
        if (rd_varint(&p, end, &v)) {
            return -1;
        }
        break;
    }
    case WT_I64:
        if (end - p < 8) {
            return -1;
        }
        p += 8;
        break;
    case WT_LEN: {
        size_t len;
        if (rd_len(&p, end, &len)) {
            return -1;
        }
        p += len;
        break;
    }
    case WT_I32:
        if (end - p < 4) {
            return -1;
        }
        p += 4;
        break;
    default:
        return -1;
    }
    *pp = p;
    return 0;
}

/* Skip the value of an unknown field whose tag was just read. A start-group skips
 * everything up to its matching end-group (nested groups too, to a bounded depth), as
 * proto3 parsers do with unknown groups; a stray end-group and wire types 6/7 are
 * malformed. */
static int skip_field(const uint8_t **pp, const uint8_t *end, uint32_t tag) {
    uint32_t wt = tag & 7;
    if (LIKELY(wt != WT_SGROUP)) {
        return skip_scalar_value(pp, end, wt);
    }
    uint32_t open[MAX_GROUP_DEPTH];
    int depth = 0;
    open[depth++] = tag >> 3;
    const uint8_t *p = *pp;
    while (depth > 0) {
        uint32_t inner;
        if (rd_tag(&p, end, &inner)) {
            return -1;
        }
        uint32_t iwt = inner & 7;
        if (iwt == WT_SGROUP) {
            if (depth == MAX_GROUP_DEPTH) {
                return -1;
            }
            open[depth++] = inner >> 3;
        } else if (iwt == WT_EGROUP) {
            if (open[depth - 1] != (inner >> 3)) {
                return -1;
            }
            depth--;
        } else if (skip_scalar_value(&p, end, iwt)) {
            return -1;
        }
    }
    *pp = p;
    return 0;
}

/* Read the next field of a message: its tag and, when it is length-delimited, its body
 * [*body, *body + *len); any other field is skipped. 0 on success, -1 when malformed. */
static inline int next_field(const uint8_t **pp, const uint8_t *end, uint32_t *tag,
                             const uint8_t **body, size_t *len) {
    if (rd_tag(pp, end, tag)) {
        return -1;
    }
    if ((*tag & 7) != WT_LEN) {
        return skip_field(pp, end, *tag);
    }
    if (rd_len(pp, end, len)) {
        return -1;
    }
    *body = *pp;
    *pp += *len;
    return 0;
}

/* Decode the packed varints of [p, end) into `out` (room for end - p values). */
#if defined(__GNUC__) || defined(__clang__)
/* The varint at the start of the 8 bytes `x` (loaded little-endian) when it is at most
 * 8 bytes long, without a loop: its length comes from the first byte whose high bit is
 * clear, and its 7-bit groups are packed together in three steps (pairs, quads, eights).
 * *len is 0 when all 8 high bits are set (a longer varint: the caller's loop decodes it). */
static inline uint64_t varint8(uint64_t x, size_t *len) {
    uint64_t stops = ~x & 0x8080808080808080ull;
    if (UNLIKELY(stops == 0)) {
        *len = 0;
        return 0;
    }
    unsigned bits = (unsigned)__builtin_ctzll(stops) + 1; /* 8 * length */
    *len = bits >> 3;
    if (bits < 64) {
        x &= (1ull << bits) - 1;
    }
    x = ((x & 0x7f007f007f007f00ull) >> 1) | (x & 0x007f007f007f007full);
    x = ((x & 0x3fff00003fff0000ull) >> 2) | (x & 0x00003fff00003fffull);
    return ((x & 0x0fffffff00000000ull) >> 4) | (x & 0x000000000fffffffull);
}
#endif

static inline int decode_packed_varints(const uint8_t *p, const uint8_t *end, int64_t *out,
                                        size_t *count) {
    int64_t *o = out;
    while (p < end) {
        uint64_t b = *p;
        if (LIKELY(b < 0x80)) {
            *o++ = (int64_t)b;
            p++;
            continue;
        }
        size_t avail = (size_t)(end - p);
#if defined(__GNUC__) || defined(__clang__)
        if (LIKELY(avail >= 8)) {
            size_t len;
            uint64_t fast = varint8(load_le64(p), &len);
            if (LIKELY(len)) {
                *o++ = (int64_t)fast;
                p += len;
                continue;
            }
        }
#endif
        uint64_t v = b & 0x7f;
        size_t i;
        if (LIKELY(avail >= 10)) {
            for (i = 1; i < 10; i++) {
                b = p[i];
                v |= (b & 0x7f) << (7 * i);
                if (b < 0x80) {
                    break;
                }
            }
            if (i == 10) {
                return -1;
            }
        } else {
            for (i = 1; i < avail; i++) {
                b = p[i];
                v |= (b & 0x7f) << (7 * i);
                if (b < 0x80) {
                    break;
                }
            }
            if (i == avail) {
                return -1;
            }
        }
        *o++ = (int64_t)v;
        p += i + 1;
    }
    *count = (size_t)(o - out);
    return 0;
}

/* Count (and validate) the packed varints of [p, end). */
static inline int count_packed_varints(const uint8_t *p, const uint8_t *end, uint64_t *count) {
    uint64_t n = 0;
    int run = 0;
    for (; p < end; p++) {
        if (*p < 0x80) {
            n++;
            run = 0;
        } else if (++run >= 10) {
            return -1;
        }
    }
    if (run) {
        return -1;
    }
    *count = n;
    return 0;
}

/* -- UTF-8 (strict, as Python's decoder: no overlongs, surrogates, > U+10FFFF) -- */

static int utf8_valid(const uint8_t *p, size_t n) {
    const uint8_t *end = p + n;
    while (p < end) {
        if ((size_t)(end - p) >= 8) {
            uint64_t w;
            memcpy(&w, p, 8);
            if ((w & 0x8080808080808080ull) == 0) {
                p += 8;
                continue;
            }
        }
        uint8_t c = *p;
        if (c < 0x80) {
            p++;
        } else if (c >= 0xc2 && c <= 0xdf) {
            if (end - p < 2 || (p[1] & 0xc0) != 0x80) {
                return 0;
            }
            p += 2;
        } else if (c >= 0xe0 && c <= 0xef) {
            if (end - p < 3 || (p[1] & 0xc0) != 0x80 || (p[2] & 0xc0) != 0x80) {
                return 0;
            }
            if ((c == 0xe0 && p[1] < 0xa0) || (c == 0xed && p[1] > 0x9f)) {
                return 0;
            }
            p += 3;
        } else if (c >= 0xf0 && c <= 0xf4) {
            if (end - p < 4 || (p[1] & 0xc0) != 0x80 || (p[2] & 0xc0) != 0x80 ||
                (p[3] & 0xc0) != 0x80) {
                return 0;
            }
            if ((c == 0xf0 && p[1] < 0x90) || (c == 0xf4 && p[1] > 0x8f)) {
                return 0;
            }
            p += 4;
        } else {
            return 0;
        }
    }
    return 1;
}

/* Validate one BytesList / FloatList / Int64List of `kind` and count its values;
 * `utf8` (optional) is cleared when a bytes value is not valid UTF-8. */
static int list_count(int kind, const uint8_t *p, const uint8_t *end, uint64_t *count,
                      int *utf8) {
    uint64_t n = 0;
    while (p < end) {
        uint32_t tag;
        if (rd_tag(&p, end, &tag)) {
            return -1;
        }
        if (kind == 1 && tag == TAG(1, WT_LEN)) { /* BytesList.value */
            size_t len;
            if (rd_len(&p, end, &len)) {
                return -1;
            }
            if (utf8 != NULL && *utf8 && !utf8_valid(p, len)) {
                *utf8 = 0;
            }
            p += len;
            n++;
        } else if (kind == 2 && tag == TAG(1, WT_LEN)) { /* packed floats */
            size_t len;
            if (rd_len(&p, end, &len) || (len & 3)) {
                return -1;
            }
            p += len;
            n += len / 4;
        } else if (kind == 2 && tag == TAG(1, WT_I32)) {
            if (end - p < 4) {
                return -1;
            }
            p += 4;
            n++;
        } else if (kind == 3 && tag == TAG(1, WT_LEN)) { /* packed varints */
            size_t len;
            uint64_t k;
            if (rd_len(&p, end, &len) || count_packed_varints(p, p + len, &k)) {
                return -1;
            }
            p += len;
            n += k;
        } else if (kind == 3 && tag == TAG(1, WT_VARINT)) {
            uint64_t v;
            if (rd_varint(&p, end, &v)) {
                return -1;
            }
            n++;
        } else if (skip_field(&p, end, tag)) {
            return -1;
        }
    }
    *count = n;
    return 0;
}

/* ======================================================================== */
/* 6. Decoder                                                               */
/* ======================================================================== */

enum { EXAMPLE = 0, SEQUENCE_EXAMPLE = 1, RAW = 2 };
enum { FEATURES = 0, FEATURE_LISTS = 1 };
enum { KIND_NONE = 0, KIND_BYTES = 1, KIND_FLOAT = 2, KIND_INT64 = 3 };
enum { SCALAR = 0, LIST = 1, LIST_OF_LIST = 2 };

/* The kind a Feature field sets (its oneof field number: a length-delimited
 * bytes_list 1, float_list 2 or int64_list 3), or KIND_NONE for any other field. */
static inline int feature_kind_field(uint32_t tag) {
    uint32_t field = tag >> 3;
    return ((tag & 7) == WT_LEN && field >= 1 && field <= 3) ? (int)field : KIND_NONE;
}

/* Whether a top-level record field holds a feature map: Example.features (1), and for
 * a SequenceExample also feature_lists (2); the map's location is its field number - 1. */
static inline int is_map_field(uint32_t tag, int seq) {
    return tag == TAG(1, WT_LEN) || (seq && tag == TAG(2, WT_LEN));
}

/* A map entry of Features / FeatureLists: its key (field 1; "" when missing, the last
 * one when repeated) and its value fields (field 2): how many, and the first one. */
typedef struct {
    const uint8_t *key;
    size_t key_len;
    const uint8_t *val, *val_end;
    uint32_t nval;
} entry_parts;

static inline int read_entry(const uint8_t *p, const uint8_t *end, entry_parts *e) {
    /* The layout every writer produces, a short key (field 1) then one value (field 2)
     * that ends the entry, read without the general loop: same result, fewer steps. */
    size_t room = (size_t)(end - p);
    if (room >= 4 && p[0] == TAG(1, WT_LEN) && p[1] < 0x80 && room >= 4 + (size_t)p[1] &&
        p[2 + p[1]] == TAG(2, WT_LEN)) {
        const uint8_t *v = p + 3 + p[1];
        size_t vlen;
        if (rd_len(&v, end, &vlen) == 0 && vlen == (size_t)(end - v)) {
            e->key = p + 2;
            e->key_len = p[1];
            e->val = v;
            e->val_end = end;
            e->nval = 1;
            return 0;
        }
    }
    e->key = p;
    e->key_len = 0;
    e->val = e->val_end = NULL;
    e->nval = 0;
    while (p < end) {
        uint32_t tag;
        const uint8_t *body;
        size_t len;
        if (next_field(&p, end, &tag, &body, &len)) {
            return -1;
        }
        if (tag == TAG(1, WT_LEN)) {
            e->key = body;
            e->key_len = len;
        } else if (tag == TAG(2, WT_LEN) && e->nval++ == 0) {
            e->val = body;
            e->val_end = body + len;
        }
    }
    return 0;
}

/* Internal error codes (0 is success). */
enum {
    E_MALFORMED = 1,
    E_KIND_MISMATCH = 2,
    E_NOT_SCALAR = 3,
    E_OVERFLOW = 4,
    E_NOMEM = 5,
    E_SPAN = 6, /* a record span outside the buffer: a caller mistake */
    E_DATA_CRC = 7, /* a record's data CRC does not match its footer (verify_crc) */
};

#define INT32_LIMIT ((int64_t)0x7fffffff)

static const char *const kind_names[4] = {"no kind", "bytes_list", "float_list", "int64_list"};

#ifndef TFSQL_NO_PYTHON
static PyObject *DecodeError;
#endif

/* One (name, location, kind, shape) column, compiled. */
typedef struct {
    uint8_t *name;
    size_t name_len;
    int location, kind, shape;
} colspec;

/* Open-addressing table name -> column index, one per location. */
typedef struct {
    uint32_t mask;
    int32_t *slots; /* -1: empty */
} nametable;

/* Equality of two short keys without a call into libc. */
static inline int keys_equal(const uint8_t *a, const uint8_t *b, size_t n) {
    while (n >= 8) {
        uint64_t x, y;
        memcpy(&x, a, 8);
        memcpy(&y, b, 8);
        if (x != y) {
            return 0;
        }
        a += 8;
        b += 8;
        n -= 8;
    }
    while (n--) {
        if (*a++ != *b++) {
            return 0;
        }
    }
    return 1;
}

static inline uint32_t name_hash(const uint8_t *p, size_t n) {
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++) {
        h = (h ^ p[i]) * 16777619u;
    }
    return h;
}

static inline int nametable_find(const nametable *t, const colspec *cols, const uint8_t *key,
                                 size_t len) {
    if (t->slots == NULL) {
        return -1;
    }
    uint32_t i = name_hash(key, len) & t->mask;
    for (;;) {
        int32_t c = t->slots[i];
        if (c < 0) {
            return -1;
        }
        if (cols[c].name_len == len && keys_equal(cols[c].name, key, len)) {
            return c;
        }
        i = (i + 1) & t->mask;
    }
}

/* Column specs shared by Decoder and Encoder. */
typedef struct {
    int record_type;
    int ncols;
    colspec *cols;
    nametable tables[2];
} schema;

static void schema_free(schema *s) {
    if (s->cols != NULL) {
        for (int i = 0; i < s->ncols; i++) {
            PyMem_Free(s->cols[i].name);
        }
        PyMem_Free(s->cols);
    }
    PyMem_Free(s->tables[0].slots);
    PyMem_Free(s->tables[1].slots);
    memset(s, 0, sizeof(*s));
}

/* Build the name tables of compiled columns: 0; -1 when out of memory; -2 when a name
 * is listed twice at one location (*dup: the second column's index). */
static int schema_index(schema *s, int *dup) {
    for (int loc = 0; loc < 2; loc++) {
        uint32_t size = 8;
        while (size < 2 * (uint32_t)s->ncols + 2) {
            size *= 2;
        }
        nametable *t = &s->tables[loc];
        t->slots = (int32_t *)PyMem_Malloc(size * sizeof(int32_t));
        if (t->slots == NULL) {
            return -1;
        }
        t->mask = size - 1;
        for (uint32_t k = 0; k < size; k++) {
            t->slots[k] = -1;
        }
        for (int c = 0; c < s->ncols; c++) {
            if (s->cols[c].location != loc) {
                continue;
            }
            const colspec *col = &s->cols[c];
            uint32_t k = name_hash(col->name, col->name_len) & t->mask;
            while (t->slots[k] >= 0) {
                const colspec *other = &s->cols[t->slots[k]];
                if (other->name_len == col->name_len &&
                    memcmp(other->name, col->name, col->name_len) == 0) {
                    *dup = c;
                    return -2;
                }
                k = (k + 1) & t->mask;
            }
            t->slots[k] = c;
        }
    }
    return 0;
}

#ifndef TFSQL_NO_PYTHON
/* Validate and compile `columns`; `what` is "Decoder" or "Encoder". */
static int schema_init(schema *s, int record_type, PyObject *columns, const char *what) {
    memset(s, 0, sizeof(*s));
    if (record_type != EXAMPLE && record_type != SEQUENCE_EXAMPLE && record_type != RAW) {
        PyErr_Format(PyExc_ValueError, "unknown record type %d (expected EXAMPLE=0, "
                     "SEQUENCE_EXAMPLE=1 or RAW=2)", record_type);
        return -1;
    }
    s->record_type = record_type;
    if (record_type == RAW && strcmp(what, "Decoder") == 0) {
        return 0; /* a RAW decoder ignores the columns */
    }
    PyObject *seq = PySequence_Fast(columns, "columns must be a sequence of "
                                             "(name, location, kind, shape) tuples");
    if (seq == NULL) {
        return -1;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    if (n > 0x7fffffff / 4) {
        Py_DECREF(seq);
        PyErr_SetString(PyExc_ValueError, "too many columns");
        return -1;
    }
    s->cols = (colspec *)PyMem_Calloc(n ? (size_t)n : 1, sizeof(colspec));
    if (s->cols == NULL) {
        Py_DECREF(seq);
        PyErr_NoMemory();
        return -1;
    }
    s->ncols = (int)n;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PySequence_Fast_GET_ITEM(seq, i);
        PyObject *name;
        int location, kind, shape;
        if (!PyTuple_Check(item) && !PyList_Check(item)) {
            PyErr_Format(PyExc_TypeError, "%s column %zd must be a (name, location, kind, "
                         "shape) tuple, got %s", what, i, Py_TYPE(item)->tp_name);
            goto fail;
        }
        PyObject *tuple = PySequence_Tuple(item);
        if (tuple == NULL) {
            goto fail;
        }
        if (!PyArg_ParseTuple(tuple, "Oiii;column must be (name, location, kind, shape)",
                              &name, &location, &kind, &shape)) {
            Py_DECREF(tuple);
            goto fail;
        }
        if (!PyBytes_Check(name)) {
            PyErr_Format(PyExc_TypeError, "%s column %zd: name must be bytes, got %s", what, i,
                         Py_TYPE(name)->tp_name);
            Py_DECREF(tuple);
            goto fail;
        }
        colspec *c = &s->cols[i];
        c->name_len = (size_t)PyBytes_GET_SIZE(name);
        c->name = (uint8_t *)PyMem_Malloc(c->name_len ? c->name_len : 1);
        if (c->name == NULL) {
            Py_DECREF(tuple);
            PyErr_NoMemory();
            goto fail;
        }
        memcpy(c->name, PyBytes_AS_STRING(name), c->name_len);
        c->location = location;
        c->kind = kind;
        c->shape = shape;
        if (kind != KIND_BYTES && kind != KIND_FLOAT && kind != KIND_INT64) {
            PyErr_Format(PyExc_ValueError, "%s column %zd (%R): unknown kind %d", what, i,
                         name, kind);
            Py_DECREF(tuple);
            goto fail;
        }
        if (location == FEATURES) {
            if (shape != SCALAR && shape != LIST) {
                PyErr_Format(PyExc_ValueError, "%s column %zd (%R): a FEATURES column is "
                             "SCALAR or LIST, got shape %d", what, i, name, shape);
                Py_DECREF(tuple);
                goto fail;
            }
        } else if (location == FEATURE_LISTS) {
            if (record_type != SEQUENCE_EXAMPLE || shape != LIST_OF_LIST) {
                PyErr_Format(PyExc_ValueError, "%s column %zd (%R): a FEATURE_LISTS column "
                             "needs SEQUENCE_EXAMPLE and shape LIST_OF_LIST", what, i, name);
                Py_DECREF(tuple);
                goto fail;
            }
        } else {
            PyErr_Format(PyExc_ValueError, "%s column %zd (%R): unknown location %d", what, i,
                         name, location);
            Py_DECREF(tuple);
            goto fail;
        }
        Py_DECREF(tuple);
    }
    Py_DECREF(seq);
    seq = NULL;
    if (record_type == RAW) {
        if (s->ncols != 1 || s->cols[0].kind != KIND_BYTES || s->cols[0].shape != SCALAR) {
            PyErr_SetString(PyExc_ValueError, "a RAW Encoder takes exactly one SCALAR BYTES "
                                              "column");
            goto fail;
        }
        return 0;
    }
    int dup = -1;
    int indexed = schema_index(s, &dup);
    if (indexed == -1) {
        PyErr_NoMemory();
        goto fail;
    }
    if (indexed == -2) {
        PyObject *name = PyBytes_FromStringAndSize((const char *)s->cols[dup].name,
                                                   (Py_ssize_t)s->cols[dup].name_len);
        if (name != NULL) {
            PyErr_Format(PyExc_ValueError, "%s column %d (%R) is listed twice", what, dup, name);
            Py_DECREF(name);
        }
        goto fail;
    }
    return 0;
fail:
    Py_XDECREF(seq);
    schema_free(s);
    return -1;
}
#endif /* TFSQL_NO_PYTHON */

/* -- per-call decoding state ---------------------------------------------- */

/* Where a projected feature sits in the current record (the last map entry wins). */
typedef struct {
    size_t stamp; /* record index + 1 when seen in this record */
    const uint8_t *entry, *entry_end;
    const uint8_t *val, *val_end; /* the value span when nval == 1 */
    uint32_t nval;
} slotstate;

/* The Arrow buffers of one output column, built record by record. */
typedef struct {
    int kind, shape;
    tbuf validity; /* n bits, preallocated and zeroed */
    int64_t null_count;
    tbuf outer; /* int32 offsets: LIST into values, LIST_OF_LIST into inner lists */
    tbuf inner_validity;
    int64_t inner_null_count;
    int64_t ninner;
    tbuf inner; /* int32 offsets of the inner lists into the values */
    tbuf voffs; /* int32 offsets of bytes values into `values` */
    tbuf values;
    int64_t nvalues; /* number of values (numbers, or bytes strings) */
} colbuild;

#define NHINT 64

typedef struct {
    const uint8_t *key;
    size_t len;
    int col;
} hint;

#define MAX_UNKNOWN 16

typedef struct {
    int loc;
    const uint8_t *key;
    size_t len;
} unknown_key;

typedef struct {
    const schema *sc;
    slotstate *slots;
    colbuild *cb;
    hint hints[2][NHINT]; /* per location: the key at entry i of the previous record */
    int hint_used[2];
    /* feature names not among the columns (collected when asked to) */
    int track_unknown;
    /* check each record's data CRC (the 4 bytes after its payload) before decoding it:
     * the framing then only checked the headers, and the check runs on the decode
     * threads, on bytes about to be read anyway */
    int verify_crc;
    size_t crc_checked; /* records of this call before this one have had their CRC checked */
    size_t crc_bad;     /* the first of them whose CRC did not match (SIZE_MAX: none) */
    /* rows decoded before this call (a Builder fed several times): record r of the call
     * is row row_base + r of the columns; errors still count r from the call's first */
    size_t row_base;
    int n_unknown;
    unknown_key unknown[MAX_UNKNOWN];
    /* error report */
    int err;
    size_t err_record;
    int err_column;
    int err_found_kind;
    uint64_t err_count;
} dctx;

/* Marks for rolling a column back to the start of a Feature (oneof semantics). */
typedef struct {
    int kind;
    size_t m_values, m_voffs;
    int64_t m_nvalues;
} fstate;

static inline void fstate_begin(const colbuild *cb, fstate *st) {
    st->kind = KIND_NONE;
    st->m_values = cb->values.len;
    st->m_voffs = cb->voffs.len;
    st->m_nvalues = cb->nvalues;
}

static inline void fstate_rollback(colbuild *cb, const fstate *st) {
    cb->values.len = st->m_values;
    cb->voffs.len = st->m_voffs;
    cb->nvalues = st->m_nvalues;
}

#if TFSQL_X86_CRC
#include <emmintrin.h>
/* Copy a value into an output buffer. Large values (images, audio, tensors) are
 * written with non-temporal stores: the output is fresh memory that nothing reads
 * again during the scan, so the stores skip reading each line first and leave the
 * cache to the records still to decode. */
static inline void copy_value(uint8_t *dst, const uint8_t *src, size_t len) {
    if (len < ((size_t)16 << 10)) {
        memcpy(dst, src, len);
        return;
    }
    size_t head = (16 - ((uintptr_t)dst & 15)) & 15;
    memcpy(dst, src, head);
    dst += head;
    src += head;
    len -= head;
    size_t body = len & ~(size_t)63;
    for (size_t i = 0; i < body; i += 64) {
        __m128i a = _mm_loadu_si128((const __m128i *)(src + i));
        __m128i b = _mm_loadu_si128((const __m128i *)(src + i + 16));
        __m128i c = _mm_loadu_si128((const __m128i *)(src + i + 32));
        __m128i d = _mm_loadu_si128((const __m128i *)(src + i + 48));
        _mm_stream_si128((__m128i *)(dst + i), a);
        _mm_stream_si128((__m128i *)(dst + i + 16), b);
        _mm_stream_si128((__m128i *)(dst + i + 32), c);
        _mm_stream_si128((__m128i *)(dst + i + 48), d);
    }
    memcpy(dst + body, src + body, len - body);
    _mm_sfence();
}
#else
static inline void copy_value(uint8_t *dst, const uint8_t *src, size_t len) {
    memcpy(dst, src, len);
}
#endif

/* Append the values of one list message of the column's kind. */
static int list_append(colbuild *cb, const uint8_t *p, const uint8_t *end) {
    const int kind = cb->kind;
    while (p < end) {
        uint32_t tag;
        if (rd_tag(&p, end, &tag)) {
            return E_MALFORMED;
        }
        if (tag == TAG(1, WT_LEN)) {
            size_t len;
            if (rd_len(&p, end, &len)) {
                return E_MALFORMED;
            }
            const uint8_t *sub = p;
            p += len;
            if (kind == KIND_INT64) {
                if (tbuf_reserve(&cb->values, len * 8)) {
                    return E_NOMEM;
                }
                size_t n;
                if (decode_packed_varints(sub, p, (int64_t *)(cb->values.data + cb->values.len),
                                          &n)) {
                    return E_MALFORMED;
                }
                cb->values.len += n * 8;
                cb->nvalues += (int64_t)n;
            } else if (kind == KIND_FLOAT) {
                if (len & 3) {
                    return E_MALFORMED;
                }
                if (tbuf_reserve(&cb->values, len)) {
                    return E_NOMEM;
                }
                copy_le32_words(cb->values.data + cb->values.len, sub, len / 4);
                cb->values.len += len;
                cb->nvalues += (int64_t)(len / 4);
            } else {
                if ((int64_t)(cb->values.len + len) > INT32_LIMIT) {
                    return E_OVERFLOW;
                }
                if (tbuf_reserve(&cb->values, len) || tbuf_reserve(&cb->voffs, 4)) {
                    return E_NOMEM;
                }
                copy_value(cb->values.data + cb->values.len, sub, len);
                cb->values.len += len;
                int32_t off = (int32_t)cb->values.len;
                memcpy(cb->voffs.data + cb->voffs.len, &off, 4);
                cb->voffs.len += 4;
                cb->nvalues++;
            }
        } else if (kind == KIND_INT64 && tag == TAG(1, WT_VARINT)) {
            uint64_t v;
            if (rd_varint(&p, end, &v)) {
                return E_MALFORMED;
            }
            if (tbuf_reserve(&cb->values, 8)) {
                return E_NOMEM;
            }
            memcpy(cb->values.data + cb->values.len, &v, 8);
            cb->values.len += 8;
            cb->nvalues++;
        } else if (kind == KIND_FLOAT && tag == TAG(1, WT_I32)) {
            if (end - p < 4) {
                return E_MALFORMED;
            }
            if (tbuf_reserve(&cb->values, 4)) {
                return E_NOMEM;
            }
            copy_le32_words(cb->values.data + cb->values.len, p, 1);
            p += 4;
            cb->values.len += 4;
            cb->nvalues++;
        } else if (skip_field(&p, end, tag)) {
            return E_MALFORMED;
        }
    }
    return 0;
}

/* The encoding nearly every writer produces: a Feature holding one field of the
 * column's kind, whose list holds one packed (or, for bytes, one) value field. Appends
 * the values and returns 1, or returns 0 without side effects so that the general
 * path handles (and reports) everything else. */
static inline int feature_fast(colbuild *cb, const uint8_t *p, const uint8_t *end) {
    if (p >= end || *p != (uint8_t)TAG(cb->kind, WT_LEN)) {
        return 0;
    }
    p++;
    size_t list_len;
    if (rd_len(&p, end, &list_len) || p + list_len != end) {
        return 0;
    }
    if (list_len == 0) {
        return 1; /* an empty list of the right kind */
    }
    if (*p != (uint8_t)TAG(1, WT_LEN)) {
        return 0;
    }
    p++;
    size_t len;
    if (rd_len(&p, end, &len) || p + len != end) {
        return 0;
    }
    if (cb->kind == KIND_INT64) {
        size_t n;
        if (tbuf_reserve(&cb->values, len * 8) ||
            decode_packed_varints(p, end, (int64_t *)(cb->values.data + cb->values.len), &n)) {
            return 0;
        }
        cb->values.len += n * 8;
        cb->nvalues += (int64_t)n;
    } else if (cb->kind == KIND_FLOAT) {
        if ((len & 3) || tbuf_reserve(&cb->values, len)) {
            return 0;
        }
        copy_le32_words(cb->values.data + cb->values.len, p, len / 4);
        cb->values.len += len;
        cb->nvalues += (int64_t)(len / 4);
    } else {
        if ((int64_t)(cb->values.len + len) > INT32_LIMIT || tbuf_reserve(&cb->values, len) ||
            tbuf_reserve(&cb->voffs, 4)) {
            return 0;
        }
        copy_value(cb->values.data + cb->values.len, p, len);
        cb->values.len += len;
        int32_t off = (int32_t)cb->values.len;
        memcpy(cb->voffs.data + cb->voffs.len, &off, 4);
        cb->voffs.len += 4;
        cb->nvalues++;
    }
    return 1;
}

/* Feed one span of Feature bytes. Several spans (a map entry whose value field
 * repeats) merge like one message: the last kind field wins, and the occurrences of
 * that kind after the last different kind concatenate. */
static int feature_feed(colbuild *cb, fstate *st, const uint8_t *p, const uint8_t *end) {
    while (p < end) {
        uint32_t tag;
        const uint8_t *sub;
        size_t len;
        if (next_field(&p, end, &tag, &sub, &len)) {
            return E_MALFORMED;
        }
        int kind = feature_kind_field(tag);
        if (kind == KIND_NONE) {
            continue;
        }
        if (kind != st->kind) {
            if (st->kind == cb->kind) {
                fstate_rollback(cb, st);
            }
            st->kind = kind;
        }
        int rc;
        if (kind == cb->kind) {
            rc = list_append(cb, sub, sub + len);
        } else {
            uint64_t ignored;
            rc = list_count(kind, sub, sub + len, &ignored, NULL) ? E_MALFORMED : 0;
        }
        if (rc) {
            return rc;
        }
    }
    return 0;
}

/* Feed every value field (field 2) of a map entry. */
static int feature_feed_entry(colbuild *cb, fstate *st, const uint8_t *p, const uint8_t *end) {
    while (p < end) {
        uint32_t tag;
        const uint8_t *value;
        size_t len;
        if (next_field(&p, end, &tag, &value, &len)) {
            return E_MALFORMED;
        }
        int rc = tag == TAG(2, WT_LEN) ? feature_feed(cb, st, value, value + len) : 0;
        if (rc) {
            return rc;
        }
    }
    return 0;
}

static inline void bit_set(uint8_t *bits, int64_t i) { bits[i >> 3] |= (uint8_t)(1u << (i & 7)); }

static int put_offset(tbuf *b, int64_t v) {
    if (v > INT32_LIMIT) {
        return E_OVERFLOW;
    }
    return tbuf_put_i32(b, (int32_t)v) ? E_NOMEM : 0;
}

/* One step (a Feature) of a FeatureList into a LIST_OF_LIST column. */
static int lol_step(dctx *x, colbuild *cb, const uint8_t *p, const uint8_t *end) {
    fstate st;
    fstate_begin(cb, &st);
    int rc = feature_feed(cb, &st, p, end);
    if (rc) {
        return rc;
    }
    if (st.kind != KIND_NONE && st.kind != cb->kind) {
        x->err_found_kind = st.kind;
        return E_KIND_MISMATCH;
    }
    int64_t i = cb->ninner;
    if (cb->inner_validity.len <= (size_t)(i >> 3)) {
        if (tbuf_reserve(&cb->inner_validity, 1)) {
            return E_NOMEM;
        }
        cb->inner_validity.data[cb->inner_validity.len++] = 0;
    }
    if (st.kind == KIND_NONE) {
        cb->inner_null_count++;
    } else {
        bit_set(cb->inner_validity.data, i);
    }
    cb->ninner++;
    return put_offset(&cb->inner, cb->nvalues);
}

/* The steps of one FeatureList message. */
static int lol_feature_list(dctx *x, colbuild *cb, const uint8_t *p, const uint8_t *end) {
    while (p < end) {
        uint32_t tag;
        const uint8_t *step;
        size_t len;
        if (next_field(&p, end, &tag, &step, &len)) {
            return E_MALFORMED;
        }
        int rc = tag == TAG(1, WT_LEN) ? lol_step(x, cb, step, step + len) : 0;
        if (rc) {
            return rc;
        }
    }
    return 0;
}

static int lol_row(dctx *x, colbuild *cb, const slotstate *s, size_t r, int present) {
    if (present) {
        int rc = 0;
        if (s->nval == 1) {
            rc = lol_feature_list(x, cb, s->val, s->val_end);
        } else if (s->nval > 1) {
            const uint8_t *p = s->entry, *end = s->entry_end;
            while (p < end && rc == 0) {
                uint32_t tag;
                const uint8_t *value;
                size_t len;
                if (next_field(&p, end, &tag, &value, &len)) {
                    return E_MALFORMED;
                }
                if (tag == TAG(2, WT_LEN)) {
                    rc = lol_feature_list(x, cb, value, value + len);
                }
            }
        }
        if (rc) {
            return rc;
        }
        bit_set(cb->validity.data, (int64_t)r);
    } else {
        cb->null_count++;
    }
    return put_offset(&cb->outer, cb->ninner);
}

/* Finish row `r` of column `c` from what the record scan found. */
static int column_row(dctx *x, int c, size_t r) {
    colbuild *cb = &x->cb[c];
    const slotstate *s = &x->slots[c];
    int present = s->stamp == r + 1;
    if (cb->shape == LIST_OF_LIST) {
        return lol_row(x, cb, s, r, present);
    }
    int kind = KIND_NONE;
    int64_t before = cb->nvalues;
    if (present && s->nval == 1 && feature_fast(cb, s->val, s->val_end)) {
        kind = cb->kind;
    } else if (present) {
        fstate st;
        fstate_begin(cb, &st);
        int rc = 0;
        if (s->nval == 1) {
            rc = feature_feed(cb, &st, s->val, s->val_end);
        } else if (s->nval > 1) {
            rc = feature_feed_entry(cb, &st, s->entry, s->entry_end);
        }
        if (rc) {
            return rc;
        }
        kind = st.kind;
        if (kind != KIND_NONE && kind != cb->kind) {
            x->err_found_kind = kind;
            return E_KIND_MISMATCH;
        }
    }
    int64_t count = cb->nvalues - before;
    if (cb->shape == SCALAR) {
        if (count > 1) {
            x->err_count = (uint64_t)count;
            return E_NOT_SCALAR;
        }
        if (count == 1) {
            bit_set(cb->validity.data, (int64_t)r);
            return 0;
        }
        cb->null_count++;
        if (cb->kind == KIND_BYTES) {
            if (tbuf_put_i32(&cb->voffs, (int32_t)cb->values.len)) {
                return E_NOMEM;
            }
        } else {
            size_t width = cb->kind == KIND_INT64 ? 8 : 4;
            if (tbuf_reserve(&cb->values, width)) {
                return E_NOMEM;
            }
            memset(cb->values.data + cb->values.len, 0, width);
            cb->values.len += width;
        }
        cb->nvalues++;
        return 0;
    }
    if (kind == KIND_NONE) {
        cb->null_count++;
    } else {
        bit_set(cb->validity.data, (int64_t)r);
    }
    return put_offset(&cb->outer, cb->nvalues);
}

/* One map entry (key 1, value 2) of Features / FeatureLists: remember where a
 * projected one is; an unprojected one is skipped by length. */
/* Remember a feature name that is not a column (first MAX_UNKNOWN distinct ones). */
static void note_unknown(dctx *x, int loc, const uint8_t *key, size_t len) {
    if (x->n_unknown >= MAX_UNKNOWN) {
        return;
    }
    for (int i = 0; i < x->n_unknown; i++) {
        const unknown_key *u = &x->unknown[i];
        if (u->loc == loc && u->len == len && keys_equal(u->key, key, len)) {
            return;
        }
    }
    unknown_key *u = &x->unknown[x->n_unknown++];
    u->loc = loc;
    u->key = key;
    u->len = len;
}

static inline int scan_entry(dctx *x, int loc, const uint8_t *p, const uint8_t *end,
                             size_t stamp, int ordinal) {
    entry_parts e;
    if (read_entry(p, end, &e)) {
        return E_MALFORMED;
    }
    const uint8_t *key = e.key;
    size_t key_len = e.key_len;
    int c;
    if (ordinal < NHINT) {
        hint *h = &x->hints[loc][ordinal];
        if (ordinal < x->hint_used[loc] && h->len == key_len &&
            keys_equal(h->key, key, key_len)) {
            c = h->col;
        } else {
            c = nametable_find(&x->sc->tables[loc], x->sc->cols, key, key_len);
            h->key = key;
            h->len = key_len;
            h->col = c;
            if (ordinal >= x->hint_used[loc]) {
                x->hint_used[loc] = ordinal + 1;
            }
            if (c < 0 && x->track_unknown) {
                note_unknown(x, loc, key, key_len);
            }
        }
    } else {
        c = nametable_find(&x->sc->tables[loc], x->sc->cols, key, key_len);
        if (c < 0 && x->track_unknown) {
            note_unknown(x, loc, key, key_len);
        }
    }
    if (c >= 0) {
        slotstate *s = &x->slots[c];
        s->stamp = stamp;
        s->entry = p;
        s->entry_end = end;
        s->val = e.val;
        s->val_end = e.val_end;
        s->nval = e.nval;
    }
    return 0;
}

/* A Features / FeatureLists message: a repeated map entry field 1. */
static int scan_map(dctx *x, int loc, const uint8_t *p, const uint8_t *end, size_t stamp,
                    int *ordinal) {
    while (p < end) {
        uint32_t tag;
        const uint8_t *entry;
        size_t len;
        if (next_field(&p, end, &tag, &entry, &len)) {
            return E_MALFORMED;
        }
        int rc = tag == TAG(1, WT_LEN) ? scan_entry(x, loc, entry, entry + len, stamp,
                                                    (*ordinal)++)
                                       : 0;
        if (rc) {
            return rc;
        }
    }
    return 0;
}

/* The top level of an Example (features = 1) or SequenceExample (context = 1,
 * feature_lists = 2). A repeated message field merges, so its maps merge. */
static int scan_record(dctx *x, const uint8_t *p, const uint8_t *end, size_t stamp) {
    int ordinal[2] = {0, 0};
    const int seq = x->sc->record_type == SEQUENCE_EXAMPLE;
    while (p < end) {
        uint32_t tag;
        const uint8_t *map;
        size_t len;
        if (next_field(&p, end, &tag, &map, &len)) {
            return E_MALFORMED;
        }
        if (is_map_field(tag, seq)) {
            int loc = (int)(tag >> 3) - 1;
            int rc = scan_map(x, loc, map, map + len, stamp, &ordinal[loc]);
            if (rc) {
                return rc;
            }
        }
    }
    return 0;
}

/* Check a record span against the buffer. */
static inline int record_span(const uint8_t *offs, const uint8_t *lens, size_t i,
                              size_t buflen, size_t *start, size_t *len) {
    uint64_t o = load_u64(offs + 8 * i), l = load_u64(lens + 8 * i);
    if (o > buflen || l > buflen - o) {
        return -1;
    }
    *start = (size_t)o;
    *len = (size_t)l;
    return 0;
}

/* The records' payload bytes in all (at most the buffer's size, whatever the lengths say). */
static size_t records_payload(const uint8_t *lens, size_t n, size_t buflen) {
    uint64_t total = 0;
    for (size_t r = 0; r < n && total < buflen; r++) {
        total += load_u64(lens + 8 * r);
    }
    return total < buflen ? (size_t)total : buflen;
}

static void colbuild_free(colbuild *cb) {
    tbuf_free(&cb->validity);
    tbuf_free(&cb->outer);
    tbuf_free(&cb->inner_validity);
    tbuf_free(&cb->inner);
    tbuf_free(&cb->voffs);
    tbuf_free(&cb->values);
}

/* Preallocate what a column needs for n rows whose payloads total `payload` bytes (a
 * bytes column's values are a part of those payloads, so reserving that much at once
 * spares the copies of growing, and a large buffer gets its huge pages advised before
 * its first byte is written); starts offsets at 0. */
/* What each numeric list column of `sc` reserves for its values when the records hold
 * `payload` bytes: the payload (floats take at least 4 bytes on the wire, so a float
 * list fits), shared out when there are more than two such columns, so that a wide
 * schema does not reserve many times the batch. Reserving at once spares the copies
 * of growing; pages never touched cost no memory. */
static size_t list_reserve(const schema *sc, size_t payload) {
    size_t lists = 0;
    for (int c = 0; sc->record_type != RAW && c < sc->ncols; c++) {
        lists += sc->cols[c].shape != SCALAR && sc->cols[c].kind != KIND_BYTES;
    }
    return lists <= 2 ? payload : 2 * (payload / lists);
}

static int colbuild_init(colbuild *cb, int kind, int shape, size_t n, size_t payload,
                         size_t list_values) {
    memset(cb, 0, sizeof(*cb));
    cb->kind = kind;
    cb->shape = shape;
    size_t nbytes = (n + 7) / 8;
    size_t width = kind == KIND_INT64 ? 8 : kind == KIND_FLOAT ? 4 : 0;
    if (tbuf_reserve(&cb->validity, nbytes ? nbytes : 1)) {
        return -1;
    }
    memset(cb->validity.data, 0, nbytes);
    cb->validity.len = nbytes;
    if (shape != SCALAR && tbuf_reserve(&cb->outer, 4 * (n + 1))) {
        return -1;
    }
    if (shape != SCALAR) {
        tbuf_put_i32(&cb->outer, 0);
    }
    if (shape == LIST_OF_LIST) {
        if (tbuf_reserve(&cb->inner, 4 * (n + 1))) {
            return -1;
        }
        tbuf_put_i32(&cb->inner, 0);
    }
    if (kind == KIND_BYTES) {
        if (tbuf_reserve(&cb->voffs, 4 * (n + 1))) {
            return -1;
        }
        tbuf_put_i32(&cb->voffs, 0);
    }
    /* never NULL, so memcpy of 0 bytes into it stays defined */
    size_t want = kind == KIND_BYTES ? payload : width * n;
    if (kind != KIND_BYTES && shape != SCALAR && list_values > want) {
        want = list_values;
    }
    if (tbuf_reserve(&cb->values, want > 64 ? want : 64)) {
        return -1;
    }
    return 0;
}

/* Check the data CRCs (against the footers after the payloads) of the next records from
 * r: three at once where their spans are sound (crc32c_values3), else the ones before
 * the first unsound span (which decoding then reports) or just r. Sets crc_checked past
 * the records checked and crc_bad to the first mismatch among them (SIZE_MAX: none). */
static void check_crcs_ahead(dctx *x, const uint8_t *buf, size_t buflen, const uint8_t *offs,
                             const uint8_t *lens, size_t n, size_t r) {
    const uint8_t *p[3];
    size_t len[3];
    size_t k = 0;
    x->crc_bad = SIZE_MAX;
    for (; k < 3 && r + k < n; k++) {
        size_t start, l;
        if (record_span(offs, lens, r + k, buflen, &start, &l)) {
            break;
        }
        if (buflen - start - l < 4) { /* no footer: a mismatch */
            x->crc_bad = r + k;
            break;
        }
        p[k] = buf + start;
        len[k] = l;
    }
    uint32_t crc[3];
    if (k == 3) {
        crc32c_values3(p, len, crc);
    } else {
        for (size_t j = 0; j < k; j++) {
            crc[j] = crc32c_value(0, p[j], len[j]);
        }
    }
    for (size_t j = 0; j < k; j++) {
        if (crc_mask(crc[j]) != load_le32(p[j] + len[j])) {
            x->crc_bad = r + j;
            break;
        }
    }
    x->crc_checked = x->crc_bad != SIZE_MAX ? x->crc_bad + 1 : r + (k ? k : 1);
}

/* With x->verify_crc, whether record r's data CRC matches its footer (checked a few
 * records ahead of decoding, see check_crcs_ahead). */
static inline int record_crc_ok(dctx *x, const uint8_t *buf, size_t buflen, const uint8_t *offs,
                                const uint8_t *lens, size_t n, size_t r) {
    if (!x->verify_crc) {
        return 1;
    }
    if (r >= x->crc_checked) {
        check_crcs_ahead(x, buf, buflen, offs, lens, n, r);
    }
    return r != x->crc_bad;
}

/* The decode loop (runs without the GIL). */
static int decode_core(dctx *x, const uint8_t *buf, size_t buflen, const uint8_t *offs,
                       const uint8_t *lens, size_t n) {
    const schema *sc = x->sc;
    if (sc->record_type == RAW) {
        colbuild *cb = &x->cb[0];
        for (size_t r = 0; r < n; r++) {
            size_t start, len;
            if (record_span(offs, lens, r, buflen, &start, &len)) {
                x->err_record = r;
                return E_SPAN;
            }
            if (!record_crc_ok(x, buf, buflen, offs, lens, n, r)) {
                x->err_record = r;
                return E_DATA_CRC;
            }
            if ((int64_t)(cb->values.len + len) > INT32_LIMIT) {
                x->err_record = r;
                x->err_column = 0;
                return E_OVERFLOW;
            }
            if (tbuf_reserve(&cb->values, len)) {
                return E_NOMEM;
            }
            memcpy(cb->values.data + cb->values.len, buf + start, len);
            cb->values.len += len;
            if (tbuf_put_i32(&cb->voffs, (int32_t)cb->values.len)) {
                return E_NOMEM;
            }
        }
        return 0;
    }
    for (size_t r = 0; r < n; r++) {
        size_t start, len;
        if (record_span(offs, lens, r, buflen, &start, &len)) {
            x->err_record = r;
            return E_SPAN;
        }
        if (!record_crc_ok(x, buf, buflen, offs, lens, n, r)) {
            x->err_record = r;
            return E_DATA_CRC;
        }
        size_t row = x->row_base + r;
        int rc = scan_record(x, buf + start, buf + start + len, row + 1);
        if (rc) {
            x->err_record = r;
            x->err_column = -1;
            return rc;
        }
        for (int c = 0; c < sc->ncols; c++) {
            rc = column_row(x, c, row);
            if (rc) {
                x->err_record = r;
                x->err_column = c;
                return rc;
            }
        }
    }
    return 0;
}

#ifndef TFSQL_NO_PYTHON
/* -- raising DecodeError -------------------------------------------------- */

/* Set obj.name to a new reference `value` and drop it; -1 (an error set) when `value`
 * is NULL or the attribute cannot be set. */
static int set_new_attr(PyObject *obj, const char *name, PyObject *value) {
    if (value == NULL) {
        return -1;
    }
    int rc = PyObject_SetAttrString(obj, name, value);
    Py_DECREF(value);
    return rc < 0 ? -1 : 0;
}

static void raise_decode_error(const char *reason, Py_ssize_t record, int column,
                               int found_kind, PyObject *message) {
    if (message == NULL) {
        return;
    }
    PyObject *exc = PyObject_CallOneArg(DecodeError, message);
    Py_DECREF(message);
    if (exc == NULL) {
        return;
    }
    if (set_new_attr(exc, "reason", PyUnicode_FromString(reason)) == 0 &&
        set_new_attr(exc, "record", PyLong_FromSsize_t(record)) == 0 &&
        set_new_attr(exc, "column", PyLong_FromLong(column)) == 0 &&
        set_new_attr(exc, "found_kind", PyLong_FromLong(found_kind)) == 0) {
        PyErr_SetObject(DecodeError, exc);
    }
    Py_DECREF(exc);
}

static const char *record_type_name(int record_type) {
    return record_type == SEQUENCE_EXAMPLE ? "SequenceExample"
           : record_type == EXAMPLE        ? "Example"
                                           : "raw";
}

/* Turn a dctx error into a Python exception. */
static void raise_dctx_error(const dctx *x, int record_type) {
    Py_ssize_t r = (Py_ssize_t)x->err_record;
    int c = x->err_column;
    PyObject *name = NULL;
    if (c >= 0 && x->sc->cols != NULL && c < x->sc->ncols) {
        name = PyBytes_FromStringAndSize((const char *)x->sc->cols[c].name,
                                         (Py_ssize_t)x->sc->cols[c].name_len);
        if (name == NULL) {
            return;
        }
    }
    switch (x->err) {
    case E_NOMEM:
        PyErr_NoMemory();
        break;
    case E_SPAN:
        PyErr_Format(PyExc_ValueError, "record %zd: its span (offset + length) lies outside "
                     "the buffer", r);
        break;
    case E_DATA_CRC:
        raise_decode_error("data_crc", r, -1, 0, PyUnicode_FromFormat(
            "record %zd: its data CRC does not match its footer; the record is corrupt", r));
        break;
    case E_MALFORMED:
        if (name != NULL) {
            raise_decode_error("malformed", r, -1, 0, PyUnicode_FromFormat(
                "record %zd is not a valid %s protobuf (in feature %R, column %d); the "
                "record is corrupt", r, record_type_name(record_type), name, c));
        } else {
            raise_decode_error("malformed", r, -1, 0, PyUnicode_FromFormat(
                "record %zd is not a valid %s protobuf; the record is corrupt or of "
                "another record type", r, record_type_name(record_type)));
        }
        break;
    case E_KIND_MISMATCH: {
        int want = x->sc->cols[c].kind, found = x->err_found_kind;
        raise_decode_error("kind_mismatch", r, c, found, PyUnicode_FromFormat(
            "record %zd: feature %R holds a %s but column %d expects %s", r, name,
            kind_names[found & 3], c, kind_names[want & 3]));
        break;
    }
    case E_NOT_SCALAR:
        raise_decode_error("not_scalar", r, c, 0, PyUnicode_FromFormat(
            "record %zd: feature %R has %llu values but column %d is a scalar", r, name,
            (unsigned long long)x->err_count, c));
        break;
    case E_OVERFLOW:
        if (name != NULL) {
            raise_decode_error("overflow", r, c, 0, PyUnicode_FromFormat(
                "record %zd: column %d (%R) exceeds the 32-bit Arrow offsets of one batch; "
                "decode fewer records at a time", r, c, name));
        } else {
            raise_decode_error("overflow", r, c, 0, PyUnicode_FromFormat(
                "record %zd: the records exceed the 32-bit Arrow offsets of one batch; "
                "decode fewer records at a time", r));
        }
        break;
    default:
        PyErr_SetString(PyExc_SystemError, "tfsql._native: unknown decode error");
    }
    Py_XDECREF(name);
}

/* -- the Decoder type ----------------------------------------------------- */

/* Decoder and Encoder objects are the same thing: a schema (record type and columns)
 * compiled once. */
typedef struct {
    PyObject_HEAD
    schema sc;
} SchemaObject;

typedef SchemaObject DecoderObject;
typedef SchemaObject EncoderObject;

static int schema_object_init(SchemaObject *self, PyObject *args, PyObject *kwds,
                              const char *format, const char *what) {
    static char *kwlist[] = {"record_type", "columns", NULL};
    int record_type;
    PyObject *columns;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, format, kwlist, &record_type, &columns)) {
        return -1;
    }
    schema_free(&self->sc);
    return schema_init(&self->sc, record_type, columns, what);
}

static void schema_object_dealloc(SchemaObject *self) {
    schema_free(&self->sc);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int Decoder_init(DecoderObject *self, PyObject *args, PyObject *kwds) {
    return schema_object_init(self, args, kwds, "iO:Decoder", "Decoder");
}

/* A record batch: the buffer and the (offsets, lengths) uint64 arrays of its records;
 * release_batch frees the three views of a batch got with 0. */
static void release_batch(Py_buffer *bv, Py_buffer *ov, Py_buffer *lv) {
    PyBuffer_Release(bv);
    PyBuffer_Release(ov);
    PyBuffer_Release(lv);
}

static int get_batch(PyObject *buf, PyObject *offsets, PyObject *lengths, Py_buffer *bv,
                     Py_buffer *ov, Py_buffer *lv, size_t *n) {
    if (get_bytes_view(buf, bv, "buf") < 0) {
        return -1;
    }
    if (get_bytes_view(offsets, ov, "offsets") < 0) {
        PyBuffer_Release(bv);
        return -1;
    }
    if (get_bytes_view(lengths, lv, "lengths") < 0) {
        PyBuffer_Release(bv);
        PyBuffer_Release(ov);
        return -1;
    }
    if ((ov->len & 7) || (lv->len & 7)) {
        PyErr_SetString(PyExc_ValueError, "offsets and lengths must be uint64 arrays");
    } else if (ov->len != lv->len) {
        PyErr_Format(PyExc_ValueError, "%zd offsets but %zd lengths", ov->len / 8,
                     lv->len / 8);
    } else {
        *n = (size_t)ov->len / 8;
        return 0;
    }
    release_batch(bv, ov, lv);
    return -1;
}

static PyObject *none_or_buffer(tbuf *b, int present) {
    if (!present) {
        Py_RETURN_NONE;
    }
    return buffer_from_tbuf(b);
}

/* The output tuple of one column. */
static PyObject *colbuild_result(colbuild *cb) {
    PyObject *items[8] = {NULL};
    items[0] = none_or_buffer(&cb->validity, cb->null_count != 0);
    items[1] = PyLong_FromLongLong(cb->null_count);
    items[2] = none_or_buffer(&cb->outer, cb->shape != SCALAR);
    items[3] = none_or_buffer(&cb->inner_validity,
                              cb->shape == LIST_OF_LIST && cb->inner_null_count != 0);
    items[4] = PyLong_FromLongLong(cb->inner_null_count);
    items[5] = none_or_buffer(&cb->inner, cb->shape == LIST_OF_LIST);
    items[6] = none_or_buffer(&cb->voffs, cb->kind == KIND_BYTES);
    items[7] = buffer_from_tbuf(&cb->values);
    PyObject *t = PyTuple_New(8);
    for (int i = 0; i < 8; i++) {
        if (items[i] == NULL || t == NULL) {
            for (int j = 0; j < 8; j++) {
                Py_XDECREF(items[j]);
            }
            Py_XDECREF(t);
            return NULL;
        }
    }
    for (int i = 0; i < 8; i++) {
        PyTuple_SET_ITEM(t, i, items[i]);
    }
    return t;
}

/* -- decoding in steps: begin, feed (any number of times), results ---------- */
/* Decoder.decode is one feed; a Builder feeds many buffers into the same columns, so a
 * reader can decode each small read while it is in cache and still cut large batches. */

static int decode_ncols(const schema *sc) { return sc->record_type == RAW ? 1 : sc->ncols; }

/* Set up `x` to decode into fresh columns, reserving for about `n` rows whose payloads
 * total `payload` bytes; E_NOMEM when out of memory (then decode_end still frees). */
static int decode_begin(dctx *x, const schema *sc, size_t n, size_t payload) {
    int ncols = decode_ncols(sc);
    memset(x, 0, sizeof(*x));
    x->sc = sc;
    x->err_column = -1;
    size_t lists = list_reserve(sc, payload);
    x->slots = (slotstate *)PyMem_RawCalloc((size_t)ncols + 1, sizeof(slotstate));
    x->cb = (colbuild *)PyMem_RawCalloc((size_t)ncols + 1, sizeof(colbuild));
    if (x->slots == NULL || x->cb == NULL) {
        return E_NOMEM;
    }
    for (int c = 0; c < ncols; c++) {
        int kind = sc->record_type == RAW ? KIND_BYTES : sc->cols[c].kind;
        int shape = sc->record_type == RAW ? SCALAR : sc->cols[c].shape;
        if (colbuild_init(&x->cb[c], kind, shape, n, payload, lists)) {
            return E_NOMEM;
        }
        x->cb[c].validity.len = 0; /* grown (zeroed) by each feed */
    }
    return 0;
}

/* Decode `n` more records into the columns (runs without the GIL); 0 or an E_ code,
 * with x->err_record counted from this call's first record. */
static int decode_feed(dctx *x, const uint8_t *buf, size_t buflen, const uint8_t *offs,
                       const uint8_t *lens, size_t n, int verify) {
    size_t bytes = (x->row_base + n + 7) / 8;
    for (int c = 0; c < decode_ncols(x->sc); c++) {
        tbuf *v = &x->cb[c].validity;
        if (v->len < bytes) {
            if (tbuf_reserve(v, bytes - v->len)) {
                return E_NOMEM;
            }
            memset(v->data + v->len, 0, bytes - v->len);
            v->len = bytes;
        }
    }
    x->verify_crc = verify;
    x->crc_checked = 0;
    x->crc_bad = SIZE_MAX;
    x->hint_used[0] = x->hint_used[1] = 0; /* the hints point into the previous buffer */
    x->n_unknown = 0;                      /* so do the unknown names: reported per feed */
    x->err_column = -1;
    int rc = decode_core(x, buf, buflen, offs, lens, n);
    if (rc == 0) {
        x->row_base += n;
    }
    return rc;
}

/* Add the feature names the last feed found outside the columns to `unknown` (a set). */
static int report_unknown(const dctx *x, PyObject *unknown) {
    for (int i = 0; i < x->n_unknown; i++) {
        PyObject *item = Py_BuildValue("(iy#)", x->unknown[i].loc, (const char *)x->unknown[i].key,
                                       (Py_ssize_t)x->unknown[i].len);
        if (item == NULL || PySet_Add(unknown, item) < 0) {
            Py_XDECREF(item);
            return -1;
        }
        Py_DECREF(item);
    }
    return 0;
}

/* The columns as Decoder.decode returns them (their buffers move to the result). */
static PyObject *decode_results(dctx *x) {
    int ncols = decode_ncols(x->sc);
    PyObject *result = PyList_New(ncols);
    if (result == NULL) {
        return NULL;
    }
    for (int c = 0; c < ncols; c++) {
        PyObject *t = colbuild_result(&x->cb[c]);
        if (t == NULL) {
            Py_DECREF(result);
            return NULL;
        }
        PyList_SET_ITEM(result, c, t);
    }
    return result;
}

static void decode_end(dctx *x) {
    if (x->cb != NULL) {
        for (int c = 0; c < decode_ncols(x->sc); c++) {
            colbuild_free(&x->cb[c]);
        }
    }
    PyMem_RawFree(x->cb);
    PyMem_RawFree(x->slots);
    x->cb = NULL;
    x->slots = NULL;
}

static int check_decoder(const schema *sc, PyObject *unknown, const char *what) {
    if (unknown != Py_None && !PySet_Check(unknown)) {
        PyErr_Format(PyExc_TypeError, "%s: unknown must be a set or None", what);
        return -1;
    }
    if (sc->record_type != RAW && sc->cols == NULL) {
        PyErr_SetString(PyExc_ValueError, "Decoder is not initialized");
        return -1;
    }
    return 0;
}

/* The arguments of Decoder.decode and Builder.feed: the records (held until
 * release_batch), the set unknown feature names go into (None: not tracked) and
 * whether to check the data CRCs. */
typedef struct {
    Py_buffer bv, ov, lv;
    size_t n;
    PyObject *unknown;
    int verify;
} feed_args;

/* Parse and check them (`fmt` names the method); 0, or -1 with an exception set. */
static int parse_feed_args(PyObject *args, PyObject *kwds, const char *fmt, const schema *sc,
                           feed_args *fa) {
    static char *kwlist[] = {"buf", "offsets", "lengths", "unknown", "verify", NULL};
    PyObject *bufobj, *offobj, *lenobj;
    fa->unknown = Py_None;
    fa->verify = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, fmt, kwlist, &bufobj, &offobj, &lenobj,
                                     &fa->unknown, &fa->verify)) {
        return -1;
    }
    if (check_decoder(sc, fa->unknown, strchr(fmt, ':') + 1) < 0) {
        return -1;
    }
    return get_batch(bufobj, offobj, lenobj, &fa->bv, &fa->ov, &fa->lv, &fa->n);
}

static PyObject *Decoder_decode(DecoderObject *self, PyObject *args, PyObject *kwds) {
    const schema *sc = &self->sc;
    feed_args fa;
    if (parse_feed_args(args, kwds, "OOO|Op:decode", sc, &fa) < 0) {
        return NULL;
    }
    Py_buffer *bv = &fa.bv, *ov = &fa.ov, *lv = &fa.lv;
    size_t n = fa.n;
    PyObject *unknown = fa.unknown;
    int verify = fa.verify;
    PyObject *result = NULL;
    dctx x;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = decode_begin(&x, sc, n, records_payload((const uint8_t *)lv->buf, n, (size_t)bv->len));
    x.track_unknown = unknown != Py_None;
    if (rc == 0) {
        rc = decode_feed(&x, (const uint8_t *)bv->buf, (size_t)bv->len, (const uint8_t *)ov->buf,
                         (const uint8_t *)lv->buf, n, verify);
    }
    Py_END_ALLOW_THREADS
    x.err = rc;
    if (rc) {
        raise_dctx_error(&x, sc->record_type);
    } else if (unknown == Py_None || report_unknown(&x, unknown) == 0) {
        result = decode_results(&x);
    }
    decode_end(&x);
    release_batch(bv, ov, lv);
    return result;
}

/* -- the Builder type: one batch decoded from several buffers -------------------- */

typedef struct {
    PyObject_HEAD
    DecoderObject *decoder; /* holds the schema */
    dctx x;
    int busy;  /* a feed is running (a Builder is not for two threads at once) */
    int done;  /* finished, or failed: the columns hold a partial record */
} BuilderObject;

static PyTypeObject Builder_Type;

static PyObject *Decoder_builder(DecoderObject *self, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"rows", "payload", NULL};
    Py_ssize_t rows = 0, payload = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|nn:builder", kwlist, &rows, &payload)) {
        return NULL;
    }
    if (rows < 0 || payload < 0) {
        PyErr_SetString(PyExc_ValueError, "builder: rows and payload must be >= 0");
        return NULL;
    }
    if (check_decoder(&self->sc, Py_None, "builder") < 0) {
        return NULL;
    }
    BuilderObject *b = PyObject_New(BuilderObject, &Builder_Type);
    if (b == NULL) {
        return NULL;
    }
    Py_INCREF(self);
    b->decoder = self;
    b->busy = b->done = 0;
    if (decode_begin(&b->x, &self->sc, (size_t)rows, (size_t)payload)) {
        Py_DECREF(b);
        return PyErr_NoMemory();
    }
    return (PyObject *)b;
}

static void Builder_dealloc(BuilderObject *b) {
    decode_end(&b->x);
    Py_XDECREF(b->decoder);
    PyObject_Free(b);
}

static int builder_usable(BuilderObject *b) {
    if (b->busy) {
        PyErr_SetString(PyExc_RuntimeError, "this Builder is in use by another thread");
        return -1;
    }
    if (b->done) {
        PyErr_SetString(PyExc_ValueError, "this Builder is finished (or failed): start another");
        return -1;
    }
    return 0;
}

static PyObject *Builder_feed(BuilderObject *b, PyObject *args, PyObject *kwds) {
    feed_args fa;
    if (builder_usable(b) < 0 || parse_feed_args(args, kwds, "OOO|Op:feed", b->x.sc, &fa) < 0) {
        return NULL;
    }
    Py_buffer *bv = &fa.bv, *ov = &fa.ov, *lv = &fa.lv;
    size_t n = fa.n;
    PyObject *unknown = fa.unknown;
    int verify = fa.verify;
    dctx *x = &b->x;
    x->track_unknown = unknown != Py_None;
    b->busy = 1;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = decode_feed(x, (const uint8_t *)bv->buf, (size_t)bv->len, (const uint8_t *)ov->buf,
                     (const uint8_t *)lv->buf, n, verify);
    Py_END_ALLOW_THREADS
    b->busy = 0;
    x->err = rc;
    int failed = 0;
    if (rc) {
        b->done = 1;
        raise_dctx_error(x, x->sc->record_type);
        failed = 1;
    } else if (unknown != Py_None && report_unknown(x, unknown) < 0) {
        failed = 1;
    }
    release_batch(bv, ov, lv);
    if (failed) {
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyObject *Builder_finish(BuilderObject *b, PyObject *unused) {
    if (builder_usable(b) < 0) {
        return NULL;
    }
    b->done = 1;
    return decode_results(&b->x);
}

static PyObject *Builder_rows(BuilderObject *b, void *unused) {
    return PyLong_FromSize_t(b->x.row_base);
}

static PyMethodDef Builder_methods[] = {
    {"feed", (PyCFunction)(void (*)(void))Builder_feed, METH_VARARGS | METH_KEYWORDS,
     "feed(buf, offsets, lengths, unknown=None, verify=False)\n--\n\n"
     "Decode more records (as ``Decoder.decode`` does) into the columns being built; a\n"
     "DecodeError counts records from this call's first and leaves the Builder failed.\n"
     "The buffers may be reused once it returns (nothing points into them)."},
    {"finish", (PyCFunction)Builder_finish, METH_NOARGS,
     "finish()\n--\n\nThe columns of every record fed, as ``Decoder.decode`` returns them."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef Builder_getset[] = {
    {"rows", (getter)Builder_rows, NULL, "records fed so far", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject Builder_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "tfsql._native.Builder",
    .tp_basicsize = sizeof(BuilderObject),
    .tp_dealloc = (destructor)Builder_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Columns decoded from several buffers of records: Decoder.builder().",
    .tp_methods = Builder_methods,
    .tp_getset = Builder_getset,
};

static PyMethodDef Decoder_methods[] = {
    {"decode", (PyCFunction)(void (*)(void))Decoder_decode, METH_VARARGS | METH_KEYWORDS,
     "decode(buf, offsets, lengths, unknown=None)\n--\n\n"
     "Decode the records ``buf[offsets[i]:offsets[i]+lengths[i]]`` (uint64 arrays) into\n"
     "one tuple per column: ``(validity, null_count, outer_offsets, inner_validity,\n"
     "inner_null_count, inner_offsets, value_offsets, values)``. When ``unknown`` is a\n"
     "set, ``(location, name)`` of features no column reads are added to it (up to 16).\n"
     "See ``_native.pyi``."},
    {"builder", (PyCFunction)(void (*)(void))Decoder_builder, METH_VARARGS | METH_KEYWORDS,
     "builder(rows=0, payload=0)\n--\n\n"
     "A Builder that decodes several buffers of records into one set of columns\n"
     "(reserving for about ``rows`` records of ``payload`` bytes). See ``_native.pyi``."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject Decoder_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "tfsql._native.Decoder",
    .tp_basicsize = sizeof(DecoderObject),
    .tp_dealloc = (destructor)schema_object_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Decoder(record_type, columns)\n--\n\n"
              "A decoder compiled once for a record type and ``(name: bytes, location, kind,\n"
              "shape)`` columns. For RAW the columns are ignored and the output is one\n"
              "SCALAR BYTES column of whole payloads.",
    .tp_methods = Decoder_methods,
    .tp_init = (initproc)Decoder_init,
    .tp_new = PyType_GenericNew,
};
#endif /* TFSQL_NO_PYTHON */

/* ======================================================================== */
/* 7. Encoder                                                               */
/* ======================================================================== */

static inline size_t varint_size(uint64_t v) {
#if defined(__GNUC__) || defined(__clang__)
    return (size_t)(((63 - __builtin_clzll(v | 1)) * 9 + 73) / 64);
#else
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
#endif
}

static inline uint8_t *put_varint(uint8_t *o, uint64_t v) {
    while (v >= 0x80) {
        *o++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *o++ = (uint8_t)v;
    return o;
}

/* Size of a length-delimited field with a one-byte tag and a body of `n` bytes. */
static inline uint64_t field_size(uint64_t n) { return 1 + varint_size(n) + n; }

/* One input column of an encode call (pointers into the caller's buffers). */
typedef struct {
    const colspec *spec;
    const uint8_t *validity;            /* n_rows bytes, or NULL */
    const uint8_t *outer, *inner, *vo; /* int64 arrays, possibly unaligned */
    const uint8_t *values;
    size_t values_len;
    /* per-record scratch */
    uint64_t list_body; /* LIST/SCALAR: bytes of the list message */
    uint64_t feature;   /* Feature (or FeatureList) size of the current row */
} ecol;

enum { EE_NOMEM = 1, EE_NULL_RAW = 2 };

/* [a, b) of the values: the size of the list message's body. */
static inline uint64_t list_body_size(const ecol *e, int64_t a, int64_t b) {
    int kind = e->spec->kind;
    if (a == b) {
        return 0;
    }
    if (kind == KIND_FLOAT) {
        return field_size(4 * (uint64_t)(b - a));
    }
    if (kind == KIND_INT64) {
        uint64_t payload = 0;
        for (int64_t j = a; j < b; j++) {
            payload += varint_size(load_u64(e->values + 8 * j));
        }
        return field_size(payload);
    }
    uint64_t total = 0;
    for (int64_t j = a; j < b; j++) {
        total += field_size((uint64_t)(load_i64(e->vo + 8 * j + 8) - load_i64(e->vo + 8 * j)));
    }
    return total;
}

/* Write a float or bytes Feature holding values [a, b) whose list body is `body` bytes. */
static inline uint8_t *write_feature(const ecol *e, int64_t a, int64_t b, uint64_t body,
                                     uint8_t *o) {
    int kind = e->spec->kind;
    *o++ = (uint8_t)TAG(kind, WT_LEN);
    o = put_varint(o, body);
    if (a == b) {
        return o;
    }
    if (kind == KIND_FLOAT) {
        *o++ = TAG(1, WT_LEN);
        o = put_varint(o, 4 * (uint64_t)(b - a));
#if TFSQL_BIG_ENDIAN
        for (int64_t j = a; j < b; j++) {
            uint32_t v;
            memcpy(&v, e->values + 4 * j, 4);
            store_le32(o, v);
            o += 4;
        }
#else
        memcpy(o, e->values + 4 * a, 4 * (size_t)(b - a));
        o += 4 * (size_t)(b - a);
#endif
    } else { /* bytes (int64 goes through write_int64_feature) */
        for (int64_t j = a; j < b; j++) {
            int64_t s = load_i64(e->vo + 8 * j), t = load_i64(e->vo + 8 * j + 8);
            *o++ = TAG(1, WT_LEN);
            o = put_varint(o, (uint64_t)(t - s));
            memcpy(o, e->values + s, (size_t)(t - s));
            o += t - s;
        }
    }
    return o;
}

/* Write the packed varints of int64 values [a, b) after their tag and length. */
static inline uint8_t *write_int64_feature(const ecol *e, int64_t a, int64_t b, uint64_t body,
                                           uint8_t *o) {
    *o++ = (uint8_t)TAG(KIND_INT64, WT_LEN);
    o = put_varint(o, body);
    if (a == b) {
        return o;
    }
    uint64_t payload = 0;
    for (int64_t j = a; j < b; j++) {
        payload += varint_size(load_u64(e->values + 8 * j));
    }
    *o++ = TAG(1, WT_LEN);
    o = put_varint(o, payload);
    for (int64_t j = a; j < b; j++) {
        o = put_varint(o, load_u64(e->values + 8 * j));
    }
    return o;
}

static inline uint8_t *emit_feature(const ecol *e, int64_t a, int64_t b, uint64_t body,
                                    uint8_t *o) {
    if (e->spec->kind == KIND_INT64) {
        return write_int64_feature(e, a, b, body, o);
    }
    return write_feature(e, a, b, body, o);
}

static inline int row_valid(const ecol *e, size_t row) {
    return e->validity == NULL || e->validity[row] != 0;
}

/* The value range [a, b) of a SCALAR/LIST row. */
static inline void row_range(const ecol *e, size_t row, int64_t *a, int64_t *b) {
    if (e->spec->shape == SCALAR) {
        *a = (int64_t)row;
        *b = (int64_t)row + 1;
    } else {
        *a = load_i64(e->outer + 8 * row);
        *b = load_i64(e->outer + 8 * row + 8);
    }
}

/* Size of the Feature (or FeatureList, for LIST_OF_LIST) of a valid row. */
static uint64_t feature_size(ecol *e, size_t row) {
    int64_t a, b;
    row_range(e, row, &a, &b);
    if (e->spec->shape != LIST_OF_LIST) {
        e->list_body = list_body_size(e, a, b);
        return field_size(e->list_body);
    }
    uint64_t total = 0;
    for (int64_t s = a; s < b; s++) {
        int64_t va = load_i64(e->inner + 8 * s), vb = load_i64(e->inner + 8 * s + 8);
        total += field_size(field_size(list_body_size(e, va, vb)));
    }
    return total;
}

static uint8_t *feature_write(const ecol *e, size_t row, uint8_t *o) {
    int64_t a, b;
    row_range(e, row, &a, &b);
    if (e->spec->shape != LIST_OF_LIST) {
        return emit_feature(e, a, b, e->list_body, o);
    }
    for (int64_t s = a; s < b; s++) {
        int64_t va = load_i64(e->inner + 8 * s), vb = load_i64(e->inner + 8 * s + 8);
        uint64_t body = list_body_size(e, va, vb);
        *o++ = TAG(1, WT_LEN); /* FeatureList.feature */
        o = put_varint(o, field_size(body));
        o = emit_feature(e, va, vb, body, o);
    }
    return o;
}

/* Encode and frame n_rows records (runs without the GIL). */
static int encode_core(const schema *sc, ecol *cols, size_t n_rows, tbuf *out, tbuf *ends,
                       size_t *bad_row) {
    const int ncols = sc->ncols;
    for (size_t row = 0; row < n_rows; row++) {
        uint64_t payload;
        uint64_t map_size[2] = {0, 0};
        if (sc->record_type == RAW) {
            const ecol *e = &cols[0];
            if (!row_valid(e, row)) {
                *bad_row = row;
                return EE_NULL_RAW;
            }
            payload = (uint64_t)(load_i64(e->vo + 8 * row + 8) - load_i64(e->vo + 8 * row));
        } else {
            for (int c = 0; c < ncols; c++) {
                ecol *e = &cols[c];
                if (!row_valid(e, row)) {
                    continue;
                }
                e->feature = feature_size(e, row);
                uint64_t entry = field_size(e->spec->name_len) + field_size(e->feature);
                map_size[e->spec->location] += field_size(entry);
            }
            payload = field_size(map_size[0]);
            if (sc->record_type == SEQUENCE_EXAMPLE) {
                payload += field_size(map_size[1]);
            }
        }
        if (payload > (uint64_t)PY_SSIZE_T_MAX - 16 || tbuf_reserve(out, 16 + (size_t)payload)) {
            return EE_NOMEM;
        }
        uint8_t *frame = out->data + out->len;
        uint8_t *o = frame + 12;
        write_frame_header(frame, payload);
        if (sc->record_type == RAW) {
            const ecol *e = &cols[0];
            memcpy(o, e->values + load_i64(e->vo + 8 * row), (size_t)payload);
            o += payload;
        } else {
            int nloc = sc->record_type == SEQUENCE_EXAMPLE ? 2 : 1;
            for (int loc = 0; loc < nloc; loc++) {
                *o++ = (uint8_t)TAG(loc + 1, WT_LEN);
                o = put_varint(o, map_size[loc]);
                for (int c = 0; c < ncols; c++) {
                    const ecol *e = &cols[c];
                    if (e->spec->location != loc || !row_valid(e, row)) {
                        continue;
                    }
                    uint64_t entry = field_size(e->spec->name_len) + field_size(e->feature);
                    *o++ = TAG(1, WT_LEN); /* map entry */
                    o = put_varint(o, entry);
                    *o++ = TAG(1, WT_LEN); /* key */
                    o = put_varint(o, e->spec->name_len);
                    memcpy(o, e->spec->name, e->spec->name_len);
                    o += e->spec->name_len;
                    *o++ = TAG(2, WT_LEN); /* value */
                    o = put_varint(o, e->feature);
                    o = feature_write(e, row, o);
                }
            }
        }
        store_le32(o, masked_crc(frame + 12, (size_t)payload));
        o += 4;
        out->len = (size_t)(o - out->data);
        if (tbuf_put_u64(ends, (uint64_t)out->len)) {
            return EE_NOMEM;
        }
    }
    return 0;
}

/* Offsets (int64, `count` of them) must be non-decreasing and within [0, limit]. */
static int check_offsets(const uint8_t *p, size_t count, int64_t limit) {
    int64_t prev = 0;
    for (size_t i = 0; i < count; i++) {
        int64_t v = load_i64(p + 8 * i);
        if (v < 0 || v > limit || (i > 0 && v < prev)) {
            return -1;
        }
        prev = v;
    }
    return 0;
}

#ifndef TFSQL_NO_PYTHON
static int Encoder_init(EncoderObject *self, PyObject *args, PyObject *kwds) {
    return schema_object_init(self, args, kwds, "iO:Encoder", "Encoder");
}

/* Borrow and check the five arrays of column `c`. `views` has 5 slots. */
static int encoder_column(const colspec *spec, int c, PyObject *item, Py_ssize_t n_rows,
                          Py_buffer *views, int *held, ecol *e) {
    static const char *const names[5] = {"validity", "outer_offsets", "inner_offsets",
                                         "value_offsets", "values"};
    PyObject *seq = PySequence_Fast(item, "each column's arrays must be a tuple");
    if (seq == NULL) {
        return -1;
    }
    if (PySequence_Fast_GET_SIZE(seq) != 5) {
        PyErr_Format(PyExc_ValueError, "Encoder column %d: expected (validity, outer_offsets, "
                     "inner_offsets, value_offsets, values), got %zd items", c,
                     PySequence_Fast_GET_SIZE(seq));
        Py_DECREF(seq);
        return -1;
    }
    for (int k = 0; k < 5; k++) {
        PyObject *obj = PySequence_Fast_GET_ITEM(seq, k);
        if (obj == Py_None) {
            continue;
        }
        char what[64];
        PyOS_snprintf(what, sizeof(what), "Encoder column %d %s", c, names[k]);
        if (get_bytes_view(obj, &views[k], what) < 0) {
            Py_DECREF(seq);
            return -1;
        }
        held[k] = 1;
    }
    Py_DECREF(seq);
    memset(e, 0, sizeof(*e));
    e->spec = spec;
#define COLERR(...)                                                                         \
    do {                                                                                    \
        char msg_[256];                                                                     \
        PyOS_snprintf(msg_, sizeof(msg_), __VA_ARGS__);                                      \
        PyObject *name_ = PyBytes_FromStringAndSize((const char *)spec->name,                \
                                                    (Py_ssize_t)spec->name_len);            \
        if (name_ != NULL) {                                                                \
            PyErr_Format(PyExc_ValueError, "Encoder column %d (%R): %s", c, name_, msg_);    \
            Py_DECREF(name_);                                                               \
        }                                                                                   \
        return -1;                                                                          \
    } while (0)
    if (held[0]) {
        if (views[0].len < n_rows) {
            COLERR("validity has %zd bytes for %zd rows", views[0].len, n_rows);
        }
        e->validity = (const uint8_t *)views[0].buf;
    }
    if (!held[4]) {
        COLERR("values is None");
    }
    e->values = (const uint8_t *)views[4].buf;
    e->values_len = (size_t)views[4].len;
    int64_t items;
    if (spec->kind == KIND_BYTES) {
        if (!held[3]) {
            COLERR("BYTES needs value_offsets");
        }
        if (views[3].len & 7) {
            COLERR("value_offsets must be an int64 array");
        }
        size_t count = (size_t)views[3].len / 8;
        e->vo = (const uint8_t *)views[3].buf;
        if (check_offsets(e->vo, count, (int64_t)e->values_len)) {
            COLERR("value_offsets are decreasing or point outside the %zd bytes of values",
                   (Py_ssize_t)e->values_len);
        }
        items = count ? (int64_t)count - 1 : 0;
    } else {
        size_t width = spec->kind == KIND_INT64 ? 8 : 4;
        if (e->values_len % width) {
            COLERR("values must be an %s array", spec->kind == KIND_INT64 ? "int64" : "float32");
        }
        items = (int64_t)(e->values_len / width);
    }
    if (spec->shape == LIST_OF_LIST) {
        if (!held[2]) {
            COLERR("LIST_OF_LIST needs inner_offsets");
        }
        if (views[2].len & 7) {
            COLERR("inner_offsets must be an int64 array");
        }
        size_t count = (size_t)views[2].len / 8;
        e->inner = (const uint8_t *)views[2].buf;
        if (check_offsets(e->inner, count, items)) {
            COLERR("inner_offsets are decreasing or point outside the %lld values",
                   (long long)items);
        }
        items = count ? (int64_t)count - 1 : 0;
    }
    if (spec->shape != SCALAR) {
        if (!held[1]) {
            COLERR("%s needs outer_offsets", spec->shape == LIST ? "LIST" : "LIST_OF_LIST");
        }
        if (views[1].len & 7) {
            COLERR("outer_offsets must be an int64 array");
        }
        size_t count = (size_t)views[1].len / 8;
        if (count < (size_t)n_rows + 1) {
            COLERR("outer_offsets has %zd items for %zd rows", (Py_ssize_t)count, n_rows);
        }
        e->outer = (const uint8_t *)views[1].buf;
        if (check_offsets(e->outer, count, items)) {
            COLERR("outer_offsets are decreasing or point outside the %lld items",
                   (long long)items);
        }
    } else if (items < n_rows) {
        COLERR("%lld values for %zd rows", (long long)items, n_rows);
    }
#undef COLERR
    return 0;
}

static PyObject *Encoder_encode(EncoderObject *self, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"arrays", "n_rows", NULL};
    PyObject *arrays;
    Py_ssize_t n_rows;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "On:encode", kwlist, &arrays, &n_rows)) {
        return NULL;
    }
    const schema *sc = &self->sc;
    if (sc->cols == NULL) {
        PyErr_SetString(PyExc_ValueError, "Encoder is not initialized");
        return NULL;
    }
    if (n_rows < 0) {
        PyErr_Format(PyExc_ValueError, "n_rows must be >= 0, got %zd", n_rows);
        return NULL;
    }
    PyObject *seq = PySequence_Fast(arrays, "arrays must be a sequence of tuples");
    if (seq == NULL) {
        return NULL;
    }
    int ncols = sc->ncols;
    if (PySequence_Fast_GET_SIZE(seq) != ncols) {
        PyErr_Format(PyExc_ValueError, "expected %d column arrays, got %zd", ncols,
                     PySequence_Fast_GET_SIZE(seq));
        Py_DECREF(seq);
        return NULL;
    }
    PyObject *result = NULL;
    size_t nviews = 5 * (size_t)ncols + 1;
    Py_buffer *views = (Py_buffer *)PyMem_Calloc(nviews, sizeof(Py_buffer));
    int *held = (int *)PyMem_Calloc(nviews, sizeof(int));
    ecol *cols = (ecol *)PyMem_Calloc((size_t)ncols + 1, sizeof(ecol));
    tbuf out = {0}, ends = {0};
    if (views == NULL || held == NULL || cols == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (int c = 0; c < ncols; c++) {
        if (encoder_column(&sc->cols[c], c, PySequence_Fast_GET_ITEM(seq, c), n_rows,
                           views + 5 * c, held + 5 * c, &cols[c]) < 0) {
            goto done;
        }
    }
    int rc;
    size_t bad_row = 0;
    Py_BEGIN_ALLOW_THREADS
    rc = tbuf_reserve(&ends, 8 * (size_t)n_rows + 8) ? EE_NOMEM : 0;
    if (!rc) {
        rc = encode_core(sc, cols, (size_t)n_rows, &out, &ends, &bad_row);
    }
    Py_END_ALLOW_THREADS
    if (rc == EE_NOMEM) {
        PyErr_NoMemory();
        goto done;
    }
    if (rc == EE_NULL_RAW) {
        PyErr_Format(PyExc_ValueError, "RAW record %zd is null; a record cannot be null",
                     (Py_ssize_t)bad_row);
        goto done;
    }
    PyObject *framed = buffer_from_tbuf(&out);
    PyObject *ends_obj = framed ? buffer_from_tbuf(&ends) : NULL;
    if (ends_obj == NULL) {
        Py_XDECREF(framed);
        goto done;
    }
    result = PyTuple_Pack(2, framed, ends_obj);
    Py_DECREF(framed);
    Py_DECREF(ends_obj);
done:
    if (views != NULL && held != NULL) {
        for (size_t k = 0; k < nviews; k++) {
            if (held[k]) {
                PyBuffer_Release(&views[k]);
            }
        }
    }
    PyMem_Free(views);
    PyMem_Free(held);
    PyMem_Free(cols);
    tbuf_free(&out);
    tbuf_free(&ends);
    Py_DECREF(seq);
    return result;
}

static PyMethodDef Encoder_methods[] = {
    {"encode", (PyCFunction)(void (*)(void))Encoder_encode, METH_VARARGS | METH_KEYWORDS,
     "encode(arrays, n_rows)\n--\n\n"
     "Encode ``n_rows`` records from one ``(validity, outer_offsets, inner_offsets,\n"
     "value_offsets, values)`` tuple per column and frame them. Returns ``(framed,\n"
     "ends)``. See ``_native.pyi``."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject Encoder_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "tfsql._native.Encoder",
    .tp_basicsize = sizeof(EncoderObject),
    .tp_dealloc = (destructor)schema_object_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Encoder(record_type, columns)\n--\n\n"
              "An encoder compiled once for a record type and ``(name, location, kind,\n"
              "shape)`` columns (RAW takes one SCALAR BYTES column).",
    .tp_methods = Encoder_methods,
    .tp_init = (initproc)Encoder_init,
    .tp_new = PyType_GenericNew,
};
#endif /* TFSQL_NO_PYTHON */

/* ======================================================================== */
/* 8. Summarize                                                             */
/* ======================================================================== */

typedef struct {
    const uint8_t *name; /* points into the caller's buffer */
    size_t name_len;
    uint32_t hash;
    int location;
    uint64_t kinds, present, min_len, max_len, max_inner;
    int utf8;
    /* the last entry of this feature in the current record */
    size_t stamp;
    const uint8_t *entry, *entry_end;
} sstat;

typedef struct {
    tbuf stats;   /* sstat[] in first-seen order */
    int32_t *table; /* open addressing, -1 empty */
    uint32_t mask;
    tbuf touched; /* int32 stat indices seen in the current record, in wire order */
} sctx;

static inline sstat *sctx_stat(sctx *s, int32_t i) { return ((sstat *)s->stats.data) + i; }

static int sctx_grow_table(sctx *s) {
    uint32_t size = s->table ? 2 * (s->mask + 1) : 64;
    int32_t *table = (int32_t *)PyMem_RawMalloc(size * sizeof(int32_t));
    if (table == NULL) {
        return -1;
    }
    for (uint32_t k = 0; k < size; k++) {
        table[k] = -1;
    }
    size_t n = s->stats.len / sizeof(sstat);
    for (size_t i = 0; i < n; i++) {
        uint32_t k = sctx_stat(s, (int32_t)i)->hash & (size - 1);
        while (table[k] >= 0) {
            k = (k + 1) & (size - 1);
        }
        table[k] = (int32_t)i;
    }
    PyMem_RawFree(s->table);
    s->table = table;
    s->mask = size - 1;
    return 0;
}

/* Find or add the stat of (location, key); -1 when out of memory. */
static int32_t sctx_lookup(sctx *s, int loc, const uint8_t *key, size_t len) {
    size_t n = s->stats.len / sizeof(sstat);
    if (s->table == NULL || 2 * (n + 1) > (size_t)s->mask + 1) {
        if (n >= 0x3fffffff || sctx_grow_table(s)) {
            return -1;
        }
    }
    uint32_t h = name_hash(key, len) ^ (uint32_t)loc * 0x9e3779b9u;
    uint32_t k = h & s->mask;
    for (;;) {
        int32_t i = s->table[k];
        if (i < 0) {
            break;
        }
        sstat *st = sctx_stat(s, i);
        if (st->hash == h && st->location == loc && st->name_len == len &&
            memcmp(st->name, key, len) == 0) {
            return i;
        }
        k = (k + 1) & s->mask;
    }
    if (tbuf_reserve(&s->stats, sizeof(sstat))) {
        return -1;
    }
    sstat *st = (sstat *)(s->stats.data + s->stats.len);
    memset(st, 0, sizeof(*st));
    st->name = key;
    st->name_len = len;
    st->hash = h;
    st->location = loc;
    st->utf8 = 1;
    s->stats.len += sizeof(sstat);
    s->table[k] = (int32_t)n;
    return (int32_t)n;
}

static int summarize_entry(sctx *s, int loc, const uint8_t *p, const uint8_t *end,
                           size_t stamp) {
    entry_parts e;
    if (read_entry(p, end, &e)) {
        return E_MALFORMED;
    }
    int32_t i = sctx_lookup(s, loc, e.key, e.key_len);
    if (i < 0) {
        return E_NOMEM;
    }
    sstat *st = sctx_stat(s, i);
    if (st->stamp != stamp) {
        st->stamp = stamp;
        int32_t v = i;
        if (tbuf_reserve(&s->touched, 4)) {
            return E_NOMEM;
        }
        memcpy(s->touched.data + s->touched.len, &v, 4);
        s->touched.len += 4;
    }
    st->entry = p;
    st->entry_end = end;
    return 0;
}

static int summarize_map(sctx *s, int loc, const uint8_t *p, const uint8_t *end, size_t stamp) {
    while (p < end) {
        uint32_t tag;
        const uint8_t *entry;
        size_t len;
        if (next_field(&p, end, &tag, &entry, &len)) {
            return E_MALFORMED;
        }
        int rc = tag == TAG(1, WT_LEN) ? summarize_entry(s, loc, entry, entry + len, stamp) : 0;
        if (rc) {
            return rc;
        }
    }
    return 0;
}

/* Kind, value count and UTF-8-ness of a Feature, fed span by span (oneof merge). */
typedef struct {
    int kind;
    uint64_t count;
    int utf8;
} sfeat;

static int sfeat_feed(sfeat *f, const uint8_t *p, const uint8_t *end, int want_utf8) {
    while (p < end) {
        uint32_t tag;
        const uint8_t *list;
        size_t len;
        if (next_field(&p, end, &tag, &list, &len)) {
            return E_MALFORMED;
        }
        int kind = feature_kind_field(tag);
        if (kind == KIND_NONE) {
            continue;
        }
        if (kind != f->kind) {
            f->kind = kind;
            f->count = 0;
            f->utf8 = 1;
        }
        uint64_t k;
        if (list_count(kind, list, list + len, &k,
                       (want_utf8 && kind == KIND_BYTES) ? &f->utf8 : NULL)) {
            return E_MALFORMED;
        }
        f->count += k;
    }
    return 0;
}

/* Fold the current record's last entry of `st` into its statistics. */
static int summarize_feature(sstat *st) {
    const uint8_t *p = st->entry, *end = st->entry_end;
    uint64_t kinds = 0, len = 0, inner_max = 0;
    int utf8 = 1;
    sfeat f = {KIND_NONE, 0, 1};
    while (p < end) {
        uint32_t tag;
        const uint8_t *v;
        size_t vlen;
        if (next_field(&p, end, &tag, &v, &vlen)) {
            return E_MALFORMED;
        }
        if (tag != TAG(2, WT_LEN)) {
            continue;
        }
        const uint8_t *vend = v + vlen;
        if (st->location == FEATURES) {
            if (sfeat_feed(&f, v, vend, st->utf8)) {
                return E_MALFORMED;
            }
            continue;
        }
        while (v < vend) { /* a FeatureList: its steps */
            const uint8_t *feature;
            size_t slen;
            if (next_field(&v, vend, &tag, &feature, &slen)) {
                return E_MALFORMED;
            }
            if (tag != TAG(1, WT_LEN)) {
                continue;
            }
            sfeat step = {KIND_NONE, 0, 1};
            if (sfeat_feed(&step, feature, feature + slen, st->utf8 && utf8)) {
                return E_MALFORMED;
            }
            kinds |= 1ull << step.kind;
            inner_max = step.count > inner_max ? step.count : inner_max;
            if (step.kind == KIND_BYTES && !step.utf8) {
                utf8 = 0;
            }
            len++;
        }
    }
    if (st->location == FEATURES) {
        kinds = 1ull << f.kind;
        len = inner_max = f.count;
        utf8 = f.kind == KIND_BYTES ? f.utf8 : 1;
    }
    st->kinds |= kinds;
    if (st->present == 0 || len < st->min_len) {
        st->min_len = len;
    }
    if (len > st->max_len) {
        st->max_len = len;
    }
    if (inner_max > st->max_inner) {
        st->max_inner = inner_max;
    }
    st->utf8 = st->utf8 && utf8;
    st->present++;
    return 0;
}

static int summarize_core(sctx *s, int record_type, const uint8_t *buf, size_t buflen,
                          const uint8_t *offs, const uint8_t *lens, size_t n, size_t *bad) {
    if (record_type == RAW) {
        return 0;
    }
    const int seq = record_type == SEQUENCE_EXAMPLE;
    for (size_t r = 0; r < n; r++) {
        size_t start, len;
        *bad = r;
        if (record_span(offs, lens, r, buflen, &start, &len)) {
            return E_SPAN;
        }
        const uint8_t *p = buf + start, *end = p + len;
        s->touched.len = 0;
        while (p < end) {
            uint32_t tag;
            const uint8_t *map;
            size_t mlen;
            if (next_field(&p, end, &tag, &map, &mlen)) {
                return E_MALFORMED;
            }
            int rc = is_map_field(tag, seq)
                         ? summarize_map(s, (int)(tag >> 3) - 1, map, map + mlen, r + 1)
                         : 0;
            if (rc) {
                return rc;
            }
        }
        size_t ntouched = s->touched.len / 4;
        for (size_t k = 0; k < ntouched; k++) {
            int32_t i;
            memcpy(&i, s->touched.data + 4 * k, 4);
            int rc = summarize_feature(sctx_stat(s, i));
            if (rc) {
                return rc;
            }
        }
    }
    return 0;
}

#ifndef TFSQL_NO_PYTHON
static PyObject *summarize_result(sctx *s) {
    PyObject *dict = PyDict_New();
    if (dict == NULL) {
        return NULL;
    }
    size_t n = s->stats.len / sizeof(sstat);
    for (size_t i = 0; i < n; i++) {
        sstat *st = sctx_stat(s, (int32_t)i);
        PyObject *key = Py_BuildValue("(iy#)", st->location, (const char *)st->name,
                                      (Py_ssize_t)st->name_len);
        PyObject *val = Py_BuildValue("[KKKKOK]", (unsigned long long)st->kinds,
                                      (unsigned long long)st->present,
                                      (unsigned long long)st->min_len,
                                      (unsigned long long)st->max_len,
                                      st->utf8 ? Py_True : Py_False,
                                      (unsigned long long)st->max_inner);
        if (key == NULL || val == NULL || PyDict_SetItem(dict, key, val) < 0) {
            Py_XDECREF(key);
            Py_XDECREF(val);
            Py_DECREF(dict);
            return NULL;
        }
        Py_DECREF(key);
        Py_DECREF(val);
    }
    return dict;
}

static PyObject *mod_summarize(PyObject *self, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"buf", "offsets", "lengths", "record_type", NULL};
    PyObject *bufobj, *offobj, *lenobj;
    int record_type;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OOOi:summarize", kwlist, &bufobj, &offobj,
                                     &lenobj, &record_type)) {
        return NULL;
    }
    if (record_type != EXAMPLE && record_type != SEQUENCE_EXAMPLE && record_type != RAW) {
        PyErr_Format(PyExc_ValueError, "unknown record type %d", record_type);
        return NULL;
    }
    Py_buffer bv, ov, lv;
    size_t n;
    if (get_batch(bufobj, offobj, lenobj, &bv, &ov, &lv, &n) < 0) {
        return NULL;
    }
    sctx s;
    memset(&s, 0, sizeof(s));
    size_t bad = 0;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = summarize_core(&s, record_type, (const uint8_t *)bv.buf, (size_t)bv.len,
                        (const uint8_t *)ov.buf, (const uint8_t *)lv.buf, n, &bad);
    Py_END_ALLOW_THREADS
    PyObject *result = NULL;
    if (rc == E_NOMEM) {
        PyErr_NoMemory();
    } else if (rc == E_SPAN) {
        PyErr_Format(PyExc_ValueError, "record %zd: its span (offset + length) lies outside "
                     "the buffer", (Py_ssize_t)bad);
    } else if (rc) {
        raise_decode_error("malformed", (Py_ssize_t)bad, -1, 0, PyUnicode_FromFormat(
            "record %zd is not a valid %s protobuf; the record is corrupt or of another "
            "record type", (Py_ssize_t)bad, record_type_name(record_type)));
    } else {
        result = summarize_result(&s);
    }
    tbuf_free(&s.stats);
    tbuf_free(&s.touched);
    PyMem_RawFree(s.table);
    release_batch(&bv, &ov, &lv);
    return result;
}

/* ======================================================================== */
/* 9. Module                                                                */
/* ======================================================================== */

/* CRCs of more than this many bytes release the GIL. */
#define CRC_NOGIL_MIN (1 << 16)

static int parse_crc_arg(PyObject *obj, uint32_t *crc) {
    if (obj == NULL) {
        *crc = 0;
        return 0;
    }
    unsigned long long v = PyLong_AsUnsignedLongLong(obj);
    if (v == (unsigned long long)-1 && PyErr_Occurred()) {
        if (PyErr_ExceptionMatches(PyExc_OverflowError)) {
            PyErr_SetString(PyExc_ValueError, "crc must be in [0, 2**32)");
        }
        return -1;
    }
    if (v > 0xffffffffull) {
        PyErr_SetString(PyExc_ValueError, "crc must be in [0, 2**32)");
        return -1;
    }
    *crc = (uint32_t)v;
    return 0;
}

static PyObject *crc_common(PyObject *args, PyObject *kwds, const char *fmt, int software) {
    static char *kwlist[] = {"data", "crc", NULL};
    PyObject *dataobj, *crcobj = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, fmt, kwlist, &dataobj, &crcobj)) {
        return NULL;
    }
    uint32_t crc;
    if (parse_crc_arg(crcobj, &crc) < 0) {
        return NULL;
    }
    Py_buffer v;
    if (get_bytes_view(dataobj, &v, "data") < 0) {
        return NULL;
    }
    const uint8_t *p = (const uint8_t *)v.buf;
    size_t n = (size_t)v.len;
    if (software) {
        crc = ~crc32c_update_sw(~crc, p, n);
    } else if (n >= CRC_NOGIL_MIN) {
        Py_BEGIN_ALLOW_THREADS
        crc = crc32c_value(crc, p, n);
        Py_END_ALLOW_THREADS
    } else {
        crc = crc32c_value(crc, p, n);
    }
    PyBuffer_Release(&v);
    return PyLong_FromUnsignedLong(crc);
}

static PyObject *mod_crc32c(PyObject *self, PyObject *args, PyObject *kwds) {
    return crc_common(args, kwds, "O|O:crc32c", 0);
}

static PyObject *mod_crc32c_sw(PyObject *self, PyObject *args, PyObject *kwds) {
    return crc_common(args, kwds, "O|O:_crc32c_sw", 1);
}

static PyObject *mod_masked_crc32c(PyObject *self, PyObject *arg) {
    Py_buffer v;
    if (get_bytes_view(arg, &v, "data") < 0) {
        return NULL;
    }
    uint32_t crc;
    if (v.len >= CRC_NOGIL_MIN) {
        Py_BEGIN_ALLOW_THREADS
        crc = masked_crc((const uint8_t *)v.buf, (size_t)v.len);
        Py_END_ALLOW_THREADS
    } else {
        crc = masked_crc((const uint8_t *)v.buf, (size_t)v.len);
    }
    PyBuffer_Release(&v);
    return PyLong_FromUnsignedLong(crc);
}

static PyObject *mod_hardware_crc(PyObject *self, PyObject *unused) {
    return PyBool_FromLong(crc_is_hardware);
}

#if !defined(_WIN32)
/* count_headers and header_offsets: walk the headers of a plain file (count_core). */
static PyObject *walk_headers(PyObject *args, PyObject *kwds, const char *format, int with_offsets) {
    static char *kwlist[] = {"fd", "start", "size", "max_length", NULL};
    int fd;
    unsigned long long start, size, max_length;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, format, kwlist, &fd, &start, &size,
                                     &max_length)) {
        return NULL;
    }
    long long count = 0;
    uint64_t end = 0, length = 0;
    int status = 0, rc;
    tbuf offsets = {0};
    Py_BEGIN_ALLOW_THREADS
    rc = count_core(fd, (uint64_t)start, (uint64_t)size, (uint64_t)max_length,
                    with_offsets ? &offsets : NULL, &count, &end, &length, &status);
    Py_END_ALLOW_THREADS
    if (rc) {
        tbuf_free(&offsets);
        return rc == -2 ? PyErr_NoMemory() : PyErr_SetFromErrno(PyExc_OSError);
    }
    if (!with_offsets) {
        return Py_BuildValue("(LKiK)", count, (unsigned long long)end, status,
                             (unsigned long long)length);
    }
    PyObject *o = buffer_from_tbuf(&offsets);
    tbuf_free(&offsets);
    if (o == NULL) {
        return NULL;
    }
    PyObject *result = Py_BuildValue("(OKiK)", o, (unsigned long long)end, status,
                                     (unsigned long long)length);
    Py_DECREF(o);
    return result;
}

static PyObject *mod_count_headers(PyObject *self, PyObject *args, PyObject *kwds) {
    return walk_headers(args, kwds, "iKKK:count_headers", 0);
}

static PyObject *mod_header_offsets(PyObject *self, PyObject *args, PyObject *kwds) {
    return walk_headers(args, kwds, "iKKK:header_offsets", 1);
}
#endif

static PyObject *mod_scan_frames(PyObject *self, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"buf", "start", "max_records", "max_bytes", "verify", NULL};
    PyObject *bufobj;
    Py_ssize_t start = 0;
    long long max_records = -1, max_bytes = -1;
    int verify = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O|nLLp:scan_frames", kwlist, &bufobj, &start,
                                     &max_records, &max_bytes, &verify)) {
        return NULL;
    }
    Py_buffer v;
    if (get_bytes_view(bufobj, &v, "buf") < 0) {
        return NULL;
    }
    if (start < 0 || start > v.len) {
        PyErr_Format(PyExc_ValueError, "start=%zd is outside the buffer of %zd bytes", start,
                     v.len);
        PyBuffer_Release(&v);
        return NULL;
    }
    tbuf offsets = {0}, lengths = {0};
    size_t end = 0;
    int status = 0, rc;
    Py_BEGIN_ALLOW_THREADS
    rc = scan_core((const uint8_t *)v.buf, (size_t)v.len, (size_t)start, max_records, max_bytes,
                   verify, &offsets, &lengths, &end, &status);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&v);
    PyObject *result = NULL;
    if (rc) {
        PyErr_NoMemory();
    } else {
        PyObject *o = buffer_from_tbuf(&offsets);
        PyObject *l = o ? buffer_from_tbuf(&lengths) : NULL;
        if (l != NULL) {
            result = Py_BuildValue("(OOni)", o, l, (Py_ssize_t)end, status);
        }
        Py_XDECREF(o);
        Py_XDECREF(l);
    }
    tbuf_free(&offsets);
    tbuf_free(&lengths);
    return result;
}

static PyObject *mod_find_boundary(PyObject *self, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"buf", "start", "stop", "at_eof", "lookahead", NULL};
    PyObject *bufobj;
    Py_ssize_t start = 0, stop = -1, lookahead = 256 << 10;
    int at_eof = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O|nnpn:find_boundary", kwlist, &bufobj,
                                     &start, &stop, &at_eof, &lookahead)) {
        return NULL;
    }
    Py_buffer v;
    if (get_bytes_view(bufobj, &v, "buf") < 0) {
        return NULL;
    }
    if (stop < 0) {
        stop = v.len;
    }
    if (start < 0 || start > v.len || stop < start || lookahead < 0) {
        PyErr_Format(PyExc_ValueError, "find_boundary: start=%zd, stop=%zd, lookahead=%zd do "
                     "not fit a buffer of %zd bytes", start, stop, lookahead, v.len);
        PyBuffer_Release(&v);
        return NULL;
    }
    size_t found = 0;
    int status;
    Py_BEGIN_ALLOW_THREADS
    status = find_boundary_core((const uint8_t *)v.buf, (size_t)v.len, (size_t)start,
                                (size_t)stop, at_eof, (size_t)lookahead, &found);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&v);
    return Py_BuildValue("(in)", status, (Py_ssize_t)found);
}

static PyObject *mod_encode_frames(PyObject *self, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"data", "value_offsets", NULL};
    PyObject *dataobj, *offobj;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OO:encode_frames", kwlist, &dataobj,
                                     &offobj)) {
        return NULL;
    }
    Py_buffer dv, ov;
    if (get_bytes_view(dataobj, &dv, "data") < 0) {
        return NULL;
    }
    if (get_bytes_view(offobj, &ov, "value_offsets") < 0) {
        PyBuffer_Release(&dv);
        return NULL;
    }
    PyObject *result = NULL;
    tbuf out = {0}, ends = {0};
    size_t count = (size_t)ov.len / 8;
    const uint8_t *offs = (const uint8_t *)ov.buf;
    const uint8_t *data = (const uint8_t *)dv.buf;
    if (ov.len & 7) {
        PyErr_SetString(PyExc_ValueError, "value_offsets must be an int64 array");
        goto done;
    }
    if (check_offsets(offs, count, (int64_t)dv.len)) {
        PyErr_Format(PyExc_ValueError, "value_offsets are decreasing or point outside the "
                     "%zd bytes of data", dv.len);
        goto done;
    }
    size_t n = count ? count - 1 : 0;
    int nomem = 0;
    Py_BEGIN_ALLOW_THREADS
    uint64_t first = count ? (uint64_t)load_i64(offs) : 0;
    uint64_t last = count ? (uint64_t)load_i64(offs + 8 * (count - 1)) : 0;
    nomem = tbuf_reserve(&out, (size_t)(last - first) + 16 * n) ||
            tbuf_reserve(&ends, 8 * n + 8);
    for (size_t i = 0; i < n && !nomem; i++) {
        int64_t a = load_i64(offs + 8 * i), b = load_i64(offs + 8 * i + 8);
        size_t len = (size_t)(b - a);
        uint8_t *o = out.data + out.len;
        write_frame_header(o, len);
        memcpy(o + 12, data + a, len);
        store_le32(o + 12 + len, masked_crc(data + a, len));
        out.len += 16 + len;
        uint64_t e = out.len;
        memcpy(ends.data + ends.len, &e, 8);
        ends.len += 8;
    }
    Py_END_ALLOW_THREADS
    if (nomem) {
        PyErr_NoMemory();
        goto done;
    }
    PyObject *framed = buffer_from_tbuf(&out);
    PyObject *ends_obj = framed ? buffer_from_tbuf(&ends) : NULL;
    if (ends_obj != NULL) {
        result = PyTuple_Pack(2, framed, ends_obj);
    }
    Py_XDECREF(framed);
    Py_XDECREF(ends_obj);
done:
    tbuf_free(&out);
    tbuf_free(&ends);
    PyBuffer_Release(&dv);
    PyBuffer_Release(&ov);
    return result;
}

static PyMethodDef module_methods[] = {
    {"crc32c", (PyCFunction)(void (*)(void))mod_crc32c, METH_VARARGS | METH_KEYWORDS,
     "crc32c(data, crc=0)\n--\n\nUnmasked CRC-32C of ``data``, continuing from ``crc``.\n\n"
     "Examples\n--------\n>>> hex(crc32c(b'123456789'))\n'0xe3069283'"},
    {"_crc32c_sw", (PyCFunction)(void (*)(void))mod_crc32c_sw, METH_VARARGS | METH_KEYWORDS,
     "_crc32c_sw(data, crc=0)\n--\n\nThe portable (table) CRC-32C, for tests."},
    {"masked_crc32c", (PyCFunction)mod_masked_crc32c, METH_O,
     "masked_crc32c(data)\n--\n\nTensorFlow's masked CRC-32C: ``((c >> 15 | c << 17) + "
     "0xa282ead8) & 0xffffffff``."},
    {"hardware_crc", (PyCFunction)mod_hardware_crc, METH_NOARGS,
     "hardware_crc()\n--\n\nWhether the CPU's CRC-32C instruction is in use (decided at "
     "import time;\nset TFSQL_NO_HW_CRC=1 before import to force the portable code)."},
    {"scan_frames", (PyCFunction)(void (*)(void))mod_scan_frames, METH_VARARGS | METH_KEYWORDS,
     "scan_frames(buf, start=0, max_records=-1, max_bytes=-1, verify=True)\n--\n\n"
     "Index the TFRecord frames in ``buf`` from byte ``start``. Returns ``(offsets,\n"
     "lengths, end, status)``; see ``_native.pyi``."},
#if !defined(_WIN32)
    {"count_headers", (PyCFunction)(void (*)(void))mod_count_headers,
     METH_VARARGS | METH_KEYWORDS,
     "count_headers(fd, start, size, max_length)\n--\n\nCount the frames of a plain file "
     "reading only their headers.\nReturns ``(count, end, status, length)``; see "
     "``_native.pyi``."},
    {"header_offsets", (PyCFunction)(void (*)(void))mod_header_offsets,
     METH_VARARGS | METH_KEYWORDS,
     "header_offsets(fd, start, size, max_length)\n--\n\nThe header offsets of the frames of a "
     "plain file, reading only their headers.\nReturns ``(offsets, end, status, length)``; "
     "see ``_native.pyi``."},
#endif
    {"find_boundary", (PyCFunction)(void (*)(void))mod_find_boundary,
     METH_VARARGS | METH_KEYWORDS,
     "find_boundary(buf, start=0, stop=-1, at_eof=True, lookahead=262144)\n--\n\n"
     "The first TFRecord boundary in ``buf[start:stop]`` (resynchronising inside a\n"
     "file). Returns ``(status, pos)``; see ``_native.pyi``."},
    {"encode_frames", (PyCFunction)(void (*)(void))mod_encode_frames,
     METH_VARARGS | METH_KEYWORDS,
     "encode_frames(data, value_offsets)\n--\n\nFrame raw payloads; returns ``(framed, "
     "ends)``."},
    {"summarize", (PyCFunction)(void (*)(void))mod_summarize, METH_VARARGS | METH_KEYWORDS,
     "summarize(buf, offsets, lengths, record_type)\n--\n\nStatistics for schema inference: "
     "``{(location, name): [kinds_mask, present,\nmin_len, max_len, utf8, max_inner_len]}`` "
     "in first-seen order."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef native_module = {
    PyModuleDef_HEAD_INIT,
    "tfsql._native",
    "tfsql's C core: CRC-32C, TFRecord framing, Example/SequenceExample decode into\n"
    "Arrow buffers and encode. The contract is tfsql/_native.pyi.",
    -1,
    module_methods,
};

PyMODINIT_FUNC PyInit__native(void) {
    crc_init();
    if (PyType_Ready(&Buffer_Type) < 0 || PyType_Ready(&Decoder_Type) < 0 ||
        PyType_Ready(&Builder_Type) < 0 ||
        PyType_Ready(&Encoder_Type) < 0) {
        return NULL;
    }
    PyObject *m = PyModule_Create(&native_module);
    if (m == NULL) {
        return NULL;
    }
    PyObject *attrs = Py_BuildValue("{s:s,s:i,s:i,s:i}", "reason", "malformed", "record", -1,
                                    "column", -1, "found_kind", 0);
    if (attrs == NULL) {
        goto fail;
    }
    DecodeError = PyErr_NewExceptionWithDoc(
        "tfsql._native.DecodeError",
        "A record does not decode for the requested columns.\n\n"
        "Attributes: reason (\"malformed\", \"kind_mismatch\", \"not_scalar\", \"overflow\",\n"
        "\"data_crc\"),\n"
        "record (index in the batch), column (index or -1), found_kind.",
        PyExc_ValueError, attrs);
    Py_DECREF(attrs);
    if (DecodeError == NULL) {
        goto fail;
    }
    Py_INCREF(DecodeError);
    if (PyModule_AddObject(m, "DecodeError", DecodeError) < 0) {
        Py_DECREF(DecodeError);
        goto fail;
    }
    Py_INCREF(&Buffer_Type);
    Py_INCREF(&Decoder_Type);
    Py_INCREF(&Builder_Type);
    Py_INCREF(&Encoder_Type);
    if (PyModule_AddObject(m, "Buffer", (PyObject *)&Buffer_Type) < 0 ||
        PyModule_AddObject(m, "Decoder", (PyObject *)&Decoder_Type) < 0 ||
        PyModule_AddObject(m, "Builder", (PyObject *)&Builder_Type) < 0 ||
        PyModule_AddObject(m, "Encoder", (PyObject *)&Encoder_Type) < 0) {
        goto fail;
    }
    struct {
        const char *name;
        int value;
    } constants[] = {
        {"EXAMPLE", EXAMPLE},
        {"SEQUENCE_EXAMPLE", SEQUENCE_EXAMPLE},
        {"RAW", RAW},
        {"FEATURES", FEATURES},
        {"FEATURE_LISTS", FEATURE_LISTS},
        {"KIND_NONE", KIND_NONE},
        {"BYTES", KIND_BYTES},
        {"FLOAT", KIND_FLOAT},
        {"INT64", KIND_INT64},
        {"SCALAR", SCALAR},
        {"LIST", LIST},
        {"LIST_OF_LIST", LIST_OF_LIST},
        {"FRAME_OK", FRAME_OK},
        {"FRAME_TRUNCATED", FRAME_TRUNCATED},
        {"FRAME_BAD_LENGTH_CRC", FRAME_BAD_LENGTH_CRC},
        {"FRAME_BAD_DATA_CRC", FRAME_BAD_DATA_CRC},
        {"FRAME_TOO_LONG", FRAME_TOO_LONG},
        {"BOUNDARY_FOUND", BOUNDARY_FOUND},
        {"BOUNDARY_NONE", BOUNDARY_NONE},
        {"BOUNDARY_MORE", BOUNDARY_MORE},
    };
    for (size_t i = 0; i < sizeof(constants) / sizeof(constants[0]); i++) {
        if (PyModule_AddIntConstant(m, constants[i].name, constants[i].value) < 0) {
            goto fail;
        }
    }
    return m;
fail:
    Py_DECREF(m);
    return NULL;
}
#endif /* TFSQL_NO_PYTHON */
