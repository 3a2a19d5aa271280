#pragma once
#include <stdio.h>

/*
 * heatsolve's configuration: defaults in code, overridden by a libconfig file,
 * overridden by --set PATH=VALUE strings, all validated the same way.
 * Every key is listed once in config.c's table (name, type, range, meaning).
 */
#include "../solver/initial.h"
#include "../solver/materials.h"
#include "../solver/problem.h"
#include "../solver/regions.h"


typedef struct heat_output {
    char dir[512];        /* folder for checkpoints and the series file */
    char name[128];       /* file stem; default: the config file's stem */
    long every;           /* checkpoint interval in steps; 0: only the final step */
    double every_seconds; /* also a restart checkpoint after this much wall time since the last; 0: off */
    long frame_every;     /* frame interval in steps (viewing only, not restartable); 0: none */
    int frame_full;       /* frames in the run's precision; 0: float32 */
    int compression;      /* zlib level 0-9, 0 = uncompressed */
    int strategy;         /* 0: zlib's Z_RLE (fast), 1: zlib's default strategy */
    int keep;             /* keep only the newest K checkpoints; 0 = all */
    int on_write_error;   /* 0: stop (exit 1), 1: warn and continue */
    int history;          /* write <name>.history.csv (io/history.h) */
    int png;              /* write a quick-look PNG beside each checkpoint */
    int png_axis;         /* 0, 1, 2: slice normal along x, y, z */
    int png_index;        /* slice index along that axis; -1 = middle / letters */
    int writes_in_flight; /* checkpoints written at once, each with a snapshot buffer; 0: automatic */
} heat_output;

typedef struct heat_config {
    char path[512];         /* the config file as given */
    heat_grid grid;
    double alpha;
    long steps;             /* final step number of the whole run */
    double dt;              /* 0 until resolved: then cfl * dt_max or time.dt */
    double dt_requested;    /* time.dt from the user, 0 when absent */
    double cfl;
    int allow_unstable;
    heat_bc bc[FACE_COUNT];
    heat_initial initial;
    heat_output output;
    int backend;            /* 0 auto, 1 cpu, 2 hip */
    int precision;          /* heat_precision */
    heat_kernel_choice kernel;
    heat_implicit implicit; /* time.scheme and the CG solver's settings */
    int space_order;        /* solver.space_order: 2, 4, 6 or 8 (solver/space_order.h) */
    int ranks[3];           /* parallel.ranks: MPI ranks along x, y, z; zeros: automatic */
    int transport;          /* parallel.transport: par_transport (parallel/parallel.h) */
    char *text;             /* effective configuration, libconfig syntax (owned) */
    heat_materials materials; /* `materials` and the zones of the regions (material_count 0: none) */
    heat_regions regions;     /* `regions`, in painting order (io/config_materials.h) */
} heat_config;

enum { BACKEND_AUTO = 0, BACKEND_CPU = 1, BACKEND_HIP = 2 };

/*
 * Loads `path`, applies the `noverrides` strings "PATH=VALUE" in order,
 * validates everything and fills *config (free with heat_config_destroy).
 * Returns HEAT_ERR_CONFIG with a message naming file:line or --set and the
 * key, and how to fix it.
 */
int heat_config_load(const char *path, char *const *overrides, int noverrides, heat_config *config);

/* Same, from a string instead of a file (tests, fuzzing, restart checks). */
int heat_config_load_string(const char *text, const char *origin, char *const *overrides, int noverrides,
                       heat_config *config);

void heat_config_destroy(heat_config *config);

/* Fills the problem a backend needs from the configuration. */
void heat_config_problem(const heat_config *config, heat_problem *problem);

/* Prints "  key = value" lines in libconfig syntax: the settings that differ
 * from the defaults, or all of them. Returns how many lines. */
int heat_config_print(const heat_config *config, int all, FILE *out);

/* Name of a keyword value, e.g. heat_config_word("initial.type", 0) = "letters". */
const char *heat_config_word(const char *path, int index);
