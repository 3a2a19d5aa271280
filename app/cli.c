#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/config.h"
#include "solver/error.h"
#include "solver/space_order.h"

void cli_print_help(void)
{
    printf("usage: heatsolve [options] CONFIG            (several GPUs or nodes: mpirun -np N heatsolve ...)\n"
           "       heatsolve bench [bench options]\n\n"
           "Solves the 3D heat equation described by the libconfig file CONFIG (u_t = alpha lap(u), or\n"
           "rho c dT/dt = div(k grad T) + q with materials), writing HDF5 checkpoints that ParaView opens\n"
           "and that restart the run bitwise.\n\n"
           "options:\n"
           "  --set PATH=VALUE       override a setting, libconfig syntax, repeatable\n"
           "                         (e.g. --set grid.n=[64,64,16] --set time.steps=100)\n"
           "  --restart FILE|latest  continue from a checkpoint (latest: newest valid one in output.dir)\n"
           "  --backend auto|cpu|hip choose the backend (default: solver.backend, auto)\n"
           "  -q, --quiet            print only warnings and errors\n"
           "  -v, --verbose          print every setting (not only those that differ from the defaults);\n"
           "                         implicit schemes: one line per step (CG iterations, final residual)\n"
           "  --allow-scheme-change  restart with a time.scheme or solver.space_order other than the checkpoint's\n"
           "  --allow-problem-change restart a materials run with other materials, regions, sources or\n"
           "                         boundaries than the checkpoint's (the field is kept as it is)\n"
           "  --overwrite            a new run into a folder that holds an earlier run's files of the same\n"
           "                         output.name: remove those files first (otherwise the run refuses)\n"
           "  -h, --help             this help\n"
           "  --version              print the version\n\n"
           "bench options:\n"
           "  --backend auto|cpu|hip  backend to measure (default auto)\n"
           "  --size N | --size NX,NY,NZ  grid (default 512^3 on a GPU, 256^3 on the CPU)\n"
           "  --precision double|float    (default double)\n"
           "  --reps N               timed launches per kernel after warm-up (default 50)\n"
           "  --order 2|4|6|8        the Laplacian's order (solver.space_order; default 2): above 2, effective\n"
           "                         bandwidth counts 2 x sizeof(T) a point a step\n"
           "  --json FILE            also write the results as JSON\n"
           "  --io                   measure checkpoint writing and reading instead, against the compression\n"
           "                         stage alone and the output folder's fsync bandwidth\n"
           "  --level N              --io: deflate level 0-9 (default 1, as output.compression)\n"
           "  --cg                   measure the implicit solver instead: CG operator and whole iteration\n"
           "  --io-dir DIR           folder for the --io files (default /tmp)\n"
           "  --transport auto|mpi|nccl|host|ipc  under mpirun: how GPU halos travel (as parallel.transport)\n"
           "  -q, --quiet            leave out which backend auto chose and why\n"
           "  under mpirun (a -DHEATSOLVE_MPI=ON build), bench times strong and weak scaling of the\n"
           "  production step against one rank alone: mpirun -np N heatsolve bench --size S (--cg and --io\n"
           "  measure one process: without mpirun)\n\n"
           "exit status: 0 success, 1 runtime failure (or the final state could not be written),\n"
           "2 usage or configuration error, 3 interrupted a second time before the final checkpoint\n"
           "was written, 128+signal after SIGINT, SIGTERM or SIGHUP that wrote a final checkpoint.\n"
           "Configuration keys: docs/CONFIG.md (installed: share/doc/heatsolve/CONFIG.md).\n");
}

static int parse_backend(const char *word, int *backend)
{
    const char *words[] = {"auto", "cpu", "hip"};
    for (int i = 0; i < 3; ++i)
        if (strcmp(word, words[i]) == 0) return *backend = i, HEAT_OK;
    return heat_error(HEAT_ERR_CONFIG, "--backend %s: expected auto, cpu or hip", word);
}

static int parse_size(const char *text, int size[3])
{
    /* digits and commas only, at most 7 digits a number: "16junk" is no size, and none overflows an int */
    int numbers = 0, whole = 1;
    for (const char *part = text; whole; ++part) {
        size_t digits = strspn(part, "0123456789");
        whole = digits >= 1 && digits <= 7 && (part[digits] == ',' || part[digits] == '\0');
        ++numbers, part += digits;
        if (*part == '\0') break;
    }
    int n = whole && (numbers == 1 || numbers == 3) ? sscanf(text, "%d,%d,%d", &size[0], &size[1], &size[2]) : 0;
    if (n == 1) size[1] = size[2] = size[0];
    if ((n != 1 && n != 3) || size[0] < 3 || size[1] < 3 || size[2] < 3)
        return heat_error(HEAT_ERR_CONFIG, "--size %s: expected N or NX,NY,NZ, whole numbers of at least 3 (such as 256 or 320,160,64)", text);
    return HEAT_OK;
}

static int parse_positive(const char *option, const char *text, int *value)
{
    char *end;
    long v = strtol(text, &end, 10);
    if (*end || v < 1 || v > 1000000)
        return heat_error(HEAT_ERR_CONFIG, "%s %s: expected a positive integer", option, text);
    *value = (int)v;
    return HEAT_OK;
}

static int parse_order(const char *text, int *order)
{
    char *end;
    long v = strtol(text, &end, 10);
    if (*end || !heat_space_order_valid((int)v) || v != (int)v)
        return heat_error(HEAT_ERR_CONFIG, "--order %s: expected 2, 4, 6 or 8 (the Laplacian's order, as "
                          "solver.space_order)", text);
    *order = (int)v;
    return HEAT_OK;
}

static int writable_folder(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode) && access(path, W_OK | X_OK) == 0;
}

/* A file the program will write later: refused now if it cannot be, before any work. */
static int check_output_file(const char *option, const char *path)
{
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        return heat_error(HEAT_ERR_CONFIG, "%s %s is a folder; give a file name such as %s/bench.json", option, path,
                          path);
    char folder[1024];
    snprintf(folder, sizeof folder, "%s", path);
    char *slash = strrchr(folder, '/');
    if (slash) *slash = '\0';
    const char *parent = slash ? (folder[0] ? folder : "/") : ".";
    if (!writable_folder(parent))
        return heat_error(HEAT_ERR_CONFIG, "%s %s: the folder %s does not exist or is not writable", option, path,
                          parent);
    return HEAT_OK;
}

enum {
    OPT_SET = 256, OPT_RESTART, OPT_BACKEND, OPT_VERSION, OPT_SIZE, OPT_PRECISION, OPT_REPS, OPT_JSON, OPT_IO,
    OPT_IO_DIR, OPT_CHANGE_SCHEME, OPT_CG, OPT_OVERWRITE, OPT_LEVEL, OPT_TRANSPORT, OPT_CHANGE_PROBLEM, OPT_ORDER
};

/* The bit of cli->given for the long option opt. */
#define GIVEN(opt) (1u << ((opt) - OPT_SET))

static const struct option run_options[] = {
    {"set", required_argument, 0, OPT_SET},
    {"restart", required_argument, 0, OPT_RESTART},
    {"backend", required_argument, 0, OPT_BACKEND},
    {"quiet", no_argument, 0, 'q'},
    {"verbose", no_argument, 0, 'v'},
    {"allow-scheme-change", no_argument, 0, OPT_CHANGE_SCHEME},
    {"allow-problem-change", no_argument, 0, OPT_CHANGE_PROBLEM},
    {"overwrite", no_argument, 0, OPT_OVERWRITE},
    {"help", no_argument, 0, 'h'},
    {"version", no_argument, 0, OPT_VERSION},
    {0, 0, 0, 0},
};

static const struct option bench_options[] = {
    {"backend", required_argument, 0, OPT_BACKEND},
    {"size", required_argument, 0, OPT_SIZE},
    {"precision", required_argument, 0, OPT_PRECISION},
    {"reps", required_argument, 0, OPT_REPS},
    {"json", required_argument, 0, OPT_JSON},
    {"io", no_argument, 0, OPT_IO},
    {"io-dir", required_argument, 0, OPT_IO_DIR},
    {"level", required_argument, 0, OPT_LEVEL},
    {"transport", required_argument, 0, OPT_TRANSPORT},
    {"cg", no_argument, 0, OPT_CG},
    {"order", required_argument, 0, OPT_ORDER},
    {"quiet", no_argument, 0, 'q'},
    {"help", no_argument, 0, 'h'},
    {0, 0, 0, 0},
};

/* --transport: parallel.transport's words, in par_transport's order. */
static int parse_transport(const char *text, int *transport)
{
    static const char *const words[] = {"auto", "mpi", "nccl", "host", "ipc"};
    for (int i = 0; i < (int)(sizeof words / sizeof *words); ++i)
        if (strcmp(text, words[i]) == 0) return *transport = i, HEAT_OK;
    return heat_error(HEAT_ERR_CONFIG, "--transport %s: expected auto, mpi, nccl, host or ipc", text);
}

static int handle_option(int opt, heat_cli *cli)
{
    switch (opt) {
    case OPT_SET:
        if (cli->noverrides == CLI_MAX_OVERRIDES) return heat_error(HEAT_ERR_CONFIG, "too many --set options");
        cli->overrides[cli->noverrides++] = optarg;
        return HEAT_OK;
    case OPT_RESTART: cli->restart = optarg; return HEAT_OK;
    case OPT_BACKEND: return parse_backend(optarg, &cli->backend);
    case OPT_VERSION: cli->version = 1; return HEAT_OK;
    case 'q': cli->quiet = 1; return HEAT_OK;
    case 'v': cli->verbose = 1; return HEAT_OK;
    case OPT_CHANGE_SCHEME: cli->allow_scheme_change = 1; return HEAT_OK;
    case OPT_CHANGE_PROBLEM: cli->allow_problem_change = 1; return HEAT_OK;
    case OPT_CG: cli->cg = 1; return HEAT_OK;
    case OPT_OVERWRITE: cli->overwrite = 1; return HEAT_OK;
    case OPT_LEVEL: {
        char *end;
        long v = strtol(optarg, &end, 10);
        if (*end || end == optarg || v < 0 || v > 9) return heat_error(HEAT_ERR_CONFIG, "--level %s: expected 0-9", optarg);
        cli->level = (int)v;
        return HEAT_OK;
    }
    case 'h': cli->help = 1; return HEAT_OK;
    case OPT_SIZE: return parse_size(optarg, cli->size);
    case OPT_PRECISION:
        if (strcmp(optarg, "double") && strcmp(optarg, "float"))
            return heat_error(HEAT_ERR_CONFIG, "--precision %s: expected double or float", optarg);
        cli->precision = strcmp(optarg, "float") == 0;
        return HEAT_OK;
    case OPT_REPS: return parse_positive("--reps", optarg, &cli->reps);
    case OPT_JSON: cli->json = optarg; return HEAT_OK;
    case OPT_IO: cli->io = 1; return HEAT_OK;
    case OPT_IO_DIR: cli->io_dir = optarg; return HEAT_OK;
    case OPT_TRANSPORT: return parse_transport(optarg, &cli->transport);
    case OPT_ORDER: return parse_order(optarg, &cli->space_order);
    default: return heat_error(HEAT_ERR_CONFIG, "unknown option; see heatsolve --help");
    }
}

/* A --size thinner than --order's radius R = order / 2 along an axis: the
 * ghosts mirror R owned points, which such a grid lacks (as io/config.c
 * refuses it for a run). The default size (0 until the backend is known)
 * always fits. */
static int check_bench_order_fits(const heat_cli *cli)
{
    static const char axes[] = "xyz";
    const int radius = cli->space_order / 2;
    for (int a = 0; a < 3; ++a)
        if (cli->size[a] > 0 && cli->size[a] < radius)
            return heat_error(HEAT_ERR_CONFIG, "--size %d,%d,%d with --order %d: the order reads %d points on each "
                              "side, and %c has only %d; give every axis at least %d points or a lower --order",
                              cli->size[0], cli->size[1], cli->size[2], cli->space_order, radius, axes[a],
                              cli->size[a], radius);
    return HEAT_OK;
}

/* Options of one measurement given to another would be ignored without a word: refused instead. */
static int check_bench_options_apply(const heat_cli *cli)
{
    if (!cli->io && cli->given & (GIVEN(OPT_LEVEL) | GIVEN(OPT_IO_DIR)))
        return heat_error(HEAT_ERR_CONFIG, "%s belongs to the checkpoint benchmark: add --io (heatsolve bench --io "
                          "%s ...), or drop it", cli->given & GIVEN(OPT_LEVEL) ? "--level" : "--io-dir",
                          cli->given & GIVEN(OPT_LEVEL) ? "--level N" : "--io-dir DIR");
    if (cli->io && cli->given & GIVEN(OPT_ORDER))
        return heat_error(HEAT_ERR_CONFIG, "--order with --io: a checkpoint does not depend on the Laplacian's "
                          "order; drop --order, or drop --io to time that order's kernels");
    return HEAT_OK;
}

/* bench: no argument beside the options, one measurement (--io or --cg) with
 * only options it uses, a grid the order fits, and the files it will write
 * can be written: refused now, not after the work. */
static int check_bench_arguments(int argc, char **argv, const heat_cli *cli)
{
    if (optind < argc) return heat_error(HEAT_ERR_CONFIG, "bench takes no argument '%s'", argv[optind]);
    if (cli->io && cli->cg)
        return heat_error(HEAT_ERR_CONFIG, "--io and --cg are two different measurements; give one of them per "
                          "heatsolve bench");
    HEAT_CALL(check_bench_options_apply(cli));
    HEAT_CALL(check_bench_order_fits(cli));
    if (cli->io && !writable_folder(cli->io_dir))
        return heat_error(HEAT_ERR_CONFIG, "--io-dir %s: not a folder this user can write to; give an existing "
                          "writable folder on the disk to measure (default /tmp)", cli->io_dir);
    return cli->json ? check_output_file("--json", cli->json) : HEAT_OK;
}

/* --restart FILE: an existing regular file (a folder, device or pipe is no
 * checkpoint, and opening a pipe would wait for a writer). */
static int check_restart_file(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return heat_error(HEAT_ERR_CONFIG, "--restart %s: %s; give an existing checkpoint file, or --restart latest "
                          "for the newest one in output.dir", path, strerror(errno));
    if (!S_ISREG(st.st_mode))
        return heat_error(HEAT_ERR_CONFIG, "--restart %s: %s, not a checkpoint file; give one of the run's "
                          "<output.name>_<step>.hdf files, or --restart latest for the newest one in output.dir", path,
                          S_ISDIR(st.st_mode) ? "a folder" : "a device, pipe or socket");
    return HEAT_OK;
}

/* A run: exactly one CONFIG file (into cli->config), and a --restart that can be honoured. */
static int check_run_arguments(int argc, char **argv, heat_cli *cli)
{
    if (optind != argc - 1)
        return heat_error(HEAT_ERR_CONFIG, optind < argc ? "expected one CONFIG file, got several" :
                          "missing CONFIG file; usage: heatsolve [options] CONFIG (see --help)");
    cli->config = argv[optind];
    if (cli->restart && cli->overwrite)
        return heat_error(HEAT_ERR_CONFIG, "--overwrite with --restart: a restart continues the run whose files "
                          "--overwrite would remove; drop --overwrite to continue (later files are set aside), or "
                          "drop --restart to start afresh");
    if (!cli->restart && (cli->allow_scheme_change || cli->allow_problem_change))
        heat_warn("%s has no effect without --restart (it lets a restart differ from its checkpoint); this run "
                  "starts afresh", cli->allow_scheme_change ? "--allow-scheme-change" : "--allow-problem-change");
    return cli->restart && strcmp(cli->restart, "latest") != 0 ? check_restart_file(cli->restart) : HEAT_OK;
}

/* getopt's '?': a known option at the end without its value (optopt names it), or an unknown one. */
static int option_error(const char *word, int bench)
{
    if (optopt >= OPT_SET)
        return heat_error(HEAT_ERR_CONFIG, "%s needs a value (%s VALUE); see heatsolve %s--help", word, word,
                          bench ? "bench " : "");
    return heat_error(HEAT_ERR_CONFIG, "%s: unknown %soption; see heatsolve %s--help", word, bench ? "bench " : "",
                      bench ? "bench " : "");
}

int cli_parse(int argc, char **argv, heat_cli *cli)
{
    memset(cli, 0, sizeof *cli);
    cli->backend = -1;
    cli->reps = 50;
    cli->io_dir = "/tmp";
    cli->level = 1;
    int first = 1;
    if (argc > 1 && strcmp(argv[1], "bench") == 0) cli->bench = 1, first = 2;
    const char *short_options = cli->bench ? "qh" : "qvh";
    const struct option *long_options = cli->bench ? bench_options : run_options;
    optind = first;
    opterr = 0;
    for (int opt; (opt = getopt_long(argc, argv, short_options, long_options, NULL)) != -1;) {
        if (opt == '?' || opt == ':') return option_error(argv[optind - 1], cli->bench);
        if (opt >= OPT_SET) cli->given |= GIVEN(opt);
        HEAT_CALL(handle_option(opt, cli));
    }
    if (cli->help || cli->version) return HEAT_OK;
    return cli->bench ? check_bench_arguments(argc, argv, cli) : check_run_arguments(argc, argv, cli);
}
