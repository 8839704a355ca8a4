#include "tk_jpeg_reader.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <limits.h>
#include <jpeglib.h>

struct tk_error_manager {
    struct jpeg_error_mgr base;
    jmp_buf jump;
    char message[JMSG_LENGTH_MAX];
    int damaged;  /* a warning such as "Premature end of JPEG file": the pixels are made up */
};

struct tk_jpeg_reader {
    FILE *file;
    struct jpeg_decompress_struct info;
    struct tk_error_manager errors;
    struct jpeg_progress_mgr progress;
    int started;
};

static void tk_jpeg_error_exit(j_common_ptr info) {
    struct tk_error_manager *errors = (struct tk_error_manager *)info->err;
    (*info->err->format_message)(info, errors->message);
    longjmp(errors->jump, 1);
}

/* libjpeg only warns about damaged data (a truncated file is padded with grey) and goes on;
   TileKit treats that as an error, so a broken scan never becomes tiles. */
static void tk_jpeg_warning(j_common_ptr info, int level) {
    struct tk_error_manager *errors = (struct tk_error_manager *)info->err;
    if (level < 0 && !errors->damaged) {
        (*info->err->format_message)(info, errors->message);
        errors->damaged = 1;
    }
}

/* A progressive file may hold any number of scans, each a pass over the whole image: a
   few hundred bytes of scans can cost minutes. libjpeg-turbo's own tools stop at 500
   (djpeg -maxscans, TurboJPEG's TJFLAG_LIMITSCANS); so does TileKit. */
enum { TK_JPEG_MAX_SCANS = 500 };

static void tk_jpeg_progress(j_common_ptr info) {
    if (info->is_decompressor) {
        j_decompress_ptr decompress = (j_decompress_ptr)info;
        if (decompress->input_scan_number > TK_JPEG_MAX_SCANS) {
            struct tk_error_manager *errors = (struct tk_error_manager *)info->err;
            snprintf(errors->message, sizeof errors->message, "more than %d scans (a progressive JPEG that would take too long)", TK_JPEG_MAX_SCANS);
            longjmp(errors->jump, 1);
        }
    }
}

tk_jpeg_reader *tk_jpeg_reader_open(const char *path, uint32_t *width, uint32_t *height, int *multiscan,
                                    char *error, size_t error_size) {
    tk_jpeg_reader *reader = calloc(1, sizeof *reader);
    if (!reader) { snprintf(error, error_size, "out of memory"); return NULL; }
    reader->file = fopen(path, "rb");
    if (!reader->file) { snprintf(error, error_size, "cannot open"); free(reader); return NULL; }
    reader->info.err = jpeg_std_error(&reader->errors.base);
    reader->errors.base.error_exit = tk_jpeg_error_exit;
    reader->errors.base.emit_message = tk_jpeg_warning;
    if (setjmp(reader->errors.jump)) {
        snprintf(error, error_size, "%s", reader->errors.message);
        jpeg_destroy_decompress(&reader->info);
        fclose(reader->file); free(reader);
        return NULL;
    }
    jpeg_create_decompress(&reader->info);
    reader->progress.progress_monitor = tk_jpeg_progress;
    reader->info.progress = &reader->progress;
    jpeg_stdio_src(&reader->info, reader->file);
    jpeg_read_header(&reader->info, TRUE);
    *width = reader->info.image_width;
    *height = reader->info.image_height;
    *multiscan = jpeg_has_multiple_scans(&reader->info) ? 1 : 0;
    return reader;
}

int tk_jpeg_reader_start(tk_jpeg_reader *reader, uint64_t max_memory, char *error, size_t error_size) {
    if (setjmp(reader->errors.jump)) {
        snprintf(error, error_size, "%s", reader->errors.message);
        return -1;
    }
    reader->info.mem->max_memory_to_use = max_memory > (uint64_t)LONG_MAX ? LONG_MAX : (long)max_memory;
    reader->info.out_color_space = JCS_EXT_RGBA;  // libjpeg-turbo: RGBA out, whatever the file holds
    jpeg_start_decompress(&reader->info);
    reader->started = 1;
    if (reader->info.output_width != reader->info.image_width || reader->info.output_height != reader->info.image_height) {
        snprintf(error, error_size, "libjpeg decodes %ux%u of a %ux%u image", reader->info.output_width, reader->info.output_height,
                 reader->info.image_width, reader->info.image_height);
        return -1;
    }
    return 0;
}

int tk_jpeg_reader_row(tk_jpeg_reader *reader, uint8_t *rgba, char *error, size_t error_size) {
    if (setjmp(reader->errors.jump)) {
        snprintf(error, error_size, "%s", reader->errors.message);
        return -1;
    }
    JSAMPROW row = rgba;
    if (jpeg_read_scanlines(&reader->info, &row, 1) != 1) {
        snprintf(error, error_size, "the file ends early");
        return -1;
    }
    if (reader->errors.damaged) {
        snprintf(error, error_size, "%s", reader->errors.message);
        return -1;
    }
    return 0;
}

void tk_jpeg_reader_close(tk_jpeg_reader *reader) {
    if (!reader) return;
    if (setjmp(reader->errors.jump) == 0) jpeg_abort_decompress(&reader->info);
    jpeg_destroy_decompress(&reader->info);
    fclose(reader->file);
    free(reader);
}
