/* The initial fields as filled for a run against the same fields evaluated
 * point by point (heat_initial_value, the baseline): the letters are filled
 * from an ink mask of the xy plane and must give every point's value
 * exactly, in double and in float, on grids whose sizes share no factor.
 * Each rank of a run fills its own block: every block of an uneven split
 * must hold bitwise the whole field's values. */
#include "test_util.h"

static heat_initial letters(const char *text, double margin, double plate, double height)
{
    heat_initial in = {.type = INITIAL_LETTERS,
                       .letter_temperature = 100.0,
                       .plate_temperature = 3.5,
                       .ambient_temperature = -1.25,
                       .plate_thickness = plate,
                       .letter_height = height,
                       .margin = margin};
    snprintf(in.text, sizeof in.text, "%s", text);
    return in;
}

/* Every point of the filled field equals its pointwise value; counts the
 * points of each temperature so that a field of one value cannot pass. */
static int check_fill(const heat_initial *in, int nx, int ny, int nz, heat_precision precision)
{
    heat_problem p = test_problem(nx, ny, nz, 4.0, 2.0, 1.0, precision);
    void *field = test_alloc_field(&p);
    EXPECT(field, "out of memory");
    heat_initial_fill(in, &p.grid, precision, field);
    long hot = 0, plate = 0, ambient = 0;
    for (int k = 0; k < nz; ++k)
        for (int j = 0; j < ny; ++j)
            for (int i = 0; i < nx; ++i) {
                long at = ((long)k * ny + j) * nx + i;
                double want =
                    heat_initial_value(in, &p.grid, test_coord(&p, 0, i), test_coord(&p, 1, j), test_coord(&p, 2, k));
                if (precision == HEAT_FLOAT) want = (float)want;
                double got = test_get(&p, field, at);
                EXPECT(got == want, "%s %dx%dx%d \"%s\": point (%d, %d, %d) is %.17g, pointwise %.17g",
                       precision == HEAT_FLOAT ? "float" : "double", nx, ny, nz, in->text, i, j, k, got, want);
                hot += got == in->letter_temperature, plate += got == in->plate_temperature,
                    ambient += got == in->ambient_temperature;
            }
    free(field);
    printf("%-6s %4d x %3d x %3d \"%s\": %ld letter, %ld plate, %ld ambient points, all as pointwise\n",
           precision == HEAT_FLOAT ? "float" : "double", nx, ny, nz, in->text, hot, plate, ambient);
    EXPECT(hot > 0 && plate > 0 && ambient > 0, "a layer is missing: %ld letter, %ld plate, %ld ambient points", hot,
           plate, ambient);
    return 0;
}

/* The grid cut into 3 x 2 x 3 blocks of uneven sizes, each filled on its own. */
static int check_blocks(const heat_initial *in, int nx, int ny, int nz, heat_precision precision)
{
    heat_problem p = test_problem(nx, ny, nz, 4.0, 2.0, 1.0, precision);
    size_t elem = heat_precision_size(precision);
    unsigned char *whole = test_alloc_field(&p), *block = test_alloc_field(&p);
    EXPECT(whole && block, "out of memory");
    heat_initial_fill(in, &p.grid, precision, whole);
    const int cuts[3][4] = {{0, nx / 5, nx / 2 + 1, nx}, {0, ny / 3, ny, ny}, {0, 1, nz - 2, nz}};
    int blocks = 0;
    for (int bz = 0; bz < 3; ++bz)
        for (int by = 0; by < 2; ++by)
            for (int bx = 0; bx < 3; ++bx) {
                int offset[3] = {cuts[0][bx], cuts[1][by], cuts[2][bz]};
                int n[3] = {cuts[0][bx + 1] - offset[0], cuts[1][by + 1] - offset[1], cuts[2][bz + 1] - offset[2]};
                heat_initial_fill_block(in, &p.grid, offset, n, precision, block);
                for (int k = 0; k < n[2]; ++k)
                    for (int j = 0; j < n[1]; ++j) {
                        long from = (((long)offset[2] + k) * ny + offset[1] + j) * nx + offset[0];
                        long at = ((long)k * n[1] + j) * n[0];
                        EXPECT(memcmp(whole + from * elem, block + at * elem, (size_t)n[0] * elem) == 0,
                               "block at (%d, %d, %d) of %d x %d x %d: row (y %d, z %d) differs from the whole field's",
                               offset[0], offset[1], offset[2], n[0], n[1], n[2], offset[1] + j, offset[2] + k);
                    }
                ++blocks;
            }
    free(whole), free(block);
    printf("%-6s %4d x %3d x %3d type %d: %d blocks, each bitwise the whole field's\n",
           precision == HEAT_FLOAT ? "float" : "double", nx, ny, nz, in->type, blocks);
    return 0;
}

int main(void)
{
    heat_initial demo = letters("HEAT", 0.06, 0.2, 0.3), wide = letters("HELLO, 42!", 0.01, 0.33, 0.5);
    heat_initial gaussian = {
        .type = INITIAL_GAUSSIAN, .amplitude = 2.0, .background = 1.0, .center = {0.3, 0.6, 0.5}, .width = 0.2};
    int failed = check_fill(&demo, 320, 160, 64, HEAT_DOUBLE) || check_fill(&demo, 97, 61, 33, HEAT_DOUBLE) ||
                 check_fill(&demo, 97, 61, 33, HEAT_FLOAT) || check_fill(&wide, 211, 37, 19, HEAT_DOUBLE) ||
                 check_fill(&wide, 211, 37, 19, HEAT_FLOAT);
    if (failed) return 1;
    heat_initial sine = {.type = INITIAL_SINE, .amplitude = 1.5, .background = 0.5, .modes = {1, 2, 3}};
    failed = check_blocks(&demo, 97, 61, 33, HEAT_DOUBLE) || check_blocks(&wide, 211, 37, 19, HEAT_FLOAT) ||
             check_blocks(&gaussian, 23, 17, 11, HEAT_DOUBLE) || check_blocks(&sine, 29, 13, 7, HEAT_FLOAT);
    if (failed) return 1;
    /* The other kinds stay point by point: the same values by construction, filled all the same. */
    heat_problem p = test_problem(23, 17, 11, 4.0, 2.0, 1.0, HEAT_DOUBLE);
    double *field = test_alloc_field(&p);
    EXPECT(field, "out of memory");
    heat_initial_fill(&gaussian, &p.grid, HEAT_DOUBLE, field);
    double want =
        heat_initial_value(&gaussian, &p.grid, test_coord(&p, 0, 5), test_coord(&p, 1, 7), test_coord(&p, 2, 3));
    EXPECT(field[(3L * 17 + 7) * 23 + 5] == want, "gaussian point (5, 7, 3): %.17g against %.17g",
           field[(3L * 17 + 7) * 23 + 5], want);
    free(field);
    return 0;
}
