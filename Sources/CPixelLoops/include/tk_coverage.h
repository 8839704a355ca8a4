// CoverageRaster's loops in C (Sources/Canvas/CoverageRaster.swift says what they compute).
// In Swift they were half of a dense feature tile's time: every cell blended a pixel at a
// time behind a branch, and every edge row paid for overflow and range checks. Here every
// float and double operation is the Swift code's, in the same order and never fused, and
// the blending is pixman's integer arithmetic four pixels at a time, so the pixels are the
// same bytes.
#ifndef TK_COVERAGE_H
#define TK_COVERAGE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/// The cells of one shape's box: `rows` rows of `columns` floats (the last two of a row
/// spare), the first at surface pixel (`origin_x`, `origin_y`) of a `width` x `height`
/// surface; `spans` holds per row the first and last cell an edge touched (first > last
/// when none did).
typedef struct {
    float *cells;
    int32_t *spans;
    ptrdiff_t columns;
    ptrdiff_t rows;
    double origin_x;
    double origin_y;
    double width;
    double height;
} tk_region;

/// Where the box lands on the surface: premultiplied ARGB32 words, `stride` bytes a row,
/// the box's first cell over pixel (`x0`, `y0`); only its first `visible` columns are on it.
typedef struct {
    uint8_t *data;
    ptrdiff_t stride;
    ptrdiff_t x0;
    ptrdiff_t y0;
    ptrdiff_t visible;
} tk_target;

/// Adds the closed contour through `count` points (x, y pairs) to the cells: each edge
/// clipped to the surface, the parts left or right of it kept as vertical edges on its sides.
void tk_region_add_contour(const tk_region *region, const double *points, ptrdiff_t count);

/// Sums each row into coverage (nonzero, or `even_odd`), composites `word` OVER the target
/// through it, and empties the cells and spans for the next shape.
void tk_region_composite(const tk_region *region, bool even_odd, uint32_t word, const tk_target *target);

/// Sums each row into coverage and unites it with `mask` (a region of the same size whose
/// cells hold coverage): a + b − ab, or the larger of the two within `reach` of the point
/// (`designed_x`, `designed_y`) when `designed`; empties the cells and spans.
void tk_region_unite(const tk_region *region, bool even_odd, const tk_region *mask,
                     bool designed, double designed_x, double designed_y, double reach);

/// Composites `word` through the coverage the cells hold (a mask), and empties them.
void tk_region_composite_mask(const tk_region *region, uint32_t word, const tk_target *target);

#endif
