#!/bin/bash
# The GPU machine's checks and measurements, one mode a call; run from the project root on the GPU machine.
#
#   bash tools/gpu.sh test        build the NVIDIA backend (and its MPI twin), ctest -L "gpu|mpi"
#   bash tools/gpu.sh bench       heatsolve bench at 512^3 and 1024^3, double and float; bench --cg, --io
#   bash tools/gpu.sh scaling     mpirun on 1, 2, 4 and every GPU (a rank a GPU): strong and weak scaling
#   bash tools/gpu.sh slurm       a one-node Slurm with the GPUs as gres, the srun test and the demo by srun
#   bash tools/gpu.sh transports  the mpi tests and the halo transports under a GPU-aware Open MPI
#
# Logs and JSON go to $OUT (default ./gpu-out). The machine has no package registry: what it lacks
# comes carried in ignored folders, prepared on the development machine:
#   .device-deps/env.sh   sourced when present (the GPU machine's libraries and PATH)
#   .slurm-debs/          Debian's Slurm packages, for `slurm` (tools/stage_slurm.sh)
#   .cuda-mpi/            a CUDA-aware Open MPI, for `transports` (tools/cuda_mpi_build.sh)
# Every run and test is bounded by a timeout, so no mode hangs the machine.
set -uo pipefail
mode=${1:-}
case $mode in test | bench | scaling | slurm | transports) ;; *) sed -n '2,9p' "$0"; exit 2 ;; esac

OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
[ -f .device-deps/env.sh ] && source .device-deps/env.sh
# The tests need h5py: the GPU machines have it in /opt/torch/.venv.
PY=$(command -v python3)
[ -x /opt/torch/.venv/bin/python3 ] && PY=/opt/torch/.venv/bin/python3
export HEATSOLVE_TUNING_CACHE=${HEATSOLVE_TUNING_CACHE:-/tmp/heatsolve-tuning.txt}
# mpirun runs as root there; NVLink multicast (NVLS) stays off, as the machines ask of NCCL jobs.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 NCCL_NVLS_ENABLE=0
gpus=$(nvidia-smi -L | wc -l)
cores=$(nproc)
B=build-gpu/heatsolve
M=build-gpu/mpi-build/heatsolve
# A rank a GPU, its share of the cores as OpenMP threads, no binding (mpirun binds a rank to one core
# by default, which its compression threads would then share).
mpirun_ranks() { # SECONDS RANKS ARGS...
  local seconds=$1 ranks=$2; shift 2
  timeout "$seconds" mpirun --oversubscribe --bind-to none -np "$ranks" -x NCCL_NVLS_ENABLE -x HEATSOLVE_TUNING_CACHE \
    -x OMP_NUM_THREADS=$((cores / ranks)) "$@"
}

if [ "$mode" = transports ]; then # the CUDA-aware Open MPI first on the PATH, for configure and mpirun
  tar -xzf .cuda-mpi/cuda-mpi.tar.gz -C /opt || { echo "no .cuda-mpi/cuda-mpi.tar.gz: run tools/cuda_mpi_build.sh"; exit 1; }
  export PATH=/opt/cuda-mpi/bin:$PATH
fi

nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,clocks.max.mem --format=csv | tee "$OUT/gpu.txt"
cmake -S . -B build-gpu -G Ninja -DHEATSOLVE_GPU=nvidia -DHEATSOLVE_PYTHON="$PY" > "$OUT/configure.log" 2>&1 ||
  { tail -30 "$OUT/configure.log"; exit 1; }
cmake --build build-gpu -j "$cores" > "$OUT/build.log" 2>&1 || { grep -E "error" -A3 "$OUT/build.log" | head -40; exit 1; }
if [ "$mode" != bench ]; then
  bash tests/mpi_build.sh "$PWD" "$PWD/build-gpu/mpi-build" nvidia > "$OUT/mpi_build.log" 2>&1 ||
    { tail -20 "$OUT/mpi_build.log"; exit 1; }
fi

run_tests() {
  timeout 420 ctest --test-dir build-gpu -L "gpu|mpi" --output-on-failure --timeout 300 > "$OUT/ctest.log" 2>&1
  grep -E "tests passed|Failed|\*\*\*|Skipped" "$OUT/ctest.log" | head -40
}

run_bench() {
  for size in 512 1024; do
    for precision in double float; do
      timeout 120 $B bench --size $size --precision $precision --json "$OUT/bench_${size}_$precision.json" \
        > "$OUT/bench_${size}_$precision.txt" 2>&1
      grep -E "copy bandwidth|^production|<- production" "$OUT/bench_${size}_$precision.txt" | sed "s/^/[$size $precision] /"
    done
  done
  timeout 120 $B bench --cg --size 512 2>&1 | tee "$OUT/bench_cg_512.txt" | tail -12
  timeout 120 $B bench --io --size 512 --io-dir /tmp --json "$OUT/bench_io_512.json" 2>&1 | tee "$OUT/bench_io_512.txt"
}

run_scaling() {
  nvidia-smi topo -m > "$OUT/topo.txt" 2>&1
  timeout 120 $B bench --size 512 --json "$OUT/scaling_1x512.json" > "$OUT/scaling_1x512.txt" 2>&1
  grep -E "^production|<- production" "$OUT/scaling_1x512.txt" | sed "s/^/[1 rank 512] /"
  local ranks
  for ranks in $(printf '%s\n' 2 4 "$gpus" | sort -nu); do
    [ "$ranks" -le "$gpus" ] && [ "$ranks" -ge 2 ] || continue
    for size in 512 1024; do # each run times strong (size^3 split) and weak (size^3 a rank) against one rank
      mpirun_ranks 300 "$ranks" $M bench --size $size --reps 7 --json "$OUT/scaling_${ranks}x$size.json" \
        > "$OUT/scaling_${ranks}x$size.txt" 2>&1
      echo "== $ranks ranks, $size^3"; tail -12 "$OUT/scaling_${ranks}x$size.txt"
    done
  done
}

# Debian's Slurm on the GPU machine's Ubuntu, unpacked apart (dpkg -x into / would replace Ubuntu's /lib
# symlink with a directory), programs and plugins linked where Debian built them to look; PMIx 4, Lua
# and libdbus, which Ubuntu has in other versions or not, stay in /opt/slurm-libs.
start_slurm() {
  local f b libs=/opt/slurm-libs/usr/lib/x86_64-linux-gnu pmix=/usr/lib/x86_64-linux-gnu/pmix2/lib
  ls .slurm-debs/*.deb > /dev/null 2>&1 || { echo "no .slurm-debs: run tools/stage_slurm.sh"; return 1; }
  for f in .slurm-debs/*.deb; do
    case $f in *libpmix2* | *liblua* | *libdbus*) dpkg -x "$f" /opt/slurm-libs ;; *) dpkg -x "$f" /opt/slurm-root ;; esac
  done
  for f in /opt/slurm-root/usr/sbin/* /opt/slurm-root/usr/bin/*; do ln -sf "$f" "${f#/opt/slurm-root}"; done
  ln -sfn /opt/slurm-root/usr/lib/x86_64-linux-gnu/slurm-wlm /usr/lib/x86_64-linux-gnu/slurm-wlm
  for b in slurmd slurmctld slurmstepd; do ln -sf /usr/sbin/$b-wlm /usr/sbin/$b; done
  # The PMIx plugin dlopens libpmix.so from Debian's path and wants major version 4; Ubuntu's PMIx 5
  # keeps libpmix.so.2, which its Open MPI (the ranks) links.
  mkdir -p $pmix && ln -sf $libs/pmix2/lib/libpmix.so.2.6.2 $pmix/libpmix.so
  source tools/slurm_conf.sh
  start_munge || { echo "munged did not start"; return 1; }
  write_slurm_conf "$gpus"
  # No systemd or dbus there: slurmd makes its cgroup scope itself.
  printf 'CgroupPlugin=cgroup/v2\nIgnoreSystemd=yes\n' > /etc/slurm/cgroup.conf
  mkdir -p /sys/fs/cgroup/system.slice
  pgrep -x slurmctld > /dev/null || slurmctld || echo "slurmctld exit $?"
  # Debian's libdbus and PMIx 4's components for slurmd and its slurmstepd only, not for the tasks.
  pgrep -x slurmd > /dev/null || LD_LIBRARY_PATH=$libs:/opt/slurm-libs/lib/x86_64-linux-gnu \
    PMIX_MCA_mca_base_component_path=$libs/pmix2/lib/pmix slurmd || echo "slurmd exit $?"
  for _ in $(seq 1 40); do sinfo -h -N -o %T 2> /dev/null | grep -qE "idle|mix|alloc" && break; sleep 0.5; done
  sinfo -N -o "%N %T %G" 2>&1 | tee "$OUT/sinfo.txt"
  sinfo -h -N -o %T 2> /dev/null | grep -qE "idle|mix|alloc" ||
    { echo "the node did not come up:"; tail -n 15 /var/log/slurm/slurmd.log /var/log/slurm/slurmctld.log; return 1; }
}

# The README's srun lines: a rank a GPU through the gres, then two ranks sharing the first GPU, against
# one process: the final fields must be the same bits.
run_slurm() {
  trap 'cat /var/log/slurm/*.log > "$OUT/slurm.log" 2> /dev/null' EXIT
  start_slurm || exit 1
  timeout 200 ctest --test-dir build-gpu -R mpi_slurm_srun --output-on-failure -V > "$OUT/ctest_slurm.log" 2>&1
  grep -E "tests passed|Failed|\*\*\*|Skipped" "$OUT/ctest_slurm.log" | head
  local demo="inputs/letters.cfg --set output.png=false --overwrite"
  timeout 120 srun --mpi=pmix --ntasks-per-node="$gpus" --gpus-per-node="$gpus" --gpus-per-task=1 \
    --cpus-per-task=$((cores / gpus)) $M $demo --set 'output.dir="/tmp/srun-gpus"' > "$OUT/srun-gpus.txt" 2>&1
  echo "srun, a rank a GPU: exit $?"
  # Each task sees its own GPU alone: the ranks must still go GPU to GPU (they compare PCI addresses,
  # and CUDA IPC maps memory of GPUs a process does not see).
  grep -E "halos:" "$OUT/srun-gpus.txt" | grep -qE "NCCL|copy engines" &&
    echo "srun, a rank a GPU: halos $(grep -E 'halos:' "$OUT/srun-gpus.txt" | sed 's/.*halos: //')" ||
    echo "srun, a rank a GPU: NOT GPU to GPU: $(grep -E 'halos:' "$OUT/srun-gpus.txt")"
  timeout 120 srun --mpi=pmix -n 2 --gpus=1 --cpus-per-task=$((cores / 2)) $M $demo \
    --set 'output.dir="/tmp/srun-shared"' > "$OUT/srun-shared.txt" 2>&1
  echo "srun, two ranks on one GPU: exit $?"
  timeout 120 $B $demo -q --set 'output.dir="/tmp/one-gpu"'
  "$PY" - << 'PY'
import h5py, numpy as np
def bits(run):
    return h5py.File(f"/tmp/{run}/letters_000800.hdf")["VTKHDF/PointData/temperature"][...].view(np.uint64)
for run in ("srun-gpus", "srun-shared"):
    print(f"{run}: step 800 against one process:", "bitwise equal" if np.array_equal(bits(run), bits("one-gpu")) else "DIFFERENT")
PY
}

# Two ranks share the GPU, so that device buffers go through MPI: the mpi tests (the transports test
# among them), then a 512^3 run with each transport, reporting the exchange's cost.
run_transports() {
  ompi_info --parsable --all 2> /dev/null | grep -E "mpi_built_with_cuda_support:value|ompi:version:full" | tee "$OUT/cuda_aware.txt"
  timeout 420 ctest --test-dir build-gpu -L mpi --output-on-failure > "$OUT/ctest_mpi.log" 2>&1
  grep -E "tests passed|Failed|\*\*\*|Skipped" "$OUT/ctest_mpi.log" | head -30
  local transport run="inputs/letters.cfg --set grid.n=[512,512,512] --set time.steps=300 --set output.every=0 --set output.png=false"
  for transport in host mpi; do
    mpirun_ranks 120 2 $M $run --set "parallel.transport=\"$transport\"" --set "output.dir=\"/tmp/tr_$transport\"" \
      --overwrite > "$OUT/transport_$transport.txt" 2>&1
    echo "$transport: $(grep -E 'halos:' "$OUT/transport_$transport.txt" | sed 's/.*halos: //')"
    grep -E "^summary:" "$OUT/transport_$transport.txt"
  done
}

case $mode in
  test) run_tests ;;
  bench) run_bench ;;
  scaling) run_scaling ;;
  slurm) run_slurm ;;
  transports) run_transports ;;
esac
