#pragma once
/* Command-line parsing for `heatsolve [options] CONFIG` and `heatsolve bench`. */

enum { CLI_MAX_OVERRIDES = 256 };

typedef struct heat_cli {
    int bench;                  /* `heatsolve bench ...` */
    int help, version, quiet;
    int verbose;                /* one line per implicit step */
    int allow_scheme_change;    /* --restart with another time.scheme */
    int allow_problem_change;   /* --restart with other materials, regions, sources or boundaries */
    int overwrite;              /* --overwrite: a fresh run removes an earlier run's files of its name */
    const char *config;         /* CONFIG argument */
    char *overrides[CLI_MAX_OVERRIDES]; /* --set PATH=VALUE, in order */
    int noverrides;
    const char *restart;        /* --restart FILE|latest, or NULL */
    int backend;                /* -1: from the config; else BACKEND_* */
    /* bench only */
    int size[3];                /* zeros: backend default */
    int precision;              /* 0 double, 1 float */
    int reps;
    const char *json;
    int io;                     /* benchmark checkpoint writing instead of kernels */
    int cg;                     /* benchmark the implicit solver's CG instead of kernels */
    const char *io_dir;
    int level;                  /* --io: deflate level */
    int transport;              /* under mpirun: GPU halo transport, par_transport's order (parallel.transport) */
    int space_order;            /* --order: the Laplacian's order, 2, 4, 6 or 8 (0: not given, 2) */
    unsigned given;             /* bench: a bit for each long option given (cli.c's GIVEN) */
} heat_cli;

/* Returns HEAT_OK, or HEAT_ERR_CONFIG with a message for a usage mistake. */
int cli_parse(int argc, char **argv, heat_cli *cli);
void cli_print_help(void);
