// TIFF files read row by row through libtiff's RGBA interface (any photometric, bit depth
// or compression it knows). TIFFGetField is variadic, which Swift cannot call, and
// libtiff's default error handler prints to stderr: both are handled here.
#ifndef TK_TIFF_READER_H
#define TK_TIFF_READER_H
#include <stddef.h>
#include <stdint.h>

typedef struct tk_tiff_reader tk_tiff_reader;

/// Opens `path`. Stripped files stream a strip at a time; tiled files are decoded whole.
tk_tiff_reader *tk_tiff_reader_open(const char *path, uint32_t *width, uint32_t *height, char *error, size_t error_size);
/// Reads the next row as straight RGBA (width*4 bytes). Returns 0, or -1 with `error`.
int tk_tiff_reader_row(tk_tiff_reader *reader, uint8_t *rgba, char *error, size_t error_size);
void tk_tiff_reader_close(tk_tiff_reader *reader);
#endif
