#!/bin/bash
# Two calls on nvidia-h200-x2 (issues 14 and 17): checkpoints that leave the
# GPU while it steps on, and checkpoints written in parts by several ranks.
#   bash tools/gpu_parts_session.sh tests   build (one process and MPI), ctest -L "gpu|mpi"
#   bash tools/gpu_parts_session.sh bench   letters runs with periodic output on one GPU and on
#                                           two (per-checkpoint time per byte), bench --io
# Logs under $OUT.
source tools/gpu_setup.sh
source tools/gpu_mpi_setup.sh
B=build-gpu/heatsolve

if [ "${1:-}" = tests ]; then
  timeout 560 ctest --test-dir build-gpu -L "gpu|mpi" -E "memcheck|racecheck" --output-on-failure > "$OUT/ctest.log" 2>&1
  grep -E "tests passed|Failed|\*\*\*|Not Run|Skipped" "$OUT/ctest.log" | head -30
  exit 0
fi

summary() { grep -E "^(summary|checkpoints)|wall|rank 0 writes|gathers" | sed "s|^|[$1] |" | tee -a "$OUT/runs.txt"; }
run1() { rm -rf /tmp/run; /usr/bin/time -f "  wall %e s" $B inputs/letters.cfg --backend hip \
  --set 'output.dir="/tmp/run"' --set output.png=false "$@" 2>&1 | summary "1 GPU $*"; }
run2() { rm -rf /tmp/run; /usr/bin/time -f "  wall %e s" $MPIRUN -np 2 $M inputs/letters.cfg \
  --set 'output.dir="/tmp/run"' --set output.png=false "$@" 2>&1 | summary "2 GPUs $*"; }
L512="--set grid.n=[512,512,512] --set time.steps=1000"
for i in 1 2; do
  run1 $L512 --set output.every=100
  run1 $L512 --set output.every=0 --set output.frame_every=100
  run1
  run1 --set output.png=true
done
for i in 1 2; do
  run1 --set grid.n=[512,512,512] --set time.steps=200 --set output.every=100
  run2 --set grid.n=[512,512,1024] --set time.steps=200 --set output.every=100
done
# mpirun's default binding (one core a rank), for comparison
MPIRUN="mpirun --oversubscribe -x NCCL_NVLS_ENABLE -x OMP_NUM_THREADS=16 -x HEATSOLVE_TUNING_CACHE"
run2 --set grid.n=[512,512,1024] --set time.steps=200 --set output.every=100
$B bench --io --size 512 --io-dir /tmp --json "$OUT/bench_io_512.json" | tee -a "$OUT/bench_io.txt"
true
