/*
 * tfsql/duckdb_ext/files.c -- reading a file whole (mapped when plain,
 * inflated when compressed) and compression detection.
 */

#include "duckdb_ext.h"

void filebytes_free(filebytes *f) {
    if (f->map != NULL) {
        munmap(f->map, f->map_size);
    }
    tbuf_free(&f->owned);
    memset(f, 0, sizeof(*f));
}

static int detect_compression(const uint8_t *h, size_t n) {
    if (n >= 12 && masked_crc(h, 8) == load_le32(h + 8)) {
        return COMP_NONE;
    }
    if (n >= 2 && h[0] == 0x1f && h[1] == 0x8b) {
        return COMP_GZIP;
    }
    if (n >= 2 && (h[0] & 0x0f) == 8 && (h[0] >> 4) <= 7 && ((unsigned)h[0] * 256 + h[1]) % 31 == 0) {
        return COMP_ZLIB;
    }
    return COMP_NONE;
}

/* Open `path` (compression `comp`, or COMP_INFER). Plain bytes are mapped. Compressed
 * ones are inflated whole, or, when `inf` is given, not yet: the caller inflates them
 * with inflater_run(inf, &f->owned, ...) and file_inflated(f), then inflater_end. */
int file_open(const char *path, int comp, filebytes *f, inflater *inf, char *err) {
    memset(f, 0, sizeof(*f));
    if (inf != NULL) {
        memset(inf, 0, sizeof(*inf));
        inf->finished = 1;
    }
    int fd = open(path, O_RDONLY);
    if (fd < 0) {
        snprintf(err, ERRLEN, "cannot open %s: %s", path, strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        snprintf(err, ERRLEN, "cannot stat %s: %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    size_t size = (size_t)st.st_size;
    if (size == 0) {
        close(fd);
        f->data = (const uint8_t *)"";
        return 0;
    }
    void *map = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (map == MAP_FAILED) {
        snprintf(err, ERRLEN, "cannot map %s: %s", path, strerror(errno));
        return -1;
    }
    f->map = map;
    f->map_size = size;
    if (comp == COMP_INFER) {
        comp = detect_compression((const uint8_t *)map, size);
    }
    if (comp == COMP_NONE) {
        f->data = (const uint8_t *)map;
        f->size = size;
        return 0;
    }
    char why[ERRLEN];
    inflater whole, *z = inf != NULL ? inf : &whole;
    if (inflater_start(z, (const uint8_t *)map, size, comp, why) ||
        (inf == NULL && inflater_run(z, &f->owned, SIZE_MAX, why))) {
        error_at_path(err, path, why);
        filebytes_free(f);
        return -1;
    }
    f->data = (const uint8_t *)"";
    f->size = 0;
    if (inf == NULL) {
        munmap(f->map, f->map_size);
        f->map = NULL;
        f->data = f->owned.data ? f->owned.data : (const uint8_t *)"";
        f->size = f->owned.len;
    }
    return 0;
}

/* After inflater_run: the bytes inflated so far are the file's bytes. */
void file_inflated(filebytes *f) {
    f->data = f->owned.data ? f->owned.data : (const uint8_t *)"";
    f->size = f->owned.len;
}
