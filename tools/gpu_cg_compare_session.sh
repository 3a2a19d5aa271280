#!/bin/bash
# Two calls on a GPU machine (session 17): the CG iteration with the x update
# moved into the direction pass, against BASE, an earlier source tree (carried).
#   bash tools/gpu_cg_compare_session.sh build BASE   builds both, runs ctest -L gpu
#   bash tools/gpu_cg_compare_session.sh measure BASE the same fields (h5py, bit for bit),
#                                                    then bench --cg alternated
# Logs under $OUT.
source tools/gpu_setup.sh
phase=$1 base=$2
# Not inside BASE: a carried path is replaced on every call, an ignored build folder is kept.
base_build=build-base-gpu
if [ "$phase" = build ] || [ ! -x $base_build/heatsolve ]; then
  cmake -S "$base" -B $base_build -G Ninja -DHEATSOLVE_GPU=nvidia -DHEATSOLVE_TESTS=OFF > "$OUT/base_configure.log" 2>&1 \
    && cmake --build $base_build -j 16 > "$OUT/base_build.log" 2>&1 || { tail -20 "$OUT/base_build.log"; exit 1; }
fi
if [ "$phase" = build ]; then
  timeout 400 ctest --test-dir build-gpu -L gpu --output-on-failure > "$OUT/ctest_gpu.log" 2>&1
  grep -E "tests passed|Failed|\*\*\*" "$OUT/ctest_gpu.log" | head -30
  exit 0
fi
# Crank-Nicolson on the GPU, each preconditioner and precision, by both builds.
for pc in jacobi chebyshev none; do
  for prec in double float; do
    for tag in before after; do
      build=build-gpu; [ $tag = before ] && build=$base_build
      $build/heatsolve inputs/letters.cfg -q --backend hip --set 'grid.n=[96,64,48]' --set 'time.scheme="crank_nicolson"' \
        --set time.steps=12 --set time.dt=0.001 --set "solver.preconditioner=\"$pc\"" --set "solver.precision=\"$prec\"" \
        --set output.every=0 --set "output.dir=\"/tmp/cg_$tag-$pc-$prec\"" > "$OUT/run_$tag-$pc-$prec.txt" 2>&1
    done
    $PY - "$pc" "$prec" <<'PYEOF'
import glob, sys, h5py, numpy as np
pc, prec = sys.argv[1:3]
read = lambda tag: h5py.File(glob.glob(f"/tmp/cg_{tag}-{pc}-{prec}/*_000012.hdf")[0])["VTKHDF/PointData/temperature"][...]
a, b = read("before"), read("after")
same = a.tobytes() == b.tobytes()
print(f"{pc} {prec}: {'the same bits' if same else 'DIFFERENT, largest difference %g' % np.max(np.abs(a - b))}")
PYEOF
  done
done
# bench --cg by both builds, alternated: alternate LABEL ROUNDS BENCH_ARGS...
alternate() {
  local label=$1 rounds=$2; shift 2
  for round in $(seq "$rounds"); do
    for tag in before after; do
      build=build-gpu; [ $tag = before ] && build=$base_build
      log="$OUT/cg_${label}_${tag}_$round.txt"
      $build/heatsolve bench --cg "$@" > "$log" 2>&1
      echo "== $label $tag round $round: $(grep -E "copy bandwidth" "$log" | grep -oE "[0-9.]+ GB/s")"; grep -E "iteration" "$log"
    done
  done
}
alternate gpu 3 --backend hip --size 512 --reps 20
alternate cpu 2 --backend cpu --size 256 --reps 10
true
