/*
 * tfsql/duckdb_ext/duckdb_ext.h -- declarations shared by the DuckDB extension's
 * files (private to tfsql/duckdb_ext/): its structs (files, binds, inflaters) and the
 * functions one file calls in another.
 *
 * The extension binds the C core (tfsql/core/tfsql_core.h) to DuckDB's stable C
 * extension API (C API v1.2.0, so one file loads in DuckDB 1.2 and later). Files:
 *
 *   strings.c      small growable helpers
 *   inflate.c      gzip / zlib through the system's libz, loaded at run time
 *   files.c        reading a file whole (decompressed), compression detection
 *   discovery.c    paths, directories, globs, hidden-file rules (tfsql.discovery)
 *   partitions.c   hive key=value directories and their types (tfsql.partitioning)
 *   inference.c    the sampled summary -> columns (tfsql.inference / tfsql.schema)
 *   layouts.c      TFDS / TFX layouts and the split column (tfsql.layouts)
 *   options.c      parameters -> options
 *   bind.c         options, files, partitions, columns -> the bind result
 *   scan.c         parallel per-file scan, projection, decoded buffers -> vectors
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
#include <fnmatch.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tfsql_core.h"

#define DUCKDB_EXTENSION_NAME tfsql
#include "duckdb_extension.h"
/* The API table is defined once, by the entry point (entry.c); every other file uses it. */
DUCKDB_EXTENSION_EXTERN

#define ERRLEN 4096
/* tfsql.inference.DEFAULT_INFER_BYTES: a file's inference sample ends once its records
 * hold this many bytes (unless every record is sampled). */
#define INFER_BYTES (4LL << 20)
/* tfsql.schema.FEATURE_LIST_SUFFIX: a feature list named like a context column is read
 * as column N__feature_list. */
#define FEATURE_LIST_SUFFIX "__feature_list"

typedef struct {
    char **items;
    size_t n, cap;
} strlist;

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
} zstream;

enum { COMP_NONE = 0, COMP_GZIP = 1, COMP_ZLIB = 2, COMP_INFER = 3 };

/* A gzip (members concatenated; trailing zero padding ignored) or zlib stream being
 * inflated, a step at a time: inference inflates only the start of a file. The z_stream
 * must stay where it is while active (zlib keeps a pointer back to it). */
typedef struct {
    const uint8_t *in;
    size_t n, pos;
    int comp, active, finished, members;
    zstream z;
} inflater;

/* A file's bytes, decompressed: mapped when plain, else inflated into `owned`. */
typedef struct {
    const uint8_t *data;
    size_t size;
    void *map;
    size_t map_size;
    tbuf owned;
} filebytes;

typedef struct {
    char *path;    /* absolute, normalised */
    char *root;    /* the directory hive directories are parsed below; NULL when named */
    int64_t size;
    char **parts;  /* raw (unescaped) partition values, NULL for null; one per key */
} tfile;

typedef struct {
    tfile *items;
    size_t n, cap;
} filelist;

enum { HIVE_AUTO = -1, HIVE_OFF = 0, HIVE_ON = 1 };

typedef struct {
    /* options */
    int record_type, compression, verify, hive, lists_always, skip_corrupt, glob;
    long long infer_sample, infer_files;
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
    int ndata;
    int64_t total_bytes;
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

int cmp_str(const void *a, const void *b);

int ends_with_ci(const char *s, const char *suffix);

/* -- inflate.c --------------------------------------------------------------- */
void inflater_end(inflater *f);

/* Inflate into `out` until it holds at least `want` bytes or the stream ends
 * (f->finished). */
int inflater_run(inflater *f, tbuf *out, size_t want, char *err);

int inflater_start(inflater *f, const uint8_t *in, size_t n, int comp, char *err);

/* -- files.c ----------------------------------------------------------------- */
void filebytes_free(filebytes *f);

/* Open `path` (compression `comp`, or COMP_INFER). Plain bytes are mapped. Compressed
 * ones are inflated whole, or, when `inf` is given, not yet: the caller inflates them
 * with inflater_run(inf, &f->owned, ...) and file_inflated(f), then inflater_end. */
int file_open(const char *path, int comp, filebytes *f, inflater *inf, char *err);

/* After inflater_run: the bytes inflated so far are the file's bytes. */
void file_inflated(filebytes *f);

/* -- discovery.c ------------------------------------------------------------- */
void filelist_free(filelist *l, int nparts);

int has_glob_magic(const char *s);

/* Components of `path` below `root` (root "" or "/" means the whole path). */
const char *relative_to(const char *path, const char *root);

/* One source item -> files (sorted). 1 when nothing matched (err set), -1 on error. */
int list_item(const char *item, int glob, filelist *files, char *err);

/* -- partitions.c ------------------------------------------------------------ */
/* Hive partition columns of the files (tfsql.partitioning.Partitioning.discover). */
int find_partitions(tfbind *b, char *err);

/* -- bind.c ------------------------------------------------------------------ */
void tf_bind(duckdb_bind_info info);

/* -- inference.c ------------------------------------------------------------- */
void frame_error(char *err, const char *path, int status, size_t index, size_t at,
                 size_t size);

/* Infer the data columns from the sampled files (tfsql.inference + schema rules). */
int infer_columns(tfbind *b, char *err, idx_t *cardinality);

int context_column(const tfbind *b, const uint8_t *name, size_t len);

/* The name of data column c (a new string). */
char *column_name(const tfbind *b, int c);

int is_column(const tfbind *b, const char *name);

/* tfsql.schema._name_columns over inferred columns: a renamed feature list must not
 * take another column's name, and a feature list literally named N__feature_list
 * beside a context column N is ambiguous. */
int check_inferred_names(const tfbind *b, char *err);

uint64_t infer_key(const tfbind *b);

int infer_cache_get(tfbind *b, uint64_t key, idx_t *cardinality);

void infer_cache_put(const tfbind *b, uint64_t key, idx_t cardinality);

/* -- layouts.c --------------------------------------------------------------- */
/* Leave out the .json / .txt files of listed directories that hold dataset_info.json. */
int drop_tfds_metadata(tfbind *b);

/* tfsql.layouts.detect_layout over the listed files: b->layout, b->splits, b->tfds_dir. */
int detect_layout(tfbind *b);

/* A TFDS directory's features.json types the columns (tfsql.tfds), which the extension
 * does not read: such a scan, unless it names its columns, goes through tfsql.connect(). */
int refuse_tfds_features(const tfbind *b, const char *fname, char *err);

/* Append the split column after the hive partition columns (tfsql.layouts.Layout
 * .add_split_column): its values move from b->splits to each file's parts. */
int add_split_column(tfbind *b);

/* -- options.c --------------------------------------------------------------- */
char *value_text(duckdb_value v);

duckdb_type value_type_id(duckdb_value v);

int parse_options(duckdb_bind_info info, tfbind *b, const char *fname, char *err);

/* -- scan.c ------------------------------------------------------------------ */
void tf_init(duckdb_init_info info);

void tf_local_init(duckdb_init_info info);

void tf_scan(duckdb_function_info info, duckdb_data_chunk output);

#endif /* TFSQL_DUCKDB_EXT_H */
