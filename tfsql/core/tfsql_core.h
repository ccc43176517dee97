/*
 * tfsql/core/tfsql_core.h -- the public interface of the tfsql C core.
 *
 *
 * The core reads and writes TFRecord data: TFRecord framing with CRC-32C, and
 * tf.train.Example / SequenceExample decoding straight into Arrow column buffers (and
 * encoding back), plus the feature statistics schema inference reads. It has no
 * Python: two bindings include this header alone, the Python module tfsql._native
 * (tfsql/_native_module.c) and the DuckDB extension (tfsql/duckdb_ext/). The
 * pure-Python oracle is the tfsql/_reference/ package.
 *
 * Files (one job each):
 *
 *   tfsql_core.h     this header: types, constants, inline byte and buffer helpers,
 *                    the functions below
 *   core_internal.h  private to the core's .c files: CPU switches, the protobuf wire
 *                    reader's inline helpers, map entries, name tables
 *   buffer.c         growable byte buffers (malloc / realloc, usable without the GIL)
 *   crc32c.c         CRC-32C: slicing-by-8, SSE4.2 (3-way interleaved) / ARMv8 paths
 *   framing.c        scan_core, count_core, find_boundary_core (resync)
 *   wire.c           skipping unknown fields, UTF-8 checks, counting a feature's values
 *   decoder.c        column table, per-record map scan, column builders, decode steps
 *   encoder.c        two-pass (size, then write) Example / SequenceExample / RAW
 *   summary.c        statistics for schema inference
 *
 * Error convention: functions returning int return 0 on success and a nonzero code
 * otherwise (E_* for decoding, FRAME_* statuses for framing, -1 for out of memory or
 * malformed input where stated); a decode's details (record, column, kind found) are
 * left in its dctx (err_record, err_column, err_found_kind) for the binding to word.
 * Allocation uses malloc / realloc / free throughout, so memory the core allocates
 * (column names of a schema, builders' buffers) is freed with free by either side.
 *
 * Safety rules followed everywhere: every length read from input is checked against
 * the bytes remaining before it is used; nothing is allocated from an unchecked size;
 * malformed input only ever produces an error code, which the binding turns into its
 * own error (DecodeError in Python, an error message in DuckDB). */
#ifndef TFSQL_CORE_H
#define TFSQL_CORE_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if defined(__GNUC__) || defined(__clang__)
#define LIKELY(x) __builtin_expect(!!(x), 1)
#define UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define LIKELY(x) (x)
#define UNLIKELY(x) (x)
#endif

#if defined(__BYTE_ORDER__) && defined(__ORDER_BIG_ENDIAN__) && \
    __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define TFSQL_BIG_ENDIAN 1
#else
#define TFSQL_BIG_ENDIAN 0
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

/* A growable byte buffer. Allocated with malloc / realloc, so it may grow without
 * Python's GIL. */
typedef struct {
    uint8_t *data;
    size_t len;
    size_t cap;
} tbuf;

/* Make room for `extra` more bytes (capacity doubles, huge pages advised for large
 * buffers): 0, or -1 when out of memory or the size overflows (b is unchanged). */
int tbuf_grow(tbuf *b, size_t extra);

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

/* The CRC-32C of p[0:n) continued from `crc` (0 to start): hardware when the CPU has it. */
uint32_t crc32c_value(uint32_t crc, const uint8_t *p, size_t n);

static inline uint32_t crc_mask(uint32_t c) {
    return ((c >> 15) | (c << 17)) + 0xa282ead8u;
}

static inline uint32_t masked_crc(const uint8_t *p, size_t n) {
    return crc_mask(crc32c_value(0, p, n));
}

/* -- framing ---------------------------------------------------------------- */

/* scan_core / count_core statuses: the frames end cleanly, or the first bad one is cut
 * short, has a length or data CRC mismatch, or is longer than allowed. */
enum { FRAME_OK = 0, FRAME_TRUNCATED = 1, FRAME_BAD_LENGTH_CRC = 2, FRAME_BAD_DATA_CRC = 3,
       FRAME_TOO_LONG = 4 };

/* find_boundary_core results, and the chain check it makes (framing.c). */
enum { BOUNDARY_FOUND = 0, BOUNDARY_NONE = 1, BOUNDARY_MORE = 2 };
enum { CHAIN_NO = 0, CHAIN_YES = 1, CHAIN_MORE = 2 };

/* Write one frame header for a payload of `length` bytes at `out` (12 bytes). */
static inline void write_frame_header(uint8_t *out, uint64_t length) {
    store_le64(out, length);
    store_le32(out + 8, masked_crc(out, 8));
}

/* -- decoding -------------------------------------------------------------- */

/* Record types, feature map locations (context features / feature lists), feature
 * kinds (the Feature oneof) and column shapes. */
enum { EXAMPLE = 0, SEQUENCE_EXAMPLE = 1, RAW = 2 };
enum { FEATURES = 0, FEATURE_LISTS = 1 };
enum { KIND_NONE = 0, KIND_BYTES = 1, KIND_FLOAT = 2, KIND_INT64 = 3 };
enum { SCALAR = 0, LIST = 1, LIST_OF_LIST = 2 };

/* Decode error codes (0 is success): each binding words them as its own error. */
enum {
    E_MALFORMED = 1,
    E_KIND_MISMATCH = 2,
    E_NOT_SCALAR = 3,
    E_OVERFLOW = 4,
    E_NOMEM = 5,
    E_SPAN = 6, /* a record span outside the buffer: a caller mistake */
    E_DATA_CRC = 7, /* a record's data CRC does not match its footer (verify_crc) */
};

/* The largest int32 Arrow offset: a column whose values or offsets would pass it is
 * E_OVERFLOW. */
#define INT32_LIMIT ((int64_t)0x7fffffff)

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

/* Column specs shared by Decoder and Encoder. */
typedef struct {
    int record_type;
    int ncols;
    colspec *cols;
    nametable tables[2];
} schema;

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

/* Per location, the name at each of the first NHINT map entries of the previous record:
 * records usually list their features in the same order. */
#define NHINT 64

typedef struct {
    const uint8_t *key;
    size_t len;
    int col;
} hint;

/* Feature names outside the columns, collected when asked (the first MAX_UNKNOWN). */
#define MAX_UNKNOWN 16

typedef struct {
    int loc;
    const uint8_t *key;
    size_t len;
} unknown_key;

/* The state of one decode: its schema and column builders, the options of the call and
 * the error report (err: an E_* code; err_record, err_column, err_found_kind, err_count
 * say where and what). */
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

/* encode_core's error codes. */
enum { EE_NOMEM = 1, EE_NULL_RAW = 2 };

/* -- inference statistics ------------------------------------------------------ */

/* What the sampled records hold of one feature (a name at a location): the kinds seen
 * (a bit per KIND_*), in how many records, list lengths, whether every bytes value
 * was UTF-8. */
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

/* The statistics of a summarize: zero it, feed it with summarize_core, read stats,
 * then tbuf_free(&stats), tbuf_free(&touched) and free(table). */
typedef struct {
    tbuf stats;   /* sstat[] in first-seen order */
    int32_t *table; /* open addressing, -1 empty */
    uint32_t mask;
    tbuf touched; /* int32 stat indices seen in the current record, in wire order */
} sctx;

/* The i-th feature's statistics, in first-seen order. */
static inline sstat *sctx_stat(sctx *s, int32_t i) { return ((sstat *)s->stats.data) + i; }

/* Names of the feature kinds, indexed by KIND_* ("no kind", "bytes_list", ...). */
extern const char *const kind_names[4];
/* 1 when crc_init chose the CPU's CRC-32C instruction, else 0. */
extern int crc_is_hardware;

/* ------------------------------------------------------------------------ */
/* Functions                                                                */
/* ------------------------------------------------------------------------ */

/* -- buffer.c: growable buffers -- */

/* Free b's bytes and leave it empty (reusable). */
void tbuf_free(tbuf *b);

/* -- crc32c.c: CRC-32C -- */

/* The table-driven (slicing-by-8) CRC-32C update of a raw register `crc` (not
 * inverted): what the hardware paths are checked against. Needs crc_init. */
uint32_t crc32c_update_sw(uint32_t crc, const uint8_t *p, size_t n);

/* Fill the tables and pick the fastest CRC-32C path for this CPU; call once before any
 * other CRC or framing function (idempotent). */
void crc_init(void);

/* -- framing.c: TFRecord frames -- */

/* Index frames from `pos`: offsets / lengths (uint64 each) of up to `max_records`
 * payloads (and at most `max_bytes` of them; -1: no limit), the data CRC checked when
 * `verify`. *status_out is a FRAME_* status (FRAME_OK at a clean end), *end_out where
 * scanning stopped. Returns -1 only when out of memory. */
int scan_core(const uint8_t *buf, size_t size, size_t pos, long long max_records,
              long long max_bytes, int verify, tbuf *offsets, tbuf *lengths,
              size_t *end_out, int *status_out);

#if !defined(_WIN32)
/* Count the frames of an open file from `pos` to `size` by reading only their headers
 * (pread in windows), each length checked against its CRC and `max_length`; offsets
 * (optional) receive each payload's offset. *status_out is a FRAME_* status. Returns 0,
 * or -1 with errno set when reading fails or memory runs out. */
int count_core(int fd, uint64_t pos, uint64_t size, uint64_t max_length, tbuf *offsets,
               long long *count_out, uint64_t *end_out, uint64_t *length_out,
               int *status_out);
#endif

/* The first record boundary at or after `pos` and before `stop` in buf[0:size).
 * `at_eof` says that buf ends where the file ends. Returns BOUNDARY_FOUND with the
 * position in *found_out; BOUNDARY_NONE when no boundary starts before `stop`
 * (*found_out = stop); BOUNDARY_MORE when the candidate at *found_out needs bytes past
 * `size` to decide (read more, starting at or before it, and call again). */
int find_boundary_core(const uint8_t *buf, size_t size, size_t pos, size_t stop,
                       int at_eof, size_t lookahead, size_t *found_out);

/* -- wire.c -- */

/* 1 when p[0:n) is valid UTF-8 under Python's strict rules (no overlongs, surrogates
 * or code points past U+10FFFF), else 0. */
int utf8_valid(const uint8_t *p, size_t n);

/* -- decoder.c: decoding into Arrow buffers -- */

/* Free a schema's column names, columns and name tables (it may be half built). */
void schema_free(schema *s);

/* Build the name tables of compiled columns: 0; -1 when out of memory; -2 when a name
 * is listed twice at one location (*dup: the second column's index). */
int schema_index(schema *s, int *dup);

/* The records' payload bytes in all (at most the buffer's size, whatever the lengths say). */
size_t records_payload(const uint8_t *lens, size_t n, size_t buflen);

/* Free a column builder's buffers. */
void colbuild_free(colbuild *cb);

/* What each numeric list column of `sc` reserves for its values when the records hold
 * `payload` bytes: the payload (floats take at least 4 bytes on the wire, so a float
 * list fits), shared out when there are more than two such columns, so that a wide
 * schema does not reserve many times the batch. Reserving at once spares the copies
 * of growing; pages never touched cost no memory. */
size_t list_reserve(const schema *sc, size_t payload);

/* Preallocate what a column needs for n rows whose payloads total `payload` bytes (a
 * bytes column's values are a part of those payloads, so reserving that much at once
 * spares the copies of growing, and a large buffer gets its huge pages advised before
 * its first byte is written); starts offsets at 0.
 * Returns 0, or -1 when out of memory. */
int colbuild_init(colbuild *cb, int kind, int shape, size_t n, size_t payload,
                  size_t list_values);

/* The decode loop over n records (runs without the GIL): x set up as by decode_begin.
 * 0, or an E_* code with x->err_record / err_column / err_found_kind set. */
int decode_core(dctx *x, const uint8_t *buf, size_t buflen, const uint8_t *offs,
                const uint8_t *lens, size_t n);

/* The number of output columns a decode of `sc` builds (1 for RAW records). */
int decode_ncols(const schema *sc);

/* Set up `x` to decode into fresh columns, reserving for about `n` rows whose payloads
 * total `payload` bytes; E_NOMEM when out of memory (then decode_end still frees). */
int decode_begin(dctx *x, const schema *sc, size_t n, size_t payload);

/* Decode `n` more records into the columns (runs without the GIL); 0 or an E_ code,
 * with x->err_record counted from this call's first record. */
int decode_feed(dctx *x, const uint8_t *buf, size_t buflen, const uint8_t *offs,
                const uint8_t *lens, size_t n, int verify);

/* Free what decode_begin allocated (the builders and slot states). */
void decode_end(dctx *x);

/* -- encoder.c -- */

/* Encode and frame n_rows records (runs without the GIL) into `out`, each record's end
 * offset into `ends`: 0, or EE_NOMEM, or EE_NULL_RAW with *bad_row the null RAW row. */
int encode_core(const schema *sc, ecol *cols, size_t n_rows, tbuf *out, tbuf *ends,
                size_t *bad_row);

/* Offsets (int64, `count` of them) must be non-decreasing and within [0, limit]. */
int check_offsets(const uint8_t *p, size_t count, int64_t limit);

/* -- summary.c: statistics for inference -- */

/* Add n records of buf (spans offs / lens, uint64 each) of `record_type` to the
 * per-feature statistics in `s` (one sstat per name and location, first-seen order):
 * 0, or an E_* code (E_SPAN, E_MALFORMED, E_NOMEM) with *bad the failing record. */
int summarize_core(sctx *s, int record_type, const uint8_t *buf, size_t buflen,
                   const uint8_t *offs, const uint8_t *lens, size_t n, size_t *bad);

#endif /* TFSQL_CORE_H */
