#!/bin/bash
# One call on the GPU host (issue 17): where the letters demo's wall time goes.
# The CUDA runtime's start-up on its own, then the demo with and without
# periodic output and PNGs. Logs under $OUT.
source tools/gpu_setup.sh
B=build-gpu/heatsolve
nvcc -O2 tools/probes/gpu_startup.cu -o "$OUT/gpu_startup" && for i in 1 2 3; do "$OUT/gpu_startup"; done | tee "$OUT/startup.txt"
summary() { grep -E "^(summary|checkpoints)|wall|tuning|kernel" | sed "s|^|[$1] |" | tee -a "$OUT/runs.txt"; }
run1() { rm -rf /tmp/run; /usr/bin/time -f "  wall %e s user %U sys %S" $B inputs/letters.cfg --backend hip \
  --set 'output.dir="/tmp/run"' "$@" 2>&1 | summary "$*"; }
run1 >/dev/null  # the kernel choice into the tuning cache
for i in 1 2 3; do
  run1
  run1 --set output.png=false
  run1 --set output.every=0
  run1 --set output.every=0 --set time.steps=1
done
$B inputs/letters.cfg --backend hip --set 'output.dir="/tmp/run2"' > "$OUT/demo_output.txt" 2>&1
true
