#pragma once
/*
 * Where the CPU backend's OpenMP threads run. On a machine with many cores,
 * one process to a node, heatsolve pins the stencil's worker threads, one to
 * a core, before the fields are allocated: each thread first-touches, and
 * then keeps sweeping, the same z planes on the same core and memory node.
 * OMP_PROC_BIND or OMP_PLACES, when set, are the user's choice and win.
 * The calling (main) thread stays unpinned: the checkpoint writer's thread,
 * which it starts, inherits its cores, and its compressing threads must be
 * free to use every core the stencil leaves idle.
 */

/* ranks_on_node: processes of this run on this node (each would pin the same cores). */
void threads_pin_workers(int ranks_on_node);

/* For the run's first lines: "16 threads, workers pinned one to a core (...)" and the like. */
const char *threads_binding(void);

/* When the stencil leaves cores to a checkpoint write (app/schedule.c,
 * share_cores): its idle workers would spin for milliseconds after each
 * parallel region (libgomp's GOMP_SPINCOUNT) before they sleep, taking those
 * cores from the writer; releasing the thread pool ends that at once, and
 * the next parallel region starts its workers
 * afresh. Not where threads_pin_workers pinned them: there it cost more. */
void threads_release_idle(void);

/* Several ranks on a node each start as many OpenMP threads as the cores
 * they may run on; with `mpirun --bind-to none` every rank sees every core,
 * and together they would want ranks x cores threads, whose barriers then
 * wait for descheduled threads. Where the ranks together want more threads
 * than the node's cores (node_cores: the union of the ranks' masks), each
 * rank takes max(1, node_cores / ranks_on_node), unless OMP_NUM_THREADS
 * says otherwise: then the root warns in one line naming the fix. Before any
 * parallel region that sizes the thread pool. */
void threads_fit_ranks(int ranks_on_node, int node_cores);
