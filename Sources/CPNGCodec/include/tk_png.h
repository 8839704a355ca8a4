// TileKit's PNG codec over libpng. libpng reports errors with setjmp/longjmp,
// which Swift cannot do, so the whole encode and decode live in C; errors come
// back as a non-zero status and a message instead of aborting the process.
#ifndef TK_PNG_H
#define TK_PNG_H
#include <stddef.h>
#include <stdint.h>

/// Growable output buffer filled by tk_png_encode; free `data` with tk_png_free.
typedef struct {
    uint8_t *data;
    size_t length;
    size_t capacity;
} tk_png_buffer;

/// Encodes straight (non-premultiplied) 8-bit pixels, `channels` 3 (RGB) or 4 (RGBA),
/// rows of `stride` bytes. `level` is the zlib level 0-9, `filters` a mask of
/// PNG_FILTER_* values (0x08 = none ... 0xF8 = all). Returns 0, or -1 with `error`.
int tk_png_encode(const uint8_t *pixels, uint32_t width, uint32_t height, size_t stride,
                  int channels, int level, int filters, tk_png_buffer *out,
                  char *error, size_t error_size);

/// Decodes a PNG to straight RGBA, 8 bits per channel, into `pixels` (the caller's
/// `pixels_size` bytes, which must be `expected_width * expected_height * 4`), if its header
/// declares exactly that size: the caller read and checked the size against its limits
/// first, and libpng allocates no image of its own. Returns 0, or -1 with `error`.
int tk_png_decode(const uint8_t *data, size_t length, uint32_t expected_width, uint32_t expected_height,
                  uint8_t *pixels, size_t pixels_size, char *error, size_t error_size);

void tk_png_free(void *pointer);

/// A PNG read row by row from a file, so a 16384 px scan never needs to be whole in memory.
typedef struct tk_png_reader tk_png_reader;

/// Opens `path` and reads its header, allocating nothing in proportion to the image: the
/// caller checks the size, then calls tk_png_reader_start. Interlaced files cannot be
/// streamed: they return NULL with `*interlaced` set (decode those whole). NULL with `error` on failure.
tk_png_reader *tk_png_reader_open(const char *path, uint32_t *width, uint32_t *height, int *interlaced,
                                  char *error, size_t error_size);
/// Sets up the conversion to 8-bit RGBA; once, before the first row. Returns 0, or -1 with `error`.
int tk_png_reader_start(tk_png_reader *reader, char *error, size_t error_size);
/// Reads the next row as straight RGBA (width*4 bytes). Returns 0, or -1 with `error`.
int tk_png_reader_row(tk_png_reader *reader, uint8_t *rgba, char *error, size_t error_size);
void tk_png_reader_close(tk_png_reader *reader);

#endif
