#!/bin/bash
# One call on a GPU machine (issue 14): a one-node Slurm with the node's GPUs as
# gres, from Debian 12's packages staged by tools/stage_slurm.sh (.slurm-debs,
# carried; the GPU machines run Ubuntu 24.04, where Debian's binaries run), then
# heatsolve's ranks started by srun on the GPUs: the mpi_slurm_srun test (bits
# against one process, scancel --signal=TERM, restart). Every wait is bounded;
# logs under $OUT (slurmd's and slurmctld's included).
# Session 14, nvidia-h100-x1: the node came up with gpu:1; mpi_slurm_srun passed
# (2 ranks sharing the GPU); the demo by srun with --gpus-per-task=1 (1 rank) and
# with 2 ranks on --gpus=1 (halos through host memory) bitwise equal to one process.
# A rank a GPU on several GPUs waits for a multi-GPU kind.
source tools/gpu_setup.sh
source tools/gpu_mpi_setup.sh
trap 'cat /var/log/slurm/*.log > "$OUT/slurm.log" 2>/dev/null' EXIT
# Unpacked apart (dpkg -x into / would replace Ubuntu's /lib symlink with a
# directory); Slurm's programs, plugins and munge linked where Debian built them
# to look. PMIx 4, Lua and libdbus, which Ubuntu has in other versions or not,
# stay in /opt/slurm-libs.
for f in .slurm-debs/*.deb; do
  case $f in *libpmix2*|*liblua*|*libdbus*) dpkg -x "$f" /opt/slurm-libs ;; *) dpkg -x "$f" /opt/slurm-root ;; esac
done
for f in /opt/slurm-root/usr/sbin/* /opt/slurm-root/usr/bin/*; do ln -sf "$f" "${f#/opt/slurm-root}"; done
ln -sfn /opt/slurm-root/usr/lib/x86_64-linux-gnu/slurm-wlm /usr/lib/x86_64-linux-gnu/slurm-wlm
for d in slurmd slurmctld slurmstepd; do ln -sf /usr/sbin/$d-wlm /usr/sbin/$d; done
libs=/opt/slurm-libs/usr/lib/x86_64-linux-gnu
# The PMIx plugin dlopens libpmix.so from Debian's path and wants major version 4;
# Ubuntu's PMIx 5 keeps libpmix.so.2, which its Open MPI (the ranks) links.
pmix=/usr/lib/x86_64-linux-gnu/pmix2/lib
mkdir -p $pmix && ln -sf $libs/pmix2/lib/libpmix.so.2.6.2 $pmix/libpmix.so
for b in /usr/sbin/slurmd /usr/sbin/slurmctld /usr/sbin/slurmstepd /usr/bin/srun /usr/sbin/munged; do
  missing=$(LD_LIBRARY_PATH=$libs ldd $b 2>&1 | grep "not found")
  [ -n "$missing" ] && echo "$b lacks: $missing"
done
source tools/slurm_conf.sh
start_munge || { echo "munged did not start"; exit 1; }
gpus=$(nvidia-smi -L | wc -l)
write_slurm_conf "$gpus"
# No systemd or dbus on these machines: slurmd makes its cgroup scope itself.
printf 'CgroupPlugin=cgroup/v2\nIgnoreSystemd=yes\n' > /etc/slurm/cgroup.conf
mkdir -p /sys/fs/cgroup/system.slice
pgrep -x slurmctld >/dev/null || slurmctld || echo "slurmctld exit $?"
# Debian's libdbus (cgroup/v2 plugin) and PMIx 4's own components for slurmd and its
# slurmstepd only, not in the tasks' environment.
pgrep -x slurmd >/dev/null || LD_LIBRARY_PATH=$libs:/opt/slurm-libs/lib/x86_64-linux-gnu \
  PMIX_MCA_mca_base_component_path=$libs/pmix2/lib/pmix slurmd || echo "slurmd exit $?"
for _ in $(seq 1 40); do sinfo -h -N -o %T 2>/dev/null | grep -qE "idle|mix|alloc" && break; sleep 0.5; done
sinfo -N -o "%N %T %G" 2>&1 | tee "$OUT/sinfo.txt"
if ! sinfo -h -N -o %T 2>/dev/null | grep -qE "idle|mix|alloc"; then
  echo "the node did not come up:"; tail -n 15 /var/log/slurm/slurmd.log /var/log/slurm/slurmctld.log; exit 1
fi
timeout 30 srun -n "$gpus" --gpus-per-task=1 bash -c 'echo "task $SLURM_PROCID: CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES"' 2>&1
timeout 200 ctest --test-dir build-gpu -R mpi_slurm_srun --output-on-failure -V > "$OUT/ctest.log" 2>&1
grep -E "tests passed|Failed|\*\*\*|Skipped|^[0-9]+: (srun|SIGTERM|scancel|slurm|FAILED)" "$OUT/ctest.log" | head
# The README's GPU line: a rank a GPU through the gres (each task sees one GPU as
# device 0); then two ranks sharing the first GPU; then the same demo in one
# process. The final fields must be the same bits.
export NCCL_NVLS_ENABLE=0
srun_demo() { # NAME SRUN-OPTIONS...
  local name=$1; shift
  timeout 120 srun --mpi=pmix "$@" $M inputs/letters.cfg --set "output.dir=\"/tmp/$name\"" --set output.png=false \
    --overwrite > "$OUT/$name.txt" 2>&1
  echo "srun $*: exit $?"; grep -E "halo|summary|error|backend" "$OUT/$name.txt" | head -8
}
srun_demo srun-gpus --ntasks-per-node="$gpus" --gpus-per-node="$gpus" --gpus-per-task=1 --cpus-per-task=$(( $(nproc) / gpus ))
srun_demo srun-shared -n 2 --gpus=1 --cpus-per-task=$(( $(nproc) / 2 ))
timeout 120 build-gpu/heatsolve inputs/letters.cfg --set 'output.dir="/tmp/one-gpu"' --set output.png=false \
  --overwrite -q
"$PY" - <<'PY'
import h5py, numpy as np
one = h5py.File("/tmp/one-gpu/letters_000800.hdf")["VTKHDF/PointData/temperature"][...].view(np.uint64)
for name in ("srun-gpus", "srun-shared"):
    field = h5py.File(f"/tmp/{name}/letters_000800.hdf")["VTKHDF/PointData/temperature"][...]
    print(f"{name}: step 800 against one process:", "bitwise equal" if np.array_equal(field.view(np.uint64), one) else "DIFFERENT")
PY
true
