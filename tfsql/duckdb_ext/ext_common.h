/*
 * tfsql/duckdb_ext/ext_common.h -- what the DuckDB extension's engine-neutral files share.
 *
 * Two DuckDB bindings compile these files: the v1 extension (DuckDB's stable C API:
 * duckdb_ext.h, this directory) and the V2 extension (DuckDB 2's V2 C API:
 * tfsql/duckdb_v2/v2_ext.h). A file that includes only this header calls no DuckDB
 * function (setup.py compiles exactly those files into both binaries):
 *
 *   strings.c      small growable helpers
 *   routed.c       the paths a binding routes to its engine's file system (fsops)
 *   reading.c      the core's record reader (tfsql/core/reader.c) over pread, each read
 *                  checked for changes; libz loaded at run time; its damage as errors
 *                  or, under on_corrupt := 'skip', reported skips (reports_skipped: each
 *                  binding's)
 *   discovery.c    listing paths, directories and globs; which entries are data, links,
 *                  FIFOs and crashed commits' intent records are the core's rules
 *   inference.c    the inference sample read from the files, handed to the core's
 *                  inference (tfsql/core/infer.c); column names; the inferred-schema cache
 *   layouts.c      the split column of TFDS / TFX layouts (detected by the core); the
 *                  column types a TFDS or a tfsql writer's features.json gives
 *   option_rules.c the options' defaults and values, COPY TO's option table, names'
 *                  suffixes (generated from the option spec: options_gen.h)
 *   messages.c     data errors as fields (tferror), worded from the templates generated
 *                  from tfsql/messages.py (messages_gen.h)
 *   deflate.c      gzip / zlib streams for writing, through the run-time libz
 *   copy_lock.c    COPY TO's target lock: the core's (tfsql/core/target_lock.c)
 *   copy_encode.c  COPY TO's column types -> features, a chunk's vectors -> records
 *   copy_files.c   COPY TO's files: names, temporary files, INDEX sidecars, commit, the
 *                  partitioned target's column description (features.json)
 *   copy_cast.c    COPY FROM's casts of the scan's columns to the table's
 *   decimals.c     a described decimal's float read as DECIMAL(p, s) exactly, and a
 *                  DECIMAL written as float32 only when exact (COPY TO)
 */
#ifndef TFSQL_EXT_COMMON_H
#define TFSQL_EXT_COMMON_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tfsql_core.h"

#define ERRLEN 4096

typedef struct {
    char **items;
    size_t n, cap;
} strlist;

/* zlib's z_stream (deflate.c). */
typedef reader_zstream zstream;

enum { COMP_NONE = 0, COMP_GZIP = 1, COMP_ZLIB = 2, COMP_INFER = 3 };

typedef struct {
    char *path;    /* absolute, normalised */
    char *root;    /* the directory hive directories are parsed below; NULL when named */
    int64_t size;
    char *shown;   /* the path as shown (tfsql_path_display) when it is not UTF-8, else NULL */
    char **parts;  /* raw (unescaped) partition values, NULL for null; one per key */
    size_t *part_lens; /* their lengths (a value may hold NUL) */
} tfile;

/* The path of a file as shown in messages and columns. */
#define TFILE_SHOWN(f) ((f)->shown != NULL ? (f)->shown : (f)->path)

typedef struct {
    tfile *items;
    size_t n, cap;
} filelist;

enum { HIVE_AUTO = -1, HIVE_OFF = 0, HIVE_ON = 1 };

/* The connection a bind runs for, so that errors and skipped ranges are kept for it:
 * its database (the extension's load: connection ids count per database) and its id;
 * known only on engines whose C API gives the id (v1.5.6: DuckDB >= 1.5.6). */
typedef struct {
    int known;
    uint64_t database;
    uint64_t id;
} connref;

/* The extra info of every table function the extension registers: its name (for
 * messages) and the database it was registered in (reports.c). */
typedef struct {
    const char *name;
    uint64_t database;
} fninfo;

typedef struct {
    /* options */
    int record_type, compression, verify, hive, lists_always, skip_corrupt, glob;
    int missing_insert; /* missing_columns := 'insert' */
    long long max_record_bytes, batch_bytes;
    long long infer_sample, infer_files, infer_bytes; /* -1: all / no bound */
    char *filename_col;
    /* files and partitions */
    filelist files;
    int npart;
    char **part_names;
    int *part_is_int;
    /* a TFDS / TFX layout (tfsql.layouts): each file's split, and the TFDS shards'
     * directory when they share one */
    int layout;
    char **splits;
    char *tfds_dir;
    /* the positions in files that schema inference samples (the core's plan) */
    size_t *picks;
    size_t npicks;
    /* data columns (the decoder's schema) and their output types */
    schema sc;
    int *utf8;
    int *leaf;            /* per data column, the TT_* leaf a tfsql writer's description
                           * gives where it is not the kind's own (0: the kind's); NULL
                           * without one (layouts.c's described_column) */
    uint64_t *array_size; /* per data column, a described fixed size (an ARRAY column, its
                           * values a list of exactly that many); 0 or NULL: a LIST */
    int64_t *scale;       /* per data column, what a stored integer is multiplied by (> 1)
                           * or floor-divided by (< -1) for its leaf (a unit); NULL: 1 */
    struct tftype *described; /* per data column, the described type's DECIMAL width and
                           * scale and inner ARRAY sizes (layouts.c); NULL without one */
    int ndata;
    int64_t total_bytes;
    /* COPY ... FROM: the casts to the table's columns (copy_from.c), else NULL */
    struct castplan *cast;
    /* the connection the scan runs for (its errors and skipped ranges: reports.c) */
    connref conn;
    /* predicates a binding accepted from the query (pruning.c): a file is read when all
     * hold for it */
    struct tfpred *preds;
    size_t npreds;
} tfbind;

enum { LAYOUT_NONE = 0, LAYOUT_TFDS = 1, LAYOUT_TFX = 2 };
#define SPLIT_COLUMN TFSQL_SPLIT_COLUMN

/* ------------------------------------------------------------------------ */
/* Functions shared between the extension's files                           */
/* ------------------------------------------------------------------------ */

/* -- strings.c --------------------------------------------------------------- */
/* err = "<path>: <why>", cut to ERRLEN bytes. */
void error_at_path(char *err, const char *path, const char *why);

char *xstrndup(const char *s, size_t n);

char *xstrdup(const char *s);

char *xprintf(const char *fmt, ...);

/* Append s (owned; NULL is kept: a null partition value); -1 when out of memory. */
int strlist_push(strlist *l, char *s);

int strlist_add(strlist *l, char *s);

void strlist_free(strlist *l);


int ends_with_ci(const char *s, const char *suffix);

/* -- routed.c: the file systems a binding routes paths to --------------------------- */
/* A local path is read, listed and written with the C library's calls (the code of
 * reading.c, discovery.c, copy_files.c: the walk's link and FIFO rules, a file's
 * modification time, the target lock). A binding may route other paths (a URL such as
 * s3://b/x or memory://d) to a file system of its engine through this table: V2 routes
 * them to DuckDB's (tfsql/duckdb_v2/files.c); v1 routes none and keeps its messages.
 * Every function that fails sets err (the file system's own message). */
enum { FS_READ = 1, FS_WRITE = 2 };
typedef struct {
    /* 1 when the binding's file system takes `path` */
    int (*routes)(const char *path);
    /* `path` with a leading '~' expanded (a new string), or NULL with err set */
    char *(*expand)(const char *path, char *err);
    /* the paths `pattern` matches (files, and directories where the file system lists
     * them) into out, in any order; -1 with err set */
    int (*glob)(const char *pattern, strlist *out, char *err);
    /* open a file to read (its size in *size) or a new file to write; NULL with err */
    void *(*open)(const char *path, int mode, uint64_t *size, char *err);
    /* exactly n bytes at `at` (positioned: the handle keeps no position) */
    int (*read_at)(void *h, uint64_t at, void *dst, size_t n, char *err);
    int (*write)(void *h, const void *src, size_t n, char *err);
    /* a written file: flushed and closed (every byte stands, or err); close follows */
    int (*sync)(void *h, char *err);
    void (*close)(void *h);
    int (*move)(const char *from, const char *to, char *err);
    void (*remove)(const char *path);
} fsops;
/* The binding's table (weak: a binding without one routes nothing). */
const fsops *binding_fs(void) __attribute__((weak));
/* The binding's file system when it takes `path`, else NULL (a local path). */
const fsops *fs_routed(const char *path);
/* `item` with a leading '~' expanded when the binding expands it (a new string); NULL
 * with err set. */
char *fs_expand(const char *item, char *err);
/* A routed file of at most `max` bytes, read whole into *data (malloc'ed) and *n: 0,
 * else 1 (no such file, too large, unreadable). */
int fs_read_whole(const fsops *fs, const char *path, size_t max, char **data, size_t *n);
/* `got`, a path a routed glob returned, in the spelling of `asked` (the pattern it
 * answers): "memory:///d/x" answering "memory://d/<glob>" is "memory://d/x". A new string. */
char *fs_same_spelling(const char *asked, const char *got);

/* -- reading.c ---------------------------------------------------------------- */

/* A stat's modification time in nanoseconds. */
int64_t stat_mtime_ns(const struct stat *st);

/* One open file, checked for changes after every read (tfsql.file_guard). */
typedef struct {
    int fd;
    const fsops *fs;    /* a routed file (fs_routed): read through fs, else through fd */
    void *h;            /* its handle */
    const char *path;   /* borrowed, for messages */
    uint64_t file_size; /* at open: the size the bind listed */
    int64_t mtime_ns;
} source;

/* An open file read through the core's record reader (r.buf: its window). It must not
 * move while open (the reader's read callback holds &src). */
typedef struct {
    source src;
    record_reader r;
} window;

/* Open `path` (compression `comp`, or COMP_INFER to detect it); `listed_size` (or -1)
 * is the size the bind saw: another size now means the file changed. */
int window_open(window *w, const char *path, int64_t listed_size, int comp, char *err);
void window_close(window *w);
/* Make stream bytes [from, from + need) available (fewer only at the end of the
 * stream), dropping those before `from` (reader_fill); -1 with err. */
int window_fill(window *w, uint64_t from, size_t need, char *err);

/* -- messages.c ------------------------------------------------------------------ */

/* The classes of tfsql's data errors (tfsql.errors). */
enum { TFERR_NONE = 0, TFERR_CORRUPT = 1, TFERR_SCHEMA = 2, TFERR_FILE_CHANGED = 3 };

/* A data error as fields, the fields of the Python class of `cls` (CorruptRecordError,
 * SchemaError, FileChangedError): `reason` is its vocabulary word (CorruptRecordError
 * .reason, SchemaError.reason, FileChangedError.what). Numbers are -1 when not known;
 * strings are borrowed (NULL when not known). */
typedef struct {
    int cls;
    const char *reason;
    const char *path;
    long long record_index, offset, length, limit, skipped_to, before, after;
    int rest_of_file, suggest_skip;
    const char *compression, *record_type, *detail, *feature, *found, *expected;
} tferror;

/* An owned copy of a tferror (its strings copied) with its message. */
typedef struct {
    tferror e;
    char *message;
    char *strings; /* the copies' storage */
} tferror_rec;

/* A phrase of the SQL dialect (tfsql.messages.DIALECTS["sql"][key]), "" when unknown. */
const char *sql_phrase(const char *key);
/* Into err (cap bytes): why source item `item` names no data file: a glob that matches
 * nothing (no_match), or a directory holding none (messages.py's NO_MATCH,
 * NO_FILES_IN_DIRECTORY). */
void no_data_message(char *err, size_t cap, const char *item, int no_match);
/* The messages of tfsql.messages.NOT_REGULAR (a FIFO, socket or device met listing),
 * NO_SUCH_PATH (a source item that names nothing) and SEQUENCE_HINT (a file of
 * SequenceExamples read as Examples), in the SQL dialect. */
void not_regular_message(char *err, const char *path);
void no_such_path_message(char *err, const char *item);
void sequence_hint_message(char *out, size_t cap, const char *path);
/* record_type := 'bytes' with a schema := of `count` columns (column NULL), or whose one
 * column has a type that is not BLOB or VARCHAR (tfsql.messages.RAW_SCHEMA). */
void raw_schema_message(char *err, size_t cap, const char *fname, int count, const char *column,
                        const char *type);
/* Every phrase of the SQL dialect (a table ending {NULL, NULL}), for the core's renders. */
const tfsql_field *sql_phrases(void);
/* e = a `cls` error of `reason` in `path`, every other field unknown. */
void tferror_init(tferror *e, int cls, const char *reason, const char *path);
/* The message of `e`, its advice spelled for SQL (tfsql.messages, dialect "sql"). */
void tferror_message(char *out, size_t cap, const tferror *e);
/* What on_corrupt := 'skip' reports for `e` (CorruptRecordError.skipped_message). */
void tferror_skipped_message(char *out, size_t cap, const tferror *e);
/* The detail of a malformed record whose bad feature the decoder names. */
void malformed_detail(char *out, size_t cap, const char *feature);
/* err = e's message; e is kept as this thread's pending data error (tferror_take). */
void tferror_raise(char *err, const tferror *e);
/* As tferror_raise, worded by the caller: err = `message` (an error whose wording has
 * fields the tferror does not carry, as the schema inference's refusals). */
void tferror_raise_worded(char *err, const tferror *e, const char *message);
/* This thread's pending data error (the caller owns it), or NULL; clears it. */
tferror_rec *tferror_take(void);
tferror_rec *tferror_copy(const tferror *e, const char *message);
void tferror_rec_free(tferror_rec *r);

/* -- reports (each binding's: v1 reports.c, V2 tfsql/duckdb_v2/) ---------------- */
/* A new database loads the extension: the functions registered next belong to it. */
void reports_new_database(void);
/* A tfrecord_scan bind: forget the connection's last error and, for a scan that skips
 * damage, its skipped ranges (each statement lists its own). */
void reports_begin_scan(connref c, int skipping);
/* The scan failed: keep this thread's pending data error (or the message alone) as the
 * connection's last error. */
void reports_scan_failed(connref c, const char *message);
/* A damaged stretch skipped under on_corrupt := 'skip' (report_book.c keeps it and hands
 * its message to the binding's reports_log_skip). */
void reports_skipped(connref c, const tferror *e);
/* The binding's log of a skipped stretch (DuckDB's log on V2; v1 has none). */
void reports_log_skip(const char *message);
/* A warning (DuckDB's log on V2; v1 has no channel for one). */
void reports_warning(const char *message);

/* -- report_book.c: the rows of tfrecord_last_error() and tfrecord_rejects() --------- */
/* A copy of a connection's reports, sorted by file and offset. */
typedef struct {
    tferror_rec **rows;
    size_t n;
    uint64_t dropped;
} snapshot;
/* The last error (rejects = 0) or the rejects of connection c; NULL when out of memory. */
snapshot *reports_snapshot(connref c, int rejects);
void snapshot_free(void *p);

/* What framing takes and how it treats damage (the reading options). */
typedef struct {
    long long max_records;     /* records per chunk (-1: no limit) */
    long long max_bytes;       /* payload bytes per chunk: batch_bytes (-1: no limit) */
    uint64_t max_record_bytes; /* a longer record header is damage */
    int verify;                /* check data CRCs */
    int skip_corrupt;          /* on_corrupt := 'skip' */
    connref reports;           /* where skipped stretches are reported (reports.c) */
} framing;

/* Frame the next chunk of w (reader_next): 1: w->r.n records; 0: the file is done; -1:
 * error in err. Damage is an error naming the file, the record and its byte offset, or
 * under skip_corrupt is stepped over and reported. */
int window_next(window *w, const framing *o, char *err);
/* err = the damage the reader met (w->r.damage) as the extension's error; -1. */
int damage_error(const window *w, char *err);
/* err = the message of a record protobuf would not parse as the bind's record type
 * (`feature`: the feature the decoder names, or NULL). */
void malformed_error(char *err, int record_type, const char *path, size_t index, uint64_t at,
                     const char *feature);

/* -- discovery.c ------------------------------------------------------------- */
void filelist_free(filelist *l, int nparts);

int has_glob_magic(const char *s);

/* The source items -> b->files in the plan's order, b->layout, b->splits, b->tfds_dir,
 * b->picks (the files inference samples):
 * listed here, planned by the core (tfsql_plan). 1 when an item names no data file
 * (err set), -1 on another error (err set). */
int list_sources(const char *const *items, size_t nitems, int glob, long long infer_files, tfbind *b,
                 char *err);

/* -- inference.c ------------------------------------------------------------- */

/* Infer the data columns from the sampled files (the core's inference). */
int infer_columns(tfbind *b, char *err, uint64_t *cardinality);

/* missing_columns := 'raise': schema := columns no sampled record holds are an error. */
int check_missing_columns(const tfbind *b, const tfsql_column *written, size_t nwritten, char *err);
/* The data columns' names (column_name), then with `hive` the partition columns', added
 * to *names, their lengths in *lens (free it); 0, or -1 when out of memory. */
int column_names(const tfbind *b, int hive, strlist *names, size_t **lens);
/* The regular file at `path` (at most `max` bytes, opened without blocking), malloc'ed
 * with its size in *size; NULL when there is none. */
char *read_small_file(const char *path, size_t max, size_t *size);

int context_column(const tfbind *b, const uint8_t *name, size_t len);

/* The name of data column c (a new string). */
char *column_name(const tfbind *b, int c);

int is_column(const tfbind *b, const char *name);


uint64_t infer_key(const tfbind *b);

int infer_cache_get(tfbind *b, uint64_t key, uint64_t *cardinality);

void infer_cache_put(const tfbind *b, uint64_t key, uint64_t cardinality);

/* -- layouts.c --------------------------------------------------------------- */
/* TFDS features.json (layouts.c): read it (0, or 1 when there is none) and its types
 * over the inferred columns (whether it describes every feature is the core's
 * tfsql_tfds_features_complete). */
int read_tfds_features(const tfbind *b, tfsql_tfds_feature **out, size_t *count);
int apply_tfds_features(tfbind *b, const tfsql_tfds_feature *features, size_t n,
                        const char *fname, char *err);
/* A tfsql writer's column description (features.json in the one root every file was
 * listed below): 0 with *out (free with tfsql_description_free) and *count, else 1. */
int read_written_description(const tfbind *b, tfsql_column **out, size_t *count);
/* The described data columns, in order, are the columns (nothing is inferred). */
int apply_written_description(tfbind *b, const tfsql_column *cols, size_t n, char *err);
/* The described partition columns' types over the hive ones; null columns for a write
 * of no rows. 0, or -1 when out of memory. */
int apply_written_partitions(tfbind *b, const tfsql_column *cols, size_t n, int user_typed);

/* Append the split column after the hive partition columns (tfsql.layouts.Layout
 * .add_split_column): its values move from b->splits to each file's parts. */
int add_split_column(tfbind *b);

/* -- option_rules.c ------------------------------------------------------------ */
/* The options' defaults (from the option spec). */
void set_default_options(tfbind *b);
/* The format's own options of COPY ... TO (FORMAT tfrecord). */
typedef struct {
    int record_type, compression, level, index; /* compression: COMP_*, COMP_INFER by name */
    const char *compression_by;                 /* the spelling that set compression, or NULL */
} copy_settings;

/* Apply one COPY ... TO option as given (its name, its value's text, NULL for a flag alone),
 * read by the table generated from tfsql.options.WRITE_OPTIONS; -1 with err set for an
 * unknown option, one the native COPY refuses, a value refused, or a second spelling of
 * an option already given. */
int read_copy_option(copy_settings *s, const char *name, const char *text, char *err);

/* The compression a file name's ending says (tfsql.naming.NAME_COMPRESSIONS): COMP_GZIP,
 * COMP_ZLIB (the ending's length in *suffix_len unless NULL), or COMP_NONE. */
int name_compression(const char *name, size_t *suffix_len);

/* 1 when a name ends in a TFRecord suffix (tfsql.naming.TFRECORD_SUFFIXES, any case). */
int is_tfrecord_suffix(const char *name);

/* -- deflate.c ------------------------------------------------------------------------ */

/* A gzip or zlib stream being written. The z_stream must stay where it is while active. */
typedef struct {
    zstream z;
    int active;
} deflater;

/* Start a COMP_GZIP or COMP_ZLIB stream at `level` (-1: zlib's default); -1 with `err`
 * set when libz cannot be loaded or refuses. */
int deflater_start(deflater *d, int comp, int level, char *err);
/* Compress n bytes into `out` (appended); with `finish`, end the stream. */
int deflater_run(deflater *d, const uint8_t *in, size_t n, int finish, tbuf *out, char *err);
void deflater_end(deflater *d);


/* -- copy_lock.c --------------------------------------------------------------------- */

/* A native COPY's hold on its target's lock (tfsql/core/target_lock.c). */
typedef struct {
    int fd;       /* the descriptor of the locked target directory, -1 when none is held */
    int unlocked; /* the mount has no flock: written unlocked */
    char *path;   /* the target directory */
} copy_lock;

/* The target of the file DuckDB names `path`: its directory without PARTITION_BY's
 * key=value directories ('out/p=0/data_0.' -> 'out'; 'x.tfrecord' -> '.'). New string. */
char *copy_target_of(const char *path);
/* Take the lock of the directory `target` unless `l` holds one; -1 with err set when
 * another writer holds it (no waiting: see copy_lock.c) or it cannot be locked. */
int copy_lock_take(copy_lock *l, const char *target, char *err);
/* -1 with err set when the temporary file `temp_path` is gone while `l` is held (another
 * writer's OVERWRITE, applied before the v1 API let this COPY lock): `final_path` must
 * then not be committed. */
int copy_lock_check(const copy_lock *l, const char *temp_path, const char *final_path, char *err);
/* Release the lock. */
void copy_lock_release(copy_lock *l);


/* -- copy_encode.c ------------------------------------------------------------------- */

/* A column's leaf type, as each binding maps DuckDB's type ids. */
enum {
    COPY_LEAF_NONE = 0, /* a type no feature holds */
    COPY_LEAF_SQLNULL,  /* the NULL type: never a feature */
    COPY_LEAF_BOOL,
    COPY_LEAF_I8,
    COPY_LEAF_I16,
    COPY_LEAF_I32,
    COPY_LEAF_I64,
    COPY_LEAF_U8,
    COPY_LEAF_U16,
    COPY_LEAF_U32,
    COPY_LEAF_U64,
    COPY_LEAF_F32,
    COPY_LEAF_F64,
    COPY_LEAF_VARCHAR,
    COPY_LEAF_BLOB,
    COPY_LEAF_DATE,      /* int32 days */
    COPY_LEAF_TIMESTAMP, /* int64: TIME and the TIMESTAMPs */
    COPY_LEAF_DECIMAL    /* DECIMAL(width, scale): int16 / int32 / int64 / hugeint by width */
};

/* A column's type as a binding describes it: the leaf below at most two LIST / ARRAY
 * levels (a deeper list's leaf is COPY_LEAF_NONE), each level's ARRAY size (0: a LIST),
 * and the leaf type's name for messages. */
typedef struct {
    int leaf, levels;
    uint64_t array[2];
    char type_name[64];
    int time; /* COPY_LEAF_TIMESTAMP's type: COPY_TIME_* (for the column description) */
    int width, scale; /* COPY_LEAF_DECIMAL's */
} copy_type;

/* Which type a COPY_LEAF_TIMESTAMP is: TIME, or a TIMESTAMP's unit (US_TZ: WITH TIME ZONE). */
enum { COPY_TIME_OF_DAY = 0, COPY_TIME_S, COPY_TIME_MS, COPY_TIME_US, COPY_TIME_NS, COPY_TIME_US_TZ };

/* How one input column is read: its leaf, its feature's kind and shape. */
typedef struct {
    int leaf, kind, shape;
    int width, scale;                  /* a COPY_LEAF_DECIMAL's */
    uint64_t outer_array, inner_array; /* fixed ARRAY sizes; 0 when that level is a LIST */
    int skip;                          /* a column of type NULL: never a feature */
} copy_incol;

/* The columns of a COPY ... TO and the encoder's schema. */
typedef struct {
    copy_settings set;
    int ncols;       /* input columns */
    copy_incol *in;  /* one per input column */
    int *enc;        /* input column -> encoder column, -1 when skipped */
    schema sc;       /* the encoder's columns */
    tfsql_column *described; /* the columns as a description (tfsql.description); NULL
                              * when RAW or a type it cannot say */
    size_t ndescribed;
    int undescribable;       /* a column's type has no description: none is written */
} copy_plan;

/* -1 with err set for options that contradict (COMPRESSION_LEVEL without COMPRESSION,
 * INDEX with COMPRESSION). */
int copy_settings_check(const copy_settings *s, char *err);
int copy_plan_start(copy_plan *p, const copy_settings *set, int ncols, char *err);
/* Plan input column i (its feature name and type); -1 with err set for a type no feature
 * holds or one the record type refuses. */
int copy_plan_column(copy_plan *p, int i, const char *name, const copy_type *t, char *err);
/* After the last column: RECORD_TYPE bytes' one column, names unique. */
int copy_plan_finish(copy_plan *p, char *err);
void copy_plan_free(copy_plan *p);

/* A flat vector as the binding reads it: its data (fixed-width values, 16-byte strings or
 * {uint64 offset, uint64 length} list entries; nothing for an ARRAY) and its validity
 * bits (NULL: all valid). `vector` is the binding's handle (for child()). */
typedef struct {
    void *vector;
    const void *data;
    const uint64_t *validity;
} copy_view;

typedef struct {
    /* view of `vector`; -1 with err set */
    int (*view)(void *vector, copy_view *out, char *err);
    /* the child (elements) of a LIST (is_array 0) or ARRAY vector; NULL on error */
    void *(*child)(void *vector, int is_array);
} copy_vector_ops;

/* The buffers of one encoder column for a chunk (Encoder.encode's arrays). */
typedef struct {
    tbuf validity, outer, inner, vo, values;
} copy_colbufs;

typedef struct {
    copy_colbufs *bufs;
    ecol *ecols;
    int ncols;
    tbuf framed, ends; /* the last copy_encode_rows' records and their end offsets */
} copy_encoder;

int copy_encoder_init(copy_encoder *e, const copy_plan *p);
void copy_encoder_free(copy_encoder *e);
/* Encode n rows: vectors[i] is input column i's vector; row_validity (or NULL) marks rows
 * that are NULL as a whole (empty records). -1 with err set. */
int copy_encode_rows(copy_encoder *e, const copy_plan *p, const copy_vector_ops *ops,
                     void *const *vectors, const uint64_t *row_validity, uint64_t n, char *err);

/* -- copy_cast.c --------------------------------------------------------------------- */

/* How COPY ... FROM turns a scan column's type into the table's (copy_cast_plan). */
enum { CAST_SAME = 0, CAST_INT = 1, CAST_FLOAT = 2, CAST_BYTES = 3 };

/* How a scan column of type `from` becomes the table's column of type `to` (lists: their
 * values cast): CAST_SAME for the very same type (leaf, unit, width and scale), else the
 * leaf's cast (int64, float32 or bytes to another leaf), or -1 when COPY ... FROM does not
 * cast it (ARRAYs, lists of lists of another type, a DECIMAL of another width or scale,
 * another TIMESTAMP unit). */
int copy_cast_plan(const copy_type *from, const copy_type *to);

/* What the casts write through the binding: the target vector's validity, writable, and a
 * string stored into it. */
typedef struct {
    uint64_t *(*writable_validity)(void *vector);
    void (*assign_bytes)(void *vector, uint64_t row, const char *p, uint32_t len);
} copy_cast_ops;

/* Cast n values of `from` (flat) into the target vector `to` (its data `to_data`) by
 * `how` to leaf `to_leaf`; -1 with err set for a value out of the target's range or
 * bytes that are not UTF-8 for a VARCHAR (naming `column`). */
int copy_cast_values(int how, int to_leaf, const copy_view *from, void *to, void *to_data,
                     const copy_cast_ops *ops, uint64_t n, const char *column, char *err);

/* -- copy_files.c -------------------------------------------------------------------- */

typedef struct {
    char *data, *index;
    dev_t dev;
    ino_t ino;
} copy_tmp_commit;

/* What the files of one COPY statement share. */
typedef struct {
    pthread_mutex_t mu;   /* guards the fields below (files are opened from several threads) */
    copy_lock lock;       /* the target's lock, from bind (V2, an existing directory) or the first
                           * file opened to the statement's end */
    copy_tmp_commit *tmp; /* files committed under a 'tmp_' name with an index */
    size_t ntmp;
    char *root;         /* the COPY's target as written, when the binding knows it, else NULL:
                         * every file must then be inside it (copy_path_inside) */
    int compress_named; /* a compressed file DuckDB named '*.tfrecord' gets '.gz' / '.zz' */
    strlist names;      /* the final names of the statement's files so far (each once) */
    const copy_plan *plan; /* its description goes beside a partitioned target's files
                            * (set by the binding after copy_plan_finish; may be NULL) */
    int description_done;  /* features.json is written or checked */
} copy_target;

/* One file being written. */
typedef struct {
    pthread_mutex_t lock;
    char *final_path, *temp_path;
    char *index_final, *index_temp; /* NULL without INDEX */
    int fd, compression, committed;
    const fsops *fs; /* a routed target's file system (routed.c), else NULL: fd */
    void *h;         /* the temporary file open on it */
    deflater d;
    uint64_t offset; /* uncompressed bytes written: the next record's offset */
    uint64_t written; /* bytes written to the file (compressed): its size once committed */
    tbuf packed, index_text;
} copyfile;

void copy_target_init(copy_target *t, const char *root);
/* Take the target's lock now when the COPY's path (t->root) is an existing local
 * directory: before DuckDB's OVERWRITE empties it (V2 bind); -1 with err set when another
 * writer holds it. */
int copy_target_lock_early(copy_target *t, char *err);
/* The statement is over: indexes follow DuckDB's 'tmp_' moves; the lock is released. */
void copy_target_end(copy_target *t);
/* What a COPY ... TO statement holds in either binding: its options, columns and target. */
typedef struct {
    copy_settings set;  /* the format's own options */
    copy_plan plan;     /* the columns */
    copy_target target; /* the target's path, lock and 'tmp_' files, to the statement's end */
    int row_struct;     /* one STRUCT column: its fields are the features (v1's form) */
} copy_common;
/* Start c for a COPY to `root` (NULL when the API does not say it): the options'
 * defaults, the target, the columns as its description (features.json). */
void copy_common_start(copy_common *c, const char *root);
/* The statement's end: its target (the tmp_ files' indexes, the lock) and columns. */
void copy_common_end(copy_common *c);
/* -1 with err set (naming the rule) when `path` is not `target`, inside it, or DuckDB's
 * 'tmp_<name>' beside a single-file target (checked lexically, '..' resolved). */
int copy_path_inside(const char *target, const char *path, char *err);
/* Start the file DuckDB calls `path` (a hidden temporary file; the target's lock taken);
 * NULL with err set (*io_error 1 when the file system refused: a directory, no space). */
copyfile *copyfile_open(copy_target *t, const copy_settings *s, const char *path, char *err,
                        int *io_error);
/* Write n framed records (their end offsets in `ends`) and their index lines. */
int copyfile_put(copyfile *f, const tbuf *framed, const tbuf *ends, size_t n, char *err);
/* Flush, sync and rename into place with the index; -1 with err set. */
int copyfile_commit(copy_target *t, copyfile *f, char *err);
/* Close; an uncommitted file's temporary files are removed. */
void copyfile_free(copyfile *f);
/* -- what the bindings hand the neutral files ---------------------------------------- */

/* A DuckDB value as the neutral files read it (each binding converts its own values:
 * v1 options.c, V2 tfsql/duckdb_v2/values.c). */
enum { TFV_NULL = 0, TFV_BOOL, TFV_INT, TFV_TEXT, TFV_LIST, TFV_STRUCT, TFV_OTHER };
typedef struct tfval {
    int kind;
    int64_t i;           /* TFV_BOOL (0 / 1) and TFV_INT */
    char *text;          /* a scalar that is not NULL, as VARCHAR (a NUL-terminated copy) */
    int has_nul;         /* TFV_TEXT: 1 when the value holds a NUL byte (text stops there) */
    size_t n;            /* TFV_LIST, TFV_STRUCT: the items */
    struct tfval *items;
    char **names;        /* TFV_STRUCT: the field names */
} tfval;

/* The arguments of a call of tfrecord_scan (tfrecord_schema, ...): the source and the
 * named parameters given (a v1 NULL argument is given with kind TFV_NULL). */
typedef struct {
    tfval source;
    size_t n;
    char **names;
    tfval *values;
} tfargs;

void tfval_free(tfval *v);
void tfargs_free(tfargs *a);
/* Append named argument `name` (copied) with value *v (moved); -1 when out of memory. */
int tfargs_add(tfargs *a, const char *name, tfval *v);
/* The value of named argument `name` (any case), or NULL when it was not given. */
const tfval *tfargs_get(const tfargs *a, const char *name);

/* The DuckDB type of a column, named neutrally: a leaf type in `lists` LISTs, or a MAP of
 * VARCHAR to VARCHAR. */
enum {
    TT_ANY = -1, TT_BIGINT = 0, TT_FLOAT, TT_VARCHAR, TT_BLOB, TT_BOOLEAN, TT_TEXT_MAP, TT_UBIGINT,
    /* the leaves a tfsql writer's description gives (layouts.c's described_column) */
    TT_TINYINT, TT_SMALLINT, TT_INTEGER, TT_UTINYINT, TT_USMALLINT, TT_UINTEGER, TT_DATE,
    TT_DOUBLE, TT_TIME, TT_TIMESTAMP_S, TT_TIMESTAMP_MS, TT_TIMESTAMP, TT_TIMESTAMP_NS,
    TT_TIMESTAMP_TZ, TT_INTERVAL,
    TT_DECIMAL, /* DECIMAL(width, scale) */
    TT_NULL,    /* DuckDB's NULL type: a column no record holds */
    TT_TIME_NS, /* nanoseconds since midnight (DuckDB 1.5 and later; BIGINT before) */
    TT_COUNT
};
#define TT_MAX_INNER 3
/* `leaf` in `lists` LISTs, or (array > 0) in an ARRAY of `array` values, whose values
 * are ARRAYs of inner[0] values (when inner[0] > 0), and so on: DuckDB's BIGINT[3][2]
 * is array 2, inner {3}. A TT_DECIMAL leaf has its width and scale. */
typedef struct tftype {
    int leaf, lists;
    uint64_t array;
    uint64_t inner[TT_MAX_INNER];
    int width, scale;
} tftype;
/* A tftype of leaf `leaf` alone (an initializer). */
#define TFTYPE_OF(leaf) {(leaf), 0, 0, {0, 0, 0}, 0, 0}
/* The SQL spelling of a TT_* leaf (tables.c), e.g. "TIMESTAMP WITH TIME ZONE". */
const char *tt_name(int leaf);
/* The SQL spelling of type t (tables.c): "BIGINT[][]", "DOUBLE[3]"; into buf (cap bytes). */
const char *tftype_text(tftype t, char *buf, size_t cap);

/* A named parameter of tfrecord_scan and the type it is registered with (TT_*). */
typedef struct {
    const char *name;
    int type;
} scan_param;
/* Every named parameter tfrecord_scan takes (the option spec's, then the compatibility
 * ones), ending with a NULL name (option_rules.c). */
const scan_param *scan_parameters(void);

/* A list vector's entries (both APIs lay them out so). */
typedef struct {
    uint64_t offset, length;
} list_entry;

/* A binding's operations on its output vectors: the neutral files fill vectors through
 * them. Validity masks are 64 rows a word, a set bit a valid row. */
typedef struct {
    /* n rows will be written (NULL when the binding needs no notice) */
    int (*set_rows)(void *vec, size_t n);
    void *(*data)(void *vec);
    /* the writable validity mask (every row valid until cleared) */
    uint64_t *(*validity)(void *vec);
    /* row's string (VARCHAR or BLOB); -1 when out of memory */
    int (*set_text)(void *vec, size_t row, const char *p, size_t len);
    /* a LIST's elements, resized to n (and their vector); NULL when out of memory */
    void *(*list_resize)(void *vec, size_t n);
    /* a LIST's elements without resizing, and their count */
    void *(*list_child)(void *vec, size_t *count);
    /* a STRUCT's field i */
    void *(*struct_child)(void *vec, size_t i);
    /* an ARRAY's elements (n of them: rows times its size) */
    void *(*array_child)(void *vec, size_t n);
} vecops;

void set_row_invalid(uint64_t *validity, size_t row);

/* COPY ... FROM's casts (a binding's copy_from.c); weak: a binary without COPY ... FROM
 * has none, and tfbind_free calls it only when it is there. */
struct castplan;
void castplan_free(struct castplan *p) __attribute__((weak));

/* -- resolve.c: the bind of tfrecord_scan and of the functions taking its arguments ---- */
void tfbind_free(void *p);
/* A type name of schema := / hive_types := as (kind, shape, utf8); 0 when the decoder
 * produces it without a cast (BIGINT, FLOAT, VARCHAR, BLOB and lists of them). */
int parse_type_name(const char *text, int *kind, int *shape, int *utf8);
/* Options, files, partitions and columns of the arguments `a` of function `fname` (for
 * messages) run for connection `conn`. NULL with `err` set on failure. */
tfbind *scan_resolve(const tfargs *a, const char *fname, connref conn, uint64_t *cardinality,
                     char *err);
/* scan_resolve for a bind that scans (tfrecord_scan, COPY ... FROM): the connection's
 * reports start over (reports_begin_scan), and a failure is kept as its last error. */
tfbind *scan_bind_resolve_args(const tfargs *a, const char *fname, connref conn,
                               uint64_t *cardinality, char *err);
/* The scan's output columns: data columns, partition (and split) columns, filename. */
int scan_output_count(const tfbind *b);
/* The type of output column c, its name a new string in *name (NULL when out of memory). */
tftype scan_output_tftype(const tfbind *b, int c, char **name);

/* -- option_rules.c ------------------------------------------------------------------- */
/* Read the named arguments into b's options; a NULL or refused value sets err. */
int parse_options(const tfargs *a, tfbind *b, const char *fname, char *err);

/* -- partitions.c --------------------------------------------------------------------- */
/* Hive partition columns of the files (tfsql.partitioning.Partitioning.discover);
 * `hive_types` (may be NULL): the columns the user types. */
int find_partitions(tfbind *b, const tfval *hive_types, char *err);
/* hive_types := {...}: the partition columns it names read as VARCHAR. */
int apply_hive_types(tfbind *b, const tfval *v, const char *fname, char *err);

/* -- pruning.c: predicates on the columns constant within a file ----------------------- */
enum {
    PRED_AND = 1, PRED_OR, PRED_EQ, PRED_NE, PRED_LT, PRED_LE, PRED_GT, PRED_GE, PRED_IN,
    PRED_NOT_IN, PRED_IS_NULL, PRED_NOT_NULL
};
typedef struct tfpred {
    int op;
    int column;         /* the output column compared */
    size_t nconsts;     /* its constants: TFV_INT (a BIGINT column), TFV_TEXT, TFV_NULL */
    tfval *consts;
    size_t nkids;       /* PRED_AND, PRED_OR */
    struct tfpred *kids;
} tfpred;
void tfpred_free(tfpred *p);
/* 1 when output column `column` of b is constant within a file (a partition or split
 * column, the filename column), *is_int when it is BIGINT. */
int prunable_column(const tfbind *b, int column, int *is_int);
/* Whether p is TRUE for file f. */
int tfpred_holds(const tfbind *b, const tfpred *p, const tfile *f);
/* The files b's predicates rule out (1 each; NULL when there are no predicates or no
 * memory: nothing is skipped). */
uint8_t *prune_files(const tfbind *b);

/* -- decimals.c ------------------------------------------------------------------------ */
/* Store the float32 f as a DECIMAL(width, scale) value (1 <= width <= 38, 0 <= scale <=
 * width) at index i of data, as DuckDB lays that width out (int16, int32, int64 or a
 * hugeint): the decimal nearest f, when it converts back to the same float32 (the rule
 * of docs/format.md, section 8); 0, or -1 with nothing stored when there is none (a
 * value beyond the width, a fraction the scale cannot hold, inf or NaN). */
int store_decimal(float f, int width, int scale, void *data, size_t i);
/* The double nearest the DECIMAL(width, scale) value (width up to 76) the float32 f
 * stands for, as store_decimal finds it (a decimal wider than DuckDB's, read as DOUBLE
 * as DuckDB reads Parquet's); 0, or -1 when there is none. */
int decimal_double(float f, int width, int scale, double *out);
/* The float32 written for the DECIMAL(width, scale) value at index i of data (DuckDB's
 * layout, as store_decimal's): the float32 nearest it, into *out; 0 when reading that
 * float32 back as DECIMAL(width, scale) gives the same value (docs/format.md, section 8),
 * else -1 with the value's decimal text ("123456789.12") in value (cap bytes; 48 hold
 * any). */
int decimal_float(const void *data, size_t i, int width, int scale, float *out, char *value,
                  size_t cap);

/* -- ranges.c: the scan's units (a file, or a byte range of a large plain one) ------- */
typedef struct fsplit fsplit;
typedef struct {
    size_t file, part; /* b->files index; the range's number in its file */
    fsplit *split;     /* the file's ranges (NULL: the whole file is the unit) */
} scanunit;

/* -- scanning.c: the parallel scan of files and byte ranges (ranges.c) --------------- */
typedef struct {
    size_t next_unit; /* claimed with an atomic add */
    scanunit *units;  /* planned by scan_plan_units, in file order */
    size_t nunits;
    fsplit *splits;
    size_t nsplits;
    int nproj;
    int *proj;        /* output column index per projected position */
    schema sc;        /* the projected data columns */
    int *dcol;        /* projected position -> index into sc.cols (or -1) */
    uint8_t *skip;    /* files a pushed-down filter rules out (NULL: none) */
    uint64_t total_bytes, read_bytes; /* progress: the files to scan, bytes read (atomic) */
} tfglobal;

/* A thread's scan state. The open file is read through a bounded window (reading.c)
 * and framed one output chunk at a time, right before the chunk is decoded, so its
 * bytes are read from memory once while they are still in the CPU's cache. */
typedef struct {
    int have_file;
    size_t file;
    window fr;
    size_t pos;        /* records of the chunk already emitted */
    slotstate *slots;
    colbuild *cb;
    uint64_t counted;  /* bytes of the open file added to the global read_bytes */
    fsplit *split;     /* the open unit's file ranges (NULL: a whole file), its range */
    size_t part;
    uint64_t unit_end; /* the unit's nominal end: its progress counts up to there */
} tflocal;

/* Plan g's units (after g->skip is set): each file not ruled out, a plain file larger
 * than a range as its ranges (ranges.c); 0, or -1 with err. */
int scan_plan_units(const tfbind *b, tfglobal *g, char *err);
void scan_units_free(tfglobal *g);
/* Range k of s: its nominal start and stop (UINT64_MAX for the last). */
uint64_t range_start(const fsplit *s, size_t k);
uint64_t range_stop(const fsplit *s, size_t k);
/* Where range k's first record starts and that record's index in the file (walking the
 * file's headers when no earlier range said); 0, or -1 with err. */
int range_begin(const tfbind *b, fsplit *s, size_t k, uint64_t *at, size_t *index, char *err);
/* Range k's reader has framed up to the chain position `at` (record `index`): a walk
 * for the range after it may start there. */
void range_progress(fsplit *s, size_t k, uint64_t at, size_t index);
/* A range read to its end: the next range's first record is at `at`, record `index`. */
void range_finished(fsplit *s, uint64_t at, size_t index);

/* The scan of the n output columns `columns` (projection pushdown) of b. */
tfglobal *scan_global_new(const tfbind *b, const size_t *columns, size_t n, char *err);
void scan_global_free(void *g);
tflocal *scan_local_new(void);
/* Count the bytes of the files g scans (those g->skip does not rule out) as its total. */
void scan_count_total(const tfbind *b, tfglobal *g);
/* How far the scan is, 0.0 to 1.0: the bytes of its files read so far (any thread may ask). */
double scan_progress(const tfglobal *g);
void scan_local_free(void *l);
/* Fill the next rows (at most cap) into vecs[i], the vector of projected column i; 1
 * with *rows set, 0 when the scan is done, -1 with err. */
int scan_next(const tfbind *b, tfglobal *g, tflocal *l, const vecops *o, void *const *vecs,
              size_t cap, size_t *rows, char *err);
/* err (the scan's failure) as DuckDB shows it, kept for tfrecord_last_error(). */
void scan_failed_message(const tfbind *b, const char *fname, char *err);

/* -- dataset_rows.c: tfrecord_schema(...) and tfrecord_metadata(...) ------------------------ */
typedef struct {
    const char *name;
    tftype type;
} tfcolumn;
/* Their columns, ending with a NULL name. */
extern const tfcolumn schema_columns[], metadata_columns[];
/* Their bind: the resolved scan, and tfrecord_metadata's count := true. */
typedef struct {
    tfbind *b;
    int count;
    int metadata; /* tfrecord_metadata (else tfrecord_schema) */
} metabind;
void metabind_free(void *p);
/* The next rows (at most cap, from *next, which moves on) into vecs[i], column i; 0 with
 * *rows set, -1 with err. tfrecord_metadata's count := true walks files without an index. */
int schema_rows(const tfbind *b, size_t *next, const vecops *o, void *const *vecs, size_t cap,
                size_t *rows, char *err);
int metadata_rows(const tfbind *b, int count, size_t *next, const vecops *o, void *const *vecs,
                  size_t cap, size_t *rows, char *err);
/* The columns of tfrecord_last_error() and tfrecord_rejects(), and their next rows. */
extern const tfcolumn last_error_columns[], rejects_columns[];
int report_rows(const snapshot *s, int rejects, size_t *next, const vecops *o, void *const *vecs,
                size_t cap, size_t *rows);

/* -- metadata (tables.c): walk a file's headers ------------------------------------------- */
/* Count the records of file f by walking its headers (inflating it as `comp` says),
 * through a bounded window, stopping once `stop` are counted (-1: none); -1 with `err`
 * set (the scan's own wording) when it cannot be read or is damaged. */
long long walked_count(const tfbind *b, const tfile *f, int comp, long long stop, char *err);
/* The record count an index sidecar gives for `path` (size `size`), or -1 when there is
 * none or it does not match the file. */
long long indexed_count(const char *path, int64_t size);
/* The index sidecar of `path` (tfsql_index_sidecar_path): a new string, NULL when out of
 * memory. */
char *index_sidecar(const char *path);
/* Whether the replacement scan reads table `name` (FROM 'x.tfrecord') as TFRecord. */
int is_tfrecord_name(const char *name);

#endif /* TFSQL_EXT_COMMON_H */
