#!/bin/bash
# The CPU backend's benchmark set; run on any machine after changing the CPU kernels or to fill docs/PERFORMANCE.md.
# 256^3 and 512^3, double and float, then the CG iteration at 256^3; logs into $OUT/cpu.txt
# (default ./cpu-out) and JSON beside it.
# usage: tools/cpu_bench.sh [HEATSOLVE]   (default build/heatsolve)
B=${1:-build/heatsolve}
OUT=${OUT:-$PWD/cpu-out}
mkdir -p "$OUT"
for size in 256 512; do
  for prec in double float; do
    $B bench --backend cpu --size $size --precision $prec --reps 10 --json "$OUT/cpu_${size}_$prec.json" 2>&1 \
      | grep -E "OpenMP|copy bandwidth|<- production|^production" | sed "s|^|[$size $prec] |" | tee -a "$OUT/cpu.txt"
  done
done
$B bench --cg --backend cpu --size 256 --reps 5 2>&1 | tail -12 | tee -a "$OUT/cpu.txt"
