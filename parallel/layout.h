#pragma once
/*
 * A rank layout that fits the grid where MPI_Dims_create's does not. Blocks
 * are made of whole reduction bricks, so an axis takes at most its count of
 * bricks in ranks; MPI_Dims_create knows nothing of that and may put two
 * ranks on an axis of one brick (a grid thin along z) while another axis
 * could take them; nor of the space order's halo, which a block thinner
 * than it cannot give.
 */

/* Does dims (ranks along x, y, z) fit global_n's bricks on every axis, with
 * every block at least `halo` points thick along the axes cut between ranks
 * (a neighbour's ghost planes are its owned planes: solver.space_order / 2)? */
int heat_layout_fits(const int global_n[3], const int dims[3], int halo);

/* Of the layouts of `ranks` that keep requested's entries > 0 and fit
 * global_n's bricks and the halo, the one with the smallest halo area (the
 * faces between blocks); ties go to more ranks along z, then y. Returns 1
 * and sets dims, or 0 where none fits (dims untouched). */
int heat_layout_search(int ranks, const int requested[3], const int global_n[3], int halo, int dims[3]);
