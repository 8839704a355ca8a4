#include "tk_png.h"
#include <png.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>

typedef struct {
    tk_png_buffer *buffer;
    int failed;
} tk_write_state;

static void tk_write(png_structp png, png_bytep bytes, png_size_t length) {
    tk_write_state *state = (tk_write_state *)png_get_io_ptr(png);
    tk_png_buffer *buffer = state->buffer;
    if (buffer->length + length > buffer->capacity) {
        size_t capacity = buffer->capacity ? buffer->capacity * 2 : 16384;
        while (capacity < buffer->length + length) capacity *= 2;
        uint8_t *grown = realloc(buffer->data, capacity);
        if (!grown) png_error(png, "out of memory");
        buffer->data = grown;
        buffer->capacity = capacity;
    }
    memcpy(buffer->data + buffer->length, bytes, length);
    buffer->length += length;
}

static void tk_flush(png_structp png) { (void)png; }

// libpng calls this and then longjmps; keep the message for the caller.
static void tk_error(png_structp png, png_const_charp message) {
    char *error = (char *)png_get_error_ptr(png);
    if (error) snprintf(error, 256, "%s", message);
    png_longjmp(png, 1);
}

static void tk_warning(png_structp png, png_const_charp message) { (void)png; (void)message; }

int tk_png_encode(const uint8_t *pixels, uint32_t width, uint32_t height, size_t stride,
                  int channels, int level, int filters, tk_png_buffer *out,
                  char *error, size_t error_size) {
    char message[256] = "";
    if (channels != 3 && channels != 4) {
        snprintf(error, error_size, "unsupported channel count %d", channels);
        return -1;
    }
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, message, tk_error, tk_warning);
    if (!png) { snprintf(error, error_size, "png_create_write_struct failed"); return -1; }
    png_infop info = png_create_info_struct(png);
    if (!info) {
        png_destroy_write_struct(&png, NULL);
        snprintf(error, error_size, "png_create_info_struct failed");
        return -1;
    }
    tk_write_state state = { out, 0 };
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_write_struct(&png, &info);
        snprintf(error, error_size, "%s", message[0] ? message : "libpng error");
        return -1;
    }
    png_set_write_fn(png, &state, tk_write, tk_flush);
    png_set_compression_level(png, level);
    png_set_filter(png, PNG_FILTER_TYPE_BASE, filters);
    png_set_IHDR(png, info, width, height, 8,
                 channels == 4 ? PNG_COLOR_TYPE_RGB_ALPHA : PNG_COLOR_TYPE_RGB,
                 PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_BASE, PNG_FILTER_TYPE_BASE);
    png_write_info(png, info);
    for (uint32_t row = 0; row < height; row++) {
        png_write_row(png, (png_const_bytep)(pixels + (size_t)row * stride));
    }
    png_write_end(png, info);
    png_destroy_write_struct(&png, &info);
    return 0;
}

/* The first two fields of libpng's private png_control (pngpriv.h, unchanged since 1.6.0),
 * which png_image.opaque points to. */
typedef struct {
    png_structp png_ptr;
    png_infop info_ptr;
} tk_png_control_head;

/* zlib's Adler-32 of the inflated pixels was a tenth of a snapshot's CPU. Every chunk's
 * CRC-32, which covers the same compressed bytes, is still checked, so a damaged tile is
 * still refused. Both decoders (whole images and the row reader) call this. */
static void ignore_adler32(png_structp png) {
#if defined(PNG_IGNORE_ADLER32) && defined(PNG_SET_OPTION_SUPPORTED)
    png_set_option(png, PNG_IGNORE_ADLER32, PNG_OPTION_ON);
#else
    (void)png;
#endif
}

/* The simplified API has no way to set the option, so it is set on the png_struct behind
 * image->opaque, after checking that it is the one that read this header. */
static void skip_adler32(png_image *image) {
    const tk_png_control_head *control = (const tk_png_control_head *)image->opaque;
    if (control == NULL || control->png_ptr == NULL || control->info_ptr == NULL) return;
    if (png_get_image_width(control->png_ptr, control->info_ptr) != image->width ||
        png_get_image_height(control->png_ptr, control->info_ptr) != image->height) return;
    ignore_adler32(control->png_ptr);
}

/* libpng 1.6.39 reads every chunk but IDAT whole into memory, and allocates what the chunk's
   length claims before reading it: a 353-byte file whose tEXt claimed 2 GB had it allocate
   (and zero) 2 GB before finding the file short (found by the pngrows fuzz target; its
   chunk_malloc_max did not stop it). So each chunk is checked here first: one that claims
   more bytes than are left, or more than TK_PNG_CHUNK_MAX (text, ICC profiles, unknown
   chunks are never that large), is refused by name. IDAT is streamed by libpng. */
#define TK_PNG_CHUNK_MAX (8u << 20)

/* 1 for IDAT, 0 for a chunk within bounds, -1 (and a message) for one that is not; the
   chunk's claimed length in `claimed`. */
static int check_chunk(const uint8_t head[8], uint64_t offset, uint64_t size, uint32_t *claimed, char *error, size_t error_size) {
    uint32_t length = (uint32_t)head[0] << 24 | (uint32_t)head[1] << 16 | (uint32_t)head[2] << 8 | head[3];
    *claimed = length;
    if (memcmp(head + 4, "IDAT", 4) == 0) return 1;
    uint64_t left = size > offset + 12 ? size - offset - 12 : 0;
    if (length <= left && length <= TK_PNG_CHUNK_MAX) return 0;
    char name[5];
    for (int i = 0; i < 4; i++) name[i] = (head[4 + i] >= 32 && head[4 + i] < 127) ? (char)head[4 + i] : '?';
    name[4] = 0;
    if (length > left) snprintf(error, error_size, "chunk %s claims %u bytes, more than the %llu left in the file", name, length, (unsigned long long)left);
    else snprintf(error, error_size, "chunk %s claims %u bytes, more than the %u allowed a chunk", name, length, TK_PNG_CHUNK_MAX);
    return -1;
}

/* The chunks of a PNG in memory before its first IDAT, which png_read_info reads whole. */
static int check_chunks_in_memory(const uint8_t *data, size_t length, char *error, size_t error_size) {
    uint64_t offset = 8;
    while (offset + 8 <= length) {
        uint32_t chunk;
        int kind = check_chunk(data + offset, offset, length, &chunk, error, error_size);
        if (kind != 0) return kind < 0 ? -1 : 0;
        offset += 12 + (uint64_t)chunk;
    }
    return 0;
}

/* The chunks of a PNG file before its first IDAT (a row reader never reads past the image),
   from just after the signature; the file is left where it was. */
static int check_chunks_before_image(FILE *file, char *error, size_t error_size) {
    long start = ftell(file);
    if (start < 0 || fseek(file, 0, SEEK_END) != 0) return 0;
    long size = ftell(file);
    uint64_t offset = (uint64_t)start;
    int result = 0;
    uint8_t head[8];
    while (size > 0 && fseek(file, (long)offset, SEEK_SET) == 0 && fread(head, 1, 8, file) == 8) {
        uint32_t chunk;
        int kind = check_chunk(head, offset, (uint64_t)size, &chunk, error, error_size);
        if (kind != 0) { result = kind < 0 ? -1 : 0; break; }
        offset += 12 + (uint64_t)chunk;
    }
    fseek(file, start, SEEK_SET);
    return result;
}

int tk_png_decode(const uint8_t *data, size_t length, uint32_t expected_width, uint32_t expected_height,
                  uint8_t *pixels, size_t pixels_size, char *error, size_t error_size) {
    // The simplified API keeps its own setjmp inside libpng and reports by message.
    if (check_chunks_in_memory(data, length, error, error_size) != 0) return -1;
    png_image image;
    memset(&image, 0, sizeof image);
    image.version = PNG_IMAGE_VERSION;
    if (!png_image_begin_read_from_memory(&image, data, length)) {
        snprintf(error, error_size, "%s", image.message);
        return -1;
    }
    if (image.width != expected_width || image.height != expected_height) {
        snprintf(error, error_size, "libpng reads %ux%u where the header says %ux%u", image.width, image.height,
                 expected_width, expected_height);
        png_image_free(&image);
        return -1;
    }
    // Computed in size_t: libpng's PNG_IMAGE_SIZE is 32-bit arithmetic.
    if (pixels_size != (size_t)image.width * image.height * 4) {
        snprintf(error, error_size, "a buffer of %zu bytes for %ux%u pixels", pixels_size, image.width, image.height);
        png_image_free(&image);
        return -1;
    }
    skip_adler32(&image);
    image.format = PNG_FORMAT_RGBA;
    if (!png_image_finish_read(&image, NULL, pixels, 0, NULL)) {
        snprintf(error, error_size, "%s", image.message);
        png_image_free(&image);
        return -1;
    }
    return 0;
}

void tk_png_free(void *pointer) { free(pointer); }

struct tk_png_reader {
    FILE *file;
    png_structp png;
    png_infop info;
    char message[256];
};

tk_png_reader *tk_png_reader_open(const char *path, uint32_t *width, uint32_t *height, int *interlaced,
                                  char *error, size_t error_size) {
    *interlaced = 0;
    tk_png_reader *reader = calloc(1, sizeof *reader);
    if (!reader) { snprintf(error, error_size, "out of memory"); return NULL; }
    reader->file = fopen(path, "rb");
    if (!reader->file) { snprintf(error, error_size, "cannot open"); free(reader); return NULL; }
    unsigned char signature[8];
    if (fread(signature, 1, 8, reader->file) != 8 || png_sig_cmp(signature, 0, 8) != 0) {
        snprintf(error, error_size, "not a PNG file");
        fclose(reader->file); free(reader);
        return NULL;
    }
    if (check_chunks_before_image(reader->file, error, error_size) != 0) {
        fclose(reader->file); free(reader);
        return NULL;
    }
    reader->png = png_create_read_struct(PNG_LIBPNG_VER_STRING, reader->message, tk_error, tk_warning);
    reader->info = reader->png ? png_create_info_struct(reader->png) : NULL;
    if (!reader->info) {
        snprintf(error, error_size, "out of memory");
        if (reader->png) png_destroy_read_struct(&reader->png, NULL, NULL);
        fclose(reader->file); free(reader);
        return NULL;
    }
    if (setjmp(png_jmpbuf(reader->png))) {
        snprintf(error, error_size, "%s", reader->message);
        png_destroy_read_struct(&reader->png, &reader->info, NULL);
        fclose(reader->file); free(reader);
        return NULL;
    }
    png_init_io(reader->png, reader->file);
    ignore_adler32(reader->png);
    png_set_sig_bytes(reader->png, 8);
    png_read_info(reader->png, reader->info);
    *width = png_get_image_width(reader->png, reader->info);
    *height = png_get_image_height(reader->png, reader->info);
    if (png_get_interlace_type(reader->png, reader->info) != PNG_INTERLACE_NONE) {
        *interlaced = 1;
        snprintf(error, error_size, "interlaced");
        png_destroy_read_struct(&reader->png, &reader->info, NULL);
        fclose(reader->file); free(reader);
        return NULL;
    }
    return reader;
}

int tk_png_reader_start(tk_png_reader *reader, char *error, size_t error_size) {
    if (setjmp(png_jmpbuf(reader->png))) {
        snprintf(error, error_size, "%s", reader->message);
        return -1;
    }
    // Whatever the file holds becomes 8-bit straight RGBA.
    png_set_expand(reader->png);
    png_set_strip_16(reader->png);
    png_set_gray_to_rgb(reader->png);
    png_set_add_alpha(reader->png, 0xff, PNG_FILLER_AFTER);
    png_read_update_info(reader->png, reader->info);
    return 0;
}

int tk_png_reader_row(tk_png_reader *reader, uint8_t *rgba, char *error, size_t error_size) {
    if (setjmp(png_jmpbuf(reader->png))) {
        snprintf(error, error_size, "%s", reader->message);
        return -1;
    }
    png_read_row(reader->png, rgba, NULL);
    return 0;
}

void tk_png_reader_close(tk_png_reader *reader) {
    if (!reader) return;
    png_destroy_read_struct(&reader->png, &reader->info, NULL);
    fclose(reader->file);
    free(reader);
}
