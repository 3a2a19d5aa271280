/* A checkpoint's metadata against the configuration that would restart from
 * it (io/ckpt_compat.h): the same run and problem pass; each difference is
 * refused as a configuration error naming its key, unless it is one the
 * user may allow (another scheme) or one the scheme permits (an implicit
 * run's new dt). */
#include "io/ckpt_compat.h"
#include "test_util.h"

static const char CONFIG[] = "grid = { n = [16, 12, 8]; length = [2.0, 1.5, 1.0]; };\n"
                             "boundary = { z_low = { type = \"dirichlet\"; value = 1.0; }; };\n";

/* The metadata a run of c writes. */
static ckpt_meta written_by(const heat_config *c)
{
    ckpt_meta m = {.step = 10, .time = 0.5, .dt = c->dt, .precision = (heat_precision)c->precision, .grid = c->grid,
                   .alpha = c->alpha, .implicit = c->implicit, .format_version = CKPT_FORMAT_VERSION};
    memcpy(m.bc, c->bc, sizeof m.bc);
    return m;
}

/* status is a configuration error whose message names key. */
static int refused(int status, const char *key)
{
    const char *message = heat_error_last_silenced();
    EXPECT(status == HEAT_ERR_CONFIG, "a difference in %s passed (status %d)", key, status);
    EXPECT(message && strstr(message, key), "the refusal does not name %s: %s", key, message ? message : "(none)");
    return 0;
}

static int run_checks(const heat_config *c)
{
    ckpt_meta m = written_by(c);
    EXPECT_OK(ckpt_compat_run("same.hdf", &m, c, 0));
    m.grid.n[2] = 9;
    if (refused(ckpt_compat_run("n.hdf", &m, c, 0), "grid.n")) return 1;
    m = written_by(c), m.grid.length[0] = 2.5;
    if (refused(ckpt_compat_run("length.hdf", &m, c, 0), "grid.length")) return 1;
    m = written_by(c), m.precision = HEAT_FLOAT;
    if (refused(ckpt_compat_run("precision.hdf", &m, c, 0), "solver.precision")) return 1;
    m = written_by(c), m.alpha = 2.0;
    if (refused(ckpt_compat_run("alpha.hdf", &m, c, 0), "physics.alpha")) return 1;
    m = written_by(c), m.dt = c->dt / 2;
    if (refused(ckpt_compat_run("dt.hdf", &m, c, 0), "the time step dt")) return 1;
    m = written_by(c), m.implicit.scheme = HEAT_BACKWARD_EULER;
    if (refused(ckpt_compat_run("scheme.hdf", &m, c, 0), "time.scheme")) return 1;
    EXPECT_OK(ckpt_compat_run("scheme.hdf", &m, c, 1)); /* --allow-scheme-change */
    heat_config implicit = *c;
    implicit.implicit.scheme = HEAT_BACKWARD_EULER;
    m = written_by(&implicit), m.dt = c->dt * 4; /* an implicit scheme is stable at any dt */
    EXPECT_OK(ckpt_compat_run("implicit_dt.hdf", &m, &implicit, 0));
    printf("run: the same passes; grid, precision, alpha, dt and scheme differences refused\n");
    return 0;
}

static int problem_checks(const heat_config *c)
{
    heat_painting painting = {&c->regions, &c->initial, &c->grid, c->bc};
    ckpt_meta m = written_by(c);
    EXPECT_OK(ckpt_compat_problem("same.hdf", &m, c, &painting));
    m.bc[FACE_Z_LOW].value = 2.0;
    if (refused(ckpt_compat_problem("value.hdf", &m, c, &painting), "boundary.z_low")) return 1;
    m = written_by(c), m.bc[FACE_X_HIGH].type = HEAT_BC_DIRICHLET;
    if (refused(ckpt_compat_problem("type.hdf", &m, c, &painting), "boundary.x_high")) return 1;
    heat_materials tables = {.material_count = 1};
    m = written_by(c), m.file_materials = &tables;
    if (refused(ckpt_compat_problem("materials.hdf", &m, c, &painting), "materials")) return 1;
    printf("problem: the same passes; boundary and materials differences refused\n");
    return 0;
}

int main(void)
{
    heat_config c;
    EXPECT_OK(heat_config_load_string(CONFIG, "test", NULL, 0, &c));
    c.dt = 1e-3; /* resolved as a run resolves it */
    heat_errors_as_warnings(HEAT_ERRORS_SILENT);
    int failed = run_checks(&c) || problem_checks(&c);
    heat_config_destroy(&c);
    return failed;
}
