#!/bin/bash
# One call on the 16-core GPU host (nvidia-h100-x1 or nvidia-h200): the GPU
# tests under compute-sanitizer (the snapshot's copy stream), the CPU
# backend's benchmark with its default pinning and unpinned (issue 16), and
# the letters runs with periodic output (issue 17). Logs under $OUT.
source tools/gpu_setup.sh
echo "cores: $(nproc); $(lscpu | grep 'Model name')" | tee "$OUT/host.txt"
ctest --test-dir build-gpu -L gpu --output-on-failure --timeout 300 > "$OUT/ctest_gpu.log" 2>&1
grep -E "tests passed|Failed|\*\*\*" "$OUT/ctest_gpu.log" | head -20
B=build-gpu/heatsolve
for size in 256 512; do
  for prec in double float; do
    $B bench --backend cpu --size $size --precision $prec --reps 10 --json "$OUT/cpu_${size}_$prec.json" 2>&1 \
      | grep -E "OpenMP|copy bandwidth|<- production|^production" | sed "s|^|[$size $prec pinned] |" | tee -a "$OUT/cpu.txt"
  done
  OMP_PROC_BIND=false $B bench --backend cpu --size $size --reps 10 2>&1 \
    | grep -E "OpenMP|copy bandwidth|<- production" | sed "s|^|[$size double OMP_PROC_BIND=false] |" | tee -a "$OUT/cpu.txt"
done
$B bench --cg --backend cpu --size 256 --reps 5 2>&1 | tail -12 | tee -a "$OUT/cpu.txt"
summary() { grep -E "^(summary|checkpoints)|wall" | sed "s|^|[$1] |" | tee -a "$OUT/runs.txt"; }
run1() { rm -rf /tmp/run; /usr/bin/time -f "  wall %e s" $B inputs/letters.cfg --backend hip \
  --set 'output.dir="/tmp/run"' --set output.png=false "$@" 2>&1 | summary "$*"; }
L512="--set grid.n=[512,512,512] --set time.steps=1000"
for i in 1 2; do
  run1 $L512 --set output.every=100
  run1 $L512 --set output.every=0 --set output.frame_every=100
  run1 --set output.png=true
done
$B bench --io --size 512 --io-dir /tmp --json "$OUT/bench_io_512.json" | tee -a "$OUT/bench_io.txt"
true
