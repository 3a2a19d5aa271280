#!/bin/bash
# One call on the GPU host (issue 17): how long a short GPU run's process
# takes from main's return to its exit, with the context left to the CUDA
# runtime's exit handler (plain) or released beside the last writes (early);
# tools/probes/gpu_teardown.cu. Logs under $OUT.
set -e
nvcc -O2 tools/probes/gpu_teardown.cu -o "$OUT/gpu_teardown"
probe() {
  local t0 line t1
  t0=$(date +%s.%N)
  line=$("$OUT/gpu_teardown" "$@")
  t1=$(date +%s.%N)
  echo "$line" | awk -v t0="$t0" -v t1="$t1" '{ printf "%s | launch to exit %.3f s, main return to exit %.3f s\n", $0, t1 - t0, t1 - $NF }'
}
for i in 1 2 3 4; do
  probe plain 70
  probe early 70
  probe plain 0
  probe early 0
done | tee "$OUT/teardown.txt"
