/*
 * `materials`, `regions` and the boundary types that need them. The lists
 * are not in config.c's key table (their elements are groups of their own
 * keys), so they are read, checked and rendered here with the same habits:
 * every message names file:line (or --set), the key and the fix.
 */
#include "config_materials.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../solver/error.h"
#include "../solver/font.h"
#include "words.h"

static const char *const shape_words[] = {"box", "cylinder", "sphere", "letters", NULL};
static const char *const axis_words[] = {"x", "y", "z", NULL};
static const char *const face_names[] = {"x_low", "x_high", "y_low", "y_high", "z_low", "z_high"};

/* The keys each element may hold. */
static const char *const material_keys[] = {"name", "conductivity", "density", "specific_heat", NULL};
static const char *const common_region_keys[] = {"shape", "material", "source", "source_time", "temperature", NULL};
static const char *const shape_keys[][5] = {
    {"min", "max", NULL},
    {"axis", "center", "radius", "range", NULL},
    {"center", "radius", NULL},
    {"text", NULL},
};

int config_materials_owns(const char *name) { return strcmp(name, "materials") == 0 || strcmp(name, "regions") == 0; }

/* ---- locations, names ------------------------------------------------------------------------- */

static void setting_location(const config_setting_t *s, const char *origin, char *buf, size_t len)
{
    int line = (int)config_setting_source_line(s);
    if (line > 0) snprintf(buf, len, "%s:%d", origin, line);
    else snprintf(buf, len, "--set");
}

static int in_words(const char *word, const char *const *words)
{
    for (int w = 0; words && words[w]; ++w)
        if (strcmp(word, words[w]) == 0) return w;
    return -1;
}

/* "materials[1]" / "regions[0]": how messages name an element. */
typedef struct element {
    const config_setting_t *s;
    const char *list;
    int index;
    const char *origin;
} element;

static int element_error(const element *e, const config_setting_t *at, const char *fmt, const char *what,
                         const char *fix)
{
    char loc[600];
    setting_location(at ? at : e->s, e->origin, loc, sizeof loc);
    char message[1400];
    snprintf(message, sizeof message, fmt, what);
    return heat_error(HEAT_ERR_CONFIG, "%s: %s[%d]: %s; %s (see docs/CONFIG.md)", loc, e->list, e->index, message, fix);
}

/* ---- reading element keys --------------------------------------------------------------------- */

static int check_element_keys(const element *e, const char *const *allowed, const char *const *also)
{
    for (int i = 0; i < config_setting_length(e->s); ++i) {
        const config_setting_t *s = config_setting_get_elem(e->s, (unsigned)i);
        const char *name = config_setting_name(s);
        if (in_words(name, allowed) >= 0 || in_words(name, also) >= 0) continue;
        const char *all[16];
        int count = 0;
        for (int k = 0; allowed && allowed[k] && count < 16; ++k) all[count++] = allowed[k];
        for (int k = 0; also && also[k] && count < 16; ++k) all[count++] = also[k];
        char fix[256];
        snprintf(fix, sizeof fix, "did you mean '%s'?", words_nearest(name, all, count));
        return element_error(e, s, "unknown key '%s' here", name, fix);
    }
    return HEAT_OK;
}

static int number_of(const config_setting_t *s, double *v)
{
    int type = config_setting_type(s);
    if (type == CONFIG_TYPE_INT || type == CONFIG_TYPE_INT64) return *v = (double)config_setting_get_int64(s), 1;
    if (type == CONFIG_TYPE_FLOAT) return *v = config_setting_get_float(s), 1;
    return 0;
}

/* A finite number; required: its absence is an error, else *v stays. *given: whether it was there. */
static int read_float(const element *e, const char *key, int required, double *v, int *given)
{
    const config_setting_t *s = config_setting_get_member(e->s, key);
    if (given) *given = s != NULL;
    if (!s) return required ? element_error(e, NULL, "'%s' is missing", key, "add it (a number)") : HEAT_OK;
    if (!number_of(s, v)) return element_error(e, s, "'%s' must be a number", key, "write it like 1.5 or 2e-3");
    if (!isfinite(*v))
        return element_error(e, s, "'%s' is not a finite number", key, "give a value within the range of a double");
    return HEAT_OK;
}

static int read_positive(const element *e, const char *key, double *v)
{
    HEAT_CALL(read_float(e, key, 1, v, NULL));
    if (*v > 0.0) return HEAT_OK;
    char what[160];
    snprintf(what, sizeof what, "%s = %.17g must be > 0", key, *v);
    return element_error(e, config_setting_get_member(e->s, key), "%s", what, "give a positive value");
}

/* count finite numbers; returns 0 with *given 0 when absent and not required. */
static int read_floats(const element *e, const char *key, int count, int required, double *v, int *given)
{
    const config_setting_t *s = config_setting_get_member(e->s, key);
    if (given) *given = s != NULL;
    char fix[96];
    snprintf(fix, sizeof fix, "write a list of %d numbers like [%s]", count,
             count == 2 ? "0.0, 1.0" : "0.0, 0.5, 1.0");
    if (!s) return required ? element_error(e, NULL, "'%s' is missing", key, fix) : HEAT_OK;
    int type = config_setting_type(s);
    if ((type != CONFIG_TYPE_ARRAY && type != CONFIG_TYPE_LIST) || config_setting_length(s) != count)
        return element_error(e, s, "'%s' has the wrong form", key, fix);
    for (int i = 0; i < count; ++i) {
        if (!number_of(config_setting_get_elem(s, (unsigned)i), &v[i])) return element_error(e, s, "'%s' has a non-number", key, fix);
        if (!isfinite(v[i])) return element_error(e, s, "'%s' holds a number that is not finite", key, fix);
    }
    return HEAT_OK;
}

static int read_string(const element *e, const char *key, int required, const char **out)
{
    const config_setting_t *s = config_setting_get_member(e->s, key);
    if (!s) return required ? element_error(e, NULL, "'%s' is missing", key, "add it (a quoted string)") : HEAT_OK;
    *out = config_setting_get_string(s);
    if (!*out) return element_error(e, s, "'%s' must be a quoted string", key, "write it in double quotes");
    return HEAT_OK;
}

static int read_word(const element *e, const char *key, const char *const *words, int *out)
{
    const char *word = NULL;
    const config_setting_t *s = config_setting_get_member(e->s, key);
    if (s && !config_setting_get_string(s)) {
        char fix[128];
        snprintf(fix, sizeof fix, "write a word in double quotes, e.g. %s = \"%s\"", key, words[0]);
        return element_error(e, s, "'%s' must be a quoted string", key, fix);
    }
    HEAT_CALL(read_string(e, key, 0, &word));
    if (!word) return HEAT_OK;
    int w = in_words(word, words);
    if (w >= 0) return *out = w, HEAT_OK;
    char fix[256];
    size_t used = (size_t)snprintf(fix, sizeof fix, "use one of");
    for (int i = 0; words[i] && used < sizeof fix; ++i) used += (size_t)snprintf(fix + used, sizeof fix - used, " \"%s\"", words[i]);
    char what[128];
    snprintf(what, sizeof what, "%s = \"%.64s\" is not known", key, word);
    return element_error(e, config_setting_get_member(e->s, key), "%s", what, fix);
}

/* ---- materials -------------------------------------------------------------------------------- */

static int list_of_groups(const config_setting_t *list, const char *name, const char *origin, int most,
                          const char *why_most)
{
    char loc[600];
    setting_location(list, origin, loc, sizeof loc);
    int type = config_setting_type(list);
    if (type != CONFIG_TYPE_LIST && !(type == CONFIG_TYPE_ARRAY && config_setting_length(list) == 0))
        return heat_error(HEAT_ERR_CONFIG, "%s: %s must be a list of groups: %s = ( { ... }, { ... } ); (see "
                          "docs/CONFIG.md)", loc, name, name);
    if (config_setting_length(list) > most)
        return heat_error(HEAT_ERR_CONFIG, "%s: %s has %d entries; at most %d fit (%s); "
                          "merge entries that share their values", loc, name, config_setting_length(list), most, why_most);
    for (int i = 0; i < config_setting_length(list); ++i) {
        const config_setting_t *s = config_setting_get_elem(list, (unsigned)i);
        if (config_setting_type(s) == CONFIG_TYPE_GROUP) continue;
        setting_location(s, origin, loc, sizeof loc);
        return heat_error(HEAT_ERR_CONFIG, "%s: %s[%d] must be a group { key = value; ... }", loc, name, i);
    }
    return HEAT_OK;
}

static int material_index(const heat_materials *m, const char *name)
{
    for (int i = 0; i < m->material_count; ++i)
        if (strcmp(m->material[i].name, name) == 0) return i;
    return -1;
}

/* Checkpoints join the names with line feeds (/restart/material_names), so a
 * control character in one would split it there and the run's own checkpoint
 * would no longer restart. */
static int has_control_character(const char *name)
{
    for (const unsigned char *ch = (const unsigned char *)name; *ch; ++ch)
        if (*ch < 0x20 || *ch == 0x7f) return 1;
    return 0;
}

static int read_material(const element *e, heat_materials *m)
{
    HEAT_CALL(check_element_keys(e, material_keys, NULL));
    const char *name = NULL;
    HEAT_CALL(read_string(e, "name", 1, &name));
    if (name[0] == '\0' || strlen(name) >= HEAT_MATERIAL_NAME)
        return element_error(e, config_setting_get_member(e->s, "name"), "name = \"%.64s\" is empty or too long",
                             name, "give a name of 1 to 63 characters");
    if (has_control_character(name))
        return element_error(e, config_setting_get_member(e->s, "name"), "name = \"%.64s\" holds a control character "
                             "(a line feed, tab or other character below space)", name,
                             "give a name of printable characters, e.g. \"copper\"");
    int earlier = material_index(m, name);
    if (earlier >= 0) {
        char fix[160];
        snprintf(fix, sizeof fix, "materials[%d] has it already: give each material its own name", earlier);
        return element_error(e, config_setting_get_member(e->s, "name"), "duplicate material name \"%s\"", name, fix);
    }
    heat_material *mat = &m->material[m->material_count];
    snprintf(mat->name, sizeof mat->name, "%s", name);
    HEAT_CALL(read_positive(e, "conductivity", &mat->conductivity));
    HEAT_CALL(read_positive(e, "density", &mat->density));
    HEAT_CALL(read_positive(e, "specific_heat", &mat->specific_heat));
    m->material_count++;
    return HEAT_OK;
}

/* Each value may be a positive double and still break the tables the kernels read: rho c and each pair's
 * face conductivity 2 k_a k_b / (k_a + k_b) overflow to infinity or underflow to 0 (e.g. k = 1e200), after
 * which an explicit run's dt_max is 0 and an implicit one's right-hand side is not a number. */
static int check_material_products(const config_setting_t *list, const char *origin, const heat_materials *m)
{
    for (int a = 0; a < m->material_count; ++a) {
        const heat_material *ma = &m->material[a];
        element e = {config_setting_get_elem(list, (unsigned)a), "materials", a, origin};
        char what[200];
        double capacity = ma->density * ma->specific_heat;
        snprintf(what, sizeof what, "density x specific_heat = %g x %g", ma->density, ma->specific_heat);
        if (!isnormal(capacity)) /* 0, subnormal, infinite */
            return element_error(&e, NULL, "%s is beyond a double's range", what, "give values of a physical "
                                 "size (SI: rho c about 1e3 to 1e7 J/(m^3 K)) or rescale the units");
        for (int b = a; b < m->material_count; ++b) {
            const heat_material *mb = &m->material[b];
            double k = heat_face_conductivity(ma->conductivity, mb->conductivity);
            if (isnormal(k)) continue;
            snprintf(what, sizeof what, "conductivity = %g: the conductance of its face with materials[%d] "
                     "(\"%s\"), 2 k_a k_b / (k_a + k_b), is beyond a double's range", ma->conductivity, b, mb->name);
            return element_error(&e, config_setting_get_member(e.s, "conductivity"), "%s", what, "give values of "
                                 "a physical size (SI: about 0.01 to 2000 W/(m K)) or rescale the units");
        }
    }
    return HEAT_OK;
}

static int read_materials(const config_setting_t *list, const char *origin, heat_materials *m)
{
    HEAT_CALL(list_of_groups(list, "materials", origin, HEAT_MATERIALS_MAX, "the size of heatsolve's material table"));
    if (config_setting_length(list) == 0) {
        char loc[600];
        setting_location(list, origin, loc, sizeof loc);
        return heat_error(HEAT_ERR_CONFIG, "%s: materials is empty; give at least the background material, "
                          "e.g. materials = ( { name = \"air\"; conductivity = 0.026; density = 1.2; "
                          "specific_heat = 1005.0; } );", loc);
    }
    for (int i = 0; i < config_setting_length(list); ++i) {
        element e = {config_setting_get_elem(list, (unsigned)i), "materials", i, origin};
        HEAT_CALL(read_material(&e, m));
    }
    return check_material_products(list, origin, m);
}

/* ---- regions ---------------------------------------------------------------------------------- */

static int read_material_name(const element *e, const heat_materials *m, int *index)
{
    const char *name = NULL;
    HEAT_CALL(read_string(e, "material", 1, &name));
    *index = material_index(m, name);
    if (*index >= 0) return HEAT_OK;
    const char *names[HEAT_MATERIALS_MAX];
    for (int i = 0; i < m->material_count; ++i) names[i] = m->material[i].name;
    char fix[200], what[128];
    snprintf(fix, sizeof fix, "did you mean \"%s\"? (a region's material is one of the `materials` names)",
             words_nearest(name, names, m->material_count));
    snprintf(what, sizeof what, "unknown material \"%.64s\"", name);
    return element_error(e, config_setting_get_member(e->s, "material"), "%s", what, fix);
}

static int read_box(const element *e, heat_region *g)
{
    HEAT_CALL(read_floats(e, "min", 3, 1, g->min, NULL));
    HEAT_CALL(read_floats(e, "max", 3, 1, g->max, NULL));
    for (int d = 0; d < 3; ++d) {
        if (g->min[d] <= g->max[d]) continue;
        char what[160];
        snprintf(what, sizeof what, "max[%d] = %g (%s) is below min[%d] = %g", d, g->max[d], axis_words[d], d,
                 g->min[d]);
        return element_error(e, config_setting_get_member(e->s, "max"), "%s", what, "give min <= max along every axis");
    }
    return HEAT_OK;
}

static int read_cylinder(const element *e, heat_region *g)
{
    g->axis = 2;
    HEAT_CALL(read_word(e, "axis", axis_words, &g->axis));
    HEAT_CALL(read_floats(e, "center", 2, 1, g->center, NULL));
    HEAT_CALL(read_positive(e, "radius", &g->radius));
    int given = 0;
    HEAT_CALL(read_floats(e, "range", 2, 0, g->range, &given));
    if (!given) g->range[0] = -INFINITY, g->range[1] = INFINITY;
    if (g->range[0] > g->range[1])
        return element_error(e, config_setting_get_member(e->s, "range"), "range [%s] runs backwards", "low, high",
                             "give the lower end first");
    return HEAT_OK;
}

static int read_letters(const element *e, const heat_config *c, heat_region *g)
{
    const char *text = c->initial.text;
    HEAT_CALL(read_string(e, "text", 0, &text));
    const char *bad = font_unsupported(text);
    if (text[0] == '\0' || bad || strlen(text) >= sizeof g->text)
        return element_error(e, config_setting_get_member(e->s, "text"), "text = \"%.64s\" is empty, too long or "
                             "has a character the font lacks", text,
                             "use 1 to 63 letters A-Z, digits, space and . , ! ? - : +");
    snprintf(g->text, sizeof g->text, "%s", text);
    return HEAT_OK;
}

static int read_source(const element *e, heat_region *g)
{
    int timed = 0;
    double window[2] = {-INFINITY, INFINITY};
    HEAT_CALL(read_float(e, "source", 0, &g->source, NULL));
    HEAT_CALL(read_floats(e, "source_time", 2, 0, window, &timed));
    if (timed && !(window[0] < window[1]))
        return element_error(e, config_setting_get_member(e->s, "source_time"), "source_time = [%s] is empty",
                             "t_on, t_off", "give t_on < t_off (the source acts while t_on <= t < t_off)");
    if (timed && g->source == 0.0)
        return element_error(e, config_setting_get_member(e->s, "source_time"), "%s without a source",
                             "source_time", "add source = <power per volume> or remove source_time");
    g->source_on = g->source == 0.0 ? -INFINITY : window[0];
    g->source_off = g->source == 0.0 ? INFINITY : window[1];
    return HEAT_OK;
}

static int read_region(const element *e, const heat_config *c, heat_region *g)
{
    g->shape = -1;
    HEAT_CALL(read_word(e, "shape", shape_words, &g->shape));
    if (g->shape < 0)
        return element_error(e, NULL, "'%s' is missing", "shape",
                             "add shape = \"box\", \"cylinder\", \"sphere\" or \"letters\"");
    HEAT_CALL(check_element_keys(e, common_region_keys, shape_keys[g->shape]));
    g->line = (int)config_setting_source_line(e->s);
    HEAT_CALL(read_material_name(e, &c->materials, &g->material));
    switch (g->shape) {
    case REGION_BOX: HEAT_CALL(read_box(e, g)); break;
    case REGION_CYLINDER: HEAT_CALL(read_cylinder(e, g)); break;
    case REGION_SPHERE:
        HEAT_CALL(read_floats(e, "center", 3, 1, g->center, NULL));
        HEAT_CALL(read_positive(e, "radius", &g->radius));
        break;
    case REGION_LETTERS: HEAT_CALL(read_letters(e, c, g)); break;
    }
    HEAT_CALL(read_source(e, g));
    return read_float(e, "temperature", 0, &g->temperature, &g->has_temperature);
}

/* The region's zone: an existing one with the same material and source, or a new one. */
static int assign_zone(const element *e, heat_materials *m, heat_region *g)
{
    heat_zone z = {g->material, g->source, g->source_on, g->source_off};
    for (int i = 0; i < m->zone_count; ++i)
        if (heat_zones_equal(&m->zone[i], &z)) return g->zone = i, HEAT_OK;
    if (m->zone_count == HEAT_ZONES_MAX)
        return element_error(e, NULL, "this region needs zone %s (a zone is a distinct material, source and "
                             "source_time)", "257", "at most 256 fit in the one-byte index: give regions that "
                             "share a material the same source and source_time");
    m->zone[m->zone_count] = z;
    g->zone = m->zone_count++;
    return HEAT_OK;
}

static int read_regions(const config_setting_t *list, const char *origin, heat_config *c)
{
    HEAT_CALL(list_of_groups(list, "regions", origin, HEAT_REGIONS_MAX, "a point's zone index is one byte"));
    for (int i = 0; i < config_setting_length(list); ++i) {
        element e = {config_setting_get_elem(list, (unsigned)i), "regions", i, origin};
        heat_region *g = &c->regions.region[i];
        memset(g, 0, sizeof *g);
        HEAT_CALL(read_region(&e, c, g));
        HEAT_CALL(assign_zone(&e, &c->materials, g));
        c->regions.count = i + 1;
    }
    return HEAT_OK;
}

/* A region that paints no point is almost always a unit or position slip. */
static void warn_empty_regions(const heat_config *c, const char *origin)
{
    heat_painting p = {&c->regions, &c->initial, &c->grid, c->bc};
    for (int r = 0; r < c->regions.count; ++r) {
        if (heat_region_has_points(&p, r)) continue;
        const heat_region *g = &c->regions.region[r];
        char loc[600];
        if (g->line > 0) snprintf(loc, sizeof loc, "%s:%d", origin, g->line);
        else snprintf(loc, sizeof loc, "--set");
        heat_warn("%s: regions[%d] (%s) contains no point of the grid: no cell centre of the box [0, %g] x [0, %g] "
                  "x [0, %g] lies inside it; check its position and size (the box's units)", loc, r,
                  shape_words[g->shape], c->grid.length[0], c->grid.length[1], c->grid.length[2]);
    }
}

/* ---- boundaries ------------------------------------------------------------------------------- */

static int check_face(const config_t *cf, const char *origin, const heat_config *c, int f)
{
    int type = c->bc[f].type;
    if (type != HEAT_BC_CONVECTIVE && type != HEAT_BC_FLUX) return HEAT_OK;
    char path[64], loc[600];
    snprintf(path, sizeof path, "boundary.%s.type", face_names[f]);
    setting_location(config_lookup(cf, path), origin, loc, sizeof loc);
    const char *name = type == HEAT_BC_CONVECTIVE ? "convective" : "flux";
    if (!heat_materials_active(&c->materials))
        return heat_error(HEAT_ERR_CONFIG, "%s: boundary.%s.type = \"%s\" needs `materials` (its conductivity "
                          "turns the face's heat flux into a temperature gradient); add a materials list, or use "
                          "\"dirichlet\" or \"neumann\" (see docs/CONFIG.md)", loc, face_names[f], name);
    const char *needed[2] = {type == HEAT_BC_CONVECTIVE ? "h" : "value", type == HEAT_BC_CONVECTIVE ? "ambient" : NULL};
    for (int k = 0; k < 2 && needed[k]; ++k) {
        snprintf(path, sizeof path, "boundary.%s.%s", face_names[f], needed[k]);
        if (config_lookup(cf, path)) continue;
        return heat_error(HEAT_ERR_CONFIG, "%s: boundary.%s is \"%s\" but has no '%s'; add %s = <%s> to the face, "
                          "e.g. boundary.%s = { type = \"%s\"; %s }", loc, face_names[f], name, needed[k], needed[k],
                          k == 0 && type == HEAT_BC_CONVECTIVE ? "heat transfer coefficient, >= 0, W/(m^2 K)"
                          : type == HEAT_BC_CONVECTIVE ? "ambient temperature" : "heat flux into the body, W/m^2",
                          face_names[f], name, type == HEAT_BC_CONVECTIVE ? "h = 25.0; ambient = 20.0;" : "value = 1.0e4;");
    }
    return HEAT_OK;
}

/* A value on an insulated or periodic face is ignored: one that is not 0 was meant to do something (a
 * "neumann" face given the gradient or flux it should hold), so it gets a word. 0 stays quiet: the stored
 * effective configuration gives every face one. */
static void warn_unused_face_value(const config_t *cf, const char *origin, const heat_config *c, int f)
{
    int type = c->bc[f].type;
    if ((type != HEAT_BC_NEUMANN && type != HEAT_BC_PERIODIC) || c->bc[f].value == 0.0) return;
    char path[64], loc[600];
    snprintf(path, sizeof path, "boundary.%s.value", face_names[f]);
    setting_location(config_lookup(cf, path), origin, loc, sizeof loc);
    heat_warn("%s: %s = %g is ignored: boundary.%s.type is \"%s\" (value is the temperature of a \"dirichlet\" "
              "face or the heat flux of a \"flux\" face); change the type or remove value", loc, path,
              c->bc[f].value, face_names[f], heat_config_word("boundary.x_low.type", type));
}

/* h and ambient act on a convective face only: on a face of another type they are ignored, which is worth
 * a word (a type left at "neumann" by mistake), not a refusal (--set can change a face's type but cannot
 * remove its other keys). A convective face's value stays quiet: the effective configuration that
 * checkpoints store gives every face one. */
static void warn_unused_face_keys(const config_t *cf, const char *origin, const heat_config *c, int f)
{
    static const char *const unused[] = {"h", "ambient"};
    warn_unused_face_value(cf, origin, c, f);
    if (c->bc[f].type == HEAT_BC_CONVECTIVE) return;
    const char *type = heat_config_word("boundary.x_low.type", c->bc[f].type);
    for (int k = 0; k < 2; ++k) {
        char path[64], loc[600];
        snprintf(path, sizeof path, "boundary.%s.%s", face_names[f], unused[k]);
        const config_setting_t *s = config_lookup(cf, path);
        if (!s) continue;
        setting_location(s, origin, loc, sizeof loc);
        heat_warn("%s: %s is ignored: boundary.%s.type is \"%s\" (h and ambient act on a \"convective\" face "
                  "only); set the type to \"convective\" or remove %s", loc, path, face_names[f], type, unused[k]);
    }
}

int config_materials_read(const config_t *cf, const char *origin, heat_config *c)
{
    memset(&c->materials, 0, sizeof c->materials);
    c->regions.count = 0;
    const config_setting_t *materials = config_lookup(cf, "materials");
    const config_setting_t *regions = config_lookup(cf, "regions");
    if (regions && !materials) {
        char loc[600];
        setting_location(regions, origin, loc, sizeof loc);
        return heat_error(HEAT_ERR_CONFIG, "%s: regions need `materials` to name their material; add a materials "
                          "list (its first entry is the background) (see docs/CONFIG.md)", loc);
    }
    if (materials) {
        HEAT_CALL(read_materials(materials, origin, &c->materials));
        c->materials.zone[0] = (heat_zone){0, 0.0, -INFINITY, INFINITY}; /* the background: no region */
        c->materials.zone_count = 1;
    }
    if (regions) HEAT_CALL(read_regions(regions, origin, c));
    for (int f = 0; f < FACE_COUNT; ++f) HEAT_CALL(check_face(cf, origin, c, f));
    for (int f = 0; f < FACE_COUNT; ++f) warn_unused_face_keys(cf, origin, c, f);
    if (regions) {
        heat_grid_set_spacing(&c->grid);
        warn_empty_regions(c, origin);
    }
    return HEAT_OK;
}

/* The explicit step's stable dt (solver/materials.c), whatever the painting. */
double config_materials_dt_max(const heat_config *c)
{
    return heat_materials_dt_max(&c->grid, c->bc, &c->materials);
}

/* ---- the effective configuration -------------------------------------------------------------- */

static int add_float(config_setting_t *group, const char *name, double v)
{
    config_setting_t *s = config_setting_add(group, name, CONFIG_TYPE_FLOAT);
    HEAT_CHECK(s && config_setting_set_float(s, v) == CONFIG_TRUE, "libconfig could not add '%s'", name);
    return HEAT_OK;
}

static int add_floats(config_setting_t *group, const char *name, const double *v, int count)
{
    config_setting_t *s = config_setting_add(group, name, CONFIG_TYPE_ARRAY);
    HEAT_CHECK(s, "libconfig could not add '%s'", name);
    for (int i = 0; i < count; ++i) HEAT_CHECK(config_setting_set_float_elem(s, -1, v[i]), "libconfig: '%s'", name);
    return HEAT_OK;
}

static int add_string(config_setting_t *group, const char *name, const char *v)
{
    config_setting_t *s = config_setting_add(group, name, CONFIG_TYPE_STRING);
    HEAT_CHECK(s && config_setting_set_string(s, v) == CONFIG_TRUE, "libconfig could not add '%s'", name);
    return HEAT_OK;
}

static int render_material(config_setting_t *list, const heat_material *m)
{
    config_setting_t *g = config_setting_add(list, NULL, CONFIG_TYPE_GROUP);
    HEAT_CHECK(g, "libconfig could not add a material");
    HEAT_CALL(add_string(g, "name", m->name));
    HEAT_CALL(add_float(g, "conductivity", m->conductivity));
    HEAT_CALL(add_float(g, "density", m->density));
    return add_float(g, "specific_heat", m->specific_heat);
}

static int render_shape(config_setting_t *g, const heat_region *r)
{
    switch (r->shape) {
    case REGION_BOX:
        HEAT_CALL(add_floats(g, "min", r->min, 3));
        return add_floats(g, "max", r->max, 3);
    case REGION_CYLINDER:
        HEAT_CALL(add_string(g, "axis", axis_words[r->axis]));
        HEAT_CALL(add_floats(g, "center", r->center, 2));
        HEAT_CALL(add_float(g, "radius", r->radius));
        return isfinite(r->range[0]) ? add_floats(g, "range", r->range, 2) : HEAT_OK;
    case REGION_SPHERE:
        HEAT_CALL(add_floats(g, "center", r->center, 3));
        return add_float(g, "radius", r->radius);
    case REGION_LETTERS: return add_string(g, "text", r->text);
    }
    return HEAT_OK;
}

static int render_region(config_setting_t *list, const heat_config *c, const heat_region *r)
{
    config_setting_t *g = config_setting_add(list, NULL, CONFIG_TYPE_GROUP);
    HEAT_CHECK(g, "libconfig could not add a region");
    HEAT_CALL(add_string(g, "shape", shape_words[r->shape]));
    HEAT_CALL(render_shape(g, r));
    HEAT_CALL(add_string(g, "material", c->materials.material[r->material].name));
    if (r->source != 0.0) HEAT_CALL(add_float(g, "source", r->source));
    if (r->source != 0.0 && (isfinite(r->source_on) || isfinite(r->source_off)))
        HEAT_CALL(add_floats(g, "source_time", (double[2]){r->source_on, r->source_off}, 2));
    if (r->has_temperature) HEAT_CALL(add_float(g, "temperature", r->temperature));
    return HEAT_OK;
}

int config_materials_render(config_t *out, const heat_config *c)
{
    if (!heat_materials_active(&c->materials)) return HEAT_OK;
    config_setting_t *root = config_root_setting(out);
    config_setting_t *materials = config_setting_add(root, "materials", CONFIG_TYPE_LIST);
    HEAT_CHECK(materials, "libconfig could not add the materials");
    for (int i = 0; i < c->materials.material_count; ++i) HEAT_CALL(render_material(materials, &c->materials.material[i]));
    if (c->regions.count == 0) return HEAT_OK;
    config_setting_t *regions = config_setting_add(root, "regions", CONFIG_TYPE_LIST);
    HEAT_CHECK(regions, "libconfig could not add the regions");
    for (int i = 0; i < c->regions.count; ++i) HEAT_CALL(render_region(regions, c, &c->regions.region[i]));
    return HEAT_OK;
}

/* ---- printing --------------------------------------------------------------------------------- */

static void print_floats(FILE *out, const char *name, const double *v, int count)
{
    fprintf(out, " %s = [", name);
    for (int i = 0; i < count; ++i) {
        if (i) fputs(", ", out);
        config_print_float(out, v[i]);
    }
    fputs("];", out);
}

static void print_float_key(FILE *out, const char *name, double v)
{
    fprintf(out, " %s = ", name);
    config_print_float(out, v);
    fputs(";", out);
}

static void print_region(FILE *out, const heat_config *c, const heat_region *r, int last)
{
    fprintf(out, "    { shape = \"%s\";", shape_words[r->shape]);
    if (r->shape == REGION_BOX) print_floats(out, "min", r->min, 3), print_floats(out, "max", r->max, 3);
    if (r->shape == REGION_CYLINDER) {
        fprintf(out, " axis = \"%s\";", axis_words[r->axis]);
        print_floats(out, "center", r->center, 2);
        print_float_key(out, "radius", r->radius);
        if (isfinite(r->range[0])) print_floats(out, "range", r->range, 2);
    }
    if (r->shape == REGION_SPHERE) print_floats(out, "center", r->center, 3), print_float_key(out, "radius", r->radius);
    if (r->shape == REGION_LETTERS) fprintf(out, " text = \"%s\";", r->text);
    fprintf(out, " material = \"%s\";", c->materials.material[r->material].name);
    if (r->source != 0.0) print_float_key(out, "source", r->source);
    if (r->source != 0.0 && (isfinite(r->source_on) || isfinite(r->source_off)))
        print_floats(out, "source_time", (double[2]){r->source_on, r->source_off}, 2);
    if (r->has_temperature) print_float_key(out, "temperature", r->temperature);
    fputs(last ? " }\n" : " },\n", out);
}

int config_materials_print(const heat_config *c, FILE *out)
{
    if (!heat_materials_active(&c->materials)) return 0;
    fputs("  materials = (\n", out);
    for (int i = 0; i < c->materials.material_count; ++i) {
        const heat_material *m = &c->materials.material[i];
        fprintf(out, "    { name = \"%s\";", m->name);
        print_float_key(out, "conductivity", m->conductivity);
        print_float_key(out, "density", m->density);
        print_float_key(out, "specific_heat", m->specific_heat);
        fputs(i == c->materials.material_count - 1 ? " }\n" : " },\n", out);
    }
    fputs("  );\n", out);
    int lines = c->materials.material_count + 2;
    if (c->regions.count == 0) return lines;
    fputs("  regions = (\n", out);
    for (int i = 0; i < c->regions.count; ++i) print_region(out, c, &c->regions.region[i], i == c->regions.count - 1);
    fputs("  );\n", out);
    return lines + c->regions.count + 2;
}
