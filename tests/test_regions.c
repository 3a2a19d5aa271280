/*
 * Painting zones from regions (solver/regions.h), against analytic shapes:
 * each shape's membership on a small grid, the last region winning, the
 * ghost rules (periodic wrap, neighbouring rank, outer face), blocks of a
 * split equal to the slices of one painting, and the configuration's
 * regions and zones (io/config_materials.c).
 *
 * usage: test_regions shapes|last_wins|ghosts|split|config
 */
#include "io/config.h"
#include "solver/regions.h"
#include "test_util.h"

static const char *const MATERIALS =
    "materials = ( { name = \"air\"; conductivity = 0.026; density = 1.2; specific_heat = 1005.0; },\n"
    "              { name = \"copper\"; conductivity = 400.0; density = 8960.0; specific_heat = 385.0; },\n"
    "              { name = \"silicon\"; conductivity = 150.0; density = 2330.0; specific_heat = 700.0; } );\n";

/* A configuration of the grid n, box [0,1] x [0,2] x [0,1], with `regions` (libconfig text). */
static int load(heat_config *c, const int n[3], const char *regions, const char *extra)
{
    char text[8192];
    snprintf(text, sizeof text, "grid = { n = [%d, %d, %d]; length = [1.0, 2.0, 1.0]; };\n%s%s\n%s", n[0], n[1],
             n[2], MATERIALS, regions, extra);
    return heat_config_load_string(text, "test.cfg", NULL, 0, c);
}

static heat_painting painting(const heat_config *c) { return (heat_painting){&c->regions, &c->initial, &c->grid, c->bc}; }

static double centre(const heat_grid *g, int d, int i) { return (i + 0.5) * g->h[d]; }

/* Every point of the grid: painted zone against the expectation of expected(x, y, z). */
static int compare_grid(const heat_config *c, int (*expected)(double, double, double), const char *what)
{
    heat_painting p = painting(c);
    const heat_grid *g = &c->grid;
    long inside = 0;
    for (int k = 0; k < g->n[2]; ++k)
        for (int j = 0; j < g->n[1]; ++j)
            for (int i = 0; i < g->n[0]; ++i) {
                int want = expected(centre(g, 0, i), centre(g, 1, j), centre(g, 2, k));
                int got = heat_regions_zone_at(&p, i, j, k);
                EXPECT(got == want, "%s: point (%d, %d, %d) is zone %d, expected %d", what, i, j, k, got, want);
                inside += want != 0;
            }
    EXPECT(inside > 0 && inside < (long)g->n[0] * g->n[1] * g->n[2], "%s: the shape holds %ld points: no test",
           what, inside);
    printf("ok  %s: %ld of %d points inside\n", what, inside, g->n[0] * g->n[1] * g->n[2]);
    return 0;
}

static int box(double x, double y, double z) { return x >= 0.2 && x <= 0.7 && y >= 0.5 && y <= 1.1 && z >= 0.0 && z <= 0.3; }
static int sphere(double x, double y, double z)
{
    return (x - 0.4) * (x - 0.4) + (y - 1.2) * (y - 1.2) + (z - 0.5) * (z - 0.5) <= 0.3 * 0.3;
}
static int cylinder_z(double x, double y, double z) { return (x - 0.5) * (x - 0.5) + (y - 1.0) * (y - 1.0) <= 0.09 && z >= 0.2 && z <= 0.6; }
static int cylinder_x(double x, double y, double z) { return (y - 0.9) * (y - 0.9) + (z - 0.4) * (z - 0.4) <= 0.0625 && x >= 0.1; }
static int cylinder_y(double x, double y, double z) { (void)y; return (x - 0.3) * (x - 0.3) + (z - 0.6) * (z - 0.6) <= 0.04; }

static int test_shapes(void)
{
    const int n[3] = {20, 40, 20};
    struct {
        const char *region;
        int (*expected)(double, double, double);
        const char *what;
    } cases[] = {
        {"{ shape = \"box\"; min = [0.2, 0.5, 0.0]; max = [0.7, 1.1, 0.3]; material = \"copper\"; }", box, "box"},
        {"{ shape = \"sphere\"; center = [0.4, 1.2, 0.5]; radius = 0.3; material = \"copper\"; }", sphere, "sphere"},
        {"{ shape = \"cylinder\"; axis = \"z\"; center = [0.5, 1.0]; radius = 0.3; range = [0.2, 0.6]; "
         "material = \"copper\"; }", cylinder_z, "cylinder along z"},
        {"{ shape = \"cylinder\"; axis = \"x\"; center = [0.9, 0.4]; radius = 0.25; range = [0.1, 5.0]; "
         "material = \"copper\"; }", cylinder_x, "cylinder along x (center = [y, z])"},
        {"{ shape = \"cylinder\"; axis = \"y\"; center = [0.3, 0.6]; radius = 0.2; material = \"copper\"; }",
         cylinder_y, "cylinder along y (center = [x, z], no range: the whole box)"},
    };
    for (size_t t = 0; t < sizeof cases / sizeof cases[0]; ++t) {
        heat_config c;
        char regions[1024];
        snprintf(regions, sizeof regions, "regions = ( %s );", cases[t].region);
        EXPECT_OK(load(&c, n, regions, ""));
        int status = compare_grid(&c, cases[t].expected, cases[t].what);
        heat_config_destroy(&c);
        if (status) return status;
    }
    return 0;
}

/* A letters region is where the letters initial field has its letters. */
static int test_letters(void)
{
    heat_config c;
    EXPECT_OK(load(&c, (int[3]){64, 32, 16}, "regions = ( { shape = \"letters\"; text = \"HI\"; material = \"copper\"; } );",
                   "initial = { type = \"letters\"; text = \"HI\"; letter_temperature = 1.0; plate_temperature = 0.0; "
                   "ambient_temperature = 0.0; plate_thickness = 0.25; letter_height = 0.5; };"));
    heat_painting p = painting(&c);
    const heat_grid *g = &c.grid;
    long ink = 0;
    for (int k = 0; k < g->n[2]; ++k)
        for (int j = 0; j < g->n[1]; ++j)
            for (int i = 0; i < g->n[0]; ++i) {
                double v = heat_initial_value(&c.initial, g, centre(g, 0, i), centre(g, 1, j), centre(g, 2, k));
                int want = v == 1.0 ? c.regions.region[0].zone : 0, got = heat_regions_zone_at(&p, i, j, k);
                EXPECT(got == want, "letters: point (%d, %d, %d) is zone %d, the letters field says %d", i, j, k, got, want);
                ink += want != 0;
            }
    EXPECT(ink > 100, "letters: only %ld points inked", ink);
    printf("ok  letters: the region is the letters field's %ld hot points\n", ink);
    heat_config_destroy(&c);
    return 0;
}

/* Overlapping regions: the later one owns the overlap, in whichever order. */
static int test_last_wins(void)
{
    const char *a = "{ shape = \"box\"; min = [0.0, 0.0, 0.0]; max = [0.6, 2.0, 1.0]; material = \"copper\"; }";
    const char *b = "{ shape = \"box\"; min = [0.4, 0.0, 0.0]; max = [1.0, 2.0, 1.0]; material = \"silicon\"; source = 1.0; }";
    for (int order = 0; order < 2; ++order) {
        heat_config c;
        char regions[1024];
        snprintf(regions, sizeof regions, "regions = ( %s, %s );", order ? b : a, order ? a : b);
        EXPECT_OK(load(&c, (int[3]){10, 4, 4}, regions, ""));
        heat_painting p = painting(&c);
        int later = c.regions.region[1].zone, earlier = c.regions.region[0].zone;
        EXPECT(later != earlier && later > 0 && earlier > 0, "zones %d and %d", earlier, later);
        /* x centres 0.05 .. 0.95: 0.45 and 0.55 lie in both boxes */
        for (int i = 0; i < 10; ++i) {
            double x = centre(&c.grid, 0, i);
            int in_a = x <= 0.6, in_b = x >= 0.4, first_is_a = order == 0;
            int in_later = first_is_a ? in_b : in_a, in_earlier = first_is_a ? in_a : in_b;
            int want = in_later ? later : in_earlier ? earlier : 0;
            EXPECT(heat_regions_zone_at(&p, i, 1, 1) == want, "order %d, x = %g: zone %d, expected %d", order, x,
                   heat_regions_zone_at(&p, i, 1, 1), want);
        }
        heat_config_destroy(&c);
    }
    printf("ok  last region wins the overlap, in both orders\n");
    return 0;
}

static const char *const SCENE =
    "regions = ( { shape = \"box\"; min = [0.0, 0.0, 0.0]; max = [1.0, 2.0, 0.25]; material = \"copper\"; },\n"
    "  { shape = \"sphere\"; center = [0.05, 1.0, 0.5]; radius = 0.35; material = \"silicon\"; source = 2.0; },\n"
    "  { shape = \"cylinder\"; axis = \"y\"; center = [0.9, 0.9]; radius = 0.2; material = \"copper\"; source = 3.0; } );";

static long at(const int n[3], int i, int j, int k)
{
    return ((long)(k + 1) * (n[1] + 2) + (j + 1)) * (n[0] + 2) + (i + 1);
}

/* Ghosts: the point they stand for (global, wrapped along periodic x), or beside an outer face the owned point. */
static int check_block(const heat_config *c, const int offset[3], const int n[3])
{
    heat_painting p = painting(c);
    unsigned char *zones = malloc((size_t)(n[0] + 2) * (n[1] + 2) * (n[2] + 2));
    EXPECT(zones, "out of memory");
    heat_regions_paint_block(&p, offset, n, zones);
    const int *N = c->grid.n;
    for (int k = -1; k <= n[2]; ++k)
        for (int j = -1; j <= n[1]; ++j)
            for (int i = -1; i <= n[0]; ++i) {
                int g[3] = {offset[0] + i, offset[1] + j, offset[2] + k};
                g[0] = (g[0] + N[0]) % N[0]; /* x periodic */
                for (int d = 1; d < 3; ++d) g[d] = g[d] < 0 ? 0 : g[d] >= N[d] ? N[d] - 1 : g[d];
                int want = heat_regions_zone_at(&p, g[0], g[1], g[2]), got = zones[at(n, i, j, k)];
                if (got != want) free(zones);
                EXPECT(got == want, "block at (%d, %d, %d): local (%d, %d, %d) is zone %d, expected %d (global %d, %d, %d)",
                       offset[0], offset[1], offset[2], i, j, k, got, want, g[0], g[1], g[2]);
            }
    free(zones);
    return 0;
}

static int test_ghosts(void)
{
    heat_config c;
    EXPECT_OK(load(&c, (int[3]){10, 12, 8}, SCENE,
                   "boundary = { x_low = { type = \"periodic\"; }; x_high = { type = \"periodic\"; }; };"));
    /* the whole grid; a block inside (every ghost a neighbour's point); blocks at the corners */
    int blocks[][6] = {{0, 0, 0, 10, 12, 8}, {3, 4, 2, 4, 5, 3}, {0, 0, 0, 5, 6, 4}, {5, 6, 4, 5, 6, 4}};
    for (int b = 0; b < 4; ++b) HEAT_CALL(check_block(&c, blocks[b], blocks[b] + 3));
    /* the sphere crosses x = 0: the wrapped ghosts see it at x = 1 - h/2's neighbour */
    heat_painting p = painting(&c);
    int n[3] = {10, 12, 8};
    unsigned char *zones = malloc((size_t)12 * 14 * 10);
    EXPECT(zones, "out of memory");
    heat_regions_paint_block(&p, (int[3]){0, 0, 0}, n, zones);
    int ghost = zones[at(n, -1, 6, 4)], wrapped = heat_regions_zone_at(&p, 9, 6, 4), beside = zones[at(n, 0, 6, 4)];
    free(zones);
    EXPECT(ghost == wrapped && ghost != beside, "the x_low ghost is zone %d; its wrapped point %d, the point beside %d",
           ghost, wrapped, beside);
    printf("ok  ghosts: periodic wrap, neighbouring blocks' points, outer faces' owned points\n");
    heat_config_destroy(&c);
    return 0;
}

/* Blocks of 2- and 4-rank splits equal the slices of the one-rank painting, ghosts included. */
static int test_split(void)
{
    heat_config c;
    EXPECT_OK(load(&c, (int[3]){10, 12, 8}, SCENE, ""));
    heat_painting p = painting(&c);
    int whole_n[3] = {10, 12, 8};
    unsigned char *whole = malloc((size_t)12 * 14 * 10);
    EXPECT(whole, "out of memory");
    heat_regions_paint_block(&p, (int[3]){0, 0, 0}, whole_n, whole);
    int splits[][3] = {{1, 1, 2}, {2, 1, 1}, {1, 2, 2}};
    for (int s = 0; s < 3; ++s)
        for (int r = 0; r < splits[s][0] * splits[s][1] * splits[s][2]; ++r) {
            int index[3] = {r % splits[s][0], r / splits[s][0] % splits[s][1], r / (splits[s][0] * splits[s][1])};
            int n[3], offset[3];
            for (int d = 0; d < 3; ++d) n[d] = whole_n[d] / splits[s][d], offset[d] = index[d] * n[d];
            unsigned char *block = malloc((size_t)(n[0] + 2) * (n[1] + 2) * (n[2] + 2));
            EXPECT(block, "out of memory");
            heat_regions_paint_block(&p, offset, n, block);
            int bad = 0;
            for (int k = -1; k <= n[2] && !bad; ++k)
                for (int j = -1; j <= n[1] && !bad; ++j)
                    for (int i = -1; i <= n[0] && !bad; ++i) {
                        int g[3] = {offset[0] + i, offset[1] + j, offset[2] + k};
                        int outside = 0;
                        for (int d = 0; d < 3; ++d) outside |= g[d] < -1 || g[d] > whole_n[d];
                        if (outside) continue;
                        bad = block[at(n, i, j, k)] != whole[at(whole_n, g[0], g[1], g[2])];
                        if (bad) fprintf(stderr, "split %d, rank %d: local (%d, %d, %d) differs\n", s, r, i, j, k);
                    }
            free(block);
            if (bad) free(whole);
            EXPECT(!bad, "a block of a split differs from the one-rank painting");
        }
    free(whole);
    printf("ok  blocks of 2- and 4-rank splits equal the one-rank painting, ghosts included\n");
    heat_config_destroy(&c);
    return 0;
}

/* Zones: one per distinct material, source and source_time; the background zone 0. */
static int test_config(void)
{
    heat_config c;
    EXPECT_OK(load(&c, (int[3]){8, 8, 8},
                   "regions = ( { shape = \"box\"; min = [0.0, 0.0, 0.0]; max = [1.0, 1.0, 0.5]; material = \"copper\"; },\n"
                   " { shape = \"sphere\"; center = [0.5, 1.0, 0.5]; radius = 0.2; material = \"silicon\"; source = 5.0; },\n"
                   " { shape = \"sphere\"; center = [0.5, 0.5, 0.5]; radius = 0.2; material = \"copper\"; },\n"
                   " { shape = \"box\"; min = [0.0, 1.0, 0.0]; max = [1.0, 2.0, 1.0]; material = \"silicon\"; source = 5.0; "
                   "source_time = [0.0, 1.0]; temperature = 7.0; },\n"
                   " { shape = \"box\"; min = [0.0, 1.5, 0.0]; max = [1.0, 2.0, 1.0]; material = \"air\"; } );", ""));
    const heat_materials *m = &c.materials;
    EXPECT(m->material_count == 3 && m->zone_count == 4, "%d materials, %d zones; expected 3, 4", m->material_count,
           m->zone_count);
    EXPECT(m->zone[0].material == 0 && m->zone[0].source == 0.0, "zone 0 is not the background");
    int zones[5];
    for (int r = 0; r < 5; ++r) zones[r] = c.regions.region[r].zone;
    EXPECT(zones[0] == 1 && zones[1] == 2 && zones[2] == 1 && zones[3] == 3 && zones[4] == 0,
           "region zones %d %d %d %d %d", zones[0], zones[1], zones[2], zones[3], zones[4]);
    EXPECT(m->zone[3].source_on == 0.0 && m->zone[3].source_off == 1.0 && isinf(m->zone[2].source_off),
           "source_time not kept");
    EXPECT(c.regions.region[3].has_temperature && c.regions.region[3].temperature == 7.0 &&
           !c.regions.region[0].has_temperature, "temperature not kept");
    /* the effective text loads back to the same tables */
    heat_config again;
    EXPECT_OK(heat_config_load_string(c.text, "effective", NULL, 0, &again));
    EXPECT(again.materials.zone_count == m->zone_count && again.regions.count == c.regions.count,
           "the effective text gives %d zones, %d regions", again.materials.zone_count, again.regions.count);
    for (int z = 0; z < m->zone_count; ++z) EXPECT(heat_zones_equal(&again.materials.zone[z], &m->zone[z]), "zone %d", z);
    heat_config_destroy(&again);
    /* region temperatures over the initial field: the owner's, where it has one */
    heat_painting p = painting(&c);
    double field[512];
    for (int i = 0; i < 512; ++i) field[i] = -1.0;
    heat_regions_set_temperature(&p, HEAT_DOUBLE, field);
    for (int k = 0; k < 8; ++k)
        for (int j = 0; j < 8; ++j) {
            double y = centre(&c.grid, 1, j);
            double want = y >= 1.0 && y < 1.5 ? 7.0 : -1.0;
            EXPECT(field[(k * 8 + j) * 8 + 3] == want, "temperature at y = %g: %g, expected %g", y,
                   field[(k * 8 + j) * 8 + 3], want);
        }
    heat_config_destroy(&c);
    printf("ok  zones deduplicated, background zone 0, source_time, temperature, effective text round trip\n");
    return 0;
}

/* heat_region_has_points (the warning about empty regions) against a scan of every point. */
static int test_has_points(void)
{
    heat_config c;
    EXPECT_OK(load(&c, (int[3]){16, 16, 8},
                   "regions = ( { shape = \"box\"; min = [0.5, 0.5, 0.5]; max = [0.52, 0.6, 0.6]; material = \"copper\"; },\n"
                   " { shape = \"box\"; min = [0.5, 0.5, 0.5]; max = [0.55, 0.6, 0.6]; material = \"copper\"; },\n"
                   " { shape = \"sphere\"; center = [0.0625, 0.0625, 0.0625]; radius = 0.01; material = \"copper\"; },\n"
                   " { shape = \"sphere\"; center = [0.0, 0.0, 0.0]; radius = 0.01; material = \"copper\"; },\n"
                   " { shape = \"sphere\"; center = [-0.2, 1.0, 0.5]; radius = 0.25; material = \"copper\"; },\n"
                   " { shape = \"sphere\"; center = [-0.2, 1.0, 0.5]; radius = 0.2; material = \"copper\"; },\n"
                   " { shape = \"cylinder\"; axis = \"x\"; center = [1.0, 0.5]; radius = 0.05; range = [0.3, 0.32]; material = \"copper\"; },\n"
                   " { shape = \"cylinder\"; axis = \"x\"; center = [1.0, 0.5]; radius = 0.05; range = [0.3, 0.35]; material = \"copper\"; },\n"
                   " { shape = \"cylinder\"; axis = \"z\"; center = [0.5, 3.0]; radius = 0.5; material = \"copper\"; },\n"
                   " { shape = \"letters\"; text = \"I\"; material = \"copper\"; },\n"
                   " { shape = \"letters\"; text = \".\"; material = \"copper\"; } );",
                   "initial = { plate_thickness = 0.9; letter_height = 0.05; };"));
    heat_painting p = painting(&c);
    const heat_grid *g = &c.grid;
    int seen = 0;
    for (int r = 0; r < c.regions.count; ++r) {
        int any = 0;
        for (int k = 0; k < g->n[2] && !any; ++k)
            for (int j = 0; j < g->n[1] && !any; ++j)
                for (int i = 0; i < g->n[0] && !any; ++i)
                    any = heat_region_contains(&p, r, centre(g, 0, i), centre(g, 1, j), centre(g, 2, k));
        EXPECT(heat_region_has_points(&p, r) == any, "region %d: has_points %d, a scan says %d", r,
               heat_region_has_points(&p, r), any);
        seen |= 1 << any;
    }
    EXPECT(seen == 3, "the cases hold no empty or no filled region");
    heat_config_destroy(&c);
    printf("ok  empty-region check agrees with a scan of every point (filled and empty shapes)\n");
    return 0;
}

int main(int argc, char **argv)
{
    const char *t = argc > 1 ? argv[1] : "";
    if (strcmp(t, "shapes") == 0) return test_shapes() || test_letters();
    if (strcmp(t, "last_wins") == 0) return test_last_wins();
    if (strcmp(t, "ghosts") == 0) return test_ghosts();
    if (strcmp(t, "split") == 0) return test_split();
    if (strcmp(t, "config") == 0) return test_config() || test_has_points();
    fprintf(stderr, "usage: test_regions shapes|last_wins|ghosts|split|config\n");
    return 2;
}
