#include "app/launcher.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "solver/error.h"

/* One core compressing at level 1, then an fsync: 170-200 MB/s of field on
 * the development VM and more on the GPU hosts (docs/PERFORMANCE.md); about
 * half that leaves room for a loaded node. */
static const double slow_write_bytes_per_second = 100e6;

double launcher_kill_delay(void)
{
    if (!getenv("OMPI_MCA_orte_launch")) return -1.0; /* only ORTE's daemons start ranks with it */
    const char *set = getenv("OMPI_MCA_odls_base_sigkill_timeout"); /* mpirun --mca puts it there */
    if (!set || !*set) return 1.0;                                    /* Open MPI 4's default */
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
