#!/bin/bash
# Two calls on the 16-core GPU host (nvidia-h100-x1), each well inside the
# 10-minute limit; logs under $OUT.
#   bash tools/gpu_startup_session.sh letters   the current tree against an earlier one (its source
#       in build-old-src, carried: `git archive REV | tar -x -C build-old-src`), runs alternated,
#       for the letters runs whose wall time issue 17 targets, and the GPU tests
#   bash tools/gpu_startup_session.sh cpu       the CPU backend's benchmark on the host's cores
#       (issue 16) and under mpirun, 2 ranks of 8 threads (issue 14)
#   bash tools/gpu_startup_session.sh io        the current tree against an earlier one, alternated:
#       `bench --io` at 512^3 and at the demo's grid, the default demo and 512^3 with a checkpoint
#       every 100 steps (issue 17)
#   bash tools/gpu_startup_session.sh writes    one checkpoint write at a time against several
#       (output.writes_in_flight = 1, automatic, and 2 or 4), alternated in one build: the default
#       demo and 512^3 with a checkpoint every 100 steps (issue 17), then the GPU tests
part=${1:-letters}
source tools/gpu_setup.sh
echo "cores: $(nproc); $(lscpu | grep 'Model name')" | tee "$OUT/host.txt"

build_old() {
  if [ -d build-old-src ]; then
    cmake -S build-old-src -B build-old -G Ninja -DHEATSOLVE_GPU=nvidia -DHEATSOLVE_TESTS=OFF > "$OUT/old_configure.log" 2>&1 &&
      cmake --build build-old -j 16 > "$OUT/old_build.log" 2>&1 || { tail -20 "$OUT/old_build.log"; exit 1; }
  fi
}

summary() { grep -E "^(summary|start-up|checkpoints)|wall" | sed "s|^|[$1] |" | tee -a "$OUT/runs.txt"; }
run1() { local bin=$1; shift; rm -rf /tmp/run; /usr/bin/time -f "  wall %e s" $bin/heatsolve inputs/letters.cfg \
  --backend hip --set 'output.dir="/tmp/run"' "$@" 2>&1 | summary "$bin $*"; }

io() {
  build_old
  mkdir -p /tmp/io
  run1 build-gpu --set output.every=0 > /dev/null # the kernel choice into the tuning cache
  for i in 1 2 3; do
    for bin in build-old build-gpu; do
      for size in 512 320,160,64; do
        echo "[$bin --size $size]"
        $bin/heatsolve bench --io --size $size --io-dir /tmp/io | grep -E "whole|of which|fsync bandwidth|floor"
      done
      run1 $bin
    done
  done
  for i in 1 2; do
    for bin in build-old build-gpu; do
      run1 $bin --set grid.n=[512,512,512] --set time.steps=1000 --set output.png=false --set output.every=100
    done
  done
}

letters() {
  build_old
  ctest --test-dir build-gpu -L gpu --output-on-failure --timeout 300 > "$OUT/ctest_gpu.log" 2>&1
  grep -E "tests passed|Failed|\*\*\*" "$OUT/ctest_gpu.log" | head -20
  local L512="--set grid.n=[512,512,512] --set time.steps=1000 --set output.png=false"
  run1 build-gpu --set output.every=0 > /dev/null # the kernel choice into the tuning cache
  for i in 1 2 3; do
    for bin in build-old build-gpu; do
      [ -x $bin/heatsolve ] || continue
      run1 $bin $L512 --set output.every=0 --set output.frame_every=100
      run1 $bin $L512 --set output.every=100
      run1 $bin
    done
  done
}

writes() {
  local L512="--set grid.n=[512,512,512] --set time.steps=1000 --set output.png=false --set output.every=100"
  run1 build-gpu --set output.every=0 > /dev/null # the kernel choice into the tuning cache
  for i in 1 2 3 4; do
    for k in 1 0; do run1 build-gpu --set output.writes_in_flight=$k; done
  done
  for i in 1 2; do
    for k in 1 0 4; do run1 build-gpu $L512 --set output.writes_in_flight=$k; done
  done
  ctest --test-dir build-gpu -L gpu --output-on-failure --timeout 300 > "$OUT/ctest_gpu.log" 2>&1
  grep -E "tests passed|Failed|\*\*\*" "$OUT/ctest_gpu.log" | head -20
}

cpu() {
  bash tools/cpu_bench.sh build-gpu/heatsolve
  # The benchmark compares blocks exchanging before the update, beside it, and not at all.
  source tools/gpu_mpi_setup.sh
  for i in 1 2; do
    mpirun --oversubscribe --map-by socket:PE=8 --bind-to core -x OMP_NUM_THREADS=8 -np 2 $M bench --backend cpu \
      --size 512 --reps 10 2>&1 | tail -5 | tee -a "$OUT/cpu_mpi.txt"
  done
}

$part
true
