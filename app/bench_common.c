/*
 * What every benchmark shares: the problem it times, the field it times on and
 * the way its JSON report reaches the disk. The benchmarks call these; these
 * call no benchmark.
 */
#define _POSIX_C_SOURCE 200809L /* open_memstream */
#include "app/bench_common.h"

#include <stdlib.h>
#include <string.h>

#include "io/fsutil.h"
#include "solver/error.h"
#include "solver/initial.h"
#include "solver/space_order.h"

void bench_problem(const heat_cli *cli, int gpu, heat_problem *p)
{
    memset(p, 0, sizeof *p);
    int fallback = gpu ? 512 : 256;
    for (int d = 0; d < 3; ++d) {
        p->grid.n[d] = cli->size[0] ? cli->size[d] : fallback;
        p->grid.length[d] = 1.0;
    }
    heat_grid_set_spacing(&p->grid);
    p->precision = cli->precision ? HEAT_FLOAT : HEAT_DOUBLE;
    p->alpha = 1.0;
    p->space_order = cli->space_order > 0 ? cli->space_order : 2;
    p->dt = 0.5 * heat_space_dt_max(&p->grid, p->alpha, heat_space_radius(p));
    p->bc[FACE_X_LOW] = (heat_bc){.type = HEAT_BC_DIRICHLET, .value = 1.0};
    strcpy(p->kernel.name, "auto");
    p->quiet = cli->quiet;
}

void bench_copy_plain(char *dst, size_t len, const char *src)
{
    size_t i = 0;
    for (; src[i] && i + 1 < len; ++i) dst[i] = (src[i] == '"' || src[i] == '\\' || src[i] < 32) ? ' ' : src[i];
    dst[i] = '\0';
}

/* Never time on zeros: a smooth non-trivial field. */
int bench_fill(heat_solver *s)
{
    heat_initial init = {.type = INITIAL_GAUSSIAN, .amplitude = 1.0, .background = 0.25, .width = 0.2,
                         .center = {0.4, 0.5, 0.6}};
    size_t bytes = (size_t)heat_grid_points(&s->problem.grid) * heat_precision_size(s->problem.precision);
    void *field = malloc(bytes);
    HEAT_CHECK(field, "cannot allocate %zu bytes", bytes);
    heat_initial_fill(&init, &s->problem.grid, s->problem.precision, field);
    int status = heat_solver_set_field(s, field, 0);
    free(field);
    return status;
}

int bench_json_open(bench_json *j)
{
    j->text = NULL, j->len = 0;
    j->f = open_memstream(&j->text, &j->len);
    return j->f ? HEAT_OK : heat_error(HEAT_ERR_RUNTIME, "out of memory for the JSON report");
}

int bench_json_commit(bench_json *j, const char *path)
{
    int status = fclose(j->f) == 0 ? fs_write_atomic_unsynced_folder(path, j->text, j->len)
                                   : heat_error(HEAT_ERR_RUNTIME, "out of memory for the JSON report %s", path);
    free(j->text);
    return status;
}
