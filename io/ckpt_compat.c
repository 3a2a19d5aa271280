#include "ckpt_compat.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../solver/error.h"
#include "../solver/implicit.h"
#include "ckpt_materials.h"

/* ---- the run ---------------------------------------------------------------------------------- */

static int mismatch(const char *path, const char *what, const char *in_file, const char *in_config)
{
    return heat_error(HEAT_ERR_CONFIG, "%s has %s = %s but the configuration has %s; restart with the configuration "
                      "that wrote it (its text is in the file's /restart/config)", path, what, in_file, in_config);
}

static void format_triple(char *buf, size_t len, const double v[3])
{
    snprintf(buf, len, "[%.17g, %.17g, %.17g]", v[0], v[1], v[2]);
}

static int check_grid(const char *path, const ckpt_meta *m, const heat_config *c)
{
    char a[128], b[128];
    if (memcmp(m->grid.n, c->grid.n, sizeof m->grid.n) != 0) {
        snprintf(a, sizeof a, "[%d, %d, %d]", m->grid.n[0], m->grid.n[1], m->grid.n[2]);
        snprintf(b, sizeof b, "[%d, %d, %d]", c->grid.n[0], c->grid.n[1], c->grid.n[2]);
        return mismatch(path, "grid.n", a, b);
    }
    if (memcmp(m->grid.length, c->grid.length, sizeof m->grid.length) != 0) {
        format_triple(a, sizeof a, m->grid.length);
        format_triple(b, sizeof b, c->grid.length);
        return mismatch(path, "grid.length", a, b);
    }
    if ((int)m->precision != c->precision)
        return mismatch(path, "solver.precision", heat_precision_name(m->precision),
                        heat_precision_name((heat_precision)c->precision));
    return HEAT_OK;
}

/* 0 (a meta or configuration that never set it) is the default, 2. */
static int order_or_default(int order) { return order > 0 ? order : 2; }

static int check_physics(const char *path, const ckpt_meta *m, const heat_config *c)
{
    char a[64], b[64];
    /* alpha is the constant-coefficient problem's: a materials run on either side leaves it unused (its
     * coefficients are the materials, which ckpt_compat_problem compares, and a change of them may be allowed). */
    int alpha_used = m->file_materials == NULL && !heat_materials_active(&c->materials);
    if (alpha_used && m->alpha != c->alpha) {
        snprintf(a, sizeof a, "%.17g", m->alpha), snprintf(b, sizeof b, "%.17g", c->alpha);
        return mismatch(path, "physics.alpha", a, b);
    }
    /* An implicit scheme is stable at any dt, so a restart into one may change
     * it (the usual answer to a solve that did not converge, and the point of
     * switching from explicit); an explicit run keeps its dt, unless it
     * switches scheme (check_scheme let that through only when asked). */
    int new_dt_allowed = c->implicit.scheme != HEAT_EULER || m->implicit.scheme != c->implicit.scheme ||
                         order_or_default(m->space_order) != order_or_default(c->space_order); /* dt_max is the order's */
    if (m->dt != c->dt && !new_dt_allowed) {
        snprintf(a, sizeof a, "%.17g", m->dt), snprintf(b, sizeof b, "%.17g", c->dt);
        return mismatch(path, "the time step dt (time.dt, or time.cfl times dt_max)", a, b);
    }
    return HEAT_OK;
}

/* Another scheme continues a different computation: only when asked. */
static int check_scheme(const char *path, const ckpt_meta *m, const heat_config *c, int allow_change)
{
    if (m->implicit.scheme == c->implicit.scheme || allow_change) return HEAT_OK;
    return heat_error(HEAT_ERR_CONFIG, "%s was written with time.scheme = %s but the configuration has %s; use the "
                      "checkpoint's scheme, or add --allow-scheme-change to continue with %s on purpose", path,
                      heat_scheme_name(m->implicit.scheme), heat_scheme_name(c->implicit.scheme),
                      heat_scheme_name(c->implicit.scheme));
}

/* Another space order is another discretisation: only when asked, as another scheme. */
static int check_space_order(const char *path, const ckpt_meta *m, const heat_config *c, int allow_change)
{
    const int file = order_or_default(m->space_order), config = order_or_default(c->space_order);
    if (file == config || allow_change) return HEAT_OK;
    return heat_error(HEAT_ERR_CONFIG, "%s was written with solver.space_order = %d but the configuration has %d; use "
                      "the checkpoint's order (--set solver.space_order=%d), or add --allow-scheme-change to continue "
                      "with order %d on purpose", path, file, config, file, config);
}

int ckpt_compat_run(const char *path, const ckpt_meta *m, const heat_config *c, int scheme_change)
{
    HEAT_CALL(check_grid(path, m, c));
    HEAT_CALL(check_scheme(path, m, c, scheme_change));
    HEAT_CALL(check_space_order(path, m, c, scheme_change));
    return check_physics(path, m, c);
}

/* ---- the problem -------------------------------------------------------------------------------- */

static const char *const face_names[] = {"x_low", "x_high", "y_low", "y_high", "z_low", "z_high"};

static int differs(const char *path, const char *what, const char *in_file, const char *in_config)
{
    return heat_error(HEAT_ERR_CONFIG, "%s has %s = %s but the configuration has %s; restart with the configuration "
                      "that wrote it (its text is in the file's /restart/config), or add --allow-problem-change to "
                      "continue the field under the new problem on purpose", path, what, in_file, in_config);
}

static int differs_number(const char *path, const char *what, double in_file, double in_config)
{
    char a[40], b[40];
    snprintf(a, sizeof a, "%.17g", in_file), snprintf(b, sizeof b, "%.17g", in_config);
    return differs(path, what, a, b);
}

static void describe_face(char *buf, size_t len, const heat_bc *bc)
{
    const char *type = heat_config_word("boundary.x_low.type", bc->type);
    if (bc->type == HEAT_BC_CONVECTIVE) snprintf(buf, len, "%s h %.17g ambient %.17g", type, bc->h, bc->ambient);
    else if (bc->type == HEAT_BC_DIRICHLET || bc->type == HEAT_BC_FLUX) snprintf(buf, len, "%s %.17g", type, bc->value);
    else snprintf(buf, len, "%s", type);
}

static int same_face(const heat_bc *a, const heat_bc *b)
{
    if (a->type != b->type) return 0;
    if (a->type == HEAT_BC_DIRICHLET || a->type == HEAT_BC_FLUX) return a->value == b->value;
    if (a->type == HEAT_BC_CONVECTIVE) return a->h == b->h && a->ambient == b->ambient;
    return 1;
}

static int check_boundaries(const char *path, const ckpt_meta *m, const heat_config *c)
{
    for (int f = 0; f < FACE_COUNT; ++f) {
        if (same_face(&m->bc[f], &c->bc[f])) continue;
        char what[64], a[160], b[160];
        snprintf(what, sizeof what, "boundary.%s", face_names[f]);
        describe_face(a, sizeof a, &m->bc[f]), describe_face(b, sizeof b, &c->bc[f]);
        return differs(path, what, a, b);
    }
    return HEAT_OK;
}

static int check_material(const char *path, int i, const heat_material *a, const heat_material *b)
{
    char what[160];
    if (strcmp(a->name, b->name) != 0) {
        char x[80], y[80];
        snprintf(what, sizeof what, "materials[%d].name", i);
        snprintf(x, sizeof x, "\"%s\"", a->name), snprintf(y, sizeof y, "\"%s\"", b->name);
        return differs(path, what, x, y);
    }
    const double va[3] = {a->conductivity, a->density, a->specific_heat};
    const double vb[3] = {b->conductivity, b->density, b->specific_heat};
    static const char *const keys[3] = {"conductivity", "density", "specific_heat"};
    for (int k = 0; k < 3; ++k) {
        if (va[k] == vb[k]) continue;
        snprintf(what, sizeof what, "materials[%d] (\"%s\") %s", i, a->name, keys[k]);
        return differs_number(path, what, va[k], vb[k]);
    }
    return HEAT_OK;
}

/* "silicon, source 50000000 from t = 0 to 2" ("always" without a source_time). */
static void describe_zone_content(char *buf, size_t len, const heat_materials *m, int z)
{
    const heat_zone *zone = &m->zone[z];
    int used = snprintf(buf, len, "%s", m->material[zone->material].name);
    if (zone->source == 0.0) return;
    used += snprintf(buf + used, len - (size_t)used, ", source %.17g", zone->source);
    if (isinf(zone->source_on) && isinf(zone->source_off)) snprintf(buf + used, len - (size_t)used, " always");
    else snprintf(buf + used, len - (size_t)used, " from t = %g to %g", zone->source_on, zone->source_off);
}

static void describe_zone(char *buf, size_t len, const heat_materials *m, int z)
{
    char content[200];
    describe_zone_content(content, sizeof content, m, z);
    snprintf(buf, len, "zone %d (%s)", z, content);
}

static int check_tables(const char *path, const heat_materials *a, const heat_materials *b)
{
    if (a->material_count != b->material_count)
        return differs_number(path, "the number of materials", a->material_count, b->material_count);
    for (int i = 0; i < a->material_count; ++i) HEAT_CALL(check_material(path, i, &a->material[i], &b->material[i]));
    if (a->zone_count != b->zone_count)
        return differs_number(path, "the number of zones (distinct material, source and source_time of the regions)",
                              a->zone_count, b->zone_count);
    for (int z = 0; z < a->zone_count; ++z) {
        if (heat_zones_equal(&a->zone[z], &b->zone[z])) continue;
        char what[32], x[256], y[256];
        snprintf(what, sizeof what, "zone %d", z);
        describe_zone_content(x, sizeof x, a, z), describe_zone_content(y, sizeof y, b, z);
        return differs(path, what, x, y);
    }
    return HEAT_OK;
}

static int check_zone_index(const char *path, const heat_config *c, const heat_painting *painting)
{
    long long point;
    int in_file, in_config;
    HEAT_CALL(ckpt_materials_first_difference(path, painting, &point, &in_file, &in_config));
    if (point < 0) return HEAT_OK;
    const int *n = c->grid.n;
    int i = (int)(point % n[0]), j = (int)(point / n[0] % n[1]), k = (int)(point / ((long long)n[0] * n[1]));
    char what[160], a[256], b[256];
    snprintf(what, sizeof what, "at point (%d, %d, %d) (x, y, z = %g, %g, %g) the zone", i, j, k,
             (i + 0.5) * c->grid.h[0], (j + 0.5) * c->grid.h[1], (k + 0.5) * c->grid.h[2]);
    describe_zone(a, sizeof a, &c->materials, in_file < c->materials.zone_count ? in_file : 0);
    describe_zone(b, sizeof b, &c->materials, in_config);
    if (in_file >= c->materials.zone_count) snprintf(a, sizeof a, "zone %d", in_file);
    return differs(path, what, a, b);
}

int ckpt_compat_problem(const char *path, const ckpt_meta *m, const heat_config *c, const heat_painting *painting)
{
    HEAT_CALL(check_boundaries(path, m, c));
    int file_has = m->file_materials != NULL, config_has = heat_materials_active(&c->materials);
    if (file_has != config_has)
        return differs(path, "materials", file_has ? "a materials list" : "none", config_has ? "a materials list" : "none");
    if (!config_has) return HEAT_OK;
    HEAT_CALL(check_tables(path, m->file_materials, &c->materials));
    return check_zone_index(path, c, painting);
}
