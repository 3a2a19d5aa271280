#pragma once
/*
 * Initial temperature fields: letters (the demo), gaussian, sine (an
 * eigenmode with a known decay rate) and constant.
 */
#include "problem.h"

typedef enum { INITIAL_LETTERS, INITIAL_GAUSSIAN, INITIAL_SINE, INITIAL_CONSTANT } heat_initial_type;

typedef struct heat_initial {
    int type;                    /* heat_initial_type */
    double value;                /* constant: the temperature */
    double amplitude;            /* gaussian, sine: peak height above background */
    double background;           /* gaussian, sine: temperature far from the peak */
    double center[3];            /* gaussian: peak position, fractions of the box */
    double width;                /* gaussian: standard deviation (length units) */
    int modes[3];                /* sine: half waves along x, y, z */
    char text[64];               /* letters: the text written on the plate */
    double letter_temperature;   /* letters: the hot letters */
    double plate_temperature;    /* letters: the cold plate */
    double ambient_temperature;  /* letters: everything else */
    double plate_thickness;      /* letters: fraction of the box height */
    double letter_height;        /* letters: fraction of the box height */
    double margin;               /* letters: free border, fraction of the box width */
} heat_initial;

/* Fills `host` (compact, x fastest, n[0]*n[1]*n[2] values of `precision`). */
void heat_initial_fill(const heat_initial *initial, const heat_grid *grid, heat_precision precision, void *host);

/* The same field's block of n points from global index offset (compact, x
 * fastest, n[0]*n[1]*n[2] values): bitwise the whole field's values there,
 * so that each rank fills its own block. */
void heat_initial_fill_block(const heat_initial *initial, const heat_grid *grid, const int offset[3], const int n[3],
                             heat_precision precision, void *host);

/* Temperature of the initial field at point (x, y, z) (length units). */
double heat_initial_value(const heat_initial *initial, const heat_grid *grid, double x, double y, double z);

/* Sine eigenmode: u - background decays as exp(-rate t), rate = alpha |k|^2. */
double heat_sine_decay_rate(const heat_initial *initial, const heat_grid *grid, double alpha);

/* Placement of the letters' text in the xy plane: glyph cell (column, row) covers
 * [x0 + column unit, x0 + (column+1) unit) x [y_top - (row+1) unit, y_top - row unit). */
typedef struct heat_letters_frame {
    double x0, y_top, unit;
    int columns; /* 6 per character, the last one's spacing dropped */
} heat_letters_frame;

/* Where in's text goes on the grid (its margin); computed once, then asked point by point. */
heat_letters_frame heat_letters_place(const heat_initial *in, const heat_grid *grid);

/* 1 where (x, y, z) lies in a letter's stroke within the letters' band above
 * the plate (in's plate_thickness and letter_height): the letters initial
 * field's hot points, and a `letters` region's (solver/regions.h). */
int heat_letters_solid(const heat_initial *in, const heat_grid *grid, const heat_letters_frame *frame, double x,
                       double y, double z);

/* How much of the grid the letters cover: the points of one xy plane inside a stroke
 * (ink_points) and the planes of the band above the plate (band_planes). Either 0:
 * the field has no letter (a plate as thick as the box, a text too small for the grid). */
void heat_letters_coverage(const heat_initial *in, const heat_grid *grid, long *ink_points, int *band_planes);

/* The z index of the middle of the letters (for slices through them). */
int heat_letters_mid_index(const heat_initial *initial, const heat_grid *grid);
