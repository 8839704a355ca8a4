// The pyramid's two per-pixel loops in C: Swift compiled these to scalar code with its
// generic SIMD conversions out of line (the vertical pass was a third of a pyramid's CPU).
// Every float operation is the one the Swift code did, in the same order and with no
// contraction into fused multiply-adds, so the tiles stay the same bytes; clang packs the
// four channels of a pixel into one vector instruction, which changes no result.
#ifndef TK_PIXEL_LOOPS_H
#define TK_PIXEL_LOOPS_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/// The vertical pass of a separable resampling: for each of `count` source columns
/// `columns[n]`, the sum over the row taps k of (r, g, b, 1) * alpha * `row_weight[k]`
/// (premultiplied) of the pixel at byte `row_start[k] + 4 * column` of `src`, into the four
/// floats at `line + 4 * (column - min_column)`. The caller checks every offset is inside
/// `src` and `line`.
void tk_warp_columns(const uint8_t *src, const ptrdiff_t *row_start, const float *row_weight, int row_taps,
                     const ptrdiff_t *columns, ptrdiff_t count, ptrdiff_t min_column, float *line);

/// The horizontal pass and the store of one output row of `size` pixels: for each column i
/// with `valid[i]`, the sum over its `taps` column taps (`index`, `weight`, at `i * taps`;
/// zero weights skipped) of `line[4 * (index - min_column)]`, un-premultiplied and rounded
/// into `out + 4 * i`; pixels of alpha 0.5 or less are left as they are. Returns whether any
/// pixel was stored.
bool tk_warp_row(const float *line, ptrdiff_t min_column, const ptrdiff_t *index, const float *weight,
                 const bool *valid, int taps, ptrdiff_t size, uint8_t *out);

/// One pixel of premultiplied sums un-premultiplied, rounded and stored (as tk_warp_row stores
/// each): false, and nothing stored, when its alpha is 0.5 or less. For the warp of a turned
/// or sheared image, which sums each pixel in Swift.
bool tk_warp_store(float r, float g, float b, float a, uint8_t *pixel);

/// gdal2tiles' `average`: each 2x2 block of the `size`x`size` RGBA tile `child` (straight
/// alpha) averaged in premultiplied space into one pixel of the quadrant of `parent` (also
/// `size`x`size`) at column `origin_x`, row `origin_y`; a block with no alpha gives (0, 0, 0, 0).
/// Returns whether any block had alpha.
bool tk_average_quadrant(const uint8_t *child, ptrdiff_t size, uint8_t *parent, ptrdiff_t origin_x, ptrdiff_t origin_y);

/// `pixels` RGB pixels (3 bytes each) at `rgb` as opaque RGBA at `rgba` (a PNG row of
/// colour type 2 without a colour key): 16 pixels to a few byte shuffles where the CPU has
/// SSSE3, which took a fifth of the time to read a 16384 px scan's rows done a pixel at a time.
void tk_rgb_to_rgba(const uint8_t *rgb, uint8_t *rgba, ptrdiff_t pixels);

#endif
