#!/bin/bash
# One call on the GPU host (issue 17): where a short GPU run's wall time goes
# outside what its summary reports (start-up, loop): the time to its first
# line (process start, configuration), and from its last line to its exit
# (releasing buffers, the CUDA context). Each output line is stamped as it
# arrives (stdout line-buffered). Logs under $OUT.
source tools/gpu_setup.sh
B=build-gpu/heatsolve
nvcc -O2 tools/probes/gpu_startup.cu -o "$OUT/gpu_startup" && for i in 1 2 3; do "$OUT/gpu_startup"; done | tee "$OUT/startup.txt"
stamp() { while IFS= read -r line; do printf '%s %s\n' "$(date +%s.%N)" "$line"; done; }
timeline() {
  rm -rf /tmp/run
  local t0 t1
  t0=$(date +%s.%N)
  stdbuf -oL $B "$@" --set 'output.dir="/tmp/run"' 2>&1 | stamp > /tmp/timeline.txt
  t1=$(date +%s.%N)
  echo "== $*" | tee -a "$OUT/timeline.txt"
  awk -v t0="$t0" '{printf "%6.3f %s\n", $1 - t0, substr($0, index($0, " ") + 1)}' /tmp/timeline.txt |
    grep -E "^ *[0-9.]+ (heatsolve [0-9]|backend|summary|start-up|checkpoints|history)" | tee -a "$OUT/timeline.txt"
  awk -v t0="$t0" -v t1="$t1" 'BEGIN { printf "%6.3f exit\n", t1 - t0 }' | tee -a "$OUT/timeline.txt"
}
for i in 1 2 3; do /usr/bin/time -f "--version: wall %e s" $B --version > /dev/null; done 2>&1 | tee -a "$OUT/timeline.txt"
timeline inputs/letters.cfg --backend hip --set output.every=0 > /dev/null # the kernel choice into the tuning cache
for i in 1 2 3; do
  timeline inputs/letters.cfg --backend hip
  timeline inputs/letters.cfg --backend hip --set output.every=0 --set time.steps=1
done
true
