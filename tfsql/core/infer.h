/* Schema inference (tfsql/core/infer.c): to be folded into tfsql_core.h. */

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
 * INFER_NOMEM, INFER_MALFORMED (err->record: the file-wide index) or
 * INFER_NAME_NOT_UTF8. */
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
 * infer_columns_free), INFER_NOMEM, INFER_KIND_CONFLICT or INFER_NAME_TAKEN. */
int infer_resolve(const infer_state *s, int lists_always, const char *schema_hint,
                  infer_column **cols, size_t *ncols, infer_error *err);
void infer_columns_free(infer_column *cols, size_t n);

#define INFER_MISSING 6 /* a schema column that no sampled record holds */

/* missing_columns='raise': the schema's columns (n NUL-terminated names) that no
 * sampled feature holds (a feature list's column may be named N__feature_list) are an
 * error listing them: INFER_MISSING, err->feature the first. `schema_name` and `hint`
 * are how the front end spells the schema option and missing_columns='insert'. INFER_OK when every column is held, or when the
 * sample holds no feature at all (nothing to judge). */
int infer_check_missing(const infer_state *s, const char *const *columns, size_t n,
                        const char *schema_name, const char *hint, infer_error *err);
