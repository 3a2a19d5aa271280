#!/bin/bash
# One call on the GPU machine for checkpoints at disk speed (issue 17) and the
# run-safety work (issue 18): build, the gpu tests, the output tests, bench
# --io, and the wall time of letters runs with periodic output.
# usage (from the project root): bash tools/gpu_output_session.sh
source tools/gpu_setup.sh
echo "cores: $(nproc); $(df -h /tmp | tail -1)" | tee "$OUT/host.txt"
grep -E "deflate engine|Python for the tests" "$OUT/configure.log" | tee -a "$OUT/host.txt"
ctest --test-dir build-gpu -L gpu --output-on-failure --timeout 600 > "$OUT/ctest_gpu.log" 2>&1
grep -E "tests passed|Failed|\*\*\*" "$OUT/ctest_gpu.log" | head -20
ctest --test-dir build-gpu -j 8 -R "frames|restart_bitwise_double|storage|ownership|signals|sighup|sigusr1|console|file_size|roundtrip|missing_h5py" \
  --timeout 600 > "$OUT/ctest_io.log" 2>&1
grep -E "tests passed|Failed|\*\*\*" "$OUT/ctest_io.log" | head -20
B=build-gpu/heatsolve
for args in "--size 512" "--size 512 --level 0" "--size 512 --precision float"; do
  $B bench --io $args --io-dir /tmp --json "$OUT/bench_io_$(echo $args | tr -d ' -').json" | tee -a "$OUT/bench_io.txt"
done
run() { rm -rf /tmp/run; /usr/bin/time -f "  wall %e s" $B inputs/letters.cfg --backend hip --set 'output.dir="/tmp/run"' \
  --set output.png=false "$@" 2>&1 | grep -E "^(summary|checkpoints)|wall" | sed "s|^|[$*] |" | tee -a "$OUT/runs.txt"; }
L512="--set grid.n=[512,512,512] --set time.steps=1000"
run $L512 --set output.every=100
run $L512 --set output.every=0
run $L512 --set output.every=0 --set output.frame_every=100
run
run --set output.png=true
true
