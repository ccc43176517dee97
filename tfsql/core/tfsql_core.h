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
 *   buffer_pool.c    a small cache of large freed buffers, reused by later batches
 *   crc32c.c         CRC-32C: slicing-by-8, SSE4.2 (3-way interleaved) / ARMv8 paths
 *   framing.c        scan_core, count_core, find_boundary_core (resync)
 *   byte_ranges.c    a file's stretch cut into byte ranges for parallel reads
 *   reader.c         record_reader: one file's records over a read callback
 *   zlib_load.c      zlib's functions for the bindings, loaded at run time (libz.so.1)
 *   wire.c           skipping unknown fields, UTF-8 checks, counting a feature's values
 *   decoder.c        column table, per-record map scan, column builders, decode steps
 *   encoder.c        two-pass (size, then write) Example / SequenceExample / RAW
 *   summary.c        statistics for schema inference
 *   infer.c          schema inference: the sample plan (which files, records and bytes),
 *                    the summaries merged across it, the columns they resolve to, and
 *                    missing schema columns (called by both bindings)
 *   infer_sample.c   one file's inference sample through the record reader: the
 *                    loop, its damage rules and budget (called by both bindings)
 *   paths.c          which listed paths are data; what a listing does with an entry
 *   hive.c           hive key=value directories: find, unescape, type
 *   layout.c         TFDS / TFX layouts: splits, TFDS metadata files
 *   detect.c         compression detection from a file's first bytes
 *   sniff.c          what a file that is not TFRecord is (Parquet, PNG, text...)
 *   intent.c         the crash-recovery intent record: parse, and how a reader sees it
 *   json.c           the bounded JSON reader intent.c and tfds_features.c share
 *   sidecar.c        index sidecars: validate one whole before it is trusted
 *   target_lock.c    the write lock of a target directory (flock on the directory)
 *   tfds_features.c  a TFDS directory's features.json: each feature's column type
 *   description.c    the column description (features.json) tfsql writers keep
 *   plan.c           the dataset plan over a listing: the files' order (by bytes), how a
 *                    path is shown, the hive columns, values, types and refusals
 *   listing.c        tfsql_plan: a binding's whole listing -> the data files, in order,
 *                    with their layout, splits and inference sample
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

/* The index of the stat of (location, key), or -1 when the features summarized hold none
 * (a hash lookup: a schema of many columns is checked in time linear in them). */
int32_t sctx_find(const sctx *s, int loc, const uint8_t *key, size_t len);

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

/* tbuf_free for a column builder's buffer: a large one goes to the pool (pool_give),
 * where a later batch's builder may start from it (tbuf_start). */
void tbuf_recycle(tbuf *b);

/* The memory of `b` (never NULL: 8 bytes when it had none; a large unused tail given
 * back), for the caller to free(); `b` is left empty. NULL when out of memory. */
uint8_t *tbuf_take(tbuf *b);

/* tbuf_take, also saying the capacity of what it returns (*cap, for pool_give). A large
 * unused tail is given back down to len + len / 4 + 64 bytes, so that the buffer fits
 * a later batch of about the same size. */
uint8_t *tbuf_take_sized(tbuf *b, size_t *cap);

/* Give an empty `b` room for at least `need` bytes: a pooled buffer (buffer_pool.c) of
 * `need` to about `want` bytes, else `reserve` bytes (and an eighth) from malloc.
 * need <= want <= reserve; 0, or -1 when out of memory. A `b` that holds memory is
 * grown as by tbuf_reserve to `reserve`. */
int tbuf_start(tbuf *b, size_t need, size_t want, size_t reserve);

/* -- buffer_pool.c: large freed buffers kept for reuse (at most 64 MiB plus the running
 * scans' widening, 128 buffers) -- */

/* A kept buffer of `need` to want + want / 4 bytes (the smallest; *cap its size), or
 * NULL (*cap 0) when none fits or `want` is small (malloc's heap reuses those). */
void *pool_take(size_t need, size_t want, size_t *cap);

/* Keep `data` (from malloc, `cap` bytes) for reuse, freeing the oldest kept ones when
 * the pool is full; a buffer too small or too large to keep is freed. */
void pool_give(void *data, size_t cap);

/* Free every kept buffer. */
void tfsql_pool_clear(void);

/* How many buffers and bytes the pool keeps, and how many times one was reused. */
void tfsql_pool_stats(size_t *count, size_t *bytes, size_t *reuses);

/* Hold the pool's lock for `milliseconds` (tests: a fork meanwhile must not hang). */
void tfsql_pool_hold(unsigned milliseconds);

/* A scan holding several batches at once lets the pool keep `bytes` more while it runs
 * (the widenings of concurrent scans add up); tfsql_pool_narrow takes them back when it
 * ends (never below 64 MiB) and frees the oldest kept buffers above the limit. */
void tfsql_pool_widen(size_t bytes);
void tfsql_pool_narrow(size_t bytes);

/* The most bytes the pool keeps now: 64 MiB plus the running scans' widening. */
size_t tfsql_pool_limit(void);

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
 * `at_eof` says that buf ends where the file ends; a length above `max_length` is no
 * record's (UINT64_MAX: no limit). Returns BOUNDARY_FOUND with the position in
 * *found_out; BOUNDARY_NONE when no boundary starts before `stop` (*found_out = stop);
 * BOUNDARY_MORE when the candidate at *found_out needs bytes past `size` to decide
 * (read more, starting at or before it, and call again). */
int find_boundary_core(const uint8_t *buf, size_t size, size_t pos, size_t stop,
                       int at_eof, size_t lookahead, uint64_t max_length, size_t *found_out);

/* -- byte_ranges.c: a stretch [start, stop) of a file cut into ranges of `piece` bytes
 * (the last shorter) for parallel reads: their number (0 when stop <= start), and range
 * k's bounds [*from, *to) (k below the number). */
size_t tfsql_range_count(uint64_t start, uint64_t stop, uint64_t piece);
void tfsql_range_at(uint64_t start, uint64_t stop, uint64_t piece, size_t k, uint64_t *from,
                    uint64_t *to);

/* The bytes of well-framed records that must follow the point where reading resumes
 * after framing was lost, as a byte range's first record (find_boundary_core's
 * `lookahead`; tfsql.splits.RESYNC_LOOKAHEAD is this value, from the module). */
#define READER_RESYNC_LOOKAHEAD ((size_t)256 << 10)

/* -- reader.c: one record reader over a binding's read callback -- */

/* The bytes a window holds after a refill (or one record). The binding's read copies
 * the file's bytes into the window; a window this small is still in the core's L2
 * cache when its records' CRCs are checked and decoded right after the copy (an 8 MiB
 * one was not, and cost the DuckDB scans CPU time: tests/benchmarks/compare_builds.py). */
#define READER_WINDOW_READ ((size_t)256 << 10)
/* Compressed bytes read at a time, and inflated bytes produced per inflate() call. */
#define READER_COMPRESSED_CHUNK ((size_t)1 << 20)
#define READER_INFLATE_STEP ((size_t)1 << 20)
/* The size of an error buffer the reader writes (the bindings' are at least this). */
/* The smallest refill once a read budget is spent. */
#define READER_MIN_READ ((size_t)64 << 10)
#define READER_ERRLEN 1024
#define READER_DETAIL 300

/* A file's compression (the values of TFSQL_DETECT_*). */
enum { READER_PLAIN = 0, READER_GZIP = 1, READER_ZLIB = 2 };
/* reader_next's result when the stream is damaged (r->damage). */
enum { READER_DAMAGE = 2 };
/* Damage statuses beyond the core's FRAME_*: a header claiming more bytes than a plain
 * file holds from the record's start, a compressed stream that zlib refuses (detail:
 * zlib's message), a compressed stream cut short. */
enum { FRAME_PAST_END = 16, READER_STREAM_CORRUPT = 17, READER_STREAM_TRUNCATED = 18 };

/* The z_stream layout of zlib's ABI (stable since zlib 1.0). */
typedef struct {
    const uint8_t *next_in;
    unsigned avail_in;
    unsigned long total_in;
    uint8_t *next_out;
    unsigned avail_out;
    unsigned long total_out;
    const char *msg;
    void *state;
    void *zalloc, *zfree, *opaque;
    int data_type;
    unsigned long adler, reserved;
} reader_zstream;

/* zlib's inflate functions, as the binding gets zlib (the core links none). */
typedef struct {
    int (*init2)(reader_zstream *, int, const char *, int); /* inflateInit2_ */
    int (*inflate)(reader_zstream *, int);
    int (*end)(reader_zstream *);
    const char *(*version)(void);
} reader_zlib;

/* The binding's read: exactly file bytes [offset, offset + n) into buf (the reader
 * never asks past the file's size), 0; or -1 with a message in err (a read error, a
 * file that changed: the binding's own error). */
typedef int (*reader_read_fn)(void *ctx, uint64_t offset, uint8_t *buf, size_t n, char *err);

/* The binding's fresh window (field `window`): a buffer of at least n bytes that stays
 * valid while the binding holds it; NULL with err set. The reader copies its unread
 * bytes there, so the records it handed out of the previous window stay where they
 * are and the binding may keep them (the Python module's blocks do). */
typedef uint8_t *(*reader_window_fn)(void *ctx, size_t n, char *err);

/* What is wrong where (reader_next's READER_DAMAGE): a FRAME_* or READER_STREAM_*
 * status; the record's file-wide index and the stream offset of its header; the
 * header's length (data CRC, too long, past the end) and the limit (too long: the
 * limit; past the end / truncated: the bytes the stream holds). After reader_skip:
 * rest_of_file, or where reading resumed (skipped_to). */
typedef struct {
    int status;
    size_t index;
    uint64_t offset, length, limit, skipped_to;
    int rest_of_file;
    char detail[READER_DETAIL];
} reader_damage;

/* How records are framed: records and payload bytes per chunk (-1: no limit), the
 * longest record a header may claim, whether data CRCs are checked. */
typedef struct {
    long long max_records, max_bytes;
    uint64_t max_record_bytes;
    int verify;
} reader_limits;

/* One file read through a window: buf[0:len) holds stream bytes [base, base + len);
 * after reader_next returns 1, offs / lens hold the n records of the chunk (payload
 * offsets into buf, lengths; uint64 each), the first of them record `first`. */
typedef struct {
    reader_read_fn read;
    void *ctx;
    const reader_zlib *zlib;
    const char *path; /* borrowed, for messages */
    uint64_t file_size, file_pos;
    int comp, eof;
    tbuf in; /* compressed input, in[in_pos:] not yet inflated */
    size_t in_pos;
    int z_active, members;
    reader_zstream z;
    tbuf buf;
    uint64_t base, next; /* next: the stream offset framing goes on from */
    size_t index, first, n;
    tbuf offs, lens;
    reader_damage damage;
    /* Settable after reader_init, before the first reader_next: */
    reader_window_fn window; /* fresh windows from the binding (NULL: one, moved in place) */
    size_t read_size, read_max; /* a refill's new bytes, doubling up to read_max */
    uint64_t budget;   /* read this many bytes, refills stop growing (UINT64_MAX: none) */
    uint64_t stop;     /* a byte range: the records whose header starts before it */
    /* After the stream or the range ended: where the next range's first record starts
     * (chained; 0 when damage ended it). */
    uint64_t chain_end, consumed;
    int chained, done, searching;
} record_reader;

/* Start reading a file of `file_size` bytes with compression `comp` (READER_*; zlib
 * needed unless READER_PLAIN). */
void reader_init(record_reader *r, reader_read_fn read, void *ctx, uint64_t file_size,
                 int comp, const reader_zlib *zlib, const char *path);
void reader_free(record_reader *r);
/* zlib loaded at run time (zlib_load.c): its library handle (NULL: not found, or on
 * Windows), and the inflate functions the reader takes (NULL: not found). */
void *tfsql_zlib_library(void);
const reader_zlib *tfsql_inflate_zlib(void);
/* Start a plain file at the record boundary `offset`, its record `first_index`. */
void reader_start(record_reader *r, uint64_t offset, size_t first_index);
/* Make stream bytes [from, from + need) available in the window (fewer only at the
 * stream's end), dropping those before `from`. 0; -1 with err; READER_DAMAGE. */
int reader_fill(record_reader *r, uint64_t from, size_t need, char *err);
/* Frame the next chunk. 1: r->n records; 0: the stream is done; READER_DAMAGE: see
 * r->damage (raise it, or reader_skip then call again); -1: err set. */
int reader_next(record_reader *r, const reader_limits *o, char *err);
/* Go past r->damage (a FRAME_* status): step over a record whose data CRC failed,
 * resynchronise where framing is lost (r->damage then says where reading resumed, or
 * that the rest of the stream is skipped). 0; -1 with err; READER_DAMAGE when the
 * compressed stream itself is damaged on the way (r->damage replaced). */
int reader_skip(record_reader *r, uint64_t max_record_bytes, char *err);

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

/* Free a column builder's buffers (the large ones to the pool, see tbuf_recycle). */
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

/* Number of sizes per column in a decode's size memory (see colbuild_init_sized). */
#define COL_SIZES 3

/* colbuild_init, with `expect` (NULL: none) the lengths an earlier batch of the same
 * decoder left in the column's values, outer offsets and value offsets (COL_SIZES
 * entries, 0: unknown): each of those buffers then starts at about that length (the
 * smaller of it and what colbuild_init reserves), which a pooled buffer of a
 * released batch fits. Growing past it costs a copy, never a wrong value. */
int colbuild_init_sized(colbuild *cb, int kind, int shape, size_t n, size_t payload,
                        size_t list_values, const size_t *expect);

/* The decode loop over n records (runs without the GIL): x set up as by decode_begin.
 * 0, or an E_* code with x->err_record / err_column / err_found_kind set. */
int decode_core(dctx *x, const uint8_t *buf, size_t buflen, const uint8_t *offs,
                const uint8_t *lens, size_t n);

/* The number of output columns a decode of `sc` builds (1 for RAW records). */
int decode_ncols(const schema *sc);

/* Set up `x` to decode into fresh columns, reserving for about `n` rows whose payloads
 * total `payload` bytes; E_NOMEM when out of memory (then decode_end still frees). */
int decode_begin(dctx *x, const schema *sc, size_t n, size_t payload);

/* decode_begin, each column starting from the sizes an earlier batch left (`sizes`:
 * COL_SIZES per column, as decode_note_sizes keeps them; NULL: none). */
int decode_begin_sized(dctx *x, const schema *sc, size_t n, size_t payload, const size_t *sizes);

/* Remember in `sizes` (COL_SIZES per column) how large this decode's buffers grew, for
 * the next decode_begin_sized: a larger size is kept at once, a smaller one lowers the
 * kept size by a sixteenth per batch (a scan's batches grow within each file: its short
 * first ones do not undo it, and growing a buffer past its size costs a copy). Call
 * before the columns are handed over. */
void decode_note_sizes(const dctx *x, size_t *sizes);

/* Decode `n` more records into the columns (runs without the GIL); 0 or an E_ code,
 * with x->err_record counted from this call's first record. */
int decode_feed(dctx *x, const uint8_t *buf, size_t buflen, const uint8_t *offs,
                const uint8_t *lens, size_t n, int verify);

/* Free what decode_begin allocated (the builders and slot states). */
void decode_end(dctx *x);

/* -- arrow_export.c: decoded columns handed over through the Arrow C data interface -- */

/* The Arrow C data interface's array struct (its ABI, as the Arrow specification lays it
 * out): `length` rows from `offset`, `null_count` nulls, `n_buffers` buffers (NULL for an
 * absent validity bitmap), `n_children` children, and `release`, which frees it all and
 * sets itself to NULL (a consumer that takes it over calls it once). */
typedef struct tfsql_arrow_array {
    int64_t length;
    int64_t null_count;
    int64_t offset;
    int64_t n_buffers;
    int64_t n_children;
    const void **buffers;
    struct tfsql_arrow_array **children;
    struct tfsql_arrow_array *dictionary;
    void (*release)(struct tfsql_arrow_array *);
    void *private_data;
} tfsql_arrow_array;

/* Move the columns decode_feed built in `x` (x->row_base rows) into `out`: a struct
 * array of decode_ncols(x->sc) children, one per column in order, in the decoder's
 * layout (int64 / float32 / binary values; a LIST a list of them, a LIST_OF_LIST a list
 * of lists); large buffers move without a copy, small ones (up to 256 bytes) are copied
 * into one block, and every node's private data is one allocation: all is freed once the
 * struct and every child a consumer moved out are released (in any order, from any
 * thread). The builders are left empty (decode_end still frees x). 0, or -1 when out of
 * memory (`out` then released: out->release NULL). */
int decode_export_arrow(dctx *x, tfsql_arrow_array *out);

/* The bytes the column builders of `x` hold (what decode_export_arrow hands over). */
size_t decode_built_bytes(const dctx *x);

/* The first i whose column columns->children[cols[i]] (an array decode_export_arrow
 * made, not yet released) holds a bytes value that is not valid UTF-8 (utf8_valid), a
 * column out of range or not of bytes; -1 when every value is valid. Values only: an
 * empty or null slot is valid. */
int64_t arrow_columns_utf8_invalid(const tfsql_arrow_array *columns, const int64_t *cols, size_t n);

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

/* ------------------------------------------------------------------------ */
/* Schema inference (infer.c)                                               */
/* ------------------------------------------------------------------------ */

/* -- the sample plan --------------------------------------------------------------
 * Inference reads the first `infer_sample` records (-1: all) of up to `infer_files`
 * non-empty files (-1: all) chosen evenly through the file list, first and last
 * included; a file's sample also ends once its records hold `infer_bytes` payload
 * bytes (-1: no bound; ignored when every record is sampled). */

/* The positions in a listing of n files (sizes[i]: the file's size, 0 when empty; a
 * negative size is unknown and counts as non-empty) that the inference samples, in
 * order, in out[] (room for n); returns how many. */
size_t infer_pick_files(const int64_t *sizes, size_t n, long long infer_files, size_t *out);

/* -- the sample's feature summaries, and the columns they resolve to ------------- */

enum {
    INFER_OK = 0,
    INFER_NOMEM = 1,
    INFER_MALFORMED = 2,    /* a sampled record is not a valid Example/SequenceExample */
    INFER_NAME_NOT_UTF8 = 3, /* a feature name that cannot name a column */
    INFER_KIND_CONFLICT = 4, /* a feature seen with two kinds */
    INFER_NAME_TAKEN = 5,    /* a renamed feature list's column name is taken */
};

#define INFER_MESSAGE_LEN 2048
#define INFER_FEATURE_LEN 512

/* What went wrong: a code, the feature (UTF-8 or escaped), the file and record when
 * one is known (record: -1 when not), and a message for the user. */
typedef struct {
    int code;
    char feature[INFER_FEATURE_LEN];
    char path[INFER_FEATURE_LEN];
    long long record;
    unsigned long long offset;
    char message[INFER_MESSAGE_LEN];
} infer_error;

/* One summarised feature and the column it resolves to. kind KIND_NONE: the feature
 * never had a kind in the sample (it carries no values; it is not a column). */
typedef struct {
    char *name; /* the feature name (NUL-terminated copy) */
    size_t name_len;
    char *column; /* the column name: the feature name, or N__feature_list */
    int location, kind, shape, utf8;
} infer_column;

typedef struct infer_state infer_state;

/* A new inference of records of `record_type` (EXAMPLE or SEQUENCE_EXAMPLE; RAW
 * samples nothing); NULL when out of memory. */
infer_state *infer_new(int record_type, long long infer_sample, long long infer_bytes);
void infer_free(infer_state *s);

/* Start the sample of the next chosen file (`path` names it in messages). */
int infer_begin_file(infer_state *s, const char *path);

/* How many more records the current file's sample takes (-1: all it has). */
long long infer_records_wanted(const infer_state *s);

/* Fold n framed records of the current file (offs / lens: uint64 arrays of payload
 * offsets into buf and lengths; `first_index`: the file-wide index of the first,
 * `base`: the file offset of buf[0]). Takes the records within the file's budget:
 * *taken of them; *done is set once the file's sample is complete. Returns INFER_OK,
 * INFER_NOMEM or INFER_MALFORMED (err->record: the file-wide index). A feature name
 * that is not UTF-8 is remembered (file, record, offset) and reported by resolve. */
int infer_add(infer_state *s, const uint8_t *buf, size_t buflen, const uint8_t *offs,
              const uint8_t *lens, size_t n, size_t first_index, uint64_t base, size_t *taken,
              int *done, infer_error *err);

/* Records and payload bytes sampled so far, and the files that had a sampled record. */
uint64_t infer_sampled_records(const infer_state *s);
uint64_t infer_sampled_bytes(const infer_state *s);
size_t infer_sampled_files(const infer_state *s);

/* The columns of the sample, in first-seen order (features without a kind included,
 * with kind KIND_NONE): `lists_always` makes every feature column a list. `schema_hint`
 * is how the caller's front end spells the schema option in the advice of an error
 * ("schema=", "schema := {...}"). Returns INFER_OK (*cols owned by the caller:
 * infer_columns_free), INFER_NOMEM, INFER_NAME_NOT_UTF8, INFER_KIND_CONFLICT or
 * INFER_NAME_TAKEN. */
int infer_resolve(const infer_state *s, int lists_always, const char *schema_hint,
                  infer_column **cols, size_t *ncols, infer_error *err);
void infer_columns_free(infer_column *cols, size_t n);

#define INFER_MISSING 6 /* a schema column that no sampled record holds */

/* The word of an inference error's code (tfsql.messages.INFER's keys, "ok", "nomem",
 * "malformed"): its `reason` in every front end. */
const char *infer_reason(int code);

/* missing_columns='raise': the schema's columns (n NUL-terminated names) that no
 * sampled feature holds (a feature list's column may be named N__feature_list) are an
 * error listing them: INFER_MISSING, err->feature the first. A column among the
 * `ndescribed` names the dataset's own description gives (a tfsql writer's or a TFDS
 * features.json) is not missing: it is no misspelling, and reads as null where no record
 * holds it. `schema_name` and `hint` are how the front end spells the schema option and
 * missing_columns='insert'. INFER_OK when every column is held, or when the sample holds
 * no feature at all (nothing to judge); INFER_NOMEM. */
int infer_check_missing(const infer_state *s, const char *const *columns, size_t n,
                        const char *const *described, size_t ndescribed,
                        const char *schema_name, const char *hint, infer_error *err);

/* The feature list a list-of-lists column named `column` (len bytes) reads or writes:
 * N for a column named N__feature_list (TFSQL_FEATURE_LIST_SUFFIX) when N is also a
 * context column (is_context(ctx, N, its length) nonzero), else the column's own name.
 * Returns the feature list's name length (a prefix of column). */
size_t tfsql_feature_list_name(const char *column, size_t len,
                               int (*is_context)(void *ctx, const char *name, size_t len),
                               void *ctx);

/* -- one file's sample, read through the record reader (infer_sample.c) ------------ */

/* How a file's sample reads: the longest record a header may claim, whether data CRCs
 * are checked, on_corrupt='skip', and `tolerant` (the missing_columns check: a record
 * that does not decode, or framing damage, ends the file's sample unreported -- the
 * scan reports it). */
typedef struct {
    uint64_t max_record_bytes;
    int verify, skip_corrupt, tolerant;
} infer_sample_options;

enum {
    INFER_SAMPLE_OK = 0,      /* the file's sample is folded in */
    INFER_SAMPLE_FAILED = -1, /* err: the reader's error (a read, the binding's callback) */
    INFER_SAMPLE_DAMAGE = 1,  /* r->damage is an error now: the binding raises it as its scan would */
    INFER_SAMPLE_REFUSED = 2  /* e: INFER_MALFORMED (worded by the binding as its scan words
                                 it), INFER_NOMEM, or the core's refusal of the sample */
};

/* Read the current file's sample (after infer_begin_file) through `r` (started, nothing
 * read yet: the sample sets its read budget) into `s`, the loop every binding runs.
 * Damage: under skip_corrupt the sample goes past every framing damage as the scan does
 * (reader_skip: a record whose data CRC fails is stepped over, framing is found again),
 * so it sees the records the scan reads; otherwise framing damage ends the file's
 * sample (the scan reports it where it reads it), but is an error now
 * (INFER_SAMPLE_DAMAGE) when it is a header over max_record_bytes, or framing lost
 * before the sample holds any record (the file may not be TFRecord at all; a failed
 * data CRC leaves the framing whole) -- unless `tolerant`. A damaged
 * compressed stream is an error now whatever the options. *sampled: the file
 * gave a record; *sequence_hint: read as Examples, its first record looks like a
 * SequenceExample (tfsql_looks_like_sequence_example: the binding warns, whatever the
 * result). */
int infer_sample_file(infer_state *s, record_reader *r, const infer_sample_options *o,
                      int *sampled, int *sequence_hint, infer_error *e, char *err);
/* ======================================================================== */
/* Messages: filling the templates of tfsql/messages.py                      */
/* ======================================================================== */

/* A named text: a field of a message, or a dialect's phrase (tables of them end with
 * {NULL, NULL}). */
typedef struct {
    const char *name;
    const char *text;
} tfsql_field;

/* A message being written into buf (cap bytes, NUL-terminated, cut at cap). */
typedef struct {
    char *buf;
    size_t cap, len;
} tfsql_text;

void tfsql_put(tfsql_text *o, const char *p, size_t n);
/* Append `template` with each {name} filled from `fields` (a NULL text reads "None"),
 * else from `phrases` (may be NULL), else kept as written (tfsql.messages.render). */
void tfsql_render(tfsql_text *o, const char *template, const tfsql_field *fields, size_t n,
                  const tfsql_field *phrases);

/* ======================================================================== */
/* Dataset rules: from a listing of paths to the files to read               */
/* ======================================================================== */

/* The dataset rules of tfsql: from a listing of paths to the files to read, with their
 * partition values and split. Both bindings (the Python module and the DuckDB
 * extension) list files their own way and ask these functions what the listing means.
 *
 * Every function is pure (no file system access) and thread-safe. Strings are byte
 * strings with explicit lengths where a length is passed, else NUL-terminated; paths
 * use '/'. */

/* -- which listed paths are data (tfsql/core/paths.c) ---------------------------- */

/* 1 for a path component readers skip (Spark's shouldFilterOutPathName): a name starting
 * with '.', a name starting with '_' without '=', names ending in ".crc" or
 * "._COPYING_". */
int tfsql_is_hidden_name(const char *name, size_t n);

/* 1 when the glob component `pattern` (NUL-terminated) matches the whole of `name`:
 * '*' any run, '?' one byte, '[...]' a class ('!' negates, ranges a-z, a ']' first
 * is literal), as Python's fnmatchcase; no character is special to '/' (callers match
 * one component). A malformed class ('[' without ']') matches a literal '['. */
int tfsql_glob_match(const char *pattern, const char *name, size_t n);

/* 1 when `pattern` holds a glob character ('*', '?' or '['). */
int tfsql_has_glob_magic(const char *s, size_t n);

/* 1 when the file at `rel` (its path below the directory or glob root the user named,
 * '/'-separated) is data: no component is hidden, unless it matches one of the
 * `nexempt` glob components of the user's pattern that themselves start with '.' or '_'
 * (`exempt`, NUL-terminated patterns). */
int tfsql_keep_listed(const char *rel, size_t n, const char *const *exempt, size_t nexempt);

/* The root of a glob pattern ('/'-separated): the length of its longest prefix of
 * directory components without glob characters (the last component never belongs to
 * it); "/" (1) for an absolute pattern whose first component has them. Hive
 * directories and hidden names are judged below it. */
size_t tfsql_glob_root(const char *pattern, size_t n);

/* 1 when the glob component `c` of a user's pattern (below its root) opts the hidden
 * names it matches back in: it starts with '.' or '_'. The exempt list
 * tfsql_keep_listed takes is these components. */
int tfsql_glob_exempts(const char *c, size_t n);

/* 1 when a path given by a user holds a NUL byte in its first n bytes (an error: no
 * file system path can hold one). */
int tfsql_path_has_nul(const char *path, size_t n);

/* What a listing does with one entry. Kinds: */
enum {
    TFSQL_ENTRY_FILE = 0,     /* a regular file (or a link to one) */
    TFSQL_ENTRY_DIR = 1,      /* a directory */
    TFSQL_ENTRY_DIR_LINK = 2, /* a symbolic link to a directory */
    TFSQL_ENTRY_OTHER = 3,    /* a FIFO, socket or device (or a link to one) */
    TFSQL_ENTRY_MISSING = 4   /* a link to nothing, or gone since it was listed */
};
/* Where the entry was met: */
enum {
    TFSQL_NAMED = 0,   /* the user named it (a source item, or a literal component) */
    TFSQL_MATCHED = 1, /* the last component of a glob (without **) matched it */
    TFSQL_IN_WALK = 2  /* met listing a directory recursively, by **, or by a glob
                        * component before the last */
};
/* Actions: */
enum { TFSQL_WALK_READ = 0, TFSQL_WALK_DESCEND = 1, TFSQL_WALK_SKIP = 2, TFSQL_WALK_REFUSE = 3 };

/* The action for an entry: files are read; directories descended; a symbolic link to a
 * directory is descended where it was named or matched by a glob component but never
 * from a recursive walk (so a link loop is walked at most once, as fsspec's find and
 * DuckDB's glob do); FIFOs, sockets and devices are refused (reading one blocks or
 * returns nothing); links to nothing are skipped. */
int tfsql_walk_action(int kind, int context);

/* -- hive key=value directories (tfsql/core/hive.c) -------------------------------- */

#define TFSQL_HIVE_DEFAULT_PARTITION "__HIVE_DEFAULT_PARTITION__"

typedef struct {
    size_t key_start, key_len;     /* the escaped key, a slice of the directory text */
    size_t value_start, value_len; /* the escaped value */
    int is_null;                   /* the value is __HIVE_DEFAULT_PARTITION__ */
} tfsql_hive_segment;

/* The key=value components of the directory text dir[0..n) ('/'-separated; '\\' also
 * separates), in order: components without '=' or with an empty key are skipped, the
 * first '=' splits key from value. Fills at most `cap` segments, returns how many there
 * are (which may be more than `cap`). */
size_t tfsql_hive_segments(const char *dir, size_t n, tfsql_hive_segment *out, size_t cap);

/* Undo escape_partition_value: every %XX (two hex digits) becomes the character U+00XX,
 * written as UTF-8; other bytes are copied. `out` needs room for 2 * n bytes (no NUL is
 * added). Returns the length written. */
size_t tfsql_hive_unescape(const char *s, size_t n, char *out);

/* 1 when s[0..n) is a decimal integer that fits int64 ('-'? digits, leading zeros
 * allowed), its value in *value; 0 otherwise. */
int tfsql_hive_int64(const char *s, size_t n, int64_t *value);

/* Which directories hold partition columns. */
enum {
    TFSQL_HIVE_BELOW_ROOT = 0, /* scan_parquet's rule: only directories below the named root */
    TFSQL_HIVE_WHOLE_PATH = 1  /* read_parquet's rule: every directory of each file's path */
};

/* The directory text of `path` that hive_rule reads: for BELOW_ROOT the directories
 * between `root` (NULL: the file was named itself, so none) and the file name; for
 * WHOLE_PATH every directory of `path`. Sets *start and *len (a slice of path). */
void tfsql_hive_directory(const char *path, const char *root, int hive_rule, size_t *start,
                          size_t *len);

/* -- the dataset plan over a listing (tfsql/core/plan.c) ---------------------------- */

/* A feature list named like a context feature is read as the column N + this suffix
 * (tfsql.schema.FEATURE_LIST_SUFFIX, codec.FEATURE_LIST_SUFFIX). */
#define TFSQL_FEATURE_LIST_SUFFIX "__feature_list"

/* "Re-infer only if the files changed": the key of a listing, a 64-bit hash of `seed`
 * (the binding's options, mixed in with tfsql_key_mix) and each file's path bytes, size
 * and modification time in nanoseconds, in order. Equal listings give equal keys. */
typedef struct {
    const char *path;
    size_t path_len;
    uint64_t size, mtime_ns;
} tfsql_stamp;
uint64_t tfsql_key_mix(uint64_t h, uint64_t v);
uint64_t tfsql_listing_key(uint64_t seed, const tfsql_stamp *files, size_t n);

/* Paths compared as bytes (memcmp; a prefix first): <0, 0 or >0. */
int tfsql_path_compare(const char *a, size_t an, const char *b, size_t bn);

/* The order of a listing: the indices of the n paths (paths[i], lens[i] bytes) sorted by
 * bytes, a repeated path kept once (its first listing), written to order[0..k). Returns
 * k, or -1 out of memory. Every binding orders its files with it. */
long tfsql_plan_order(const char *const *paths, const size_t *lens, size_t n, size_t *order);

/* A path as shown in a message or a column: valid UTF-8 copied, every byte of an
 * invalid sequence written as \xNN (Python's surrogateescape bytes decoded with
 * backslashreplace). `out` needs room for 4 * n + 1 bytes; NUL-terminated; returns the
 * length. */
size_t tfsql_path_display(const char *path, size_t n, char *out);

/* A listed file, as the plan reads it: its path and the root it was listed below (NULL
 * when the file was named itself), both NUL-terminated with their lengths, and
 * optionally how the binding shows it (`display`, NULL: the path). */
typedef struct {
    const char *path;
    size_t path_len;
    const char *root;
    size_t root_len;
    const char *display;
    size_t display_len;
} tfsql_plan_file;

enum { TFSQL_PLAN_OK = 0, TFSQL_PLAN_NOMEM = 1, TFSQL_PLAN_REFUSED = 2 };
#define TFSQL_PLAN_MAX_FIELDS 4

/* A refusal of the plan: its reason (a key of tfsql.messages.HIVE, "nomem"), its fields
 * (field_texts owned: tfsql_plan_error_free) and the message rendered with the
 * caller's phrases. */
typedef struct {
    const char *reason;
    size_t nfields;
    const char *field_names[TFSQL_PLAN_MAX_FIELDS];
    char *field_texts[TFSQL_PLAN_MAX_FIELDS];
    char message[4096];
} tfsql_plan_error;
void tfsql_plan_error_free(tfsql_plan_error *err);

/* The hive partition columns of n files: ncols keys (names, unescaped, NUL-terminated),
 * each file's values (values[file * ncols + col], NULL for a null value, bytes-exact:
 * NUL included, value_lens the lengths), and each column's type by the typing rule
 * (is_int64[col]: every non-null value a decimal int64 -- the value in ints[...] --
 * and at least one; otherwise string). ncols == 0: not partitioned. */
typedef struct {
    size_t nfiles, ncols;
    char **names;
    size_t *name_lens;
    int *is_int64;
    char **values;
    size_t *value_lens;
    int64_t *ints;
} tfsql_hive_plan;
void tfsql_hive_plan_free(tfsql_hive_plan *plan);

/* The hive columns of `files` by `rule` (TFSQL_HIVE_BELOW_ROOT / _WHOLE_PATH). The
 * first file with key=value directories names the columns. Refusals (TFSQL_PLAN_REFUSED,
 * err filled, rendered from tfsql.messages.HIVE with `phrases`, the front end's dialect:
 * tfsql.messages.DIALECTS, a table ending {NULL, NULL}): "repeated_key" (a key
 * twice in one path), "inconsistent" (a file with other keys, or none), "none_found"
 * (`required`, or `ntyped` > 0, and no file has keys), "unknown_key" (typed[t], the
 * columns the user types, names no key). Returns TFSQL_PLAN_OK with *plan (free it with
 * tfsql_hive_plan_free), or TFSQL_PLAN_NOMEM. */
int tfsql_plan_hive(const tfsql_plan_file *files, size_t n, int rule, int required,
                    const char *const *typed, const size_t *typed_lens, size_t ntyped,
                    const tfsql_field *phrases,
                    tfsql_hive_plan *plan, tfsql_plan_error *err);

/* -- the plan of a whole listing (tfsql/core/listing.c) ------------------------------ */

/* Which matches of one glob a listing walks: for each of the n matches (paths[i],
 * lens[i] bytes, kinds[i] a TFSQL_ENTRY_*), the action (tfsql_walk_action, met walking
 * when the pattern holds a ** component (`globstar`), else matched), except that a
 * directory below (or equal to) another match that is walked is TFSQL_WALK_SKIP: its
 * files are listed with that one's (a ** component matches every level). Returns 0, or -1 out
 * of memory. */
int tfsql_plan_matches(const char *const *paths, const size_t *lens, const int *kinds, size_t n,
                       int globstar, int *actions);

/* One regular file of a binding's listing (a glob match, a file met walking a directory,
 * or a file the user named). Every file below a walked directory is listed, hidden ones
 * and intent records included: the plan decides. */
typedef struct {
    const char *path; /* where the file is (its bytes, NUL-terminated, path_len long) */
    size_t path_len;
    const char *root; /* the directory or glob root it was listed below; NULL: named */
    size_t root_len;
    const char *pattern; /* the glob of its source item (its components below the root */
    size_t pattern_len;  /* that start with '.' or '_' exempt hidden names), or NULL */
    const char *intent;  /* a file named TFSQL_INTENT_NAME: its content (at most */
    size_t intent_len;   /* TFSQL_INTENT_MAX_BYTES), NULL when unread */
    uint64_t size, mtime_ns;
    size_t item;  /* the source item it came from (0-based) */
    int fallback; /* the literal path of a glob item: read only when the glob keeps none */
} tfsql_listed;

/* The plan: files[0..n) index the listing in the order to read them; empty_item is the
 * first source item that names no data file (-1: none; the binding words the error);
 * layout (TFSQL_LAYOUT_*) with each file's split (a slice of its path:
 * split_start[i], split_len[i]) and, for TFDS, the shards' directory when they share one
 * (has_tfds_dir: the first tfds_dir_len bytes of any file's path); picks[0..npicks): the
 * positions in files[] inference samples (infer_pick_files). */
typedef struct {
    size_t n;
    size_t *files;
    long empty_item;
    int layout;
    size_t *split_start, *split_len;
    int has_tfds_dir;
    size_t tfds_dir_len;
    size_t npicks;
    size_t *picks;
} tfsql_plan_result;
void tfsql_plan_result_free(tfsql_plan_result *r);

/* The plan of a listing of `nitems` source items: a prepared intent record's directory
 * read as its rollback leaves it; files listed below a root kept by the hidden rule
 * (tfsql_keep_listed on the path below the root, exemptions from the item's pattern) and
 * without one of the `nprefixes` hidden prefixes on their name (named files always
 * kept); a glob item's fallback entries only when the glob keeps nothing; each item's
 * files by bytes (of the path the rules see), items in order, a path kept once (its
 * first); TFDS metadata of a listed directory holding dataset_info.json dropped; the
 * layout; the inference sample (`infer_files`, -1: all). Returns TFSQL_PLAN_OK or
 * TFSQL_PLAN_NOMEM. */
int tfsql_plan(const tfsql_listed *entries, size_t n, size_t nitems, const char *const *prefixes,
               size_t nprefixes, long long infer_files, tfsql_plan_result *out);

/* -- TFDS and TFX layouts (tfsql/core/layout.c) ------------------------------------ */

enum { TFSQL_LAYOUT_NONE = 0, TFSQL_LAYOUT_TFDS = 1, TFSQL_LAYOUT_TFX = 2 };

/* The split of a TFDS shard file ("{name}-{split}.tfrecord-{i}-of-{n}", the last
 * component of path): 1 with the split's slice, else 0. */
int tfsql_tfds_split(const char *path, size_t n, size_t *start, size_t *len);

/* The split of the nearest "Split-{split}" directory of `rel_dir` (the file's directory
 * below its root): 1 with its slice, else 0. */
int tfsql_tfx_split(const char *rel_dir, size_t n, size_t *start, size_t *len);

/* The layout of n listed files, each given by its path and its directory below the root
 * (`rel_dirs[i]`, NULL for a file named itself): TFDS when every file is a TFDS shard
 * below a named root, TFX when every file sits below a Split-{name} directory below its
 * root, else NONE. A file named itself reads as its own records: no layout. */
int tfsql_detect_layout(const char *const *paths, const char *const *rel_dirs, size_t n);

/* 1 when a listed file named `name` (a file name, no directory) in a directory that
 * holds dataset_info.json is TFDS metadata rather than data (.json and .txt files). */
int tfsql_is_tfds_metadata_name(const char *name, size_t n);

/* 1 for the name of the file that marks a TFDS version directory ("dataset_info.json"). */
int tfsql_is_tfds_info_name(const char *name, size_t n);

/* -- a TFDS directory's features.json (tfsql/core/tfds_features.c) ---------------- */

/* The column type a feature describes (tfsql.tfds): TFSQL_TFDS_UNDESCRIBED for one the
 * records must type. tfsql_tfds_type_name gives the Arrow name ("binary", "string",
 * "bool", "int8" ... "uint32", "float32", "float64"), NULL for UNDESCRIBED. */
enum {
    TFSQL_TFDS_UNDESCRIBED = 0, TFSQL_TFDS_BINARY, TFSQL_TFDS_STRING, TFSQL_TFDS_BOOL,
    TFSQL_TFDS_INT8, TFSQL_TFDS_INT16, TFSQL_TFDS_INT32, TFSQL_TFDS_INT64, TFSQL_TFDS_UINT8,
    TFSQL_TFDS_UINT16, TFSQL_TFDS_UINT32, TFSQL_TFDS_FLOAT32, TFSQL_TFDS_FLOAT64
};
#define TFSQL_TFDS_FEATURES_NAME "features.json"
#define TFSQL_TFDS_FEATURES_MAX_BYTES ((size_t)64 << 20)

typedef struct {
    char *name; /* NUL-terminated, name_len bytes */
    size_t name_len;
    int type;        /* TFSQL_TFDS_* */
    int is_list;     /* a tensor with a non-empty shape: a list of `type` */
    int class_label; /* a ClassLabel (type int64) */
    char *description; /* the feature's "description" text (NUL-terminated), or NULL */
    size_t description_len;
} tfsql_tfds_feature;

/* The top-level features of a features.json document, in document order (undescribed
 * ones included). Returns 0 with *out (free with tfsql_tfds_features_free) and *count,
 * or -1 when the bytes are not such a document (malformed JSON, no featuresDict /
 * features object, over TFSQL_TFDS_FEATURES_MAX_BYTES, out of memory). */
int tfsql_tfds_features(const char *data, size_t n, tfsql_tfds_feature **out, size_t *count);
void tfsql_tfds_features_free(tfsql_tfds_feature *features, size_t n);
/* 1 when every feature is described: they are the columns and nothing is inferred;
 * otherwise the records type the others and the described types replace theirs. */
int tfsql_tfds_features_complete(const tfsql_tfds_feature *features, size_t n);
const char *tfsql_tfds_type_name(int type);

/* -- the columns a layout gives a read (tfsql/core/layout_columns.c) ------------------ */

/* The string column a TFDS / TFX layout adds, holding each file's split. */
#define TFSQL_SPLIT_COLUMN "split"
/* 1 when column `name` is the layout's own (`split` of a TFDS / TFX layout): a type the
 * user gives it for hive columns is left to the layout, which makes it a string. */
int tfsql_layout_owns_column(int layout, const char *name, size_t len);
/* 1 when the layout adds its `split` column: a layout, and none of the n columns (the
 * data columns and the hive columns, names[i] of lens[i] bytes) is named `split`. */
int tfsql_layout_adds_split(int layout, const char *const *columns, const size_t *lens, size_t n);
/* A TFDS features.json's types over the inferred columns: of the n columns, typed_by[i]
 * is the described feature (of the ndescribed, in the document's order) whose type
 * replaces the inferred one, or -1; the described features no column names are
 * appended after them, in their order (appended[0 .. *nappended), room for ndescribed). */
void tfsql_tfds_merge(const char *const *columns, const size_t *lens, size_t n,
                      const char *const *described, const size_t *dlens, size_t ndescribed,
                      long long *typed_by, size_t *appended, size_t *nappended);

/* -- the column description every tfsql writer keeps beside its data
 *    (tfsql/core/description.c) --------------------------------------------------------
 *
 * A directory a tfsql writer fills holds features.json (TFSQL_DESCRIPTION_NAME): TFDS's
 * FeaturesDict JSON, one Tensor feature per column in column order (dtype and shape as
 * TFDS parses the records), whose "description" carries the Arrow type TFDS cannot say:
 * "tfsql type: <type text>" for a data column, "tfsql partition type: <type text>" for
 * a hive partition column (docs/format.md, section 10). Engine-neutral: a binding
 * turns its engine's types into tfsql_type (or type text) and back; the JSON is written
 * and read only here.
 *
 * Type text grammar (what tfsql_type_render writes and tfsql_type_parse reads):
 *   leaf  null bool int8 int16 int32 int64 uint8 uint16 uint32 uint64 float16 float32
 *         float64 string large_string binary large_binary date32 date64
 *         fixed_size_binary[N]  decimal128(P, S)  decimal256(P, S)
 *         timestamp[U]  timestamp[U, tz=ZONE]  time32[U]  time64[U]  duration[U]
 *         (U one of s ms us ns)
 *   wraps list<T>  large_list<T>  fixed_size_list<T>[N]
 *         fixed_shape_tensor<LEAF>[D0,D1,...]   (a tensor wraps a leaf directly) */
enum {
    TFSQL_TYPE_NONE = 0, TFSQL_TYPE_NULL, TFSQL_TYPE_BOOL, TFSQL_TYPE_INT8, TFSQL_TYPE_INT16,
    TFSQL_TYPE_INT32, TFSQL_TYPE_INT64, TFSQL_TYPE_UINT8, TFSQL_TYPE_UINT16, TFSQL_TYPE_UINT32,
    TFSQL_TYPE_UINT64, TFSQL_TYPE_FLOAT16, TFSQL_TYPE_FLOAT32, TFSQL_TYPE_FLOAT64,
    TFSQL_TYPE_STRING, TFSQL_TYPE_LARGE_STRING, TFSQL_TYPE_BINARY, TFSQL_TYPE_LARGE_BINARY,
    TFSQL_TYPE_DATE32, TFSQL_TYPE_DATE64, TFSQL_TYPE_FIXED_BINARY, TFSQL_TYPE_DECIMAL128,
    TFSQL_TYPE_DECIMAL256, TFSQL_TYPE_TIMESTAMP, TFSQL_TYPE_TIME32, TFSQL_TYPE_TIME64,
    TFSQL_TYPE_DURATION
};
enum { TFSQL_UNIT_S = 0, TFSQL_UNIT_MS, TFSQL_UNIT_US, TFSQL_UNIT_NS };
enum { TFSQL_WRAP_LIST = 1, TFSQL_WRAP_LARGE_LIST, TFSQL_WRAP_FIXED_LIST, TFSQL_WRAP_TENSOR };
#define TFSQL_TYPE_MAX_WRAP 4
#define TFSQL_TYPE_MAX_DIMS 8
#define TFSQL_TYPE_TZ_MAX 64
#define TFSQL_TYPE_TEXT_MAX 256
#define TFSQL_DESCRIPTION_NAME "features.json"

typedef struct {
    int leaf;                 /* TFSQL_TYPE_* */
    int unit;                 /* TFSQL_UNIT_*: timestamp, time32, time64, duration */
    char tz[TFSQL_TYPE_TZ_MAX]; /* a timestamp's time zone, "" for none */
    int precision, scale;     /* decimal128 / decimal256 */
    int64_t width;            /* fixed_size_binary */
    int nwrap;                /* wrappers, outermost first */
    int wrap[TFSQL_TYPE_MAX_WRAP];          /* TFSQL_WRAP_* (a TENSOR only innermost) */
    int64_t wrap_size[TFSQL_TYPE_MAX_WRAP]; /* FIXED_LIST's size */
    int ndim;                 /* the TENSOR wrapper's shape */
    int64_t shape[TFSQL_TYPE_MAX_DIMS];
} tfsql_type;

typedef struct {
    char *name;        /* NUL-terminated, name_len bytes (UTF-8) */
    size_t name_len;
    tfsql_type type;
    int partition;     /* 1: a hive partition column (not in the records) */
} tfsql_column;

/* Parse type text (grammar above) into *out: 0, or -1 when it is not such text. */
int tfsql_type_parse(const char *text, size_t n, tfsql_type *out);
/* Write t's type text into out (NUL-terminated, at most cap bytes): its length, or -1
 * when t is not a valid type or cap is too small (TFSQL_TYPE_TEXT_MAX always suffices). */
int tfsql_type_render(const tfsql_type *t, char *out, size_t cap);
/* The features.json document describing `columns` in order: 0 with *out (malloc'ed,
 * free it; *len bytes, UTF-8, ends with a newline), -1 for an invalid column type or out
 * of memory. The same bytes as tfsql._reference's twin. */
int tfsql_description_render(const tfsql_column *columns, size_t n, char **out, size_t *len);
/* The columns a features.json describes: 0 with *out (free with tfsql_description_free)
 * and *count when it has features and every one carries a tfsql type (a tfsql writer's
 * description), 1 when it is a features.json that does not (TFDS's own: see
 * tfsql_tfds_features; or no feature at all), -1 when it is not a features.json
 * document. */
int tfsql_description_parse(const char *data, size_t n, tfsql_column **out, size_t *count);
void tfsql_description_free(tfsql_column *columns, size_t n);
/* 1 for a file name that is a description rather than data ("features.json"): every
 * binding's listing leaves it out below a directory or glob root. */
int tfsql_is_description_name(const char *name, size_t n);
/* Whether a read of n listed files takes a tfsql writer's description (features.json):
 * when every file was listed below one root (roots[i] of lens[i] bytes, NULL for a file
 * named itself), the description in roots[0]; not for a TFDS / TFX `layout` (its own
 * metadata describes it), nor for files named directly or below several roots. The
 * record type does not matter: raw records still take its hive columns' types. */
int tfsql_description_root(const char *const *roots, const size_t *lens, size_t n, int layout);
/* The hive columns of a read of a directory a tfsql writer described: the description's
 * partition columns (described[d] of dlens[d] bytes, the ndescribed it marks "partition",
 * in its order) type the hive columns the read found (hive[i] of hlens[i] bytes, nhive):
 * typed_by[i] is the described column whose type column i takes -- the write's
 * partition_by type, so "007" written as a string stays one -- or -1 (the hive typing
 * rule's type stands). When the read found no hive column (a write of no rows: its one
 * empty file in the root), every described partition column is a column null in every
 * file: returns ndescribed (their number, in order), else 0. A read that types its hive
 * columns itself (`user_typed`: hive_schema, hive_types) or turns hive partitioning off
 * (`hive_off`) keeps the hive plan: every typed_by[i] -1, returns 0. */
size_t tfsql_written_partitions(int user_typed, int hive_off, const char *const *hive,
                                const size_t *hlens, size_t nhive, const char *const *described,
                                const size_t *dlens, size_t ndescribed, long long *typed_by);

/* -- compression (tfsql/core/detect.c) --------------------------------------------- */

enum { TFSQL_DETECT_NONE = 0, TFSQL_DETECT_GZIP = 1, TFSQL_DETECT_ZLIB = 2 };

/* A file's compression from its first n bytes (at least 12 when the file has them): a
 * TFRecord header whose length CRC matches means none; gzip's magic 1f 8b, or a zlib
 * header, select those; anything else reads as uncompressed. */
int tfsql_detect_compression(const uint8_t *head, size_t n);

/* -- what a file that is not TFRecord is (tfsql/core/sniff.c) --------------------- */

/* The format of a file whose first n bytes are head, for the message that says it is not
 * TFRecord: "parquet", "orc", "arrow" (IPC file or stream), "png", "jpeg", "gzip" (the
 * binding then asks again about the decompressed bytes), "json" or "text" (every byte
 * printable or whitespace, the first non-blank one '{' / '['); NULL for a TFRecord
 * header whose length CRC matches, and for anything else. The keys are those of
 * tfsql.messages.NOT_TFRECORD. */
const char *tfsql_sniff_format(const uint8_t *head, size_t n);

/* Whether a record read as an Example is really a tf.train.SequenceExample: it parses as
 * one (protobuf's checks) and a step of one of its feature lists (a map's repeated key
 * keeping its last entry) has a kind set. Example has no field 2, so reading it as an
 * Example drops its feature lists; each binding warns when a file's first record looks
 * so (sequence_hint.c). Other protobufs can parse as a SequenceExample with feature
 * lists, but their steps rarely set a kind. */
int tfsql_looks_like_sequence_example(const uint8_t *record, size_t len);

/* -- the crash-recovery intent record (tfsql/core/intent.c) ------------------------ */

#define TFSQL_INTENT_NAME "_tfsql-intent.json"
#define TFSQL_INTENT_MAX_BYTES ((size_t)256 << 20)

typedef struct tfsql_intent tfsql_intent;

/* Parse an intent record (the JSON tfsql.commit writes). Returns NULL with a message in
 * err (at most errlen bytes) when it is not one tfsql wrote: unknown format or state, a
 * path that leaves the target, malformed or over TFSQL_INTENT_MAX_BYTES. */
tfsql_intent *tfsql_intent_parse(const char *data, size_t n, char *err, size_t errlen);
void tfsql_intent_free(tfsql_intent *intent);

/* 1 when the record's state is "prepared" (a crashed commit before its commit point). */
int tfsql_intent_prepared(const tfsql_intent *intent);

/* The strings of a parsed record: its job id and trash directory (one each), the
 * replaced and created paths, and the staged and final path of each new file (two lists
 * in the same order), every path relative to the target and free of "", "." and "..". */
enum {
    TFSQL_INTENT_JOB = 0,
    TFSQL_INTENT_TRASH = 1,
    TFSQL_INTENT_REPLACED = 2,
    TFSQL_INTENT_CREATED = 3,
    TFSQL_INTENT_NEW_STAGED = 4,
    TFSQL_INTENT_NEW_FINAL = 5
};
size_t tfsql_intent_count(const tfsql_intent *intent, int which);
/* The index-th string of `which` (its length in *len; not NUL-free: the bytes are the
 * JSON string's), or NULL past the end. */
const char *tfsql_intent_path(const tfsql_intent *intent, int which, size_t index, size_t *len);

enum {
    TFSQL_VIEW_AS_IS = 0,    /* read the file where it is */
    TFSQL_VIEW_LEAVE_OUT = 1, /* a new file moved into place: the rollback moves it away */
    TFSQL_VIEW_MOVED = 2     /* an old file in the trash: read it as at its old path */
};

/* How to read a directory that holds a prepared intent record so that the result is
 * what its rollback leaves. `rels` are the n listed files below that directory (paths
 * relative to it, hidden ones included). Fills actions[i] and, for TFSQL_VIEW_MOVED,
 * old_start[i]: the old path is rels[i] + old_start[i]. Returns 0, or -1 out of memory.
 * For a committed record every action is TFSQL_VIEW_AS_IS. */
int tfsql_intent_view(const tfsql_intent *intent, const char *const *rels, size_t n,
                      int *actions, size_t *old_start);

/* -- index sidecars (tfsql/core/sidecar.c) ----------------------------------------- */

/* Reads n bytes at offset of a file into buf; returns the count read (< n at its end),
 * or -1. */
typedef int64_t (*tfsql_read_at)(void *ctx, uint64_t offset, uint8_t *buf, size_t n);

/* Validate the whole index sidecar `text` (n bytes) of an uncompressed file of
 * file_size bytes: lines "<offset> <size>\n" in decimal below 2^63, the first at 0,
 * each size >= 16 ending where the next line starts, the last at file_size; then, with
 * read_at, a valid record header of the last line's size at its offset. Returns the
 * number of records, filling offsets[i] and sizes[i] when not NULL (room for one per
 * '\n' of the text), or -1 with why (at most whylen bytes) saying what is wrong. */
int64_t tfsql_index_check(const char *text, size_t n, uint64_t file_size, tfsql_read_at read_at,
                          void *ctx, uint64_t *offsets, uint64_t *sizes, char *why, size_t whylen);

/* The index sidecar of the file `path` (n bytes): ".<name>.idx" beside it, the bytes up
 * to the last '/' kept as they are (any path: local, a URL, a relative name). Writes it to
 * out, which has room for n + TFSQL_INDEX_SIDECAR_EXTRA bytes, NUL-terminated, and
 * returns its length. */
#define TFSQL_INDEX_SIDECAR_EXTRA 6
size_t tfsql_index_sidecar_path(const char *path, size_t n, char *out);

/* Whether a sidecar last modified at index_mtime_ns (nanoseconds since the epoch) may
 * describe a file modified at file_mtime_ns: it is not older. An older one is ignored
 * (stale: the file was written again after it) before its text is even read. */
int tfsql_index_fresh(int64_t index_mtime_ns, int64_t file_mtime_ns);

/* -- the write lock of a target directory (tfsql/core/target_lock.c) --------------- */

enum {
    TLOCK_HELD = 0,        /* the lock is held: *fd is its descriptor (close it to release) */
    TLOCK_BUSY = 1,        /* another descriptor holds it (wait = 0 only) */
    TLOCK_UNSUPPORTED = 2, /* the mount has no flock: write unlocked */
    TLOCK_ERROR = -1       /* errno says why (ENOENT: no such directory; EINTR: a signal
                            * interrupted the wait, call again) */
};

/* Lock the directory `dir` (a flock on a descriptor of the directory itself, shared or
 * exclusive), waiting while another holds it when `wait`; verifies that the directory
 * locked is still the one at the path, else locks the new one. A TLOCK_* status. */
int tfsql_target_lock(const char *dir, int exclusive, int wait, int *fd);
/* Create the owner file `file` of a staging directory and hold its exclusive lock for as
 * long as the writer lives (*fd, on TLOCK_HELD). A TLOCK_* status. */
int tfsql_owner_lock(const char *file, int *fd);
/* 1 when the owner file `file` exists and its lock is held (its writer lives), else 0. */
int tfsql_owner_alive(const char *file);
/* 1 when a hidden entry of the directory `dir` is a live writer's staging directory (its
 * '_tfsql.owner' locked), its name then copied to name (cap bytes); else 0. */
int tfsql_target_busy(const char *dir, char *name, size_t cap);

#endif /* TFSQL_CORE_H */
