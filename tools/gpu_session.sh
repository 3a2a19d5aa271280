#!/bin/bash
# One call on the GPU machine: build the NVIDIA backend, run the gpu test
# suite and the whole suite, then the benchmarks. Logs go to $OUT (or ./gpu-out).
# usage (from the project root): bash tools/gpu_session.sh [quick]
source tools/gpu_setup.sh
grep -E "registers|spill" "$OUT/build.log" | grep -E "heat_tiled_ntIdLi(4|8)|heat_zwindowIdLi(2|4)" -A1 | head -8
ctest --test-dir build-gpu -L gpu --output-on-failure --timeout 900 > "$OUT/ctest_gpu.log" 2>&1
grep -E "Test +#|tests passed|relative difference|bitwise|ERROR SUMMARY|max \|" "$OUT/ctest_gpu.log" | head -70
grep -q "tests failed" "$OUT/ctest_gpu.log" && ctest --test-dir build-gpu -L gpu --rerun-failed --output-on-failure 2>&1 | grep -v "^$" | tail -60
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for tool in memcheck racecheck; do
  "$CS" --tool $tool --error-exitcode 99 build-gpu/tests/test_gpu_vs_cpu > "$OUT/sanitizer_$tool.log" 2>&1
  echo "compute-sanitizer $tool test_gpu_vs_cpu: exit $? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/sanitizer_$tool.log")"
done
[ "${1:-}" = final ] || ctest --test-dir build-gpu -LE "gpu|sanitize|fuzz|paraview" -j 8 --timeout 900 > "$OUT/ctest_all.log" 2>&1
grep -E "tests passed|Failed|\*\*\*" "$OUT/ctest_all.log" | head
B=build-gpu/heatsolve
$B bench --size 512 --json "$OUT/bench_512_double.json" | tee "$OUT/bench_512_double.txt" | tail -25
[ "${1:-}" = quick ] && exit 0
$B bench --size 512 --precision float --json "$OUT/bench_512_float.json" > "$OUT/bench_512_float.txt"
$B bench --size 1024 --json "$OUT/bench_1024_double.json" > "$OUT/bench_1024_double.txt"
$B bench --size 1024 --precision float --json "$OUT/bench_1024_float.json" > "$OUT/bench_1024_float.txt"
grep -E "copy|production" "$OUT"/bench_*.txt
$B bench --io --size 256 --io-dir /tmp | tee "$OUT/bench_io.txt"
# Checkpoint cost in a GPU letters run: every 50 steps against first and final only.
for every in 0 50; do
  rm -rf /tmp/lw; start=$(date +%s.%N)
  $B inputs/letters.cfg -q --backend hip --set 'output.dir="/tmp/lw"' --set output.png=false --set output.every=$every
  echo "letters on the GPU, output.every=$every: $(echo "$(date +%s.%N) - $start" | bc) s" | tee -a "$OUT/letters_gpu.txt"
done
[ "${1:-}" = final ] && { (cd "$OUT" && tar czf logs.tar.gz --remove-files *.txt *.log 2>/dev/null); exit 0; }
# Nsight Compute evidence for the best kernels (clocks left alone).
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
if [ -n "$NCU" ]; then
  M=dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,lts__t_sector_hit_rate.pct,launch__occupancy_limit_registers
  for k in "heat_tiled_nt 4 128,2,1" "heat_tiled_ntf 4 128,2,1" "heat_zwindowf32 1 64,4,1"; do
    set -- $k
    "$NCU" --clock-control none --metrics $M -k regex:"heat_(tiled_nt|zwindow)" --launch-skip 4 --launch-count 1 \
      $B inputs/letters.cfg -q --backend hip --set 'grid.n=[512,512,512]' --set time.steps=8 --set output.every=0 \
      --set 'output.dir="/tmp/ncu"' --set "solver.kernel=\"$1\"" --set solver.tile=$2 --set "solver.block=[$3]" \
      2>&1 | grep -E "heat_|dram__|gpu__time|sm__warps|registers|lts__" | sed "s/^/[$1 m=$2] /" | tee -a "$OUT/ncu.txt"
  done
fi
(cd "$OUT" && tar czf logs.tar.gz --remove-files *.txt *.log 2>/dev/null; ls "$OUT")
