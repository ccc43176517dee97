/* -- source.c (to fold into duckdb_ext.h) ------------------------------------- */

/* Bytes kept ahead of a scan: a window is refilled to WINDOW_BYTES (or one record). */
#define WINDOW_BYTES ((size_t)8 << 20)
/* Compressed bytes read at a time, and inflated bytes produced per inflate() call. */
#define COMPRESSED_CHUNK ((size_t)1 << 20)
#define INFLATE_STEP ((size_t)1 << 20)

/* One open file: its (decompressed) byte stream, read with pread() and checked for
 * changes after every read (tfsql.file_guard). */
typedef struct {
    int fd;
    const char *path;  /* borrowed, for messages */
    uint64_t file_size; /* at open: the size the bind listed */
    int64_t mtime_ns;
    uint64_t file_pos; /* next file byte to read */
    int comp;          /* COMP_NONE, COMP_GZIP or COMP_ZLIB */
    int eof;           /* the (decompressed) stream ended */
    tbuf in;           /* compressed input, in[in_pos:] not yet inflated */
    size_t in_pos;
    int z_active, members;
    zstream z;
} source;

/* A window on a source: buf[0:len) holds stream bytes [base, base + len). */
typedef struct {
    source src;
    tbuf buf;
    uint64_t base;
} window;

/* Open `path` (compression `comp`, or COMP_INFER to detect it); `listed_size` (or -1)
 * is the size the bind saw: another size now means the file changed. */
int source_open(source *s, const char *path, int64_t listed_size, int comp, char *err);
void source_close(source *s);
/* Append up to `want` bytes of the stream to `out` (fewer at its end: s->eof). */
int source_read(source *s, tbuf *out, size_t want, char *err);

int window_open(window *w, const char *path, int64_t listed_size, int comp, char *err);
void window_close(window *w);
/* Make stream bytes [from, from + need) available (fewer only at the end of the
 * stream), dropping those before `from`; a read takes at least WINDOW_BYTES. */
int window_fill(window *w, uint64_t from, size_t need, char *err);
