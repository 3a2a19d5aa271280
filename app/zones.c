#include "zones.h"

#include <stdlib.h>

#include "solver/error.h"

heat_painting zones_painting(const heat_config *c)
{
    return (heat_painting){&c->regions, &c->initial, &c->grid, c->bc};
}

int zones_attach(const heat_config *c, const heat_decomp *d, heat_problem *problem, unsigned char **zones)
{
    *zones = NULL;
    if (!heat_materials_active(&c->materials)) return HEAT_OK;
    const int *n = d->local_n;
    size_t bytes = (size_t)(n[0] + 2) * (size_t)(n[1] + 2) * (size_t)(n[2] + 2);
    *zones = malloc(bytes);
    HEAT_CHECK(*zones, "cannot allocate the %zu-byte zone index of this block", bytes);
    heat_painting p = zones_painting(c);
    heat_regions_paint_block(&p, d->offset, n, *zones);
    problem->materials = &c->materials;
    problem->zones = *zones;
    return HEAT_OK;
}

void zones_initial_temperature(const heat_config *c, const int offset[3], const int n[3], void *block)
{
    if (!heat_materials_active(&c->materials)) return;
    heat_painting p = zones_painting(c);
    heat_regions_set_temperature_block(&p, offset, n, (heat_precision)c->precision, block);
}

int zones_checkpoint_fields(const heat_config *c, int root, ckpt_materials **out)
{
    *out = NULL;
    if (!root || !heat_materials_active(&c->materials)) return HEAT_OK;
    heat_painting p = zones_painting(c);
    return ckpt_materials_create(&c->materials, &p, c->output.compression, c->output.strategy == 0, out);
}
