#include "deep_halo.h"

/* The axis is held whole by this block (a periodic one wraps inside it). */
static int held_whole(const heat_problem *p, int axis)
{
    return p->halo.global_n[axis] <= 0 || p->grid.n[axis] == p->halo.global_n[axis];
}

/* Bit f for every exchanged face whose neighbour is another block; 0 with
 * *why set where an exchanged face is neither that nor a periodic wrap. */
static unsigned cut_faces(const heat_problem *p, const char **why)
{
    unsigned cut = 0;
    for (int f = 0; f < FACE_COUNT; ++f) {
        if (!(p->halo.exchanged & 1u << f)) continue;
        if (!held_whole(p, f / 2)) cut |= 1u << f;
        else if (p->bc[f].type != HEAT_BC_PERIODIC) *why = "a face is exchanged with no neighbour across it";
    }
    return cut;
}

static int refuse(const char *reason, const char **why)
{
    *why = reason;
    return 0;
}

int heat_deep_halo_plan(const heat_problem *p, int steps, heat_deep_halo *plan, const char **why)
{
    *plan = (heat_deep_halo){.axis = -1, .faces = 0};
    *why = NULL;
    if (p->implicit.scheme != HEAT_EULER) return refuse("implicit steps", why);
    if (p->halo.single_steps) return refuse("the run asks for single steps", why);
    /* a tile's halo and a periodic axis's wrap-around stay within one period; the
     * thinnest rank's block, not this one, so that every rank answers alike */
    for (int a = 0; a < 3; ++a)
        if ((p->halo.fewest[a] > 0 ? p->halo.fewest[a] : p->grid.n[a]) < 4)
            return refuse("a block thinner than 4 points", why);
    unsigned cut = cut_faces(p, why);
    if (*why) return 0;
    int axes = 0;
    for (int a = 0; a < 3; ++a)
        if (cut & 3u << 2 * a) ++axes, plan->axis = a;
    if (axes > 1) return refuse("ranks cut along two or more axes (edge and corner ghosts not exchanged)", why);
    if (plan->axis == 1) return refuse("ranks cut along y (x or z slabs only)", why);
    if (plan->axis >= 0 && p->halo.fewest[plan->axis] < steps)
        return refuse("a rank's block is thinner along the cut than the steps of a sweep", why);
    plan->faces = cut;
    return 1;
}

