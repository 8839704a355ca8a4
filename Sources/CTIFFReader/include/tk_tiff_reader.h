// TIFF files read row by row through libtiff's RGBA interface (any photometric, bit depth
// or compression it knows). TIFFGetField is variadic, which Swift cannot call, and
// libtiff reports errors through handlers: both are handled here.
#ifndef TK_TIFF_READER_H
#define TK_TIFF_READER_H
#include <stddef.h>
#include <stdint.h>

typedef struct tk_tiff_reader tk_tiff_reader;

/// Opens `path` and reads its first directory, allocating nothing in proportion to the
/// image (libtiff allocates at most `max_single_alloc` bytes at once). `*band_rows` is how
/// many rows are decoded together: a strip's (or the image's, for one strip) or a row of
/// tiles'; `*tile_width` is a tile's width (0 for strips). The caller checks the sizes,
/// then calls tk_tiff_reader_start. NULL with `error`.
tk_tiff_reader *tk_tiff_reader_open(const char *path, uint64_t max_single_alloc, uint32_t *width, uint32_t *height,
                                    uint32_t *band_rows, uint32_t *tile_width, char *error, size_t error_size);
/// Allocates one band (width x band_rows pixels) and one tile. Returns 0, or -1 with `error`.
int tk_tiff_reader_start(tk_tiff_reader *reader, char *error, size_t error_size);
/// Reads the next row as straight RGBA (width*4 bytes). A damaged or truncated strip or tile
/// is an error, not a grey band. Returns 0, or -1 with `error`.
int tk_tiff_reader_row(tk_tiff_reader *reader, uint8_t *rgba, char *error, size_t error_size);
void tk_tiff_reader_close(tk_tiff_reader *reader);
#endif
