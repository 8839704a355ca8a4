// JPEG files read scanline by scanline with libjpeg(-turbo)'s classic API, so a large scan
// is never whole in memory. libjpeg reports errors with setjmp/longjmp, which Swift cannot
// do: every call that may fail lives here and returns a status and a message instead.
#ifndef TK_JPEG_READER_H
#define TK_JPEG_READER_H
#include <stddef.h>
#include <stdint.h>

typedef struct tk_jpeg_reader tk_jpeg_reader;

/// Opens `path` and reads its header, allocating nothing in proportion to the image: the
/// caller checks the size, then calls tk_jpeg_reader_start. `*multiscan` is set for a
/// progressive file, which libjpeg buffers whole (about 2 bytes a sample) however it is
/// read. NULL with `error` on failure.
tk_jpeg_reader *tk_jpeg_reader_open(const char *path, uint32_t *width, uint32_t *height, int *multiscan,
                                    char *error, size_t error_size);
/// Starts decompressing to RGBA, with at most `max_memory` bytes of libjpeg's buffers (a
/// backstop behind the caller's size check). Returns 0, or -1 with `error`.
int tk_jpeg_reader_start(tk_jpeg_reader *reader, uint64_t max_memory, char *error, size_t error_size);
/// Reads the next row as RGBA (width*4 bytes, alpha 255). Returns 0, or -1 with `error`.
int tk_jpeg_reader_row(tk_jpeg_reader *reader, uint8_t *rgba, char *error, size_t error_size);
void tk_jpeg_reader_close(tk_jpeg_reader *reader);
#endif
