/*
 * tfsql/duckdb_ext/options_gen.h -- GENERATED from tfsql/options.py by
 * `python -m tfsql.option_header --write`; do not edit (tests/unit/test_option_header.py
 * fails when it differs from what the spec generates).
 *
 * The named parameters of tfrecord_scan / read_tfrecord: the SQL spellings of the reading
 * options the extension implements (tfsql.options.NATIVE_READ_OPTIONS), their vocabularies,
 * error wording and defaults.
 */
#ifndef TFSQL_OPTIONS_GEN_H
#define TFSQL_OPTIONS_GEN_H

#include <stddef.h>

/* A vocabulary entry: a name (lower case; matched in any case, spaces trimmed) and its code. */
typedef struct {
    const char *word;
    int code;
} tfsql_word;

/* The options the extension implements. */
enum {
    TFSQL_OPTION_SCHEMA,
    TFSQL_OPTION_RECORD_TYPE,
    TFSQL_OPTION_COMPRESSION,
    TFSQL_OPTION_VERIFY_CHECKSUMS,
    TFSQL_OPTION_ON_CORRUPT,
    TFSQL_OPTION_HIVE_PARTITIONING,
    TFSQL_OPTION_HIVE_SCHEMA,
    TFSQL_OPTION_INCLUDE_FILE_PATHS,
    TFSQL_OPTION_INFER_SAMPLE,
    TFSQL_OPTION_INFER_FILES,
    TFSQL_OPTION_INFER_BYTES,
    TFSQL_OPTION_LISTS,
    TFSQL_OPTION_MISSING_COLUMNS,
    TFSQL_OPTION_GLOB,
    TFSQL_OPTION_BATCH_BYTES,
    TFSQL_OPTION_MAX_RECORD_BYTES,
    TFSQL_OPTION_COUNT,
};

/* What a parameter's value is (it decides the parameter's DuckDB type). */
enum {
    TFSQL_VALUE_BOOL,
    TFSQL_VALUE_COUNT,
    TFSQL_VALUE_COUNT_OR_ALL,
    TFSQL_VALUE_CHOICE,
    TFSQL_VALUE_NAME,
    TFSQL_VALUE_BOOL_OR_NAME,
    TFSQL_VALUE_TYPES,
    TFSQL_VALUE_COLUMNS,
    TFSQL_VALUE_SIZE,
    TFSQL_VALUE_FLAG,
    TFSQL_VALUE_LEVEL,
    TFSQL_VALUE_TEXT,
};

/* record_type: what the records hold: tf.train.Example, SequenceExample, or raw bytes (one binary column) */
enum {
    TFSQL_RECORD_TYPE_EXAMPLE = 0,
    TFSQL_RECORD_TYPE_SEQUENCE_EXAMPLE = 1,
    TFSQL_RECORD_TYPE_BYTES = 2,
};
static const tfsql_word tfsql_record_type_words[] = {
    {"example", TFSQL_RECORD_TYPE_EXAMPLE},
    {"sequence_example", TFSQL_RECORD_TYPE_SEQUENCE_EXAMPLE},
    {"sequenceexample", TFSQL_RECORD_TYPE_SEQUENCE_EXAMPLE},
    {"bytes", TFSQL_RECORD_TYPE_BYTES},
    {"bytearray", TFSQL_RECORD_TYPE_BYTES},
    {"byte_array", TFSQL_RECORD_TYPE_BYTES},
    {"raw", TFSQL_RECORD_TYPE_BYTES},
    {NULL, 0},
};
#define TFSQL_RECORD_TYPE_WHAT "'example', 'sequence_example' or 'bytes' (Spark-TFRecord's 'Example', 'SequenceExample', 'ByteArray' work too)"
#define TFSQL_RECORD_TYPE_UNKNOWN_WORDING 1

/* compression: compression of the files; 'infer' detects gzip and zlib per file from their first bytes */
enum {
    TFSQL_COMPRESSION_INFER = 0,
    TFSQL_COMPRESSION_NONE = 1,
    TFSQL_COMPRESSION_GZIP = 2,
    TFSQL_COMPRESSION_ZLIB = 3,
};
static const tfsql_word tfsql_compression_words[] = {
    {"infer", TFSQL_COMPRESSION_INFER},
    {"auto", TFSQL_COMPRESSION_INFER},
    {"none", TFSQL_COMPRESSION_NONE},
    {"uncompressed", TFSQL_COMPRESSION_NONE},
    {"gzip", TFSQL_COMPRESSION_GZIP},
    {"gz", TFSQL_COMPRESSION_GZIP},
    {"zlib", TFSQL_COMPRESSION_ZLIB},
    {"deflate", TFSQL_COMPRESSION_ZLIB},
    {"org.apache.hadoop.io.compress.gzipcodec", TFSQL_COMPRESSION_GZIP},
    {"org.apache.hadoop.io.compress.defaultcodec", TFSQL_COMPRESSION_ZLIB},
    {"org.apache.hadoop.io.compress.deflatecodec", TFSQL_COMPRESSION_ZLIB},
    {NULL, 0},
};
#define TFSQL_COMPRESSION_WHAT "'infer' (alias 'auto'), None, 'gzip' or 'zlib' (alias 'deflate')"
#define TFSQL_COMPRESSION_UNKNOWN_WORDING 1

/* on_corrupt: 'raise' stops at a corrupt record; 'skip' drops it with a warning */
enum {
    TFSQL_ON_CORRUPT_RAISE = 0,
    TFSQL_ON_CORRUPT_SKIP = 1,
};
static const tfsql_word tfsql_on_corrupt_words[] = {
    {"raise", TFSQL_ON_CORRUPT_RAISE},
    {"skip", TFSQL_ON_CORRUPT_SKIP},
    {NULL, 0},
};
#define TFSQL_ON_CORRUPT_WHAT "'raise' or 'skip'"
#define TFSQL_ON_CORRUPT_UNKNOWN_WORDING 0

/* lists: 'always' infers list columns even where every record holds one value */
enum {
    TFSQL_LISTS_AUTO = 0,
    TFSQL_LISTS_ALWAYS = 1,
};
static const tfsql_word tfsql_lists_words[] = {
    {"auto", TFSQL_LISTS_AUTO},
    {"always", TFSQL_LISTS_ALWAYS},
    {NULL, 0},
};
#define TFSQL_LISTS_WHAT "'auto' or 'always'"
#define TFSQL_LISTS_UNKNOWN_WORDING 0

/* missing_columns: a schema= column no sampled record holds: 'raise' names it, 'insert' reads it as null */
enum {
    TFSQL_MISSING_COLUMNS_RAISE = 0,
    TFSQL_MISSING_COLUMNS_INSERT = 1,
};
static const tfsql_word tfsql_missing_columns_words[] = {
    {"raise", TFSQL_MISSING_COLUMNS_RAISE},
    {"insert", TFSQL_MISSING_COLUMNS_INSERT},
    {NULL, 0},
};
#define TFSQL_MISSING_COLUMNS_WHAT "'insert' or 'raise'"
#define TFSQL_MISSING_COLUMNS_UNKNOWN_WORDING 0

/* Defaults (-1: None, that is all / auto). */
#define TFSQL_DEFAULT_RECORD_TYPE TFSQL_RECORD_TYPE_EXAMPLE
#define TFSQL_DEFAULT_COMPRESSION TFSQL_COMPRESSION_INFER
#define TFSQL_DEFAULT_VERIFY_CHECKSUMS 1
#define TFSQL_DEFAULT_ON_CORRUPT TFSQL_ON_CORRUPT_RAISE
#define TFSQL_DEFAULT_HIVE_PARTITIONING -1
#define TFSQL_DEFAULT_INFER_SAMPLE 1000
#define TFSQL_DEFAULT_INFER_FILES 16
#define TFSQL_DEFAULT_INFER_BYTES 4194304
#define TFSQL_DEFAULT_LISTS TFSQL_LISTS_AUTO
#define TFSQL_DEFAULT_MISSING_COLUMNS TFSQL_MISSING_COLUMNS_RAISE
#define TFSQL_DEFAULT_GLOB 1
#define TFSQL_DEFAULT_BATCH_BYTES 16777216
#define TFSQL_DEFAULT_MAX_RECORD_BYTES 2147483648

/* One named parameter: a spelling of an option. A boolean spelling of a choice maps true
 * and false to the choice's codes (-1: not mapped); a boolean-or-name one maps true to
 * `true_text`; `words` is the vocabulary of a choice. */
typedef struct {
    const char *name;
    int option;
    int value;
    const tfsql_word *words;
    const char *what;
    int unknown_wording;
    int if_true, if_false;
    const char *true_text;
} tfsql_param;

static const tfsql_param tfsql_params[] = {
    {"schema", TFSQL_OPTION_SCHEMA, TFSQL_VALUE_TYPES, NULL, NULL, 0, -1, -1, NULL},
    {"columns", TFSQL_OPTION_SCHEMA, TFSQL_VALUE_TYPES, NULL, NULL, 0, -1, -1, NULL},
    {"record_type", TFSQL_OPTION_RECORD_TYPE, TFSQL_VALUE_CHOICE, tfsql_record_type_words, TFSQL_RECORD_TYPE_WHAT, TFSQL_RECORD_TYPE_UNKNOWN_WORDING, -1, -1, NULL},
    {"compression", TFSQL_OPTION_COMPRESSION, TFSQL_VALUE_CHOICE, tfsql_compression_words, TFSQL_COMPRESSION_WHAT, TFSQL_COMPRESSION_UNKNOWN_WORDING, -1, -1, NULL},
    {"verify_checksums", TFSQL_OPTION_VERIFY_CHECKSUMS, TFSQL_VALUE_BOOL, NULL, NULL, 0, -1, -1, NULL},
    {"on_corrupt", TFSQL_OPTION_ON_CORRUPT, TFSQL_VALUE_CHOICE, tfsql_on_corrupt_words, TFSQL_ON_CORRUPT_WHAT, TFSQL_ON_CORRUPT_UNKNOWN_WORDING, -1, -1, NULL},
    {"ignore_errors", TFSQL_OPTION_ON_CORRUPT, TFSQL_VALUE_BOOL, tfsql_on_corrupt_words, TFSQL_ON_CORRUPT_WHAT, TFSQL_ON_CORRUPT_UNKNOWN_WORDING, TFSQL_ON_CORRUPT_SKIP, TFSQL_ON_CORRUPT_RAISE, NULL},
    {"hive_partitioning", TFSQL_OPTION_HIVE_PARTITIONING, TFSQL_VALUE_BOOL, NULL, NULL, 0, -1, -1, NULL},
    {"hive_types", TFSQL_OPTION_HIVE_SCHEMA, TFSQL_VALUE_TYPES, NULL, NULL, 0, -1, -1, NULL},
    {"filename", TFSQL_OPTION_INCLUDE_FILE_PATHS, TFSQL_VALUE_BOOL_OR_NAME, NULL, NULL, 0, -1, -1, "filename"},
    {"infer_sample", TFSQL_OPTION_INFER_SAMPLE, TFSQL_VALUE_COUNT_OR_ALL, NULL, NULL, 0, -1, -1, NULL},
    {"sample_size", TFSQL_OPTION_INFER_SAMPLE, TFSQL_VALUE_COUNT_OR_ALL, NULL, NULL, 0, -1, -1, NULL},
    {"infer_files", TFSQL_OPTION_INFER_FILES, TFSQL_VALUE_COUNT_OR_ALL, NULL, NULL, 0, -1, -1, NULL},
    {"infer_bytes", TFSQL_OPTION_INFER_BYTES, TFSQL_VALUE_COUNT_OR_ALL, NULL, NULL, 0, -1, -1, NULL},
    {"lists", TFSQL_OPTION_LISTS, TFSQL_VALUE_CHOICE, tfsql_lists_words, TFSQL_LISTS_WHAT, TFSQL_LISTS_UNKNOWN_WORDING, -1, -1, NULL},
    {"missing_columns", TFSQL_OPTION_MISSING_COLUMNS, TFSQL_VALUE_CHOICE, tfsql_missing_columns_words, TFSQL_MISSING_COLUMNS_WHAT, TFSQL_MISSING_COLUMNS_UNKNOWN_WORDING, -1, -1, NULL},
    {"glob", TFSQL_OPTION_GLOB, TFSQL_VALUE_BOOL, NULL, NULL, 0, -1, -1, NULL},
    {"batch_bytes", TFSQL_OPTION_BATCH_BYTES, TFSQL_VALUE_COUNT, NULL, NULL, 0, -1, -1, NULL},
    {"max_record_bytes", TFSQL_OPTION_MAX_RECORD_BYTES, TFSQL_VALUE_COUNT, NULL, NULL, 0, -1, -1, NULL},
    {NULL, 0, 0, NULL, NULL, 0, -1, -1, NULL},
};

/* COPY ... TO ... (FORMAT tfrecord): the writing options the extension reads
 * (tfsql.options.NATIVE_COPY_OPTIONS). */
enum {
    TFSQL_COPY_OPTION_RECORD_TYPE,
    TFSQL_COPY_OPTION_COMPRESSION,
    TFSQL_COPY_OPTION_COMPRESSION_LEVEL,
    TFSQL_COPY_OPTION_INDEX,
};

#define TFSQL_COPY_RECORD_TYPE_CHOICES "example, sequence_example, bytes"

/* compression: gzip or zlib stream compression (files get .gz / .zz) */
enum {
    TFSQL_COPY_COMPRESSION_NONE = 0,
    TFSQL_COPY_COMPRESSION_GZIP = 1,
    TFSQL_COPY_COMPRESSION_ZLIB = 2,
    TFSQL_COPY_COMPRESSION_AUTO = 3,
};
static const tfsql_word tfsql_copy_compression_words[] = {
    {"none", TFSQL_COPY_COMPRESSION_NONE},
    {"uncompressed", TFSQL_COPY_COMPRESSION_NONE},
    {"gzip", TFSQL_COPY_COMPRESSION_GZIP},
    {"gz", TFSQL_COPY_COMPRESSION_GZIP},
    {"zlib", TFSQL_COPY_COMPRESSION_ZLIB},
    {"deflate", TFSQL_COPY_COMPRESSION_ZLIB},
    {"org.apache.hadoop.io.compress.gzipcodec", TFSQL_COPY_COMPRESSION_GZIP},
    {"org.apache.hadoop.io.compress.defaultcodec", TFSQL_COPY_COMPRESSION_ZLIB},
    {"org.apache.hadoop.io.compress.deflatecodec", TFSQL_COPY_COMPRESSION_ZLIB},
    {"auto", TFSQL_COPY_COMPRESSION_AUTO},
    {NULL, 0},
};
#define TFSQL_COPY_COMPRESSION_WHAT "None, 'gzip' or 'zlib' (alias 'deflate')"
#define TFSQL_COPY_COMPRESSION_UNKNOWN_WORDING 1
#define TFSQL_COPY_COMPRESSION_CHOICES "none, gzip, zlib or auto"

/* One COPY option spelling: `option` is a TFSQL_COPY_OPTION_* the extension reads, or -1
 * for an option it refuses (`doc` says what it does; tfsql.write_tfrecord has it). */
typedef struct {
    const char *name;
    int option;
    int value;
    const tfsql_word *words;
    const char *choices;
    const char *doc;
} tfsql_copy_param;

static const tfsql_copy_param tfsql_copy_params[] = {
    {"PARTITION", -1, TFSQL_VALUE_COLUMNS, NULL, NULL, "columns whose values become key=value directories"},
    {"RECORD_TYPE", TFSQL_COPY_OPTION_RECORD_TYPE, TFSQL_VALUE_CHOICE, tfsql_record_type_words, TFSQL_COPY_RECORD_TYPE_CHOICES, "Example, SequenceExample (list-of-list columns become feature lists) or raw bytes"},
    {"COMPRESSION", TFSQL_COPY_OPTION_COMPRESSION, TFSQL_VALUE_CHOICE, tfsql_copy_compression_words, TFSQL_COPY_COMPRESSION_CHOICES, "gzip or zlib stream compression (files get .gz / .zz)"},
    {"CODEC", TFSQL_COPY_OPTION_COMPRESSION, TFSQL_VALUE_CHOICE, tfsql_copy_compression_words, TFSQL_COPY_COMPRESSION_CHOICES, "gzip or zlib stream compression (files get .gz / .zz)"},
    {"COMPRESSION_LEVEL", TFSQL_COPY_OPTION_COMPRESSION_LEVEL, TFSQL_VALUE_LEVEL, NULL, NULL, "0-9 (gzip/zlib)"},
    {"ROWS_PER_FILE", -1, TFSQL_VALUE_COUNT, NULL, NULL, "start a new file after this many records"},
    {"MAX_ROWS_PER_FILE", -1, TFSQL_VALUE_COUNT, NULL, NULL, "start a new file after this many records"},
    {"FILE_SIZE_BYTES", -1, TFSQL_VALUE_SIZE, NULL, NULL, "start a new file after this many bytes"},
    {"MAX_FILE_SIZE", -1, TFSQL_VALUE_SIZE, NULL, NULL, "start a new file after this many bytes"},
    {"NUM_SHARDS", -1, TFSQL_VALUE_COUNT, NULL, NULL, "write exactly this many files part-0000k-of-0000N.tfrecord"},
    {"TFDS", -1, TFSQL_VALUE_NAME, NULL, NULL, "write a TensorFlow Datasets directory of this dataset name"},
    {"THREADS", -1, TFSQL_VALUE_COUNT, NULL, NULL, "threads that encode and compress files (default: cores, at most 8)"},
    {"MAX_RECORD_BYTES", -1, TFSQL_VALUE_COUNT, NULL, NULL, "refuse a record larger than this, which readers would refuse by default (None: any size)"},
    {"INDEX", TFSQL_COPY_OPTION_INDEX, TFSQL_VALUE_FLAG, NULL, NULL, "write a .<name>.idx record index beside each file (uncompressed files only)"},
    {NULL, 0, 0, NULL, NULL, NULL},
};

/* The options a COPY error lists as valid. */
#define TFSQL_COPY_VALID "RECORD_TYPE, COMPRESSION (or CODEC), COMPRESSION_LEVEL, INDEX, and DuckDB's own PARTITION_BY, OVERWRITE, OVERWRITE_OR_IGNORE, APPEND, FILENAME_PATTERN, FILE_EXTENSION, PER_THREAD_OUTPUT, USE_TMP_FILE, RETURN_FILES"

/* File names (tfsql.naming): the endings that say TFRecord, alone or followed by an ending
 * that says a compression. */
static const char *const tfsql_tfrecord_bases[] = {
    ".tfrecord",
    ".tfrecords",
    ".tfrec",
    NULL,
};
static const tfsql_word tfsql_name_compressions[] = {
    {".gz", TFSQL_COMPRESSION_GZIP},
    {".gzip", TFSQL_COMPRESSION_GZIP},
    {".zz", TFSQL_COMPRESSION_ZLIB},
    {".zlib", TFSQL_COMPRESSION_ZLIB},
    {NULL, 0},
};

/* read_parquet parameters accepted (a BOOLEAN) and ignored. */
static const char *const tfsql_compat_params[] = {
    "union_by_name",
    NULL,
};

#endif /* TFSQL_OPTIONS_GEN_H */
