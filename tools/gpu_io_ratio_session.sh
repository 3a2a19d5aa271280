#!/bin/bash
# One call on a GPU machine (issue 17): checkpoint files against the chunks the
# compression stage makes, before and after ISA-L's stream was zeroed (stack
# garbage in hist_bits had shrunk the window on some writer threads). BASE is
# the earlier source tree (carried), built without a GPU: bench --io needs none.
#   bash tools/gpu_io_ratio_session.sh BASE [TESTS]     logs under $OUT
source tools/gpu_setup.sh
base=$1
cmake -S "$base" -B "$base/build" -G Ninja -DHEATSOLVE_TESTS=OFF > "$OUT/base_configure.log" 2>&1 \
  && cmake --build "$base/build" -j 16 > "$OUT/base_build.log" 2>&1 || { tail -20 "$OUT/base_build.log"; exit 1; }
for round in 1 2; do
  for tag in before after; do
    build=build-gpu; [ $tag = before ] && build="$base/build"
    for size in 256 512; do
      log="$OUT/io_${tag}_${size}_$round.txt"
      $build/heatsolve bench --io --size $size --io-dir /tmp > "$log" 2>&1
      echo "== $tag, $size^3, round $round"; grep -E "compression stage|whole checkpoint|its file" "$log"
    done
  done
done
if [ -n "${2:-}" ]; then
  source tools/gpu_mpi_setup.sh
  timeout 300 ctest --test-dir build-gpu -R "$2" --output-on-failure -V > "$OUT/ctest.log" 2>&1
  grep -E "tests passed|Failed|\*\*\*|Skipped|^[0-9]+: (nccl|auto|mpi|host)" "$OUT/ctest.log" | head -20
fi
true
