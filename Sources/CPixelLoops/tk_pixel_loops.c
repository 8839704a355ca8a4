#include "tk_pixel_loops.h"
#if defined(__x86_64__)
#include <immintrin.h>
#endif

// The sums must be the Swift code's: a * b then + c, never fused (x86-64's baseline has no
// FMA, but a -march that has it would otherwise let clang fuse them).
#pragma STDC FP_CONTRACT OFF

static void warp_columns(const uint8_t *src, const ptrdiff_t *row_start, const float *row_weight, int row_taps,
                     const ptrdiff_t *columns, ptrdiff_t count, ptrdiff_t min_column, float *line) {
    for (ptrdiff_t n = 0; n < count; n++) {
        ptrdiff_t column = columns[n];
        float r = 0, g = 0, b = 0, a = 0;
        for (int k = 0; k < row_taps; k++) {
            const uint8_t *p = src + row_start[k] + column * 4;
            float alpha = (float)p[3] * row_weight[k];
            r += (float)p[0] * alpha;
            g += (float)p[1] * alpha;
            b += (float)p[2] * alpha;
            a += alpha;  // Swift's 1 * alpha: alpha exactly
        }
        float *sum = line + (column - min_column) * 4;
        sum[0] = r; sum[1] = g; sum[2] = b; sum[3] = a;
    }
}

static inline uint8_t channel(float premultiplied, float alpha) {
    float value = premultiplied / alpha + 0.5f;
    value = value > 0 ? value : 0;
    value = value < 255 ? value : 255;
    return (uint8_t)value;  // truncation, as Swift's UInt8(Float)
}

static inline bool store(float r, float g, float b, float a, uint8_t *pixel) {
    if (!(a > 0.5f)) return false;
    pixel[0] = channel(r, a);
    pixel[1] = channel(g, a);
    pixel[2] = channel(b, a);
    float alpha = a < 255 ? a : 255;
    pixel[3] = alpha + 0.5f > 255 ? 255 : (uint8_t)(alpha + 0.5f);
    return true;
}

bool tk_warp_store(float r, float g, float b, float a, uint8_t *pixel) {
    return store(r, g, b, a, pixel);
}

static bool warp_row(const float *line, ptrdiff_t min_column, const ptrdiff_t *index, const float *weight,
                 const bool *valid, int taps, ptrdiff_t size, uint8_t *out) {
    bool any = false;
    for (ptrdiff_t i = 0; i < size; i++) {
        if (!valid[i]) continue;
        float r = 0, g = 0, b = 0, a = 0;
        for (int k = 0; k < taps; k++) {
            float w = weight[i * taps + k];
            if (w == 0) continue;
            const float *p = line + (index[i * taps + k] - min_column) * 4;
            r += p[0] * w; g += p[1] * w; b += p[2] * w; a += p[3] * w;
        }
        if (store(r, g, b, a, out + i * 4)) any = true;
    }
    return any;
}

#if defined(__x86_64__)
// Bilinear (two taps each way), two pixels to a 256-bit vector: the same operations lane by
// lane as the loops above, so the same floats. The sums start from zero as above, and a
// zero-weight column tap, which the loop above skips, adds 0 * a finite value: at most the
// sign of a zero changes, which no stored byte can show (0 / a + 0.5 rounds to 0 either way).

__attribute__((target("avx2")))
static inline __m256 two_pixels(const uint8_t *first, const uint8_t *second) {
    uint32_t a, b;
    __builtin_memcpy(&a, first, 4);
    __builtin_memcpy(&b, second, 4);
    __m128i bytes = _mm_set_epi32(0, 0, (int)b, (int)a);
    return _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(bytes));
}

__attribute__((target("avx2")))
static inline __m256 weighted(__m256 pixels, __m256 weight) {
    // (r, g, b, 1) * (a * weight), per pixel.
    __m256 alpha = _mm256_mul_ps(_mm256_permute_ps(pixels, 0xFF), weight);
    __m256 rgb1 = _mm256_blend_ps(pixels, _mm256_set1_ps(1), 0x88);
    return _mm256_mul_ps(rgb1, alpha);
}

__attribute__((target("avx2")))
static void warp_columns_bilinear_avx2(const uint8_t *src, const ptrdiff_t *row_start, const float *row_weight,
                                       const ptrdiff_t *columns, ptrdiff_t count, ptrdiff_t min_column, float *line) {
    const uint8_t *top = src + row_start[0], *bottom = src + row_start[1];
    __m256 top_weight = _mm256_set1_ps(row_weight[0]), bottom_weight = _mm256_set1_ps(row_weight[1]);
    ptrdiff_t n = 0;
    for (; n + 1 < count; n += 2) {
        ptrdiff_t x0 = columns[n] * 4, x1 = columns[n + 1] * 4;
        __m256 sum = _mm256_add_ps(_mm256_setzero_ps(), weighted(two_pixels(top + x0, top + x1), top_weight));
        sum = _mm256_add_ps(sum, weighted(two_pixels(bottom + x0, bottom + x1), bottom_weight));
        _mm_storeu_ps(line + (columns[n] - min_column) * 4, _mm256_castps256_ps128(sum));
        _mm_storeu_ps(line + (columns[n + 1] - min_column) * 4, _mm256_extractf128_ps(sum, 1));
    }
    if (n < count) warp_columns(src, row_start, row_weight, 2, columns + n, count - n, min_column, line);
}

__attribute__((target("avx2")))
static inline __m256 two_sums(const float *line, const ptrdiff_t *index, const float *weight, ptrdiff_t min_column) {
    // Pixel i's taps at 2i, 2i+1; pixel i+1's at 2i+2, 2i+3. A zero-weight tap reads the
    // line's first column (its index may be anything).
    __m256 sum = _mm256_setzero_ps();
    for (int k = 0; k < 2; k++) {
        ptrdiff_t a = weight[k] != 0 ? index[k] - min_column : 0;
        ptrdiff_t b = weight[2 + k] != 0 ? index[2 + k] - min_column : 0;
        __m256 values = _mm256_set_m128(_mm_loadu_ps(line + b * 4), _mm_loadu_ps(line + a * 4));
        __m256 w = _mm256_set_m128(_mm_set1_ps(weight[2 + k]), _mm_set1_ps(weight[k]));
        sum = _mm256_add_ps(sum, _mm256_mul_ps(values, w));
    }
    return sum;
}

__attribute__((target("avx2")))
static bool warp_row_bilinear_avx2(const float *line, ptrdiff_t min_column, const ptrdiff_t *index, const float *weight,
                                   const bool *valid, ptrdiff_t size, uint8_t *out) {
    bool any = false;
    ptrdiff_t i = 0;
    for (; i + 1 < size; i += 2) {
        if (!valid[i] && !valid[i + 1]) continue;
        __m256 sum = two_sums(line, index + i * 2, weight + i * 2, min_column);
        // Lanes 0-2: premultiplied / a + 0.5; lane 3: min(a, 255) / 1 + 0.5. Then clamped to
        // 0...255 and truncated: the scalar store's values (its alpha test, t > 255 ? 255,
        // equals truncating min(t, 255) for t <= 255.5).
        __m256 alpha = _mm256_permute_ps(sum, 0xFF);
        __m256 numerator = _mm256_blend_ps(sum, _mm256_min_ps(alpha, _mm256_set1_ps(255)), 0x88);
        __m256 denominator = _mm256_blend_ps(alpha, _mm256_set1_ps(1), 0x88);
        __m256 value = _mm256_add_ps(_mm256_div_ps(numerator, denominator), _mm256_set1_ps(0.5f));
        value = _mm256_min_ps(_mm256_max_ps(value, _mm256_setzero_ps()), _mm256_set1_ps(255));
        __m256i integers = _mm256_cvttps_epi32(value);
        __m128i words = _mm_packus_epi32(_mm256_castsi256_si128(integers), _mm256_extracti128_si256(integers, 1));
        __m128i bytes = _mm_packus_epi16(words, words);
        float alphas[8];
        _mm256_storeu_ps(alphas, sum);
        for (int n = 0; n < 2; n++) {
            if (!valid[i + n] || !(alphas[n * 4 + 3] > 0.5f)) continue;
            uint32_t pixel = (uint32_t)_mm_extract_epi32(bytes, 0);
            if (n == 1) pixel = (uint32_t)_mm_extract_epi32(bytes, 1);
            __builtin_memcpy(out + (i + n) * 4, &pixel, 4);
            any = true;
        }
    }
    if (i < size && warp_row(line, min_column, index + i * 2, weight + i * 2, valid + i, 2, size - i, out + i * 4)) any = true;
    return any;
}

static bool has_avx2(void) {
    static int known = -1;
    if (known < 0) known = __builtin_cpu_supports("avx2") ? 1 : 0;
    return known == 1;
}

static bool has_ssse3(void) {
    static int known = -1;
    if (known < 0) known = __builtin_cpu_supports("ssse3") ? 1 : 0;
    return known == 1;
}
#endif

void tk_warp_columns(const uint8_t *src, const ptrdiff_t *row_start, const float *row_weight, int row_taps,
                     const ptrdiff_t *columns, ptrdiff_t count, ptrdiff_t min_column, float *line) {
#if defined(__x86_64__)
    if (row_taps == 2 && has_avx2()) {
        warp_columns_bilinear_avx2(src, row_start, row_weight, columns, count, min_column, line);
        return;
    }
#endif
    warp_columns(src, row_start, row_weight, row_taps, columns, count, min_column, line);
}

bool tk_warp_row(const float *line, ptrdiff_t min_column, const ptrdiff_t *index, const float *weight,
                 const bool *valid, int taps, ptrdiff_t size, uint8_t *out) {
#if defined(__x86_64__)
    if (taps == 2 && has_avx2()) return warp_row_bilinear_avx2(line, min_column, index, weight, valid, size, out);
#endif
    return warp_row(line, min_column, index, weight, valid, taps, size, out);
}

__attribute__((target_clones("avx2", "default")))
bool tk_average_quadrant(const uint8_t *child, ptrdiff_t size, uint8_t *parent, ptrdiff_t origin_x, ptrdiff_t origin_y) {
    bool any = false;
    ptrdiff_t half = size / 2, stride = size * 4;
    for (ptrdiff_t j = 0; j < half; j++) {
        const uint8_t *top = child + 2 * j * stride, *bottom = top + stride;
        uint8_t *row = parent + (origin_y + j) * stride + origin_x * 4;
        // Straight-line, so clang vectorizes it. The integer quotients are taken in float,
        // exactly: a quotient n / a of n < 2^18 and a <= 1020 lies at least 1/1020 from an
        // integer, far more than float's rounding of it (2^-24 of at most 256), so it
        // truncates to the integer quotient.
        for (ptrdiff_t i = 0; i < half; i++) {
            const uint8_t *p = top + 8 * i, *q = bottom + 8 * i;
            uint32_t a0 = p[3], a1 = p[7], a2 = q[3], a3 = q[7];
            uint32_t a = a0 + a1 + a2 + a3;
            uint32_t r = p[0] * a0 + p[4] * a1 + q[0] * a2 + q[4] * a3;
            uint32_t g = p[1] * a0 + p[5] * a1 + q[1] * a2 + q[5] * a3;
            uint32_t b = p[2] * a0 + p[6] * a1 + q[2] * a2 + q[6] * a3;
            float divisor = (float)(a ? a : 1);
            uint8_t *out = row + i * 4;
            out[0] = (uint8_t)(uint32_t)((float)(r + a / 2) / divisor);
            out[1] = (uint8_t)(uint32_t)((float)(g + a / 2) / divisor);
            out[2] = (uint8_t)(uint32_t)((float)(b + a / 2) / divisor);
            out[3] = (uint8_t)((a + 2) / 4);
            any |= a != 0;
        }
    }
    return any;
}

#if defined(__x86_64__)
__attribute__((target("ssse3")))
static ptrdiff_t rgb_to_rgba_ssse3(const uint8_t *rgb, uint8_t *rgba, ptrdiff_t pixels) {
    // Each 16-byte load holds 4 pixels (12 bytes) and 4 bytes of the next: the last load of
    // 16 pixels reads 4 bytes past them, so the loop stops while that is still in the row.
    const __m128i spread = _mm_setr_epi8(0, 1, 2, -1, 3, 4, 5, -1, 6, 7, 8, -1, 9, 10, 11, -1);
    const __m128i opaque = _mm_set1_epi32((int)0xFF000000u);
    ptrdiff_t x = 0;
    for (; 3 * x + 52 <= 3 * pixels; x += 16) {
        const uint8_t *in = rgb + 3 * x;
        uint8_t *out = rgba + 4 * x;
        for (int k = 0; k < 4; k++) {
            __m128i p = _mm_loadu_si128((const __m128i *)(in + 12 * k));
            _mm_storeu_si128((__m128i *)(out + 16 * k), _mm_or_si128(_mm_shuffle_epi8(p, spread), opaque));
        }
    }
    return x;
}
#endif

void tk_rgb_to_rgba(const uint8_t *rgb, uint8_t *rgba, ptrdiff_t pixels) {
    ptrdiff_t x = 0;
#if defined(__x86_64__)
    if (has_ssse3()) x = rgb_to_rgba_ssse3(rgb, rgba, pixels);
#endif
    for (; x < pixels; x++) {
        rgba[4 * x] = rgb[3 * x];
        rgba[4 * x + 1] = rgb[3 * x + 1];
        rgba[4 * x + 2] = rgb[3 * x + 2];
        rgba[4 * x + 3] = 255;
    }
}
