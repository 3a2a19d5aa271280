#include "initial.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "font.h"

typedef heat_letters_frame letters_frame;

static letters_frame letters_place(const heat_initial *in, const heat_grid *g)
{
    letters_frame f;
    int chars = (int)strlen(in->text);
    f.columns = chars * (FONT_WIDTH + 1) - 1;
    double width = g->length[0] * (1.0 - 2.0 * in->margin);
    double height = g->length[1] * (1.0 - 2.0 * in->margin);
    f.unit = fmin(width / f.columns, height / FONT_HEIGHT);
    f.x0 = 0.5 * (g->length[0] - f.unit * f.columns);
    f.y_top = 0.5 * (g->length[1] + f.unit * FONT_HEIGHT);
    return f;
}

static int letters_ink(const heat_initial *in, const letters_frame *f, double x, double y)
{
    int column = (int)floor((x - f->x0) / f->unit);
    int row = (int)floor((f->y_top - y) / f->unit);
    if (column < 0 || column >= f->columns || row < 0 || row >= FONT_HEIGHT) return 0;
    int ch = column / (FONT_WIDTH + 1), within = column % (FONT_WIDTH + 1);
    return within < FONT_WIDTH && font_ink(in->text[ch], within, row);
}

/* The letters' layers along z: the plate, the band holding the letters, the air above. */
typedef enum { LAYER_PLATE, LAYER_LETTERS, LAYER_AMBIENT } letters_layer;

static letters_layer letters_layer_at(const heat_initial *in, const heat_grid *g, double z)
{
    double plate_top = in->plate_thickness * g->length[2];
    double letters_top = plate_top + in->letter_height * g->length[2];
    return z < plate_top ? LAYER_PLATE : z < letters_top ? LAYER_LETTERS : LAYER_AMBIENT;
}

heat_letters_frame heat_letters_place(const heat_initial *in, const heat_grid *g) { return letters_place(in, g); }

void heat_letters_coverage(const heat_initial *in, const heat_grid *g, long *ink_points, int *band_planes)
{
    letters_frame f = letters_place(in, g);
    *ink_points = 0;
    for (int j = 0; j < g->n[1]; ++j)
        for (int i = 0; i < g->n[0]; ++i) *ink_points += letters_ink(in, &f, (i + 0.5) * g->h[0], (j + 0.5) * g->h[1]);
    *band_planes = 0;
    for (int k = 0; k < g->n[2]; ++k) *band_planes += letters_layer_at(in, g, (k + 0.5) * g->h[2]) == LAYER_LETTERS;
}

int heat_letters_solid(const heat_initial *in, const heat_grid *g, const heat_letters_frame *f, double x, double y,
                       double z)
{
    return letters_layer_at(in, g, z) == LAYER_LETTERS && letters_ink(in, f, x, y);
}

static double letters_layer_value(const heat_initial *in, letters_layer layer, int ink)
{
    if (layer == LAYER_PLATE) return in->plate_temperature;
    return layer == LAYER_LETTERS && ink ? in->letter_temperature : in->ambient_temperature;
}

static double letters_value(const heat_initial *in, const heat_grid *g, double x, double y, double z)
{
    letters_layer layer = letters_layer_at(in, g, z);
    if (layer != LAYER_LETTERS) return letters_layer_value(in, layer, 0);
    letters_frame f = letters_place(in, g);
    return letters_layer_value(in, layer, letters_ink(in, &f, x, y));
}

double heat_initial_value(const heat_initial *in, const heat_grid *g, double x, double y, double z)
{
    const double pi = 3.14159265358979323846;
    switch (in->type) {
    case INITIAL_LETTERS: return letters_value(in, g, x, y, z);
    case INITIAL_GAUSSIAN: {
        double dx = x - in->center[0] * g->length[0], dy = y - in->center[1] * g->length[1],
               dz = z - in->center[2] * g->length[2];
        return in->background + in->amplitude * exp(-(dx * dx + dy * dy + dz * dz) / (2.0 * in->width * in->width));
    }
    case INITIAL_SINE:
        return in->background + in->amplitude * sin(in->modes[0] * pi * x / g->length[0]) *
                                    sin(in->modes[1] * pi * y / g->length[1]) *
                                    sin(in->modes[2] * pi * z / g->length[2]);
    default: return in->value;
    }
}

/* The ink of every (x, y) of the block's columns, row after row (n[0] x
 * n[1] bytes; the caller frees it), or NULL where memory is short. */
static unsigned char *letters_ink_mask(const heat_initial *in, const heat_grid *g, const int offset[3], const int n[3])
{
    unsigned char *ink = malloc((size_t)n[0] * (size_t)n[1]);
    if (!ink) return NULL;
    letters_frame f = letters_place(in, g);
#pragma omp parallel for schedule(static)
    for (int j = 0; j < n[1]; ++j)
        for (int i = 0; i < n[0]; ++i)
            ink[(long)j * n[0] + i] = (unsigned char)letters_ink(in, &f, (offset[0] + i + 0.5) * g->h[0],
                                                                 (offset[1] + j + 0.5) * g->h[1]);
    return ink;
}

static void store_value(void *host, long at, heat_precision precision, double v)
{
    if (precision == HEAT_FLOAT) ((float *)host)[at] = (float)v;
    else ((double *)host)[at] = v;
}

/* One x row of nx points of the letters from the ink mask: the same values
 * as heat_initial_value, without placing the text again at every point.
 * k: the row's global z index. */
static void letters_fill_row(const heat_initial *in, const heat_grid *g, const unsigned char *ink_row, int k, int nx,
                             heat_precision precision, void *host, long row)
{
    letters_layer layer = letters_layer_at(in, g, (k + 0.5) * g->h[2]);
    for (int i = 0; i < nx; ++i) store_value(host, row + i, precision, letters_layer_value(in, layer, ink_row[i]));
}

void heat_initial_fill_block(const heat_initial *in, const heat_grid *g, const int offset[3], const int n[3],
                             heat_precision precision, void *host)
{
    /* The letters depend on z only through the layers, so each (x, y) is
     * inked once rather than the text placed at every point, which dominates
     * a large field's start. Where the mask cannot be had, point by point. */
    unsigned char *ink = in->type == INITIAL_LETTERS ? letters_ink_mask(in, g, offset, n) : NULL;
#pragma omp parallel for collapse(2) schedule(static)
    for (int k = 0; k < n[2]; ++k)
        for (int j = 0; j < n[1]; ++j) {
            long row = ((long)k * n[1] + j) * n[0];
            int gk = offset[2] + k, gj = offset[1] + j;
            if (ink) {
                letters_fill_row(in, g, ink + (long)j * n[0], gk, n[0], precision, host, row);
                continue;
            }
            for (int i = 0; i < n[0]; ++i)
                store_value(host, row + i, precision,
                            heat_initial_value(in, g, (offset[0] + i + 0.5) * g->h[0], (gj + 0.5) * g->h[1],
                                               (gk + 0.5) * g->h[2]));
        }
    free(ink);
}

void heat_initial_fill(const heat_initial *in, const heat_grid *g, heat_precision precision, void *host)
{
    const int origin[3] = {0, 0, 0};
    heat_initial_fill_block(in, g, origin, g->n, precision, host);
}

double heat_sine_decay_rate(const heat_initial *in, const heat_grid *g, double alpha)
{
    const double pi = 3.14159265358979323846;
    double k2 = 0.0;
    for (int d = 0; d < 3; ++d) {
        double k = in->modes[d] * pi / g->length[d];
        k2 += k * k;
    }
    return alpha * k2;
}

int heat_letters_mid_index(const heat_initial *in, const heat_grid *g)
{
    double z = (in->plate_thickness + 0.5 * in->letter_height) * g->length[2];
    int k = (int)(z / g->h[2]);
    return k < g->n[2] ? k : g->n[2] - 1;
}
