#include "tk_tiff_reader.h"
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tiffio.h>

struct tk_tiff_reader {
    TIFF *tiff;
    uint32_t width, height;
    int tiled;
    uint32_t band_rows;    /* rows per strip (at most the height), or the tile height */
    uint32_t tile_width;
    uint32_t *band;        /* band_rows rows of width pixels, top-down */
    uint32_t *tile;        /* one tile, bottom-up as libtiff's RGBA tile reader leaves it */
    long band_index;       /* the band in `band`, -1 for none */
    uint32_t next_row;
    char message[256];     /* libtiff's last error, for the caller */
};

/* Per-handle handlers (no global state): keep the first error, drop warnings. */
static int tk_tiff_error(TIFF *tiff, void *user_data, const char *module, const char *format, va_list arguments) {
    (void)tiff; (void)module;
    struct tk_tiff_reader *reader = user_data;
    if (reader && !reader->message[0]) vsnprintf(reader->message, sizeof reader->message, format, arguments);
    return 1;
}

static int tk_tiff_warning(TIFF *tiff, void *user_data, const char *module, const char *format, va_list arguments) {
    (void)tiff; (void)user_data; (void)module; (void)format; (void)arguments;
    return 1;
}

static void tk_tiff_fail(tk_tiff_reader *reader, const char *what, char *error, size_t error_size) {
    if (reader->message[0]) snprintf(error, error_size, "%s: %s", what, reader->message);
    else snprintf(error, error_size, "%s", what);
}

tk_tiff_reader *tk_tiff_reader_open(const char *path, uint64_t max_single_alloc, uint32_t *width, uint32_t *height,
                                    uint32_t *band_rows, uint32_t *tile_width, char *error, size_t error_size) {
    tk_tiff_reader *reader = calloc(1, sizeof *reader);
    if (!reader) { snprintf(error, error_size, "out of memory"); return NULL; }
    TIFFOpenOptions *options = TIFFOpenOptionsAlloc();
    if (!options) { free(reader); snprintf(error, error_size, "out of memory"); return NULL; }
    TIFFOpenOptionsSetMaxSingleMemAlloc(options, max_single_alloc > (uint64_t)INT64_MAX ? INT64_MAX : (tmsize_t)max_single_alloc);
    TIFFOpenOptionsSetErrorHandlerExtR(options, tk_tiff_error, reader);
    TIFFOpenOptionsSetWarningHandlerExtR(options, tk_tiff_warning, reader);
    reader->tiff = TIFFOpenExt(path, "r", options);
    TIFFOpenOptionsFree(options);
    if (!reader->tiff) { tk_tiff_fail(reader, "not a readable TIFF", error, error_size); free(reader); return NULL; }
    if (!TIFFGetField(reader->tiff, TIFFTAG_IMAGEWIDTH, &reader->width) || !TIFFGetField(reader->tiff, TIFFTAG_IMAGELENGTH, &reader->height)
        || reader->width == 0 || reader->height == 0) {
        snprintf(error, error_size, "no image size (ImageWidth, ImageLength)");
        TIFFClose(reader->tiff); free(reader);
        return NULL;
    }
    char message[1024];
    if (!TIFFRGBAImageOK(reader->tiff, message)) {
        snprintf(error, error_size, "%s", message);
        TIFFClose(reader->tiff); free(reader);
        return NULL;
    }
    reader->tiled = TIFFIsTiled(reader->tiff);
    if (reader->tiled) {
        uint32_t tile_height = 0;
        if (!TIFFGetField(reader->tiff, TIFFTAG_TILEWIDTH, &reader->tile_width) || !TIFFGetField(reader->tiff, TIFFTAG_TILELENGTH, &tile_height)
            || reader->tile_width == 0 || tile_height == 0) {
            snprintf(error, error_size, "a tiled TIFF without a tile size");
            TIFFClose(reader->tiff); free(reader);
            return NULL;
        }
        reader->band_rows = tile_height;
    } else {
        uint32_t rows_per_strip = 0;
        /* Absent, 0 or past the end: one strip holds the whole image. */
        if (!TIFFGetField(reader->tiff, TIFFTAG_ROWSPERSTRIP, &rows_per_strip) || rows_per_strip == 0 || rows_per_strip > reader->height) {
            rows_per_strip = reader->height;
        }
        reader->band_rows = rows_per_strip;
    }
    reader->band_index = -1;
    *width = reader->width;
    *height = reader->height;
    *band_rows = reader->band_rows;
    *tile_width = reader->tiled ? reader->tile_width : 0;
    return reader;
}

int tk_tiff_reader_start(tk_tiff_reader *reader, char *error, size_t error_size) {
    /* The caller checks the band against its pixel limit first; this is what keeps the byte
       counts below from wrapping (2^31 x 2^31 x 4 is 2^64: malloc(0)) if it ever did not. */
    uint32_t widest = reader->width > reader->tile_width ? reader->width : reader->tile_width;
    if ((uint64_t)widest * reader->band_rows > SIZE_MAX / 4) {
        snprintf(error, error_size, "%u rows of %u pixels do not fit in memory", reader->band_rows, widest);
        return -1;
    }
    reader->band = malloc((size_t)reader->width * reader->band_rows * 4);
    if (reader->tiled) reader->tile = malloc((size_t)reader->tile_width * reader->band_rows * 4);
    if (!reader->band || (reader->tiled && !reader->tile)) {
        snprintf(error, error_size, "out of memory for %u rows of %u pixels", reader->band_rows, reader->width);
        return -1;
    }
    return 0;
}

/* Decodes band `index` (rows index*band_rows ...) into reader->band, top-down. */
static int tk_tiff_read_band(tk_tiff_reader *reader, long index, char *error, size_t error_size) {
    uint32_t first = (uint32_t)index * reader->band_rows;
    uint32_t rows = reader->height - first < reader->band_rows ? reader->height - first : reader->band_rows;
    reader->message[0] = 0;
    if (!reader->tiled) {
        /* The strip comes bottom-up: its last row first. */
        if (!TIFFReadRGBAStripExt(reader->tiff, first, reader->band, 1)) {
            char what[64];
            snprintf(what, sizeof what, "cannot decode strip %ld", index);
            tk_tiff_fail(reader, what, error, error_size);
            return -1;
        }
        for (uint32_t top = 0, bottom = rows - 1; top < bottom; top++, bottom--) {
            uint32_t *a = reader->band + (size_t)top * reader->width, *b = reader->band + (size_t)bottom * reader->width;
            for (uint32_t x = 0; x < reader->width; x++) { uint32_t t = a[x]; a[x] = b[x]; b[x] = t; }
        }
        return 0;
    }
    uint32_t tile_height = reader->band_rows, tile_width = reader->tile_width;
    for (uint32_t column = 0; column < reader->width; column += tile_width) {
        if (!TIFFReadRGBATileExt(reader->tiff, column, first, reader->tile, 1)) {
            char what[64];
            snprintf(what, sizeof what, "cannot decode the tile at column %u, row %u", column, first);
            tk_tiff_fail(reader, what, error, error_size);
            return -1;
        }
        uint32_t columns = reader->width - column < tile_width ? reader->width - column : tile_width;
        /* Image row r of the tile is tile row (tile_height - 1 - r), edge tiles included. */
        for (uint32_t r = 0; r < rows; r++) {
            memcpy(reader->band + (size_t)r * reader->width + column, reader->tile + (size_t)(tile_height - 1 - r) * tile_width,
                   (size_t)columns * 4);
        }
    }
    return 0;
}

int tk_tiff_reader_row(tk_tiff_reader *reader, uint8_t *rgba, char *error, size_t error_size) {
    if (!reader->band) { snprintf(error, error_size, "not started"); return -1; }
    if (reader->next_row >= reader->height) { snprintf(error, error_size, "past the last row"); return -1; }
    long index = reader->next_row / reader->band_rows;
    if (index != reader->band_index) {
        reader->band_index = -1;
        if (tk_tiff_read_band(reader, index, error, error_size) != 0) return -1;
        reader->band_index = index;
    }
    const uint32_t *source = reader->band + (size_t)(reader->next_row - (uint32_t)index * reader->band_rows) * reader->width;
    /* The packed ABGR words are R, G, B, A bytes on little-endian machines. */
    for (uint32_t x = 0; x < reader->width; x++) {
        uint32_t word = source[x];
        rgba[4 * x] = TIFFGetR(word);
        rgba[4 * x + 1] = TIFFGetG(word);
        rgba[4 * x + 2] = TIFFGetB(word);
        rgba[4 * x + 3] = TIFFGetA(word);
    }
    reader->next_row++;
    return 0;
}

void tk_tiff_reader_close(tk_tiff_reader *reader) {
    if (!reader) return;
    free(reader->band);
    free(reader->tile);
    TIFFClose(reader->tiff);
    free(reader);
}
