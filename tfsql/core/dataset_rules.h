/* The dataset rules of tfsql: from a listing of paths to the files to read, with their
 * partition values and split. Both bindings (the Python module and the DuckDB
 * extension) list files their own way and ask these functions what the listing means.
 *
 * Every function is pure (no file system access) and thread-safe. Strings are byte
 * strings with explicit lengths unless named *_z (NUL-terminated); paths use '/'. */
#ifndef TFSQL_DATASET_RULES_H
#define TFSQL_DATASET_RULES_H

#include <stddef.h>
#include <stdint.h>

/* -- which listed paths are data (tfsql/core/paths.c) ---------------------------- */

/* 1 for a path component readers skip (Spark's shouldFilterOutPathName): a name starting
 * with '.', a name starting with '_' without '=', names ending in ".crc" or
 * "._COPYING_". */
int tfsql_is_hidden_name(const char *name, size_t n);

/* 1 when the glob component `pattern` (NUL-terminated) matches the whole of `name`:
 * '*' any run, '?' one byte, '[...]' a class ('!' negates, ranges a-z, a ']' first
 * is literal), as Python's fnmatchcase; no character is special to '/' (callers match one component). A
 * malformed class ('[' without ']') matches a literal '['. */
int tfsql_glob_match(const char *pattern, const char *name, size_t n);

/* 1 when `pattern` holds a glob character ('*', '?' or '['). */
int tfsql_has_glob_magic(const char *s, size_t n);

/* 1 when the file at `rel` (its path below the directory or glob root the user named,
 * '/'-separated) is data: no component is hidden, unless it matches one of the
 * `nexempt` glob components of the user's pattern that themselves start with '.' or '_'
 * (`exempt`, NUL-terminated patterns). */
int tfsql_keep_listed(const char *rel, size_t n, const char *const *exempt, size_t nexempt);

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
    TFSQL_NAMED = 0,   /* the user named it (a source item) */
    TFSQL_MATCHED = 1, /* a glob component matched it */
    TFSQL_IN_WALK = 2  /* met while listing a directory recursively (or by **) */
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

/* -- compression (tfsql/core/detect.c) --------------------------------------------- */

enum { TFSQL_DETECT_NONE = 0, TFSQL_DETECT_GZIP = 1, TFSQL_DETECT_ZLIB = 2 };

/* A file's compression from its first n bytes (at least 12 when the file has them): a
 * TFRecord header whose length CRC matches means none; gzip's magic 1f 8b, or a zlib
 * header, select those; anything else reads as uncompressed. */
int tfsql_detect_compression(const uint8_t *head, size_t n);

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

#endif
