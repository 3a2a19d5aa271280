#!/bin/bash
# One call on the GPU host (nvidia-h100-x1): the CG benchmark (bench --cg at
# 512^3 double, twice) and the device time of the reduction's second stage
# (ncu). Logs under $OUT.
source tools/gpu_setup.sh
B=build-gpu/heatsolve
for i in 1 2; do $B bench --cg --size 512 --reps 10 2>&1 | tail -6; done | tee "$OUT/bench_cg_512.txt"
ncu --kernel-name regex:"brick_sums|cg_apply" --launch-skip 20 --launch-count 4 --metrics gpu__time_duration.sum \
  $B bench --cg --size 512 --reps 2 > "$OUT/ncu.txt" 2>&1
grep -E "^  [a-z].*\(|gpu__time" "$OUT/ncu.txt" | sed 's/(const double2.*//; s/(T1 \*.*//' | head -20
