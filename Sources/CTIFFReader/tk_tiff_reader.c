#include "tk_tiff_reader.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tiffio.h>

struct tk_tiff_reader {
    TIFF *tiff;
    uint32_t width, height, rows_per_strip;
    uint32_t *raster;      /* one strip, or the whole image when tiled */
    int whole;
    long strip;            /* the strip in `raster`, -1 for none */
    uint32_t next_row;
};

tk_tiff_reader *tk_tiff_reader_open(const char *path, uint32_t *width, uint32_t *height, char *error, size_t error_size) {
    TIFFSetErrorHandler(NULL);
    TIFFSetWarningHandler(NULL);
    tk_tiff_reader *reader = calloc(1, sizeof *reader);
    if (!reader) { snprintf(error, error_size, "out of memory"); return NULL; }
    reader->tiff = TIFFOpen(path, "r");
    if (!reader->tiff) { snprintf(error, error_size, "not a readable TIFF"); free(reader); return NULL; }
    TIFFGetField(reader->tiff, TIFFTAG_IMAGEWIDTH, &reader->width);
    TIFFGetField(reader->tiff, TIFFTAG_IMAGELENGTH, &reader->height);
    char message[1024];
    if (!TIFFRGBAImageOK(reader->tiff, message)) {
        snprintf(error, error_size, "%s", message);
        TIFFClose(reader->tiff); free(reader);
        return NULL;
    }
    reader->strip = -1;
    if (TIFFIsTiled(reader->tiff) || !TIFFGetField(reader->tiff, TIFFTAG_ROWSPERSTRIP, &reader->rows_per_strip)
        || reader->rows_per_strip == 0 || reader->rows_per_strip > reader->height) {
        reader->whole = 1;
        reader->raster = malloc((size_t)reader->width * reader->height * 4);
        if (!reader->raster || !TIFFReadRGBAImageOriented(reader->tiff, reader->width, reader->height, reader->raster, ORIENTATION_TOPLEFT, 0)) {
            snprintf(error, error_size, "cannot decode the image data");
            free(reader->raster); TIFFClose(reader->tiff); free(reader);
            return NULL;
        }
    } else {
        reader->raster = malloc((size_t)reader->width * reader->rows_per_strip * 4);
        if (!reader->raster) { snprintf(error, error_size, "out of memory"); TIFFClose(reader->tiff); free(reader); return NULL; }
    }
    *width = reader->width;
    *height = reader->height;
    return reader;
}

int tk_tiff_reader_row(tk_tiff_reader *reader, uint8_t *rgba, char *error, size_t error_size) {
    if (reader->next_row >= reader->height) { snprintf(error, error_size, "past the last row"); return -1; }
    const uint8_t *source;
    if (reader->whole) {
        source = (const uint8_t *)(reader->raster + (size_t)reader->next_row * reader->width);
    } else {
        long strip = reader->next_row / reader->rows_per_strip;
        uint32_t first = (uint32_t)strip * reader->rows_per_strip;
        if (strip != reader->strip) {
            if (!TIFFReadRGBAStrip(reader->tiff, first, reader->raster)) {
                snprintf(error, error_size, "cannot decode strip %ld", strip);
                return -1;
            }
            reader->strip = strip;
        }
        /* RGBA strips come bottom-up within the strip. */
        uint32_t rows = reader->height - first < reader->rows_per_strip ? reader->height - first : reader->rows_per_strip;
        uint32_t within = rows - 1 - (reader->next_row - first);
        source = (const uint8_t *)(reader->raster + (size_t)within * reader->width);
    }
    /* The packed ABGR words are R, G, B, A bytes on little-endian machines. */
    for (uint32_t x = 0; x < reader->width; x++) {
        uint32_t word;
        memcpy(&word, source + 4 * x, 4);
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
    free(reader->raster);
    TIFFClose(reader->tiff);
    free(reader);
}
