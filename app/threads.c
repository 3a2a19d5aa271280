#define _GNU_SOURCE /* sched_getaffinity, pthread_setaffinity_np */
#include "app/threads.h"

#include <omp.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

#include "solver/error.h"

/* Below this many cores there is no second memory node and little to gain,
 * and processes that share a small machine (ctest -j, two runs on a laptop)
 * would all pin their workers to the same cores. */
enum { PIN_FROM_CORES = 8 };

static char binding[192] = "not pinned";
static int workers_pinned; /* by threads_pin_workers */

static int pin_self(int cpu)
{
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    return pthread_setaffinity_np(pthread_self(), sizeof one, &one) == 0;
}

void threads_pin_workers(int ranks_on_node)
{
    const char *bind = getenv("OMP_PROC_BIND"), *places = getenv("OMP_PLACES");
    cpu_set_t mask;
    int cores = sched_getaffinity(0, sizeof mask, &mask) == 0 ? CPU_COUNT(&mask) : 1;
    if (bind || places) {
        snprintf(binding, sizeof binding, "placed by OMP_PROC_BIND=%s, OMP_PLACES=%s", bind ? bind : "(unset)",
                 places ? places : "(unset)");
        return;
    }
    if (cores < PIN_FROM_CORES || ranks_on_node > 1) {
        snprintf(binding, sizeof binding, "not pinned (%s; OMP_PROC_BIND and OMP_PLACES place them)",
                 ranks_on_node > 1 ? "several ranks on this node" : "fewer than 8 cores");
        return;
    }
    int cpus[CPU_SETSIZE], count = 0;
    for (int c = 0; c < CPU_SETSIZE && count < cores; ++c)
        if (CPU_ISSET(c, &mask)) cpus[count++] = c;
    int pinned = 0;
#pragma omp parallel reduction(+ : pinned)
    {
        int t = omp_get_thread_num();
        if (t > 0) pinned += pin_self(cpus[t % count]);
    }
    workers_pinned = pinned > 0;
    snprintf(binding, sizeof binding, "%d of %d worker threads pinned one to a core (set OMP_PROC_BIND to choose)",
             pinned, omp_get_max_threads() - 1);
}

static char fitted[160]; /* by threads_fit_ranks: why a rank has fewer threads than cores */

const char *threads_binding(void)
{
    static char line[sizeof binding + sizeof fitted];
    snprintf(line, sizeof line, "%s%s", fitted, binding);
    return line;
}

static int cores_of_this_process(void)
{
    cpu_set_t mask;
    return sched_getaffinity(0, sizeof mask, &mask) == 0 ? CPU_COUNT(&mask) : omp_get_num_procs();
}

void threads_fit_ranks(int ranks_on_node, int node_cores)
{
    int threads = omp_get_max_threads(), own = cores_of_this_process();
    if (ranks_on_node < 2 || (long)threads * ranks_on_node <= node_cores) return;
    int fair = node_cores / ranks_on_node > 1 ? node_cores / ranks_on_node : 1;
    if (getenv("OMP_NUM_THREADS")) {
        /* A rank at its fair share already (one thread, where the node has no more cores than ranks) has
         * nothing to change; above its own cores, ranks_check_binding's warning says it. */
        if (threads > fair && threads <= own)
            heat_warn("the %d ranks on this node have %d OpenMP threads each (OMP_NUM_THREADS) but %d core%s "
                      "together; set OMP_NUM_THREADS=%d, or unset it and heatsolve chooses", ranks_on_node, threads,
                      node_cores, node_cores == 1 ? "" : "s", fair);
        return;
    }
    int chosen = fair < own ? fair : own;
    omp_set_num_threads(chosen);
    snprintf(fitted, sizeof fitted, "%d thread%s a rank (%d ranks on this node share %d core%s; OMP_NUM_THREADS "
             "overrides), ", chosen, chosen == 1 ? "" : "s", ranks_on_node, node_cores, node_cores == 1 ? "" : "s");
}

void threads_release_idle(void)
{
    /* Pinned workers started afresh would need pinning again, twice a checkpoint, which costs
     * more than their spinning. */
    if (!workers_pinned) omp_pause_resource_all(omp_pause_soft);
}
