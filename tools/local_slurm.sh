#!/bin/bash
# A one-node Slurm on this Debian 12 machine; run (as root) before ctest to exercise mpi_slurm_srun.
# A one-node Slurm cluster on this Debian 12 machine (as root), for the test
# mpi_slurm_srun, which skips without one: installs slurmctld, slurmd, the
# client and munge, writes a minimal slurm.conf for this host's cores, and
# starts munged, slurmctld and slurmd. Stop them with: pkill slurmd; pkill slurmctld.
set -euo pipefail
DEBIAN_FRONTEND=noninteractive apt-get install -y -q slurmctld slurmd slurm-client munge >/dev/null
source "$(dirname "$0")/slurm_conf.sh"
write_slurm_conf 0
start_munge
pgrep -x slurmctld >/dev/null || slurmctld
pgrep -x slurmd >/dev/null || slurmd
for _ in $(seq 1 20); do sinfo -h -o %a 2>/dev/null | grep -q up && break; sleep 0.5; done
sinfo
