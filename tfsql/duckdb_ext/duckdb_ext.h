/*
 * tfsql/duckdb_ext/duckdb_ext.h -- declarations shared by the DuckDB extension's
 * files (private to tfsql/duckdb_ext/): its structs (files, binds, windows) and the
 * functions one file calls in another.
 *
 * The extension binds the C core (tfsql/core/tfsql_core.h) to DuckDB's stable C
 * extension API: compiled against the C API v1.5.6 headers, it declares v1.2.0, so one
 * file loads in DuckDB 1.2 and later, and uses the v1.5.6 functions (COPY) only on
 * engines that give them (api_version.c). Files:
 *
 *   strings.c      small growable helpers
 *   reading.c      the core's record reader (tfsql/core/reader.c) over pread, each read
 *                  checked for changes; libz loaded at run time; its damage as errors
 *                  or, under on_corrupt := 'skip', reported skips
 *   discovery.c    listing paths, directories and globs; which entries are data, links,
 *                  FIFOs and crashed commits' intent records are the core's rules
 *   partitions.c   hive columns (found, unescaped and typed by the core's rules)
 *   inference.c    the inference sample read from the files, handed to the core's
 *                  inference (tfsql/core/infer.c); column names; the inferred-schema cache
 *   layouts.c      the split column of TFDS / TFX layouts (detected by the core)
 *   options.c      parameters -> options (the table is generated from the option spec:
 *                  options_gen.h, by `python -m tfsql.option_header --write`)
 *   bind.c         options, files, partitions, columns -> the bind result
 *   scan.c         parallel per-file scan, projection, decoded buffers -> vectors
 *   metadata.c     tfrecord_schema(...) and tfrecord_metadata(...)
 *   deflate.c      gzip / zlib streams for writing, through the run-time libz
 *   copy_to.c      COPY ... TO ... (FORMAT tfrecord) (DuckDB >= 1.5.6)
 *   copy_lock.c    its target lock: tfsql/locking.py's protocol (flock '<target>/_tfsql.lock')
 *   copy_from.c    COPY t FROM ... (FORMAT tfrecord) (DuckDB >= 1.5.6)
 *   api_version.c  the C API table: v1.2.0, and v1.5.6 on engines that have it
 *   messages.c     data errors as fields (tferror), worded from the templates generated
 *                  from tfsql/messages.py (messages_gen.h)
 *   reports.c      each connection's last data error and skipped byte ranges, and the
 *                  table functions tfrecord_last_error() and tfrecord_rejects()
 *   entry.c        the entry point: function registration, replacement scan
 *
 * The rules are those of the Python reader, so `tfrecord_scan` gives the same columns,
 * types and values as `tfsql.read_tfrecord`; tests/integration/test_duckdb_extension*.py
 * compare the two.
 */
#ifndef TFSQL_DUCKDB_EXT_H
#define TFSQL_DUCKDB_EXT_H

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

#define DUCKDB_EXTENSION_NAME tfsql
#include "duckdb_extension.h"
/* The API table is defined once, by the entry point (entry.c); every other file uses it. */
DUCKDB_EXTENSION_EXTERN

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
    idx_t id;
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
    /* data columns (the decoder's schema) and their output types */
    schema sc;
    int *utf8;
    duckdb_type *leaf; /* per data column, the DuckDB leaf type a description gives where it
                        * is not the kind's own (0: the kind's); NULL without one */
    idx_t *array_size; /* per data column, a described fixed size (an ARRAY column, its
                        * values a list of exactly that many); 0 or NULL: a LIST */
    int64_t *scale;    /* per data column, what a stored integer is multiplied by (> 1) or
                        * floor-divided by (< -1) for its leaf (a unit); NULL: as stored */
    int ndata;
    int64_t total_bytes;
    /* COPY ... FROM: the casts to the table's columns (copy_from.c), else NULL */
    struct castplan *cast;
    /* the connection the scan runs for (its errors and skipped ranges: reports.c) */
    connref conn;
} tfbind;

enum { LAYOUT_NONE = 0, LAYOUT_TFDS = 1, LAYOUT_TFX = 2 };
#define SPLIT_COLUMN "split"

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

/* -- reading.c ---------------------------------------------------------------- */

/* One open file, checked for changes after every read (tfsql.file_guard). */
typedef struct {
    int fd;
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

/* The system's zlib (libz.so.1), opened once at run time; NULL when there is none. */
void *zlib_library(void);
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

/* -- reports.c ------------------------------------------------------------------- */

connref connection_of(duckdb_bind_info info);
/* A new database loads the extension: the functions registered next belong to it. */
void reports_new_database(void);
/* Give table function f its fninfo (`name`, the database being loaded). */
void set_function_info(duckdb_table_function f, const char *name);
/* A tfrecord_scan bind: forget the connection's last error and, for a scan that skips
 * damage, its skipped ranges (each statement lists its own). */
void reports_begin_scan(connref c, int skipping);
/* The scan failed: keep this thread's pending data error (or the message alone) as the
 * connection's last error. */
void reports_scan_failed(connref c, const char *message);
/* A damaged stretch skipped under on_corrupt := 'skip'. */
void reports_skipped(connref c, const tferror *e);
/* tfrecord_last_error() and tfrecord_rejects(). */
int register_report_functions(duckdb_connection con);

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

/* Components of `path` below `root` (root "" or "/" means the whole path). */
const char *relative_to(const char *path, const char *root);

/* One source item -> files (sorted). 1 when nothing matched (err set), -1 on error. */
int list_item(const char *item, int glob, filelist *files, char *err);

/* -- partitions.c ------------------------------------------------------------ */
/* Hive partition columns of the files (tfsql.partitioning.Partitioning.discover). */
int find_partitions(tfbind *b, duckdb_value hive_types, char *err);
/* hive_types := {...}: the partition columns it names read as VARCHAR (partitions.c). */
int apply_hive_types(tfbind *b, duckdb_value v, const char *fname, char *err);

/* -- bind.c ------------------------------------------------------------------ */
void tf_bind(duckdb_bind_info info);

/* -- inference.c ------------------------------------------------------------- */

/* Infer the data columns from the sampled files (the core's inference). */
int infer_columns(tfbind *b, char *err, idx_t *cardinality);

/* missing_columns := 'raise': schema := columns no sampled record holds are an error. */
int check_missing_columns(const tfbind *b, char *err);

int context_column(const tfbind *b, const uint8_t *name, size_t len);

/* The name of data column c (a new string). */
char *column_name(const tfbind *b, int c);

int is_column(const tfbind *b, const char *name);


uint64_t infer_key(const tfbind *b);

int infer_cache_get(tfbind *b, uint64_t key, idx_t *cardinality);

void infer_cache_put(const tfbind *b, uint64_t key, idx_t cardinality);

/* -- layouts.c --------------------------------------------------------------- */
/* Leave out the .json / .txt files of listed directories that hold dataset_info.json. */
int drop_tfds_metadata(tfbind *b);

/* tfsql.layouts.detect_layout over the listed files: b->layout, b->splits, b->tfds_dir. */
int detect_layout(tfbind *b);
/* TFDS features.json (layouts.c): read it (0, or 1 when there is none) and its types
 * over the inferred columns (whether it describes every feature is the core's
 * tfsql_tfds_features_complete). */
int read_tfds_features(const tfbind *b, tfsql_tfds_feature **out, size_t *count);
int read_written_description(const tfbind *b, tfsql_column **out, size_t *count);
int apply_written_description(tfbind *b, const tfsql_column *cols, size_t n, char *err);
int apply_written_partitions(tfbind *b, const tfsql_column *cols, size_t n);
/* The DuckDB type of data column c: its kind's, or the description's leaf (b->leaf). */
duckdb_logical_type data_column_type(const tfbind *b, int c);
int apply_tfds_features(tfbind *b, const tfsql_tfds_feature *features, size_t n,
                        const char *fname, char *err);

/* Append the split column after the hive partition columns (tfsql.layouts.Layout
 * .add_split_column): its values move from b->splits to each file's parts. */
int add_split_column(tfbind *b);

/* -- options.c --------------------------------------------------------------- */
char *value_text(duckdb_value v);

duckdb_type value_type_id(duckdb_value v);

/* The options' defaults (from the option spec). */
void set_default_options(tfbind *b);

/* Register the named parameters of the option spec's native options. */
void add_named_parameters(duckdb_table_function f);

/* Read the named parameters into b's options; a NULL or refused value sets err. */
int parse_options(duckdb_bind_info info, tfbind *b, const char *fname, char *err);

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

/* -- scan.c ------------------------------------------------------------------ */
void tf_init(duckdb_init_info info);

void tf_local_init(duckdb_init_info info);

void tf_scan(duckdb_function_info info, duckdb_data_chunk output);

/* -- bind.c (shared) ---------------------------------------------------------- */
/* The scan's bind without its result columns: options, files, partitions and columns
 * of tfrecord_scan(...)'s arguments in `info`, as function `fname` (for messages). NULL
 * with `err` set on failure. tfrecord_scan, tfrecord_schema, tfrecord_metadata and
 * COPY ... FROM resolve their arguments here. */
tfbind *scan_resolve(duckdb_bind_info info, const char *fname, idx_t *cardinality_out,
                     char *err);

/* scan_resolve for a bind that scans (tfrecord_scan, COPY ... FROM): the connection's
 * reports start over (reports_begin_scan), and a failure is kept as its last error. */
tfbind *scan_bind_resolve(duckdb_bind_info info, const char *fname, idx_t *cardinality_out,
                          char *err);

void tfbind_free(void *p);

duckdb_logical_type column_type(int kind, int shape, int utf8);
/* A type name of schema := / hive_types := as (kind, shape, utf8); 0 when the decoder
 * produces it without a cast (BIGINT, FLOAT, VARCHAR, BLOB and lists of them). */
int parse_type_name(const char *text, int *kind, int *shape, int *utf8);


/* -- entry.c (shared) ---------------------------------------------------------- */
void add_scan_parameters(duckdb_table_function f);
/* A table function `name` (its fninfo set) with these callbacks. */
duckdb_table_function new_table_function(const char *name, duckdb_table_function_bind_t bind,
                                          duckdb_table_function_init_t init,
                                          duckdb_table_function_t scan);
/* Register f on con and destroy it; 0, or -1 when DuckDB refuses it. */
int register_table_function(duckdb_connection con, duckdb_table_function f);

/* -- metadata.c ------------------------------------------------------------------ */
/* The scan's output columns: data columns, partition (and split) columns, filename. */
int scan_output_count(const tfbind *b);

/* The type of output column c (a new type), its name a new string in *name. */
duckdb_logical_type scan_output_type(const tfbind *b, int c, char **name);

/* Count the records of file f by walking its headers (inflating it as `comp` says),
 * through a bounded window, stopping once `stop` are counted (-1: none); -1 with `err`
 * set (the scan's own wording) when it cannot be read or is damaged. */
long long walked_count(const tfbind *b, const tfile *f, int comp, long long stop, char *err);

/* -- copy_from.c --------------------------------------------------------------- */
struct castplan;
void castplan_free(struct castplan *p);

/* The table function DuckDB runs for COPY ... FROM (to be destroyed by the caller). */
duckdb_table_function copy_from_function(void);

/* -- api_version.c: the C API function table, filled for the engine that loads us ----- */

/* Fill the function table: the v1.2.0 part always, everything up to v1.5.6 (COPY
 * functions, result column types of a COPY FROM bind) only when the engine is at least
 * DuckDB 1.5.6. 0, or -1 (with `err` set) when the engine gives no v1.2.0 table. */
int capi_load(duckdb_extension_info info, struct duckdb_extension_access *access, char *err);
/* 1 when the engine's C API has the v1.5.6 functions (after capi_load). */
int capi_has_copy(void);
/* The same, for the other v1.5.6 functions (a table function's client context and its
 * connection id: reports.c). */
int capi_has_v156(void);
/* The engine's version as reported ("v2.0.1"). */
const char *capi_engine_version(void);

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

/* -- copy_to.c ----------------------------------------------------------------------- */

/* BOOLEAN and the integer types (int64_list features). */
int integer_type(duckdb_type t);

/* -- copy_lock.c --------------------------------------------------------------------- */

/* A native COPY's hold on its target's lock (tfsql.locking). */
typedef struct {
    int fd;       /* the locked file, -1 when none is held */
    int unlocked; /* the mount has no flock: written unlocked */
    char *path;   /* '<target>/_tfsql.lock' */
    dev_t dev;
    ino_t ino;
} copy_lock;

/* The target of the file DuckDB names `path`: its directory without PARTITION_BY's
 * key=value directories ('out/p=0/data_0.' -> 'out'; 'x.tfrecord' -> '.'). New string. */
char *copy_target_of(const char *path);
/* Take the lock of `target` unless `l` holds it; -1 with err set when another writer holds
 * it (no waiting: see copy_lock.c) or its file cannot be made. */
int copy_lock_take(copy_lock *l, const char *target, char *err);
/* -1 with err set when the lock file `l` holds is no longer the one at its path (another
 * writer's OVERWRITE removed it): `final_path` must then not be committed. */
int copy_lock_check(const copy_lock *l, const char *final_path, char *err);
/* Remove the lock file (while held) and release it. */
void copy_lock_release(copy_lock *l);

/* -- registration (copy_to.c, metadata.c) ------------------------------------------------------------------- */

/* COPY ... TO / FROM (FORMAT tfrecord); on engines without copy functions, nothing. */
int register_copy(duckdb_connection con);
/* tfrecord_schema(...) and tfrecord_metadata(...). */
int register_dataset_functions(duckdb_connection con);

#endif /* TFSQL_DUCKDB_EXT_H */
