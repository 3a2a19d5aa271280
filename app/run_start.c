/*
 * The start of a run (app/run_start.h): fresh or restart, decided once.
 */
#include "app/run_start.h"

#include "app/restart.h"
#include "app/zones.h"
#include "parallel/parallel.h"
#include "solver/error.h"
#include "solver/initial.h"
#include "solver/materials.h"

void run_start_decide(const heat_cli *cli, run_start *start)
{
    start->checkpoint = cli->restart;
    start->allowed = (cli->allow_scheme_change ? RESTART_ALLOW_SCHEME : 0) |
                     (cli->allow_problem_change ? RESTART_ALLOW_PROBLEM : 0);
    start->folder = cli->restart ? OUTPUT_CONTINUE : cli->overwrite ? OUTPUT_OVERWRITE : OUTPUT_FRESH;
    start->continues = cli->restart != NULL;
    start->writes_initial = cli->restart == NULL;
}

/* Each rank fills its own block where it lives, bitwise the whole field's
 * values there (a root that filled the whole field and scattered it would
 * keep the other ranks waiting); one process fills the whole field. */
static int initial_field(const heat_config *c, heat_domain *domain, heat_solver *solver, void *whole)
{
    heat_precision precision = (heat_precision)c->precision;
    if (!heat_domain_is_split(domain)) {
        const int origin[3] = {0, 0, 0};
        heat_initial_fill(&c->initial, &c->grid, precision, whole);
        zones_initial_temperature(c, origin, c->grid.n, whole);
        return heat_domain_set_field(domain, solver, whole, 0);
    }
    const heat_decomp *d = &domain->decomp;
    heat_initial_fill_block(&c->initial, &c->grid, d->offset, d->local_n, precision, domain->block);
    zones_initial_temperature(c, d->offset, d->local_n, domain->block);
    return heat_solver_set_field(solver, domain->block, 0);
}

/* The root reads the checkpoint; every rank takes its block and the clock. */
static int restart_field(run_start *start, const heat_config *c, heat_domain *domain, heat_solver *solver,
                         void *whole, int quiet)
{
    restart_point found = {0};
    int status = whole ? restart_load(start->checkpoint, start->allowed, c, whole, &found, &start->series, quiet)
                       : HEAT_OK;
    HEAT_CALL(heat_domain_agree(status)); /* the root's verdict, on every rank */
    HEAT_CALL(par_broadcast(&found, sizeof found));
    HEAT_CALL(heat_domain_set_field(domain, solver, whole, found.step));
    heat_solver_set_clock(solver, found.step, found.time);
    if (found.energy_present && heat_materials_active(solver->problem.materials))
        HEAT_CALL(heat_solver_set_energy(solver, found.energy_in));
    return HEAT_OK;
}

int run_start_load(run_start *start, const heat_config *config, heat_domain *domain, heat_solver *solver,
                   void *whole, int quiet)
{
    series_init(&start->series, config->output.dir, config->output.name);
    HEAT_CALL(start->checkpoint ? restart_field(start, config, domain, solver, whole, quiet)
                                : initial_field(config, domain, solver, whole));
    start->step = solver->step;
    start->time = solver->time;
    return HEAT_OK;
}

int run_start_reached(const run_start *start, long final_step) { return start->continues && start->step >= final_step; }

void run_start_destroy(run_start *start) { series_destroy(&start->series); }
