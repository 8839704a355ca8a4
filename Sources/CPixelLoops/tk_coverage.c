#include "tk_coverage.h"
#include <emmintrin.h>

// The masks must be the Swift code's: coverage * 255 then + 0.5, never fused.
#pragma STDC FP_CONTRACT OFF

/// Cells are summed and blended this many at a time (masks on the stack in between).
#define CHUNK 256

/// Each 16-bit lane times the matching lane of `a` / 255, rounded (pixman's MUL_UN8:
/// t = x * a + 128, (t + (t >> 8)) >> 8); every value fits 16 bits.
static inline __m128i multiply_lanes(__m128i x, __m128i a) {
    __m128i t = _mm_add_epi16(_mm_mullo_epi16(x, a), _mm_set1_epi16(0x80));
    return _mm_srli_epi16(_mm_add_epi16(t, _mm_srli_epi16(t, 8)), 8);
}

/// Premultiplied `source` OVER `destination` for two pixels in 16-bit lanes: the
/// destination times 255 − the source's alpha, plus the source, each byte saturated.
static inline __m128i over_lanes(__m128i source, __m128i destination) {
    __m128i alpha = _mm_shufflehi_epi16(_mm_shufflelo_epi16(source, 0xFF), 0xFF);
    return _mm_adds_epu16(multiply_lanes(destination, _mm_sub_epi16(_mm_set1_epi16(255), alpha)), source);
}

/// The word through an 8-bit mask, OVER one pixel (PixelWord.Source and blend, one pixel).
static inline uint32_t blend_one(uint32_t word, uint32_t mask, uint32_t pixel) {
    __m128i zero = _mm_setzero_si128();
    __m128i w = _mm_unpacklo_epi8(_mm_cvtsi32_si128((int)word), zero);
    __m128i source = multiply_lanes(w, _mm_set1_epi16((short)mask));
    __m128i d = _mm_unpacklo_epi8(_mm_cvtsi32_si128((int)pixel), zero);
    __m128i sum = over_lanes(source, d);
    return (uint32_t)_mm_cvtsi128_si32(_mm_packus_epi16(sum, zero));
}

/// Blends `word` through `masks[0..<count]` over `pixels`, four pixels a step; runs of
/// four clear masks leave the pixels, four full masks of an opaque word replace them.
/// Adding the saturated 16-bit lanes then packing equals pixman's per-byte saturation:
/// each lane's sum is at most 510, which the pack clamps to 255.
static void blend_masks(uint32_t word, const uint8_t *masks, ptrdiff_t count, uint32_t *pixels) {
    __m128i zero = _mm_setzero_si128();
    __m128i w = _mm_unpacklo_epi8(_mm_cvtsi32_si128((int)word), zero);
    __m128i w2 = _mm_unpacklo_epi64(w, w);
    bool opaque = word >> 24 == 255;
    ptrdiff_t i = 0;
    for (; i + 4 <= count; i += 4) {
        uint32_t four;
        __builtin_memcpy(&four, masks + i, 4);
        if (four == 0) continue;
        if (four == 0xFFFFFFFFu && opaque) {
            _mm_storeu_si128((__m128i *)(pixels + i), _mm_set1_epi32((int)word));
            continue;
        }
        __m128i m = _mm_unpacklo_epi8(_mm_cvtsi32_si128((int)four), zero);  // m0 m1 m2 m3 as 16 bits
        m = _mm_unpacklo_epi16(m, m);                                      // m0 m0 m1 m1 m2 m2 m3 m3
        __m128i m01 = _mm_unpacklo_epi32(m, m), m23 = _mm_unpackhi_epi32(m, m);
        __m128i d = _mm_loadu_si128((const __m128i *)(pixels + i));
        __m128i low = over_lanes(multiply_lanes(w2, m01), _mm_unpacklo_epi8(d, zero));
        __m128i high = over_lanes(multiply_lanes(w2, m23), _mm_unpackhi_epi8(d, zero));
        _mm_storeu_si128((__m128i *)(pixels + i), _mm_packus_epi16(low, high));
    }
    for (; i < count; i++) {
        if (masks[i] != 0) pixels[i] = blend_one(word, masks[i], pixels[i]);
    }
}

/// Coverage in [0, 1] to masks, as PixelWord.Source rounds it, four at a time.
static inline void masks_of(const float *coverage, ptrdiff_t count, uint8_t *masks) {
    ptrdiff_t i = 0;
    for (; i + 4 <= count; i += 4) {
        __m128 c = _mm_loadu_ps(coverage + i);
        __m128i m = _mm_cvttps_epi32(_mm_add_ps(_mm_mul_ps(c, _mm_set1_ps(255)), _mm_set1_ps(0.5f)));
        m = _mm_packs_epi32(m, m);
        int four = _mm_cvtsi128_si32(_mm_packus_epi16(m, m));
        __builtin_memcpy(masks + i, &four, 4);
    }
    for (; i < count; i++) masks[i] = (uint8_t)(uint32_t)(coverage[i] * 255.0f + 0.5f);
}

/// CoverageRaster's `coverage(sum, rule)` four at a time: |sum|, folded for even-odd,
/// at most 1. (A sum of 2^24 or more is an even whole number, as its clamp to 2^24 is, so
/// even-odd gives 0 for both; the clamp keeps the conversion to int in range.)
static inline void coverage_of(float *sums, ptrdiff_t count, bool even_odd) {
    __m128 sign = _mm_set1_ps(-0.0f), one = _mm_set1_ps(1);
    ptrdiff_t i = 0;
    for (; i + 4 <= count; i += 4) {
        __m128 c = _mm_andnot_ps(sign, _mm_loadu_ps(sums + i));
        if (even_odd) {
            c = _mm_min_ps(c, _mm_set1_ps(16777216.0f));
            __m128 whole = _mm_cvtepi32_ps(_mm_cvttps_epi32(_mm_mul_ps(c, _mm_set1_ps(0.5f))));
            c = _mm_sub_ps(c, _mm_mul_ps(_mm_set1_ps(2), whole));
            __m128 folded = _mm_sub_ps(_mm_set1_ps(2), c);
            __m128 above = _mm_cmpgt_ps(c, one);
            c = _mm_or_ps(_mm_and_ps(above, folded), _mm_andnot_ps(above, c));
        }
        // min(c, 1) as Swift's: 1 < c ? 1 : c.
        __m128 above = _mm_cmplt_ps(one, c);
        _mm_storeu_ps(sums + i, _mm_or_ps(_mm_and_ps(above, one), _mm_andnot_ps(above, c)));
    }
    for (; i < count; i++) {
        float c = __builtin_fabsf(sums[i]);
        if (even_odd) {
            c = c < 16777216.0f ? c : 16777216.0f;
            c -= 2 * (float)(int32_t)(c * 0.5f);
            if (c > 1) c = 2 - c;
        }
        sums[i] = 1 < c ? 1 : c;
    }
}

/// One row's cells `first`...`last` summed in order into coverage (one addition a cell: the
/// only chain), the cells zeroed; the sums of the first `shown` of them made coverage.
static inline void sum_row(float *cells, ptrdiff_t count, float *sum, float *sums) {
    float running = *sum;
    for (ptrdiff_t k = 0; k < count; k++) {
        running += cells[k];
        sums[k] = running;
        cells[k] = 0;
    }
    *sum = running;
}

static inline ptrdiff_t least(ptrdiff_t a, ptrdiff_t b) { return a < b ? a : b; }

/// The cells of the row that edges touched, its span emptied for the next shape; false
/// when none did.
static inline bool take_span(const tk_region *region, ptrdiff_t row, ptrdiff_t *first, ptrdiff_t *last) {
    int32_t *span = region->spans + 2 * row;
    *first = span[0];
    *last = span[1];
    span[0] = INT32_MAX;
    span[1] = -1;
    return *first <= *last;
}

/// The target's pixels under the region's row.
static inline uint32_t *target_row(const tk_target *target, ptrdiff_t row) {
    return (uint32_t *)(target->data + (target->y0 + row) * target->stride + target->x0 * 4);
}

/// Composites `word` through each row's coverage: the running sums of its cells (`summed`,
/// nonzero or even-odd) or the cells themselves (a mask); empties the cells and spans.
static void composite(const tk_region *region, bool summed, bool even_odd, uint32_t word, const tk_target *target) {
    float sums[CHUNK];
    uint8_t masks[CHUNK];
    for (ptrdiff_t row = 0; row < region->rows; row++) {
        ptrdiff_t first, last;
        if (!take_span(region, row, &first, &last)) continue;
        float *cells = region->cells + row * region->columns;
        uint32_t *pixels = target_row(target, row);
        float sum = 0;
        for (ptrdiff_t start = first; start <= last; start += CHUNK) {
            ptrdiff_t count = least(last + 1 - start, CHUNK), shown = least(target->visible - start, count);
            if (summed) {
                sum_row(cells + start, count, &sum, sums);
                if (shown > 0) coverage_of(sums, shown, even_odd);
            }
            if (shown > 0) {
                masks_of(summed ? sums : cells + start, shown, masks);
                blend_masks(word, masks, shown, pixels + start);
            }
            if (!summed) for (ptrdiff_t k = 0; k < count; k++) cells[start + k] = 0;
        }
    }
}

void tk_region_composite(const tk_region *region, bool even_odd, uint32_t word, const tk_target *target) {
    composite(region, true, even_odd, word, target);
}

void tk_region_composite_mask(const tk_region *region, uint32_t word, const tk_target *target) {
    composite(region, false, false, word, target);
}

void tk_region_unite(const tk_region *region, bool even_odd, const tk_region *mask,
                     bool designed, double designed_x, double designed_y, double reach) {
    float sums[CHUNK];
    for (ptrdiff_t row = 0; row < region->rows; row++) {
        ptrdiff_t first, last;
        if (!take_span(region, row, &first, &last)) continue;
        int32_t *mask_span = mask->spans + 2 * row;
        if (first < mask_span[0]) mask_span[0] = (int32_t)first;
        if (last > mask_span[1]) mask_span[1] = (int32_t)last;
        float *cells = region->cells + row * region->columns, *covered = mask->cells + row * region->columns;
        float sum = 0;
        for (ptrdiff_t start = first; start <= last; start += CHUNK) {
            ptrdiff_t count = least(last + 1 - start, CHUNK);
            sum_row(cells + start, count, &sum, sums);
            coverage_of(sums, count, even_odd);
            for (ptrdiff_t k = 0; k < count; k++) {
                float a = covered[start + k], b = sums[k];
                if (a == 0 || b >= 1) {
                    covered[start + k] = b >= a ? b : a;
                } else if (b > 0 && a < 1) {
                    double x = region->origin_x + (double)(start + k) + 0.5 - (designed ? designed_x : 0);
                    double y = region->origin_y + (double)row + 0.5 - (designed ? designed_y : 0);
                    if (designed && x * x + y * y <= reach * reach) {
                        covered[start + k] = b >= a ? b : a;
                    } else {
                        covered[start + k] = a + b - a * b;
                    }
                }
            }
        }
    }
}

/// The smallest integer at or above a non-negative x (in range).
static inline ptrdiff_t ceiling(double x) {
    ptrdiff_t truncated = (ptrdiff_t)x;
    return (double)truncated < x ? truncated + 1 : truncated;
}

/// One edge in region coordinates: per row it crosses, the signed area between it and the
/// row's right end, split between the cells it passes, every index clamped into the region.
static void add_line(const tk_region *region, double ax, double ay, double bx, double by) {
    if (ay == by || !__builtin_isfinite(ax) || !__builtin_isfinite(ay) || !__builtin_isfinite(bx) || !__builtin_isfinite(by)) return;
    double max_x = (double)(region->columns - 2);
    bool downward = ay < by;
    float direction = downward ? 1 : -1;
    double top_x = downward ? ax : bx, top_y = downward ? ay : by;
    double bottom_x = downward ? bx : ax, bottom_y = downward ? by : ay;
    double first_y = top_y >= 0 ? top_y : 0;                                         // max(0, top.y)
    double rows = (double)region->rows, last_y = bottom_y < rows ? bottom_y : rows;  // min(rows, bottom.y)
    if (!(last_y > first_y)) return;
    double dxdy = (bottom_x - top_x) / (bottom_y - top_y);
#define CLAMP(v) ((v) >= 0 ? ((v) <= max_x ? (v) : max_x) : 0)
    double x = top_x + (first_y - top_y) * dxdy;
    x = CLAMP(x);
    ptrdiff_t first_row = (ptrdiff_t)first_y, last_row = ceiling(last_y);
    if (last_row > region->rows) last_row = region->rows;
    for (ptrdiff_t row = first_row; row < last_row; row++) {
        double y = (double)row;
        double below = last_y < y + 1 ? last_y : y + 1, above = first_y >= y ? first_y : y;
        double dy = below - above;
        double next = x + dxdy * dy;
        next = CLAMP(next);
        float d = (float)dy * direction;
        float *cells = region->cells + row * region->columns;
        double left = x < next ? x : next, right = x < next ? next : x;
        ptrdiff_t left_index = (ptrdiff_t)left, right_ceiling = ceiling(right);
        double left_floor = (double)left_index, right_ceil = (double)right_ceiling;
        ptrdiff_t right_index = right_ceiling > left_index + 1 ? right_ceiling : left_index + 1;
        int32_t *span = region->spans + 2 * row;
        if ((int32_t)left_index < span[0]) span[0] = (int32_t)left_index;
        if ((int32_t)right_index > span[1]) span[1] = (int32_t)right_index;
        if (right_index <= left_index + 1) {
            float mean = (float)(0.5 * (x + next) - left_floor);
            cells[left_index] += d - d * mean;
            cells[left_index + 1] += d * mean;
        } else {
            float s = (float)(1 / (right - left));
            float left_fraction = (float)(left - left_floor);
            float a0 = 0.5f * s * (1 - left_fraction) * (1 - left_fraction);
            float right_fraction = (float)(right - right_ceil + 1);
            float am = 0.5f * s * right_fraction * right_fraction;
            cells[left_index] += d * a0;
            if (right_index == left_index + 2) {
                cells[left_index + 1] += d * (1 - a0 - am);
            } else {
                float a1 = s * (1.5f - left_fraction);
                cells[left_index + 1] += d * (a1 - a0);
                for (ptrdiff_t index = left_index + 2; index < right_index - 1; index++) cells[index] += d * s;
                float a2 = a1 + (float)(right_index - left_index - 3) * s;
                cells[right_index - 1] += d * (1 - a2 - am);
            }
            cells[right_index] += d * am;
        }
        x = next;
    }
#undef CLAMP
}

/// The edge from (x0, y0) to (x1, y1) clipped to the surface: the parts above and below it
/// add nothing; the parts left of it become a vertical edge on its left side (they still
/// wind the pixels to their right), those right of it one on its right side.
static void add_edge(const tk_region *region, double x0, double y0, double x1, double y1) {
    if (y0 == y1) return;
    double height = region->height, width = region->width;
    double dxdy = (x1 - x0) / (y1 - y0);
    if (y0 < y1) {
        if (!(y1 > 0 && y0 < height)) return;
        if (y0 < 0) { x0 += (0 - y0) * dxdy; y0 = 0; }
        if (y1 > height) { x1 = x0 + (height - y0) * dxdy; y1 = height; }
    } else {
        if (!(y0 > 0 && y1 < height)) return;
        if (y1 < 0) { x1 += (0 - y1) * dxdy; y1 = 0; }
        if (y0 > height) { x0 = x1 + (height - y1) * dxdy; y0 = height; }
    }
    double first = 2.0, second = 2.0;
    if (x0 != x1) {
        double at_left = (0 - x0) / (x1 - x0), at_right = (width - x0) / (x1 - x0);
        if (at_left > 0 && at_left < 1) first = at_left;
        if (at_right > 0 && at_right < 1) second = at_right;
        if (second < first) { double t = first; first = second; second = t; }
    }
    double start_x = x0, start_y = y0;
    for (int step = 0; step < 3; step++) {
        double t = step == 0 ? first : step == 1 ? second : 1.0;
        if (!(t <= 1)) continue;
        double end_x = t == 1 ? x1 : x0 + (x1 - x0) * t, end_y = t == 1 ? y1 : y0 + (y1 - y0) * t;
        // Swift's min(max(v, 0), width): max(v, 0) is 0 >= v ? 0 : v, min(m, w) is w < m ? w : m.
        double a = 0 >= start_x ? 0 : start_x, b = 0 >= end_x ? 0 : end_x;
        a = width < a ? width : a;
        b = width < b ? width : b;
        add_line(region, a - region->origin_x, start_y - region->origin_y, b - region->origin_x, end_y - region->origin_y);
        start_x = end_x;
        start_y = end_y;
    }
}

void tk_region_add_contour(const tk_region *region, const double *points, ptrdiff_t count) {
    if (count < 2) return;
    double px = points[2 * (count - 1)], py = points[2 * (count - 1) + 1];
    for (ptrdiff_t i = 0; i < count; i++) {
        double x = points[2 * i], y = points[2 * i + 1];
        add_edge(region, px, py, x, y);
        px = x;
        py = y;
    }
}
