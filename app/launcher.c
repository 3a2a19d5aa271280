#include "app/launcher.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "solver/error.h"

/* A cautious write speed: about half of what one core compressing at level 1,
 * then an fsync, reaches on a small machine, which leaves room for a loaded
 * node. */
static const double slow_write_bytes_per_second = 100e6;

/* The value of MCA parameter `name` in an Open MPI parameter file ("name = value"
 * lines, # comments; the last one counts) into value; 0 where the file has none. */
static int mca_file_value(const char *path, const char *name, char *value, size_t len)
{
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    char line[512];
    int found = 0;
    while (fgets(line, sizeof line, f)) {
        char key[256], text[256];
        if (sscanf(line, " %255[^=# \t] = %255s", key, text) == 2 && strcmp(key, name) == 0)
            found = snprintf(value, len, "%s", text) > 0;
    }
    fclose(f);
    return found;
}

/* Where Open MPI looks, in its order of precedence: the environment (which mpirun --mca
 * sets), the user's file, the installation's (Debian's, or under OPAL_PREFIX). */
static int mca_value(const char *name, char *value, size_t len)
{
    char env[128], path[1024];
    snprintf(env, sizeof env, "OMPI_MCA_%s", name);
    const char *set = getenv(env), *home = getenv("HOME"), *prefix = getenv("OPAL_PREFIX");
    if (set && *set) return snprintf(value, len, "%s", set) > 0;
    snprintf(path, sizeof path, "%s/.openmpi/mca-params.conf", home ? home : "");
    if (home && mca_file_value(path, name, value, len)) return 1;
    snprintf(path, sizeof path, "%s/etc/openmpi-mca-params.conf", prefix ? prefix : "");
    if (prefix && mca_file_value(path, name, value, len)) return 1;
    return mca_file_value("/etc/openmpi/openmpi-mca-params.conf", name, value, len);
}

/* Seconds between the signal and SIGKILL under Open MPI's mpirun, from its
 * odls_base_sigkill_timeout (environment or --mca, then ~/.openmpi/mca-params.conf,
 * then the installation's file); < 0 where this process was not started by it
 * (one process, srun, another MPI). */
static double launcher_kill_delay(void)
{
    if (!getenv("OMPI_MCA_orte_launch")) return -1.0; /* only ORTE's daemons start ranks with it */
    char set[256];
    if (!mca_value("odls_base_sigkill_timeout", set, sizeof set)) return 1.0; /* Open MPI 4's default */
    char *end;
    errno = 0;
    long seconds = strtol(set, &end, 10);
    return errno || *end || seconds < 0 ? -1.0 : (double)seconds;
}

void launcher_check_kill_delay(double checkpoint_bytes)
{
    double delay = launcher_kill_delay(), needed = checkpoint_bytes / slow_write_bytes_per_second;
    if (delay < 0 || needed <= delay) return;
    long advised = 10 * (long)ceil(2.0 * needed / 10.0);
    heat_warn("mpirun kills the ranks %g s after it passes on a SIGTERM or SIGINT (Ctrl-C), which may be too soon "
              "to write a final checkpoint of %.0f MB (up to %.0f s on a slow disk); start mpirun with "
              "--mca odls_base_sigkill_timeout %ld (or export OMPI_MCA_odls_base_sigkill_timeout=%ld), and it "
              "will pass the signal on after %ld s and give the ranks %ld s more",
              delay, checkpoint_bytes / 1e6, ceil(needed), advised, advised, advised, advised);
}

/* The environment variable's count or index; -1 when unset or not one. */
static int env_number(const char *name)
{
    const char *text = getenv(name);
    char *end;
    long value = text ? strtol(text, &end, 10) : -1;
    return text && *text && *end == '\0' && value >= 0 && value < (1L << 30) ? (int)value : -1;
}

static int positive_env(const char *name) { return env_number(name) > 0 ? env_number(name) : 0; }

/* The copy the launcher numbered 0 speaks for all: one message, not one a copy. */
static int launcher_first_copy(void)
{
    int rank = env_number("OMPI_COMM_WORLD_RANK");
    if (rank < 0) rank = env_number("PMI_RANK");
    return rank <= 0;
}

int launcher_job_size(void)
{
    int size = positive_env("OMPI_COMM_WORLD_SIZE");
    if (!size) size = positive_env("PMI_SIZE");
    return size ? size : 1;
}

int launcher_check_ranks_joined(int world_size)
{
    int started = launcher_job_size();
    if (started <= 1 || world_size > 1) return HEAT_OK;
#ifdef HEATSOLVE_MPI
    const char *why = "its MPI library is not the launcher's (each copy sees a world of one)";
#else
    const char *why = "this heatsolve was built without MPI";
#endif
    if (!launcher_first_copy()) {
        usleep(500 * 1000); /* mpirun ends the job at the first copy's exit: copy 0 gets to speak first */
        return HEAT_ERR_CONFIG;
    }
    return heat_error(HEAT_ERR_CONFIG, "started as one of %d ranks by mpirun or srun, but %s: each copy would run "
                      "the whole problem and write the same files; build with -DHEATSOLVE_MPI=ON (cmake -S . -B "
                      "build-mpi -DHEATSOLVE_MPI=ON) and start build-mpi/heatsolve, or run this one without mpirun",
                      started, why);
}

/* Open MPI's mpirun maps the host with hwloc before it starts a rank, PCI
 * devices and GPU plugins included: on a GPU host that alone takes more than
 * half a second, every run, where a one-node job needs only the cores. The
 * environment that would skip it has to reach mpirun itself, so heatsolve
 * can only tell the user. */
static const double slow_launch_seconds = 0.4;

/* Process pid's start (field 22 of /proc/PID/stat, clock ticks since boot) in
 * *ticks; 0 where unknown. The name field may hold spaces: fields count from its ')'. */
static int start_ticks(pid_t pid, unsigned long long *ticks)
{
    char path[64], line[1024];
    snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    int got = fgets(line, sizeof line, f) != NULL;
    fclose(f);
    char *after = got ? strrchr(line, ')') : NULL;
    return after && sscanf(after + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu",
                           ticks) == 1;
}

static int named_mpirun(pid_t pid)
{
    char path[64], name[64] = "";
    snprintf(path, sizeof path, "/proc/%ld/comm", (long)pid);
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    if (!fgets(name, sizeof name, f)) name[0] = '\0';
    fclose(f);
    name[strcspn(name, "\n")] = '\0';
    return strcmp(name, "mpirun") == 0 || strcmp(name, "mpiexec") == 0 || strcmp(name, "orterun") == 0;
}

void launcher_check_start_delay(void)
{
    if (!getenv("OMPI_MCA_orte_launch") || !launcher_first_copy()) return;
    if (getenv("HWLOC_COMPONENTS") || getenv("HWLOC_PLUGINS_BLACKLIST")) return; /* the user chose */
    pid_t parent = getppid();
    unsigned long long launcher, self;
    long tick = sysconf(_SC_CLK_TCK);
    if (!named_mpirun(parent) || tick <= 0 || !start_ticks(parent, &launcher) || !start_ticks(getpid(), &self)) return;
    double seconds = self > launcher ? (double)(self - launcher) / (double)tick : 0.0;
    if (seconds < slow_launch_seconds) return;
    heat_warn("mpirun took %.2f s to start the ranks; on a host with GPUs or many PCI devices most of it is hwloc's "
              "scan of them, which a one-node job does not need: export HWLOC_COMPONENTS=-linuxio,-pci "
              "HWLOC_PLUGINS_BLACKLIST=hwloc_pci,hwloc_gl,hwloc_opencl,hwloc_cuda,hwloc_nvml,hwloc_rsmi,hwloc_levelzero "
              "before mpirun (as the README's MPI example does)", seconds);
}
