/*
 * Configuration loading with libconfig. One table lists every key with its
 * type, range and meaning; unknown keys, wrong types and out-of-range values
 * are reported against that table with the file and line they came from.
 */
#include "config.h"
#include "words.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <sys/stat.h>
#include <libconfig.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../solver/error.h"
#include "../solver/font.h"
#include "../solver/space_order.h"
#include "config_materials.h"

typedef enum { K_INT, K_LONG, K_FLOAT, K_BOOL, K_STRING, K_WORD, K_INT3, K_FLOAT3 } key_kind;

typedef struct config_key {
    const char *path;
    key_kind kind;
    size_t offset;             /* field in heat_config */
    size_t size;               /* K_STRING: buffer size */
    double min, max;           /* numeric range, per element */
    int open;                  /* OPEN_MIN, OPEN_MAX: that end itself is not allowed */
    const char *const *words;  /* K_WORD: allowed words, NULL-terminated; stored as int index */
    const char *meaning;
} config_key;

static const char *const initial_words[] = {"letters", "gaussian", "sine", "constant", NULL};
static const char *const bc_words[] = {"neumann", "dirichlet", "periodic", "convective", "flux", NULL}; /* heat_bc_type */
static const char *const backend_words[] = {"auto", "cpu", "hip", NULL};
static const char *const precision_words[] = {"double", "float", NULL};
static const char *const write_error_words[] = {"stop", "continue", NULL};
static const char *const axis_words[] = {"x", "y", "z", NULL};
static const char *const frame_precision_words[] = {"float", "full", NULL};
static const char *const strategy_words[] = {"rle", "default", NULL};
static const char *const scheme_words[] = {"euler", "backward_euler", "crank_nicolson", NULL};
static const char *const preconditioner_words[] = {"chebyshev", "jacobi", "none", NULL};
static const char *const transport_words[] = {"auto", "mpi", "nccl", "host", "ipc", NULL}; /* par_transport's order */

enum { OPEN_MIN = 1, OPEN_MAX = 2 };

#define F(field) offsetof(heat_config, field)
#define BIG 1e300
#define FACE(name, id)                                                                       \
    {"boundary." name ".type", K_WORD, F(bc[id].type), 0, 0, 0, 0, bc_words,                \
     "neumann (insulated), dirichlet (fixed temperature), periodic (both faces of the axis), convective or flux "  \
     "(these two with materials)"},                                                         \
    {"boundary." name ".value", K_FLOAT, F(bc[id].value), 0, -BIG, BIG, 0, NULL,           \
     "temperature held on the face (dirichlet), or heat flux into the body (flux, power / area)"}, \
    {"boundary." name ".h", K_FLOAT, F(bc[id].h), 0, 0, BIG, 0, NULL,                      \
     "convective: heat transfer coefficient, >= 0 (power / (area temperature), W/(m^2 K))"}, \
    {"boundary." name ".ambient", K_FLOAT, F(bc[id].ambient), 0, -BIG, BIG, 0, NULL,       \
     "convective: the ambient temperature"}

static const config_key keys[] = {
    {"grid.n", K_INT3, F(grid.n), 0, 3, 1 << 20, 0, NULL, "points along x, y, z, each >= 3"},
    {"grid.length", K_FLOAT3, F(grid.length), 0, 0, BIG, 1, NULL, "box size along x, y, z, each > 0"},
    {"physics.alpha", K_FLOAT, F(alpha), 0, 0, BIG, 1, NULL, "thermal diffusivity, > 0"},
    {"time.steps", K_LONG, F(steps), 0, 0, 1e15, 0, NULL, "final step number of the run, >= 0"},
    {"time.dt", K_FLOAT, F(dt_requested), 0, 0, BIG, 1, NULL, "time step, > 0 (default: cfl * dt_max)"},
    {"time.cfl", K_FLOAT, F(cfl), 0, 0, 1e9, 1, NULL, "time step as a multiple of dt_max, > 0 (<= 1 for euler)"},
    {"time.scheme", K_WORD, F(implicit.scheme), 0, 0, 0, 0, scheme_words, "euler (explicit), backward_euler or crank_nicolson (implicit)"},
    {"time.allow_unstable", K_BOOL, F(allow_unstable), 0, 0, 1, 0, NULL, "accept time.dt above dt_max"},
    {"initial.type", K_WORD, F(initial.type), 0, 0, 0, 0, initial_words, "the initial temperature field"},
    {"initial.value", K_FLOAT, F(initial.value), 0, -BIG, BIG, 0, NULL, "constant: the temperature"},
    {"initial.amplitude", K_FLOAT, F(initial.amplitude), 0, -BIG, BIG, 0, NULL, "gaussian, sine: peak height"},
    {"initial.background", K_FLOAT, F(initial.background), 0, -BIG, BIG, 0, NULL, "gaussian, sine: base temperature"},
    {"initial.center", K_FLOAT3, F(initial.center), 0, 0, 1, 0, NULL, "gaussian: peak position, fractions of the box in [0, 1]"},
    {"initial.width", K_FLOAT, F(initial.width), 0, 0, BIG, 1, NULL, "gaussian: standard deviation, > 0"},
    {"initial.modes", K_INT3, F(initial.modes), 0, 1, 1 << 20, 0, NULL, "sine: half waves along x, y, z, each >= 1"},
    {"initial.text", K_STRING, F(initial.text), sizeof(((heat_initial *)0)->text), 0, 0, 0, NULL, "letters: the text"},
    {"initial.letter_temperature", K_FLOAT, F(initial.letter_temperature), 0, -BIG, BIG, 0, NULL, "letters: temperature of the letters"},
    {"initial.plate_temperature", K_FLOAT, F(initial.plate_temperature), 0, -BIG, BIG, 0, NULL, "letters: temperature of the plate"},
    {"initial.ambient_temperature", K_FLOAT, F(initial.ambient_temperature), 0, -BIG, BIG, 0, NULL, "letters: temperature around them"},
    {"initial.plate_thickness", K_FLOAT, F(initial.plate_thickness), 0, 0, 1, 1, NULL, "letters: plate thickness, fraction of the height in (0, 1]"},
    {"initial.letter_height", K_FLOAT, F(initial.letter_height), 0, 0, 1, 1, NULL, "letters: letter height, fraction of the height in (0, 1]"},
    {"initial.margin", K_FLOAT, F(initial.margin), 0, 0, 0.45, 0, NULL, "letters: free border, fraction of the width in [0, 0.45]"},
    FACE("x_low", FACE_X_LOW), FACE("x_high", FACE_X_HIGH),
    FACE("y_low", FACE_Y_LOW), FACE("y_high", FACE_Y_HIGH),
    FACE("z_low", FACE_Z_LOW), FACE("z_high", FACE_Z_HIGH),
    {"output.dir", K_STRING, F(output.dir), sizeof(((heat_output *)0)->dir), 0, 0, 0, NULL, "folder for checkpoints"},
    {"output.name", K_STRING, F(output.name), sizeof(((heat_output *)0)->name), 0, 0, 0, NULL, "checkpoint file stem"},
    {"output.every", K_LONG, F(output.every), 0, 0, 1e15, 0, NULL, "checkpoint interval in steps, >= 0 (0: final step only)"},
    {"output.every_seconds", K_FLOAT, F(output.every_seconds), 0, 0, 1e9, 0, NULL, "the most wall time between restart checkpoints, in seconds >= 0 (0: off; beside output.every)"},
    {"output.frame_every", K_LONG, F(output.frame_every), 0, 0, 1e15, 0, NULL, "frame interval in steps, >= 0 (0: no frames; frames are for ParaView, not restartable)"},
    {"output.frame_precision", K_WORD, F(output.frame_full), 0, 0, 0, 0, frame_precision_words, "float (float32 frames, half the bytes) or full (the run's precision)"},
    {"output.compression", K_INT, F(output.compression), 0, 0, 9, 0, NULL, "zlib level 0-9 (0: none)"},
    {"output.compression_strategy", K_WORD, F(output.strategy), 0, 0, 0, 0, strategy_words, "rle (fast) or default (zlib's default, smaller, slower)"},
    {"output.keep", K_INT, F(output.keep), 0, 0, 1e9, 0, NULL, "keep only the newest K checkpoints, >= 0 (0: all)"},
    {"output.on_write_error", K_WORD, F(output.on_write_error), 0, 0, 0, 0, write_error_words, "stop or continue when a checkpoint cannot be written"},
    {"output.history", K_BOOL, F(output.history), 0, 0, 1, 0, NULL, "whether to write <name>.history.csv (step, time, min, max, mean, heat as the run goes)"},
    {"output.png", K_BOOL, F(output.png), 0, 0, 1, 0, NULL, "write a quick-look PNG beside each checkpoint"},
    {"output.png_axis", K_WORD, F(output.png_axis), 0, 0, 0, 0, axis_words, "normal of the PNG slice: x, y or z"},
    {"output.png_index", K_INT, F(output.png_index), 0, -1, 1 << 20, 0, NULL, "index of the PNG slice (-1: automatic)"},
    {"output.writes_in_flight", K_INT, F(output.writes_in_flight), 0, 0, 4, 0, NULL, "checkpoints written at once, 0-4 (0: automatic; one process only)"},
    {"parallel.ranks", K_INT3, F(ranks), 0, 0, 1 << 20, 0, NULL, "MPI ranks along x, y, z (zeros: chosen by MPI_Dims_create)"},
    {"parallel.transport", K_WORD, F(transport), 0, 0, 0, 0, transport_words, "GPU halos: auto, mpi (GPU-aware MPI), nccl, host (page-locked host memory) or ipc (copy engines, one node)"},
    {"solver.backend", K_WORD, F(backend), 0, 0, 0, 0, backend_words, "auto, cpu or hip"},
    {"solver.precision", K_WORD, F(precision), 0, 0, 0, 0, precision_words, "double or float"},
    {"solver.kernel", K_STRING, F(kernel.name), sizeof(((heat_kernel_choice *)0)->name), 0, 0, 0, NULL, "GPU kernel variant or auto"},
    {"solver.tile", K_INT, F(kernel.tile), 0, 0, 16, 0, NULL, "tile factor 1, 2, 4, 8, 16 (0: auto)"},
    {"solver.block", K_INT3, F(kernel.block), 0, 0, 1024, 0, NULL, "GPU thread block shape (zeros: auto)"},
    {"time.smoothing_steps", K_INT, F(implicit.smoothing_steps), 0, 0, 1e9, 0, NULL, "crank_nicolson: first steps taken as two backward Euler half steps, >= 0"},
    {"solver.rtol", K_FLOAT, F(implicit.rtol), 0, 0, 1, OPEN_MIN | OPEN_MAX, NULL, "implicit: CG stops at this relative residual, in (0, 1)"},
    {"solver.max_iterations", K_INT, F(implicit.max_iterations), 0, 1, 1e7, 0, NULL, "implicit: CG iterations allowed per step, >= 1"},
    {"solver.preconditioner", K_WORD, F(implicit.preconditioner), 0, 0, 0, 0, preconditioner_words, "implicit: chebyshev, jacobi or none"},
    {"solver.chebyshev_degree", K_INT, F(implicit.chebyshev_degree), 0, 1, 64, 0, NULL, "implicit: operator applications per Chebyshev preconditioner call, 1-64"},
    {"solver.space_order", K_INT, F(space_order), 0, -BIG, BIG, 0, NULL, "order of the Laplacian's central differences: 2, 4, 6 or 8"},
};
#undef FACE
#undef F

enum { KEY_COUNT = sizeof keys / sizeof keys[0] };

static void set_defaults(heat_config *c)
{
    memset(c, 0, sizeof *c);
    c->grid.n[0] = 128, c->grid.n[1] = 64, c->grid.n[2] = 32;
    c->grid.length[0] = 2.0, c->grid.length[1] = 1.0, c->grid.length[2] = 0.5;
    c->alpha = 1.0;
    c->steps = 100;
    c->cfl = 0.9;
    c->space_order = 2;
    c->initial.type = INITIAL_LETTERS;
    c->initial.amplitude = 1.0;
    c->initial.center[0] = c->initial.center[1] = c->initial.center[2] = 0.5;
    c->initial.width = 0.1;
    c->initial.modes[0] = c->initial.modes[1] = c->initial.modes[2] = 1;
    strcpy(c->initial.text, "HEAT");
    c->initial.letter_temperature = 100.0;
    c->initial.plate_temperature = 0.0;
    c->initial.ambient_temperature = 0.0;
    c->initial.plate_thickness = 0.25;
    c->initial.letter_height = 0.35;
    c->initial.margin = 0.06;
    c->output.every = 0;
    c->output.compression = 1;
    c->output.history = 1;
    c->output.png_axis = 2;
    c->output.png_index = -1;
    strcpy(c->kernel.name, "auto");
    c->implicit.scheme = HEAT_EULER;
    c->implicit.rtol = 1e-6;
    c->implicit.max_iterations = 1000;
    c->implicit.preconditioner = HEAT_PRECOND_CHEBYSHEV;
    c->implicit.chebyshev_degree = 8;
    c->implicit.smoothing_steps = 2;
}

/* ---- locations and suggestions ---------------------------------------- */

static void setting_path(const config_setting_t *s, char *buf, size_t len)
{
    const config_setting_t *chain[32];
    int depth = 0;
    for (; s && config_setting_name(s) && depth < 32; s = config_setting_parent(s)) chain[depth++] = s;
    buf[0] = '\0';
    size_t used = 0;
    for (int i = depth - 1; i >= 0 && used < len; --i)
        used += (size_t)snprintf(buf + used, len - used, "%s%s", i == depth - 1 ? "" : ".",
                                 config_setting_name(chain[i]));
}

/* "file.cfg:12" for settings from the file, "--set" for overrides. */
static void setting_where(const config_setting_t *s, const char *origin, char *buf, size_t len)
{
    int line = (int)config_setting_source_line(s);
    if (line > 0) snprintf(buf, len, "%s:%d", origin, line);
    else snprintf(buf, len, "--set");
}

static const char *nearest_key(const char *path)
{
    /* The lists of materials runs are read apart (config_materials.c), not from the table. */
    static const char *const lists[] = {"materials", "regions"};
    const char *best = keys[0].path;
    size_t best_distance = (size_t)-1;
    for (int k = 0; k < KEY_COUNT; ++k) {
        size_t d = words_edit_distance(path, keys[k].path);
        if (d < best_distance) best_distance = d, best = keys[k].path;
    }
    const char *list = words_nearest(path, lists, 2);
    return words_edit_distance(path, list) < best_distance ? list : best;
}

/* A misspelt group is matched against the groups too: the keys' paths cut to as many parts as
 * it has ("boundary.z_hi" gets "boundary.z_high", not one of its keys), where one is nearer than
 * every key (a key written as a group, "output.dirr = { ... }", still gets "output.dir"). */
static void nearest_group(const char *path, char *best, size_t len)
{
    int parts = 1;
    for (const char *p = path; *p; ++p) parts += *p == '.';
    snprintf(best, len, "%s", nearest_key(path));
    size_t best_distance = words_edit_distance(path, best);
    for (int k = 0; k < KEY_COUNT; ++k) {
        const char *end = keys[k].path;
        for (int part = 0; part < parts && end; ++part) end = strchr(end + (part > 0), '.');
        if (!end) continue; /* the key itself, not a group */
        char group[256];
        snprintf(group, sizeof group, "%.*s", (int)(end - keys[k].path), keys[k].path);
        size_t d = words_edit_distance(path, group);
        if (d < best_distance) best_distance = d, snprintf(best, len, "%s", group);
    }
}

static const config_key *find_key(const char *path)
{
    for (int k = 0; k < KEY_COUNT; ++k)
        if (strcmp(keys[k].path, path) == 0) return &keys[k];
    return NULL;
}

static int is_group_prefix(const char *path)
{
    size_t len = strlen(path);
    for (int k = 0; k < KEY_COUNT; ++k)
        if (strncmp(keys[k].path, path, len) == 0 && keys[k].path[len] == '.') return 1;
    return 0;
}

/* A group's name given a value ("boundary.x_low = \"dirichlet\";"): the nearest key would be one of
 * its own keys, picked by spelling; say that it is a group and show its first key instead. */
static int group_given_a_value(const char *where, const char *path, int from_set)
{
    const char *leaf = strrchr(path, '.');
    const char *first = "";
    size_t len = strlen(path);
    for (int k = 0; k < KEY_COUNT && !first[0]; ++k)
        if (strncmp(keys[k].path, path, len) == 0 && keys[k].path[len] == '.') first = keys[k].path + len + 1;
    int first_len = (int)strcspn(first, ".");
    if (from_set)
        return heat_error(HEAT_ERR_CONFIG, "%s: '%s' is a group of settings, not a value; set one of its keys, e.g. "
                          "--set %s.%.*s=... (see docs/CONFIG.md)", where, path, path, first_len, first);
    return heat_error(HEAT_ERR_CONFIG, "%s: '%s' is a group of settings, not a value; write %s = { %.*s = ...; }; "
                      "(see docs/CONFIG.md)", where, path, leaf ? leaf + 1 : path, first_len, first);
}

/* Every setting in the file must be a known key or a group on the way to one. */
static int check_unknown(const config_setting_t *group, const char *origin)
{
    for (int i = 0; i < config_setting_length(group); ++i) {
        const config_setting_t *s = config_setting_get_elem(group, (unsigned)i);
        char path[256], where[600];
        setting_path(s, path, sizeof path);
        int is_group = config_setting_type(s) == CONFIG_TYPE_GROUP;
        if (is_group && is_group_prefix(path)) {
            HEAT_CALL(check_unknown(s, origin));
            continue;
        }
        if (!is_group && find_key(path)) continue;
        if (config_materials_owns(path)) continue; /* read and checked by config_materials_read */
        setting_where(s, origin, where, sizeof where);
        if (!is_group && is_group_prefix(path)) return group_given_a_value(where, path, 0);
        char nearest[256];
        if (is_group) nearest_group(path, nearest, sizeof nearest);
        else snprintf(nearest, sizeof nearest, "%s", nearest_key(path));
        return heat_error(HEAT_ERR_CONFIG, "%s: unknown %s '%s'; did you mean '%s'? (see docs/CONFIG.md)",
                          where, is_group ? "group" : "key", path, nearest);
    }
    return HEAT_OK;
}

/* ---- reading one key ---------------------------------------------------- */

static int bad_value(const config_setting_t *s, const config_key *key, const char *origin, const char *what)
{
    char where[600];
    setting_where(s, origin, where, sizeof where);
    return heat_error(HEAT_ERR_CONFIG, "%s: %s %s; expected %s", where, key->path, what, key->meaning);
}

static int in_range(const config_key *key, double v)
{
    if (isnan(v) || v > key->max || (key->open & OPEN_MAX && v == key->max)) return 0;
    return key->open & OPEN_MIN ? v > key->min : v >= key->min;
}

/* "[3, 1048576]", "> 0", "(0, 1)": the range a user may give. */
static void describe_range(const config_key *key, char *buf, size_t len)
{
    int low = key->min > -BIG, high = key->max < BIG;
    if (low && high)
        snprintf(buf, len, "%c%.15g, %.15g%c", key->open & OPEN_MIN ? '(' : '[', key->min, key->max,
                 key->open & OPEN_MAX ? ')' : ']');
    /* BIG stands for no bound, but values beyond it are refused too: say so. */
    else if (low) snprintf(buf, len, "%s %.15g, up to 1e300", key->open & OPEN_MIN ? ">" : ">=", key->min);
    else if (high) snprintf(buf, len, "%s %.15g, down to -1e300", key->open & OPEN_MAX ? "<" : "<=", key->max);
    else snprintf(buf, len, "from -1e300 to 1e300");
}

static int read_number(const config_setting_t *s, const config_key *key, const char *origin, int integral,
                       double *out)
{
    int type = config_setting_type(s);
    if (type == CONFIG_TYPE_INT || type == CONFIG_TYPE_INT64) *out = (double)config_setting_get_int64(s);
    else if (type == CONFIG_TYPE_FLOAT && !integral) *out = config_setting_get_float(s);
    else if (type == CONFIG_TYPE_FLOAT) return bad_value(s, key, origin, "must be an integer (no decimal point)");
    else return bad_value(s, key, origin, "has the wrong type");
    if (!in_range(key, *out)) {
        char what[160], range[96];
        describe_range(key, range, sizeof range);
        snprintf(what, sizeof what, "= %.15g is out of range (valid: %s)", *out, range);
        return bad_value(s, key, origin, what);
    }
    return HEAT_OK;
}

static int read_word(const config_setting_t *s, const config_key *key, const char *origin, int *out)
{
    const char *word = config_setting_get_string(s);
    if (!word) return bad_value(s, key, origin, "must be a quoted word");
    for (int w = 0; key->words[w]; ++w)
        if (strcmp(word, key->words[w]) == 0) return *out = w, HEAT_OK;
    /* The user's word is cut to 64 characters: the message must fit whatever was typed
     * (a fuzzer found the overflow). */
    char what[512];
    size_t used = (size_t)snprintf(what, sizeof what, "= \"%.64s\" is not one of", word);
    for (int w = 0; key->words[w] && used < sizeof what; ++w)
        used += (size_t)snprintf(what + used, sizeof what - used, " \"%s\"", key->words[w]);
    return bad_value(s, key, origin, what);
}

static int read_triple(const config_setting_t *s, const config_key *key, const char *origin, char *field)
{
    int type = config_setting_type(s);
    if ((type != CONFIG_TYPE_ARRAY && type != CONFIG_TYPE_LIST) || config_setting_length(s) != 3)
        return bad_value(s, key, origin, "must be a list of three numbers like [64, 64, 32]");
    for (unsigned i = 0; i < 3; ++i) {
        double v;
        HEAT_CALL(read_number(config_setting_get_elem(s, i), key, origin, key->kind == K_INT3, &v));
        if (key->kind == K_INT3) ((int *)field)[i] = (int)v;
        else ((double *)field)[i] = v;
    }
    return HEAT_OK;
}

static int read_key(const config_setting_t *s, const config_key *key, const char *origin, heat_config *c)
{
    char *field = (char *)c + key->offset;
    double v;
    switch (key->kind) {
    case K_INT:
        HEAT_CALL(read_number(s, key, origin, 1, &v));
        if (key->offset == offsetof(heat_config, space_order) && !heat_space_order_valid((int)v)) {
            char what[96];
            snprintf(what, sizeof what, "= %.15g is not an order the solver has", v);
            return bad_value(s, key, origin, what);
        }
        *(int *)field = (int)v;
        break;
    case K_LONG: HEAT_CALL(read_number(s, key, origin, 1, &v)); *(long *)field = (long)v; break;
    case K_FLOAT: HEAT_CALL(read_number(s, key, origin, 0, &v)); *(double *)field = v; break;
    case K_BOOL:
        if (config_setting_type(s) != CONFIG_TYPE_BOOL) return bad_value(s, key, origin, "must be true or false");
        *(int *)field = config_setting_get_bool(s);
        break;
    case K_WORD: return read_word(s, key, origin, (int *)field);
    case K_STRING: {
        const char *str = config_setting_get_string(s);
        if (!str) return bad_value(s, key, origin, "must be a quoted string");
        if (strlen(str) >= key->size) {
            char what[96];
            snprintf(what, sizeof what, "is too long (%zu characters; at most %zu)", strlen(str), key->size - 1);
            return bad_value(s, key, origin, what);
        }
        strcpy(field, str);
        break;
    }
    case K_INT3:
    case K_FLOAT3: return read_triple(s, key, origin, field);
    }
    return HEAT_OK;
}

/* ---- integer literals --------------------------------------------------- */

/* libconfig 1.5 reads an integer without the L suffix as 32 bits and cuts
 * larger ones silently (99999999999 becomes 1215752191, 1e20 written as
 * digits becomes -1), so the text is checked before libconfig reads it. */
static const char *skip_string_or_comment(const char *p, int *line)
{
    if (*p == '"') {
        for (++p; *p && *p != '"'; ++p) {
            if (*p == '\\' && p[1]) ++p;
            if (*p == '\n') ++*line;
        }
        return *p ? p + 1 : p;
    }
    if (*p == '#' || (p[0] == '/' && p[1] == '/')) return p + strcspn(p, "\n");
    if (p[0] == '/' && p[1] == '*') {
        const char *end = strstr(p + 2, "*/");
        for (const char *q = p; q < (end ? end : p + strlen(p)); ++q) *line += *q == '\n';
        return end ? end + 2 : p + strlen(p);
    }
    return NULL;
}

static int integer_fits(const char *digits, size_t len, int is_long, int negative)
{
    char text[64];
    if (len > 40) return 0;
    snprintf(text, sizeof text, "%s%.*s", negative ? "-" : "", (int)len, digits);
    errno = 0;
    long long v = strtoll(text, NULL, 10);
    if (errno == ERANGE) return 0;
    return is_long || (v >= -2147483648LL && v <= 2147483647LL);
}

static int check_integer_literals(const char *text, const char *origin, int from_set)
{
    int line = 1;
    for (const char *p = text; *p;) {
        const char *skipped = skip_string_or_comment(p, &line);
        if (skipped) { p = skipped; continue; }
        int starts_number = isdigit((unsigned char)*p) && (p == text || !(isalnum((unsigned char)p[-1]) || p[-1] == '_' || p[-1] == '.'));
        if (!starts_number) { line += *p == '\n'; ++p; continue; }
        size_t len = strspn(p, "0123456789");
        const char *after = p + len;
        int is_float = *after == '.' || *after == 'e' || *after == 'E' || *after == 'x' || *after == 'X';
        int is_long = *after == 'L';
        int negative = p > text && p[-1] == '-';
        if (!is_float && !integer_fits(p, len, is_long, negative)) {
            char where[600];
            if (from_set) snprintf(where, sizeof where, "--set %s", origin);
            else snprintf(where, sizeof where, "%s:%d", origin, line);
            return heat_error(HEAT_ERR_CONFIG, "%s: the integer %s%.*s %s", where, negative ? "-" : "", (int)len, p,
                              is_long || !integer_fits(p, len, 1, negative)
                                  ? "does not fit in 64 bits (at most 9223372036854775807)"
                                      : "does not fit in 32 bits; libconfig needs the L suffix for a 64-bit "
                                        "integer, e.g. 5000000000L");
        }
        p = after;
        while (isalnum((unsigned char)*p) || *p == '.' || ((*p == '+' || *p == '-') && (p[-1] == 'e' || p[-1] == 'E'))) ++p;
    }
    return HEAT_OK;
}

/* ---- --set overrides ---------------------------------------------------- */

static int valid_path(const char *path, size_t len)
{
    if (len == 0) return 0;
    for (size_t i = 0; i < len; ++i) {
        char ch = path[i];
        int start = i == 0 || path[i - 1] == '.';
        if (ch == '.' && !start && i + 1 < len) continue;
        if (isalpha((unsigned char)ch) || ch == '_' || (!start && (isdigit((unsigned char)ch) || ch == '-'))) continue;
        return 0;
    }
    return 1;
}

static int copy_setting(config_setting_t *parent, const char *name, const config_setting_t *src);

static int copy_children(config_setting_t *dst, const config_setting_t *src)
{
    int named = config_setting_type(dst) == CONFIG_TYPE_GROUP;
    for (int i = 0; i < config_setting_length(src); ++i) {
        const config_setting_t *child = config_setting_get_elem(src, (unsigned)i);
        HEAT_CALL(copy_setting(dst, named ? config_setting_name(child) : NULL, child));
    }
    return HEAT_OK;
}

static int copy_setting(config_setting_t *parent, const char *name, const config_setting_t *src)
{
    int type = config_setting_type(src);
    config_setting_t *dst = config_setting_add(parent, name, type);
    HEAT_CHECK(dst, "libconfig could not add setting '%s'", name ? name : "(element)");
    int ok = CONFIG_TRUE;
    switch (type) {
    case CONFIG_TYPE_INT: ok = config_setting_set_int(dst, config_setting_get_int(src)); break;
    case CONFIG_TYPE_INT64: ok = config_setting_set_int64(dst, config_setting_get_int64(src)); break;
    case CONFIG_TYPE_FLOAT: ok = config_setting_set_float(dst, config_setting_get_float(src)); break;
    case CONFIG_TYPE_BOOL: ok = config_setting_set_bool(dst, config_setting_get_bool(src)); break;
    case CONFIG_TYPE_STRING: ok = config_setting_set_string(dst, config_setting_get_string(src)); break;
    default: return copy_children(dst, src);
    }
    HEAT_CHECK(ok == CONFIG_TRUE, "libconfig could not set '%s'", name ? name : "(element)");
    return HEAT_OK;
}

/* Walks/creates the groups of `path` (all but its last part) in cf. */
static int override_parent(config_t *cf, const char *path, const char *arg, config_setting_t **parent,
                           const char **leaf)
{
    config_setting_t *group = config_root_setting(cf);
    char part[256];
    const char *p = path;
    for (const char *dot; (dot = strchr(p, '.')); p = dot + 1) {
        snprintf(part, sizeof part, "%.*s", (int)(dot - p), p);
        config_setting_t *next = config_setting_get_member(group, part);
        if (!next) next = config_setting_add(group, part, CONFIG_TYPE_GROUP);
        if (!next || config_setting_type(next) != CONFIG_TYPE_GROUP)
            return heat_error(HEAT_ERR_CONFIG, "--set %s: '%s' is not a group", arg, part);
        group = next;
    }
    *parent = group;
    *leaf = p;
    return HEAT_OK;
}

/* The shell ate the quotes of a string (--set initial.text="HI" reaches heatsolve as initial.text=HI):
 * show the form that keeps them. Empty for keys that take no string. */
static void string_quote_hint(const char *path, const char *value, char *hint, size_t len)
{
    const config_key *key = find_key(path);
    hint[0] = '\0';
    if (key && (key->kind == K_STRING || key->kind == K_WORD) && value[0] != '"')
        snprintf(hint, len, "; %s takes a string in double quotes, which the shell keeps inside single quotes: "
                 "--set '%.255s=\"%.200s\"'", path, path, value);
}

static int apply_override(config_t *cf, const char *arg)
{
    const char *eq = strchr(arg, '=');
    if (!eq || !valid_path(arg, (size_t)(eq - arg)))
        return heat_error(HEAT_ERR_CONFIG, "--set '%s': expected PATH=VALUE, e.g. --set grid.n=[64,64,16]", arg);
    char path[256];
    snprintf(path, sizeof path, "%.*s", (int)(eq - arg), arg);
    if (!find_key(path) && !config_materials_owns(path) && is_group_prefix(path)) {
        char where[300];
        snprintf(where, sizeof where, "--set %.255s", arg);
        return group_given_a_value(where, path, 1);
    }
    if (!find_key(path) && !config_materials_owns(path))
        return heat_error(HEAT_ERR_CONFIG, "--set %s: unknown key '%s'; did you mean '%s'?", arg, path, nearest_key(path));
    HEAT_CALL(check_integer_literals(eq + 1, arg, 1));
    size_t len = strlen(eq + 1) + 16;
    char *text = malloc(len);
    HEAT_CHECK(text, "out of memory");
    snprintf(text, len, "v = %s;", eq + 1);
    config_t value;
    config_init(&value);
    int parsed = config_read_string(&value, text);
    free(text);
    if (parsed != CONFIG_TRUE) {
        char hint[1024];
        string_quote_hint(path, eq + 1, hint, sizeof hint);
        int status = heat_error(HEAT_ERR_CONFIG, "--set %s: cannot parse the value '%s' (%s); use libconfig syntax: "
                                "numbers, \"strings\", true/false, [lists]%s", arg, eq + 1, config_error_text(&value),
                                hint);
        config_destroy(&value);
        return status;
    }
    config_setting_t *parent;
    const char *leaf;
    int status = override_parent(cf, path, arg, &parent, &leaf);
    if (status == HEAT_OK) {
        config_setting_remove(parent, leaf);
        status = copy_setting(parent, leaf, config_lookup(&value, "v"));
    }
    config_destroy(&value);
    return status;
}

/* ---- whole configuration ----------------------------------------------- */

/* "run.cfg:12: " or "--set: " where key was given, "" where it keeps its default: the start of a
 * message about a combination of settings, so that it points at the line to change. */
static void key_where(const config_t *cf, const char *origin, const char *key, char *buf, size_t len)
{
    const config_setting_t *s = config_lookup(cf, key);
    char where[600];
    buf[0] = '\0';
    if (!s) return;
    setting_where(s, origin, where, sizeof where);
    snprintf(buf, len, "%s: ", where);
}

static int check_png_index(const heat_config *c, const config_t *cf, const char *origin)
{
    int n = c->grid.n[c->output.png_axis];
    if (c->output.png_index < n) return HEAT_OK;
    char where[640];
    key_where(cf, origin, "output.png_index", where, sizeof where);
    return heat_error(HEAT_ERR_CONFIG, "%soutput.png_index = %d is outside the grid: along %s (output.png_axis) the "
                      "valid range is [0, %d], or -1 for automatic", where, c->output.png_index,
                      axis_words[c->output.png_axis], n - 1);
}

/* The GPU keys are checked on every backend, so a configuration that runs on
 * a laptop does not fail later on the GPU machine. */
static int check_gpu_keys(const heat_config *c, const config_t *cf, const char *origin)
{
    static const char *const kernels[] = {"auto", "heat_tiled", "heat_tiled_nt", "heat_tiled_ntf", "heat_zwindow32",
                                          "heat_zwindow64", "heat_zwindow128", "heat_zwindowf32", "heat_pairs_nt",
                                          "heat_pairs_ntf", "heat_quads_nt", "heat_quads_ntf", "heat_zpairsf32",
                                          "heat_zquadsf32", "heat_pairs_ntx", "heat_zahead1", "heat_zahead1z16",
                                          "heat_zahead1r", "heat_zahead1z16r", "heat_zahead1z8r", "heat_zwindowf32r",
                                          "heat_zwindowf16r", "heat_zwindowf8r", "heat_zwindow16r", "heat_zwindowg64r",
                                          "heat_zwindowg32r", "heat_zwindowg16r", "heat_zwindowg8r", "heat_zwide4g8r", "heat_zwide4g32r",
                                          "heat_zwide2g8r", "heat_zwide2g16r", "heat_zwide2g32r", "heat_zwide2g8tr",
                                          "heat_zwide2g16tr", "heat_zwide2g32tr", "heat_zwide4g8tr", "heat_zwide4g16tr",
                                          "heat_zwide4g32tr", "heat_fused2", "heat_fused3", "heat_fused4", NULL};
    /* Space orders 4, 6, 8: kernels/hip/backend_hip_order.h's table (cli_tests.py's
     * space_order_kernel_names reads the table and asks for each of them here). */
    static const char *const order_kernels[] = {
        "order_point", "order_zwindow64_32x8", "order_zwindow64_32x16", "order_zwindow128_32x8", "order_zwindow128_32x16",
        "order_zplanes1_64_32x8", "order_zplanes2_64_32x8", "order_zplanes1_64_32x4", "order_zasync3_64_32x8",
        "order_zasync3b3_64_32x8", "order_zasync3v_64_32x8", "order_zasync3vb3_64_32x8", "order_zasync3vx2_64_16x16",
        "order_zasync3vx2b3_64_16x16", "order_zasync3vx2b3f_64_16x16", "order_zasync3vx2b3f_64_16x8",
        "order_zasync2vx2b4f_64_16x8", "order_zasync2vx2b4f_128_16x8", "order_zasync2vx2b4f_512_16x8",
        "order_zasync2vx2b2f_128_16x16", "order_zasync2vx2b2f_256_16x16", "order_zasync2vx2b2f_512_16x16",
        "order_zasync2vx2b2f_128_32x8", "order_zasync2vx2b2f_256_32x8", "order_zasync2vx2b2f_512_32x8",
        "order_zasync2vx2b2fs_512_32x8", "order_zasync2vx2b3f_86_32x8", "order_zasync2vx2b3f_171_32x8",
        "order_zasync2vx2b3fs_171_32x8", "order_zasync2vx4b3f_171_16x16", "order_zasync2vx4b3fs_171_16x16", NULL};
    char kernel_at[640], tile_at[640], block_at[640];
    key_where(cf, origin, "solver.kernel", kernel_at, sizeof kernel_at);
    key_where(cf, origin, "solver.tile", tile_at, sizeof tile_at);
    key_where(cf, origin, "solver.block", block_at, sizeof block_at);
    int known = 0, known_order = 0;
    for (int k = 0; kernels[k]; ++k) known |= strcmp(c->kernel.name, kernels[k]) == 0;
    for (int k = 0; order_kernels[k]; ++k) known_order |= strcmp(c->kernel.name, order_kernels[k]) == 0;
    if (known_order && c->space_order <= 2)
        return heat_error(HEAT_ERR_CONFIG, "%ssolver.kernel = \"%s\" is a kernel of space order 4, 6 or 8 but "
                          "solver.space_order = %d; set solver.space_order or use a heat_* kernel (or \"auto\")",
                          kernel_at, c->kernel.name, c->space_order);
    if (known && strcmp(c->kernel.name, "auto") != 0 && c->space_order > 2)
        return heat_error(HEAT_ERR_CONFIG, "%ssolver.kernel = \"%s\" is a second-order kernel but solver.space_order = %d; "
                          "use \"auto\" or an order kernel (order_point, order_zwindow64_32x8, order_zasync...: "
                          "heatsolve bench --order 8 lists them)",
                          kernel_at, c->kernel.name, c->space_order);
    if (!known && !known_order)
        return heat_error(HEAT_ERR_CONFIG, "%ssolver.kernel = \"%.64s\" is not a heat kernel; use \"auto\", heat_tiled, "
                          "heat_tiled_nt, heat_tiled_ntf, heat_zwindow32, heat_zwindow64, heat_zwindow128, "
                          "heat_zwindowf32, heat_pairs_nt(f), heat_quads_nt(f), heat_pairs_ntx, heat_zpairsf32, heat_zquadsf32, heat_zahead1, heat_zahead1z16, heat_zahead1r, heat_zahead1z16r, heat_zahead1z8r, heat_zwindowf32r, heat_zwindowf16r, heat_zwindowf8r, heat_zwindow16r, heat_zwindowg64r, heat_zwindowg32r, heat_zwindowg16r, heat_zwindowg8r, heat_zwide4g8r, heat_zwide4g32r, heat_zwide2g8r, heat_zwide2g16r, heat_zwide2g32r, heat_zwide2g8tr, heat_zwide2g16tr, heat_zwide2g32tr, heat_zwide4g8tr, heat_zwide4g16tr, heat_zwide4g32tr; or heat_fused2, heat_fused3, heat_fused4 (2, 3, 4 steps a sweep); at solver.space_order 4, 6, 8: order_point, "
                          "order_zwindow64_32x8, order_zasync... (heatsolve bench --order 8 lists them)", kernel_at,
                          c->kernel.name);
    int t = c->kernel.tile;
    if (t != 0 && t != 1 && t != 2 && t != 4 && t != 8 && t != 16)
        return heat_error(HEAT_ERR_CONFIG, "%ssolver.tile = %d: expected 1, 2, 4, 8 or 16 (0: tuned)", tile_at, t);
    const int *b = c->kernel.block;
    int zeros = (b[0] == 0) + (b[1] == 0) + (b[2] == 0);
    if (zeros == 3) return HEAT_OK;
    if (zeros != 0 || (long)b[0] * b[1] * b[2] > HEAT_MAX_BLOCK_THREADS)
        return heat_error(HEAT_ERR_CONFIG, "%ssolver.block = [%d, %d, %d]: expected three sizes >= 1 with a product of "
                          "at most %d, or [0, 0, 0] (tuned)", block_at, b[0], b[1], b[2], HEAT_MAX_BLOCK_THREADS);
    return HEAT_OK;
}

/* A periodic axis wraps around: both of its faces say so, or neither. The message points at the
 * face that says periodic (file:line, or --set). */
static int check_periodic(const heat_config *c, const config_t *cf, const char *origin)
{
    static const char *const axes[] = {"x", "y", "z"};
    for (int a = 0; a < 3; ++a) {
        int low = c->bc[2 * a].type == HEAT_BC_PERIODIC, high = c->bc[2 * a + 1].type == HEAT_BC_PERIODIC;
        if (low == high) continue;
        char key[64], where[600] = "";
        snprintf(key, sizeof key, "boundary.%s_%s.type", axes[a], low ? "low" : "high");
        const config_setting_t *s = config_lookup(cf, key);
        if (s) setting_where(s, origin, where, sizeof where);
        return heat_error(HEAT_ERR_CONFIG, "%s%s%s = \"periodic\" but boundary.%s_%s.type = \"%s\": a periodic "
                          "axis wraps around, so set \"periodic\" on both boundary.%s_low and boundary.%s_high", where,
                          where[0] ? ": " : "", key, axes[a], low ? "high" : "low",
                          bc_words[c->bc[2 * a + (low ? 1 : 0)].type], axes[a], axes[a]);
    }
    return HEAT_OK;
}

/* Orders above 2 take constant coefficients, and every axis at least R = order / 2 points (its ghosts
 * mirror owned points). */
static int check_space_order(const heat_config *c, const config_t *cf, const char *origin)
{
    static const char *const axes[] = {"x", "y", "z"};
    const int radius = c->space_order / 2;
    char where[640];
    if (radius > 1 && heat_materials_active(&c->materials)) {
        key_where(cf, origin, "solver.space_order", where, sizeof where);
        return heat_error(HEAT_ERR_CONFIG, "%ssolver.space_order = %d with `materials`: variable coefficients take "
                          "the second-order flux form only; set solver.space_order = 2 (or remove it), or drop "
                          "`materials` and `regions` for a constant-coefficient run", where, c->space_order);
    }
    for (int a = 0; a < 3; ++a)
        if (c->grid.n[a] < radius) {
            key_where(cf, origin, "grid.n", where, sizeof where);
            return heat_error(HEAT_ERR_CONFIG, "%sgrid.n = [%d, %d, %d]: solver.space_order = %d reads %d points on "
                              "each side, and %s has only %d; give every axis at least %d points or lower "
                              "solver.space_order", where, c->grid.n[0], c->grid.n[1], c->grid.n[2], c->space_order,
                              radius, axes[a], c->grid.n[a], radius);
        }
    return HEAT_OK;
}

/* An explicit time step at most dt_max (time.dt, or time.cfl at most 1), unless allowed. */
static int check_explicit_dt(const heat_config *c, const config_t *cf, const char *origin, double dt_max)
{
    char where[640];
    if (c->implicit.scheme != HEAT_EULER || c->allow_unstable) return HEAT_OK; /* implicit: stable at any dt */
    if (c->dt_requested > 0.0 && c->dt_requested > dt_max) {
        key_where(cf, origin, "time.dt", where, sizeof where);
        /* dt_max in full: a time.dt copied from the start-up line's rounded dt_max may lie just above it */
        return heat_error(HEAT_ERR_CONFIG,
                          "%stime.dt = %.15g exceeds the stable limit dt_max = %.17g for this grid and %s; "
                          "lower time.dt, remove it to use time.cfl, use an implicit time.scheme "
                          "(crank_nicolson, backward_euler) or set time.allow_unstable = true", where,
                          c->dt_requested, dt_max, heat_materials_active(&c->materials) ? "these materials" : "alpha");
    }
    if (c->dt_requested == 0.0 && c->cfl > 1.0) {
        key_where(cf, origin, "time.cfl", where, sizeof where);
        return heat_error(HEAT_ERR_CONFIG,
                          "%stime.cfl = %.15g: time.scheme = \"euler\" is unstable above 1; lower time.cfl or use an "
                          "implicit time.scheme (crank_nicolson, backward_euler)", where, c->cfl);
    }
    return HEAT_OK;
}

static int check_output_name(const heat_config *c, const config_t *cf, const char *origin)
{
    char where[640];
    key_where(cf, origin, "output.name", where, sizeof where);
    if (strspn(c->output.name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-") !=
        strlen(c->output.name))
        return heat_error(HEAT_ERR_CONFIG, "%soutput.name = \"%s\": use only letters, digits, '.', '_' and '-'",
                          where, c->output.name);
    /* "." and ".." would make the default output.dir out/. or out/.. (the files land outside it), and any
     * leading dot hides every file of the run (and its lock, .<name>.lock, among them). */
    if (c->output.name[0] == '.')
        return heat_error(HEAT_ERR_CONFIG, "%soutput.name = \"%s\": must not begin with '.' (the run's files would "
                          "be hidden, and \".\" or \"..\" name a folder); begin it with a letter, digit, '_' or "
                          "'-'", where, c->output.name);
    return HEAT_OK;
}

/* Letters that fall on no point leave a plate and air: a run of nothing, worth a word (as an empty region is). */
static void warn_letters_unseen(const heat_config *c, const config_t *cf, const char *origin)
{
    long ink_points;
    int band_planes;
    heat_letters_coverage(&c->initial, &c->grid, &ink_points, &band_planes);
    char where[640];
    key_where(cf, origin, band_planes == 0 ? "initial.plate_thickness" : "initial.text", where, sizeof where);
    if (band_planes == 0)
        heat_warn("%sthe letters' band holds no point of the grid: initial.plate_thickness = %g and "
                  "initial.letter_height = %g of the height leave no plane of its %d for the letters; lower "
                  "plate_thickness or raise letter_height or grid.n[2]", where, c->initial.plate_thickness,
                  c->initial.letter_height, c->grid.n[2]);
    else if (ink_points == 0)
        heat_warn("%sinitial.text = \"%s\" covers no point of the grid's %d x %d points along x and y: its strokes "
                  "are thinner than the spacing; shorten the text, lower initial.margin or raise grid.n", where,
                  c->initial.text, c->grid.n[0], c->grid.n[1]);
}

static int check_letters_text(const heat_config *c, const config_t *cf, const char *origin)
{
    if (c->initial.type != INITIAL_LETTERS) return HEAT_OK;
    const char *bad = font_unsupported(c->initial.text);
    char where[640];
    key_where(cf, origin, "initial.text", where, sizeof where);
    if (c->initial.text[0] != '\0' && !bad) return warn_letters_unseen(c, cf, origin), HEAT_OK;
    return heat_error(HEAT_ERR_CONFIG, "%sinitial.text = \"%s\": %s; use letters A-Z, digits, space and . , ! ? - : +",
                      where, c->initial.text, bad ? "has a character the font lacks" : "is empty");
}

static int check_consistency(heat_config *c, const config_t *cf, const char *origin)
{
    heat_grid_set_spacing(&c->grid);
    HEAT_CALL(check_space_order(c, cf, origin));
    double dt_max = heat_materials_active(&c->materials) ? config_materials_dt_max(c)
                                                         : heat_space_dt_max(&c->grid, c->alpha, c->space_order / 2);
    HEAT_CALL(check_explicit_dt(c, cf, origin, dt_max));
    c->dt = c->dt_requested > 0.0 ? c->dt_requested : c->cfl * dt_max;
    HEAT_CALL(check_output_name(c, cf, origin));
    HEAT_CALL(check_png_index(c, cf, origin));
    HEAT_CALL(check_gpu_keys(c, cf, origin));
    HEAT_CALL(check_periodic(c, cf, origin));
    return check_letters_text(c, cf, origin);
}

/* output.dir = "~/runs" as the shell reads it: taken literally it would make a folder named "~" in the
 * working folder (which the next rm -rf ~ takes for the home folder). */
static int expand_home(heat_config *c)
{
    const char *dir = c->output.dir;
    if (dir[0] != '~' || (dir[1] != '/' && dir[1] != '\0')) return HEAT_OK;
    const char *home = getenv("HOME");
    if (!home || home[0] != '/')
        return heat_error(HEAT_ERR_CONFIG, "output.dir = \"%s\": HOME is not set, so '~' names no folder; give "
                          "the folder's full path", dir);
    char expanded[sizeof c->output.dir];
    if ((size_t)snprintf(expanded, sizeof expanded, "%s%s", home, dir + 1) >= sizeof expanded)
        return heat_error(HEAT_ERR_CONFIG, "output.dir = \"%s\": with ~ as %s it is longer than %zu characters; "
                          "choose a shorter folder", dir, home, sizeof expanded - 1);
    memcpy(c->output.dir, expanded, sizeof expanded);
    return HEAT_OK;
}

static int default_output(heat_config *c, const char *origin)
{
    HEAT_CALL(expand_home(c));
    if (c->output.name[0] == '\0') {
        const char *base = strrchr(origin, '/');
        base = base ? base + 1 : origin;
        /* Only the last extension goes: case_1.5.cfg and case_1.7.cfg are two runs, not both "case_1". */
        const char *extension = strrchr(base, '.');
        size_t stem = extension ? (size_t)(extension - base) : strlen(base);
        if (stem >= sizeof c->output.name)
            return heat_error(HEAT_ERR_CONFIG, "%s: the file name's stem, which names the output by default, has "
                              "%zu characters; output.name takes at most %zu: set output.name (--set "
                              "output.name=\\\"run\\\") or rename the file", origin, stem, sizeof c->output.name - 1);
        if (stem == 0) stem = strlen("heatsolve"), base = "heatsolve";
        snprintf(c->output.name, sizeof c->output.name, "%.*s", (int)stem, base);
        /* "my run.cfg" gives "my_run": the stem is made valid, never blamed on the user. */
        for (char *ch = c->output.name; *ch; ++ch)
            if (!isalnum((unsigned char)*ch) && *ch != '_' && *ch != '-' && (*ch != '.' || ch == c->output.name))
                *ch = '_';
    }
    if (c->output.dir[0] == '\0') snprintf(c->output.dir, sizeof c->output.dir, "out/%s", c->output.name);
    return HEAT_OK;
}

static int read_all_keys(const config_t *cf, const char *origin, heat_config *c)
{
    HEAT_CALL(check_unknown(config_root_setting(cf), origin));
    for (int k = 0; k < KEY_COUNT; ++k) {
        const config_setting_t *s = config_lookup(cf, keys[k].path);
        if (s) HEAT_CALL(read_key(s, &keys[k], origin, c));
    }
    HEAT_CALL(config_materials_read(cf, origin, c));
    HEAT_CALL(default_output(c, origin));
    return check_consistency(c, cf, origin);
}

static int add_value(config_setting_t *group, const char *name, const config_key *key, const heat_config *c);

/* Keys that say nothing for this configuration and are left out of its
 * text: time.dt = 0 means "absent" (cfl decides; 0 itself is not a valid
 * time.dt), and a face's h and ambient mean something only on a convective
 * face (configurations without them keep the text they always had). */
static int unused_key(const config_key *key, const heat_config *c)
{
    if (key->offset == offsetof(heat_config, dt_requested)) return c->dt_requested == 0.0;
    for (int f = 0; f < FACE_COUNT; ++f)
        if (key->offset == offsetof(heat_config, bc[f].h) || key->offset == offsetof(heat_config, bc[f].ambient))
            return c->bc[f].type != HEAT_BC_CONVECTIVE;
    return 0;
}

static int render_text(heat_config *c)
{
    config_t out;
    config_init(&out);
    int status = HEAT_OK;
    for (int k = 0; k < KEY_COUNT && status == HEAT_OK; ++k) {
        config_setting_t *parent;
        const char *leaf;
        if (unused_key(&keys[k], c)) continue;
        status = override_parent(&out, keys[k].path, keys[k].path, &parent, &leaf);
        if (status == HEAT_OK) status = add_value(parent, leaf, &keys[k], c);
    }
    if (status == HEAT_OK) status = config_materials_render(&out, c);
    char *text = NULL;
    size_t len = 0;
    FILE *stream = status == HEAT_OK ? open_memstream(&text, &len) : NULL;
    if (stream) {
        config_write(&out, stream);
        if (fclose(stream) != 0) status = heat_error(HEAT_ERR_RUNTIME, "cannot render the configuration");
        c->text = text;
    } else if (status == HEAT_OK) {
        status = heat_error(HEAT_ERR_RUNTIME, "cannot render the configuration: out of memory");
    }
    config_destroy(&out);
    return status;
}

static int add_value(config_setting_t *group, const char *name, const config_key *key, const heat_config *c)
{
    const char *field = (const char *)c + key->offset;
    int types[] = {CONFIG_TYPE_INT, CONFIG_TYPE_INT64, CONFIG_TYPE_FLOAT, CONFIG_TYPE_BOOL,
                   CONFIG_TYPE_STRING, CONFIG_TYPE_STRING, CONFIG_TYPE_ARRAY, CONFIG_TYPE_ARRAY};
    config_setting_t *s = config_setting_add(group, name, types[key->kind]);
    HEAT_CHECK(s, "libconfig could not add '%s'", key->path);
    switch (key->kind) {
    case K_INT: config_setting_set_int(s, *(const int *)field); break;
    case K_LONG: config_setting_set_int64(s, *(const long *)field); break;
    case K_FLOAT: config_setting_set_float(s, *(const double *)field); break;
    case K_BOOL: config_setting_set_bool(s, *(const int *)field); break;
    case K_STRING: config_setting_set_string(s, field); break;
    case K_WORD: config_setting_set_string(s, key->words[*(const int *)field]); break;
    case K_INT3:
        for (int i = 0; i < 3; ++i) config_setting_set_int_elem(s, -1, ((const int *)field)[i]);
        break;
    case K_FLOAT3:
        for (int i = 0; i < 3; ++i) config_setting_set_float_elem(s, -1, ((const double *)field)[i]);
        break;
    }
    return HEAT_OK;
}

static int load(config_t *cf, const char *origin, char *const *overrides, int noverrides, heat_config *c)
{
    for (int i = 0; i < noverrides; ++i) HEAT_CALL(apply_override(cf, overrides[i]));
    HEAT_CALL(read_all_keys(cf, origin, c));
    return render_text(c);
}

static int parse_error(config_t *cf, const char *origin)
{
    if (config_error_type(cf) == CONFIG_ERR_FILE_IO)
        return heat_error(HEAT_ERR_CONFIG, "cannot read config file '%s': %s; check the path",
                          origin, strerror(errno ? errno : ENOENT));
    const char *text = config_error_text(cf); /* libconfig's own words: often just "syntax error" */
    int plain = text == NULL || strstr(text, "syntax error") != NULL;
    return heat_error(HEAT_ERR_CONFIG, "%s:%d: %s%s; settings look like 'name = value;' inside 'group = { ... };'",
                      origin, config_error_line(cf), plain ? "syntax error" : "syntax error: ", plain ? "" : text);
}

/* A folder given as CONFIG: say so, and name the .cfg inside if there is one. */
static int folder_as_config(const char *path)
{
    char example[1024] = "";
    DIR *d = opendir(path);
    for (struct dirent *e; d && (e = readdir(d));) {
        size_t len = strlen(e->d_name);
        if (len > 4 && strcmp(e->d_name + len - 4, ".cfg") == 0) {
            snprintf(example, sizeof example, " such as %s%s%s", path, path[strlen(path) - 1] == '/' ? "" : "/",
                     e->d_name);
            break;
        }
    }
    if (d) closedir(d);
    return heat_error(HEAT_ERR_CONFIG, "CONFIG '%s' is a folder; give a configuration file%s", path, example);
}

/* The whole file as text for check_integer_literals; NULL if unreadable
 * (libconfig then reports why). */
static char *read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    char chunk[4096];
    for (size_t n; mem && (n = fread(chunk, 1, sizeof chunk, f)) > 0;) fwrite(chunk, 1, n, mem);
    fclose(f);
    if (mem && fclose(mem) == 0) return text;
    free(text);
    return NULL;
}

/* Some Windows editors begin a UTF-8 file with a byte-order mark, which libconfig reads as a syntax error. */
static int starts_with_bom(const char *path)
{
    unsigned char head[3] = {0};
    FILE *f = fopen(path, "rb");
    size_t n = f ? fread(head, 1, sizeof head, f) : 0;
    if (f) fclose(f);
    return n == 3 && head[0] == 0xEF && head[1] == 0xBB && head[2] == 0xBF;
}

static int read_file(config_t *cf, const char *path)
{
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) return folder_as_config(path);
    errno = 0;
    int read = config_read_file(cf, path) == CONFIG_TRUE;
    if (!read && config_error_type(cf) == CONFIG_ERR_PARSE && config_error_line(cf) == 1 && starts_with_bom(path))
        return heat_error(HEAT_ERR_CONFIG, "%s:1: the file begins with a UTF-8 byte-order mark, which libconfig "
                          "cannot read; save it as UTF-8 without BOM (or remove the mark: sed -i '1s/^\\xEF\\xBB"
                          "\\xBF//' %s)", path, path);
    if (!read) return parse_error(cf, path);
    char *text = read_text(path);
    int status = text ? check_integer_literals(text, path, 0) : HEAT_OK;
    free(text);
    return status;
}

int heat_config_load(const char *path, char *const *overrides, int noverrides, heat_config *c)
{
    set_defaults(c);
    snprintf(c->path, sizeof c->path, "%s", path);
    config_t cf;
    config_init(&cf);
    int status = read_file(&cf, path);
    if (status == HEAT_OK) status = load(&cf, path, overrides, noverrides, c);
    config_destroy(&cf);
    if (status != HEAT_OK) free(c->text), c->text = NULL;
    return status;
}

int heat_config_load_string(const char *text, const char *origin, char *const *overrides, int noverrides,
                       heat_config *c)
{
    set_defaults(c);
    snprintf(c->path, sizeof c->path, "%s", origin);
    config_t cf;
    config_init(&cf);
    int status = config_read_string(&cf, text) == CONFIG_TRUE ? check_integer_literals(text, origin, 0)
                                                               : parse_error(&cf, origin);
    if (status == HEAT_OK) status = load(&cf, origin, overrides, noverrides, c);
    config_destroy(&cf);
    if (status != HEAT_OK) free(c->text), c->text = NULL;
    return status;
}

void heat_config_destroy(heat_config *c)
{
    if (!c) return;
    free(c->text);
    c->text = NULL;
}

void heat_config_problem(const heat_config *c, heat_problem *p)
{
    memset(p, 0, sizeof *p);
    p->grid = c->grid;
    heat_grid_set_spacing(&p->grid);
    memcpy(p->bc, c->bc, sizeof p->bc);
    p->precision = (heat_precision)c->precision;
    p->alpha = c->alpha;
    p->dt = c->dt;
    p->kernel = c->kernel;
    p->implicit = c->implicit;
    p->space_order = c->space_order;
    if (heat_materials_active(&c->materials)) p->materials = &c->materials; /* zones: painted per block (app/zones.h) */
}

const char *heat_config_word(const char *path, int index)
{
    const config_key *key = find_key(path);
    return key && key->words ? key->words[index] : "?";
}

/* ---- printing -------------------------------------------------------------------------------- */

static size_t key_value_size(const config_key *key)
{
    switch (key->kind) {
    case K_INT: case K_BOOL: case K_WORD: return sizeof(int);
    case K_LONG: return sizeof(long);
    case K_FLOAT: return sizeof(double);
    case K_STRING: return key->size;
    case K_INT3: return 3 * sizeof(int);
    case K_FLOAT3: return 3 * sizeof(double);
    }
    return 0;
}

static int same_value(const config_key *key, const heat_config *a, const heat_config *b)
{
    const char *x = (const char *)a + key->offset, *y = (const char *)b + key->offset;
    if (key->kind == K_STRING) return strcmp(x, y) == 0;
    return memcmp(x, y, key_value_size(key)) == 0;
}

/* A float as the user would write it: shortest form that reads back, with a decimal point. */
void config_print_float(FILE *out, double v)
{
    char text[40];
    for (int digits = 6; digits <= 17; ++digits) {
        snprintf(text, sizeof text, "%.*g", digits, v);
        if (strtod(text, NULL) == v) break;
    }
    fputs(text, out);
    if (!strpbrk(text, ".eEn")) fputs(".0", out);
}

static void print_value(FILE *out, const config_key *key, const heat_config *c)
{
    const char *field = (const char *)c + key->offset;
    switch (key->kind) {
    case K_INT: fprintf(out, "%d", *(const int *)field); break;
    case K_LONG: fprintf(out, "%ld", *(const long *)field); break;
    case K_FLOAT: config_print_float(out, *(const double *)field); break;
    case K_BOOL: fputs(*(const int *)field ? "true" : "false", out); break;
    case K_STRING: fprintf(out, "\"%s\"", field); break;
    case K_WORD: fprintf(out, "\"%s\"", key->words[*(const int *)field]); break;
    case K_INT3: {
        const int *v = (const int *)field;
        fprintf(out, "[%d, %d, %d]", v[0], v[1], v[2]);
        break;
    }
    case K_FLOAT3:
        for (int i = 0; i < 3; ++i) {
            fputs(i ? ", " : "[", out);
            config_print_float(out, ((const double *)field)[i]);
        }
        fputs("]", out);
        break;
    }
}

int heat_config_print(const heat_config *c, int all, FILE *out)
{
    heat_config defaults;
    set_defaults(&defaults);
    int was = heat_errors_as_warnings(HEAT_ERRORS_SILENT); /* a stem too long was c's to refuse, not here */
    default_output(&defaults, c->path);
    heat_errors_as_warnings(was);
    int printed = 0;
    for (int k = 0; k < KEY_COUNT; ++k) {
        const config_key *key = &keys[k];
        if (unused_key(key, c)) continue;
        if (!all && same_value(key, c, &defaults)) continue;
        fprintf(out, "  %s = ", key->path);
        print_value(out, key, c);
        fputs("\n", out);
        ++printed;
    }
    return printed + config_materials_print(c, out);
}
