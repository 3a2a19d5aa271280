#!/bin/bash
# Debian's Slurm packages for `tools/gpu.sh slurm`; run once on the development machine (Debian 12).
# Slurm 22.05, munge and PMIx 4 as .deb files in .slurm-debs/ (ignored by git), to carry to a
# GPU machine, which has no package registry.
set -euo pipefail
root=$(git rev-parse --show-toplevel)
grep -qx '/.slurm-debs/' "$root/.git/info/exclude" 2>/dev/null || echo '/.slurm-debs/' >> "$root/.git/info/exclude"
mkdir -p "$root/.slurm-debs" && cd "$root/.slurm-debs"
apt-get download slurmd slurmctld slurm-client slurm-wlm-basic-plugins munge libpmix2 liblua5.1-0 libdbus-1-3 2>&1 | grep -v '^W:' || true
ls
