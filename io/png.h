#pragma once
/*
 * Quick-look PNG images of one slice of the field, encoded by heatsolve with
 * zlib: a fixed colour map (dark blue - red - yellow - white) between `low`
 * and `high`, with a colour bar, its range, the step and the time printed under the picture.
 */
#include "../solver/problem.h"

typedef struct png_slice {
    int axis;       /* slice normal: 0 x, 1 y, 2 z */
    int index;      /* slice position along axis */
    double low, high; /* temperatures mapped to the ends of the colour map */
} png_slice;

/* Writes the slice of field (compact, x fastest) as a PNG, atomically (the
 * caller syncs the folder), with the step and simulated time printed under it. */
int png_write_slice(const char *path, const void *field, const heat_grid *grid, heat_precision precision,
                    const png_slice *slice, long step, double time);
