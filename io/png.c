#include "png.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "../solver/error.h"
#include "../solver/font.h"
#include "fsutil.h"

enum { MARGIN = 8, BAR_HEIGHT = 16, TEXT_SCALE = 2, MIN_IMAGE = 480 };

typedef struct rgb_image {
    int width, height;
    unsigned char *pixels; /* width * height * 3 */
} rgb_image;

/* Fixed map: dark blue, purple-red, orange, yellow, white. No libm calls:
 * called for every pixel, and after the AVX-512 stencil has run, libm's
 * SSE-encoded fmin/fmax/lround pay a state-transition penalty on each call,
 * making the PNG several times slower inside a run than on its own. */
static void colour_map(double t, unsigned char rgb[3])
{
    static const double stops[5][3] = {{10, 10, 80}, {150, 20, 110}, {235, 90, 20}, {250, 210, 40}, {255, 255, 245}};
    t = isfinite(t) ? (t < 0.0 ? 0.0 : t > 1.0 ? 1.0 : t) : 0.0;
    double x = t * 4.0;
    int i = x >= 4.0 ? 3 : (int)x;
    double f = x - i;
    for (int c = 0; c < 3; ++c) rgb[c] = (unsigned char)(stops[i][c] * (1 - f) + stops[i + 1][c] * f + 0.5);
}

static void put(rgb_image *im, int x, int y, const unsigned char rgb[3])
{
    if (x >= 0 && y >= 0 && x < im->width && y < im->height) memcpy(im->pixels + 3 * ((size_t)y * im->width + x), rgb, 3);
}

static void draw_text(rgb_image *im, int x0, int y0, const char *text)
{
    const unsigned char ink[3] = {230, 230, 230};
    for (int ch = 0; text[ch]; ++ch)
        for (int r = 0; r < FONT_HEIGHT * TEXT_SCALE; ++r)
            for (int c = 0; c < FONT_WIDTH * TEXT_SCALE; ++c)
                if (font_ink(text[ch], c / TEXT_SCALE, r / TEXT_SCALE))
                    put(im, x0 + ch * (FONT_WIDTH + 1) * TEXT_SCALE + c, y0 + r, ink);
}

static double field_at(const void *field, heat_precision p, long index)
{
    return p == HEAT_FLOAT ? ((const float *)field)[index] : ((const double *)field)[index];
}

/* Slice axes: u runs along the image's width, v up its height. */
static void slice_axes(int axis, int *u, int *v)
{
    *u = axis == 0 ? 1 : 0;
    *v = axis == 2 ? 1 : 2;
}

static void draw_slice(rgb_image *im, const void *field, const heat_grid *g, heat_precision p, const png_slice *s,
                       int scale)
{
    int u, v;
    slice_axes(s->axis, &u, &v);
    const int *n = g->n;
    for (int b = 0; b < n[v] * scale; ++b)
        for (int a = 0; a < n[u] * scale; ++a) {
            int idx[3];
            idx[s->axis] = s->index, idx[u] = a / scale, idx[v] = n[v] - 1 - b / scale;
            double t = field_at(field, p, ((long)idx[2] * n[1] + idx[1]) * n[0] + idx[0]);
            unsigned char rgb[3];
            colour_map((t - s->low) / (s->high - s->low), rgb);
            put(im, MARGIN + a, MARGIN + b, rgb);
        }
}

static void draw_bar(rgb_image *im, int y0, int width, const png_slice *s)
{
    for (int a = 0; a < width; ++a) {
        unsigned char rgb[3];
        colour_map((double)a / (width - 1), rgb);
        for (int b = 0; b < BAR_HEIGHT; ++b) put(im, MARGIN + a, y0 + b, rgb);
    }
    char text[96];
    snprintf(text, sizeof text, "T %.4g TO %.4g", s->low, s->high);
    draw_text(im, MARGIN, y0 + BAR_HEIGHT + 6, text);
}

static void put_u32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24), p[1] = (unsigned char)(v >> 16), p[2] = (unsigned char)(v >> 8), p[3] = (unsigned char)v;
}

/* Appends one PNG chunk (length, type, data, CRC over type and data). */
static size_t put_chunk(unsigned char *out, const char *type, const unsigned char *data, size_t len)
{
    put_u32(out, (uint32_t)len);
    memcpy(out + 4, type, 4);
    if (len) memcpy(out + 8, data, len);
    uLong crc = crc32(0L, out + 4, 4);
    if (len) crc = crc32(crc, data, (uInt)len); /* crc32(crc, NULL, 0) would reset to 0 */
    put_u32(out + 8 + len, (uint32_t)crc);
    return len + 12;
}

static int encode_png(const rgb_image *im, unsigned char **png, size_t *png_len)
{
    size_t row = (size_t)im->width * 3 + 1, raw_len = row * im->height;
    unsigned char *raw = malloc(raw_len);
    uLongf zlen = compressBound((uLong)raw_len);
    *png = malloc(zlen + 128);
    if (!raw || !*png) return free(raw), free(*png), *png = NULL, heat_error(HEAT_ERR_RUNTIME, "out of memory for a PNG");
    for (int y = 0; y < im->height; ++y) {
        raw[y * row] = 0; /* filter type None */
        memcpy(raw + y * row + 1, im->pixels + (size_t)y * im->width * 3, (size_t)im->width * 3);
    }
    static const unsigned char signature[8] = {137, 80, 78, 71, 13, 10, 26, 10};
    unsigned char ihdr[13] = {0};
    put_u32(ihdr, (uint32_t)im->width), put_u32(ihdr + 4, (uint32_t)im->height);
    ihdr[8] = 8, ihdr[9] = 2; /* 8-bit RGB */
    unsigned char *z = malloc(zlen);
    int ok = z && compress2(z, &zlen, raw, (uLong)raw_len, Z_BEST_SPEED) == Z_OK; /* a quick look: speed over size */
    size_t used = 8;
    memcpy(*png, signature, 8);
    if (ok) {
        unsigned char *grown = realloc(*png, zlen + 128);
        ok = grown != NULL;
        if (ok) *png = grown;
    }
    if (ok) {
        used += put_chunk(*png + used, "IHDR", ihdr, 13);
        used += put_chunk(*png + used, "IDAT", z, zlen);
        used += put_chunk(*png + used, "IEND", NULL, 0);
    }
    free(raw), free(z);
    *png_len = used;
    if (!ok) return free(*png), *png = NULL, heat_error(HEAT_ERR_RUNTIME, "PNG compression failed");
    return HEAT_OK;
}

/* The step and simulated time under the colour bar's range: a PNG seen on its own says when it is. */
static void draw_clock(rgb_image *im, int y0, long step, double time)
{
    char text[96];
    snprintf(text, sizeof text, "STEP %ld  TIME %.6g", step, time);
    for (char *c = text; *c; ++c) *c = *c == 'e' ? 'E' : *c; /* the font has capitals only */
    draw_text(im, MARGIN, y0, text);
}

int png_write_slice(const char *path, const void *field, const heat_grid *g, heat_precision p, const png_slice *s,
                    long step, double time)
{
    int u, v;
    slice_axes(s->axis, &u, &v);
    HEAT_CHECK(s->index >= 0 && s->index < g->n[s->axis], "PNG slice index %d outside 0..%d", s->index, g->n[s->axis] - 1);
    int largest = g->n[u] > g->n[v] ? g->n[u] : g->n[v];
    int scale = largest >= MIN_IMAGE ? 1 : (MIN_IMAGE + largest - 1) / largest;
    rgb_image im;
    im.width = g->n[u] * scale + 2 * MARGIN;
    int text_line = FONT_HEIGHT * TEXT_SCALE + 6;
    im.height = g->n[v] * scale + 3 * MARGIN + BAR_HEIGHT + 2 * text_line;
    im.pixels = calloc((size_t)im.width * im.height, 3);
    HEAT_CHECK(im.pixels, "out of memory for a %d x %d PNG", im.width, im.height);
    draw_slice(&im, field, g, p, s, scale);
    draw_bar(&im, 2 * MARGIN + g->n[v] * scale, g->n[u] * scale, s);
    draw_clock(&im, 2 * MARGIN + g->n[v] * scale + BAR_HEIGHT + 6 + text_line, step, time);
    unsigned char *png = NULL;
    size_t len = 0;
    int status = encode_png(&im, &png, &len);
    free(im.pixels);
    if (status == HEAT_OK) status = fs_write_atomic_unsynced_folder(path, png, len); /* the writer syncs the folder */
    free(png);
    return status;
}
