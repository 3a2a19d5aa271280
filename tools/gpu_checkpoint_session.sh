#!/bin/bash
# One call on the GPU machine for the checkpoint work (issue 3): build, the
# gpu tests, checkpoint throughput, and the wall time that periodic
# checkpoints add to GPU runs. Logs go to $OUT (or ./gpu-out).
# usage (from the project root): bash tools/gpu_checkpoint_session.sh
source tools/gpu_setup.sh
ctest --test-dir build-gpu -L gpu --output-on-failure --timeout 600 > "$OUT/ctest_gpu.log" 2>&1
grep -E "tests passed|Failed|\*\*\*" "$OUT/ctest_gpu.log" | head
ctest --test-dir build-gpu -R "checkpoint|restart|bad_|series|vtkhdf" --timeout 600 > "$OUT/ctest_io.log" 2>&1
grep -E "tests passed|Failed|\*\*\*" "$OUT/ctest_io.log" | head
B=build-gpu/heatsolve
echo "cores: $(nproc)"
for size in 256 320,160,64 640,320,128; do
  $B bench --io --size $size --io-dir /tmp | tee -a "$OUT/bench_io.txt"
done
export HEATSOLVE=$B
# The summary's checkpoint line: write time, snapshot time, time waiting.
summary() { rm -rf /tmp/one; $B inputs/letters.cfg --backend hip --set 'output.dir="/tmp/one"' --set output.png=false "$@" |
  grep -E "^(summary|checkpoints):" | sed "s|^|  [$*] |" | tee -a "$OUT/summaries.txt"; }
# letters 320x160x64 (26 MB a checkpoint; a step about 29 us, a write about 60 ms)
summary --set time.steps=48000 --set output.every=0
summary --set time.steps=48000 --set output.every=3000
bash tools/checkpoint_overhead.sh inputs/letters.cfg 3 12000 6000 4000 3000 2000 -- --backend hip \
  --set time.steps=48000 2>&1 | tee "$OUT/overhead_letters.txt"
# 8x the points (210 MB a checkpoint; a step about 0.34 ms, a write about 0.7 s)
summary --set 'grid.n=[640,320,128]' --set time.steps=12000 --set output.every=0
summary --set 'grid.n=[640,320,128]' --set time.steps=12000 --set output.every=3000
bash tools/checkpoint_overhead.sh inputs/letters.cfg 3 6000 4000 3000 2000 -- --backend hip \
  --set 'grid.n=[640,320,128]' --set time.steps=12000 2>&1 | tee "$OUT/overhead_large.txt"
