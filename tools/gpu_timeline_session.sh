#!/bin/bash
# One call on the GPU host (issue 17): where a short GPU run's wall time goes
# outside what its summary reports (start-up, loop): the time to its first
# line (process start, configuration), and from its last line to its exit
# (releasing buffers, the CUDA context). Each output line is stamped as it
# arrives (stdout line-buffered). Logs under $OUT.
#   bash tools/gpu_timeline_session.sh [ROUNDS]   this tree; with build-old-src (carried: `git archive
#       REV | tar -x -C build-old-src`) also that one, alternated round by round
source tools/gpu_setup.sh
rounds=${1:-3}
builds=(build-gpu)
if [ -d build-old-src ]; then
  cmake -S build-old-src -B build-old -G Ninja -DHEATSOLVE_GPU=nvidia -DHEATSOLVE_TESTS=OFF > "$OUT/old_configure.log" 2>&1 &&
    cmake --build build-old -j 16 > "$OUT/old_build.log" 2>&1 || { tail -20 "$OUT/old_build.log"; exit 1; }
  builds=(build-old build-gpu)
fi
nvcc -O2 tools/probes/gpu_startup.cu -o "$OUT/gpu_startup" && for i in 1 2 3; do "$OUT/gpu_startup"; done | tee "$OUT/startup.txt"
stamp() { while IFS= read -r line; do printf '%s %s\n' "$(date +%s.%N)" "$line"; done; }
timeline() {
  local build=$1 t0 t1
  shift
  rm -rf /tmp/run
  t0=$(date +%s.%N)
  stdbuf -oL $build/heatsolve "$@" --set 'output.dir="/tmp/run"' 2>&1 | stamp > /tmp/timeline.txt
  t1=$(date +%s.%N)
  echo "== $build $*" | tee -a "$OUT/timeline.txt"
  awk -v t0="$t0" '{printf "%6.3f %s\n", $1 - t0, substr($0, index($0, " ") + 1)}' /tmp/timeline.txt |
    grep -E "^ *[0-9.]+ (heatsolve [0-9]|backend|summary|start-up|checkpoints|history)" | tee -a "$OUT/timeline.txt"
  awk -v t0="$t0" -v t1="$t1" 'END { printf "%6.3f exit, %.3f s after the last line\n", t1 - t0, t1 - $1 }' \
    /tmp/timeline.txt | tee -a "$OUT/timeline.txt"
}
for build in "${builds[@]}"; do
  for i in 1 2 3; do /usr/bin/time -f "$build --version: wall %e s" $build/heatsolve --version > /dev/null; done 2>&1 |
    tee -a "$OUT/timeline.txt"
done
timeline build-gpu inputs/letters.cfg --backend hip --set output.every=0 > /dev/null # the kernel choice into the tuning cache
for i in $(seq "$rounds"); do
  for build in "${builds[@]}"; do
    timeline $build inputs/letters.cfg --backend hip
    timeline $build inputs/letters.cfg --backend hip --set output.every=0 --set time.steps=1
  done
done
true
