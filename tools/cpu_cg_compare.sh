#!/bin/bash
# The CPU backend's implicit solver against BASE, an earlier source tree
# (`git archive START | tar -x -C build-base-src`), on this machine (the
# 2-core VM, or the GPU host's 16 cores with `source tools/gpu_setup.sh`
# first for its libraries and $PY):
#   1. both built CPU-only (build-cpu-base, build-cpu-now: ignored folders);
#   2. Crank-Nicolson with each preconditioner (Chebyshev with its steps two
#      a sweep and one a sweep), double and float, 1 and all threads, by both
#      builds: the fields must be the same bits (h5py);
#   3. heatsolve bench --cg --backend cpu, the two builds alternated;
#   4. with STEP_ROUNDS > 0, heatsolve bench --backend cpu (the production
#      step) at 256^3 and 512^3, alternated too.
# Usage: bash tools/cpu_cg_compare.sh BASE [ROUNDS_256 [ROUNDS_512 [STEP_ROUNDS]]]. Logs under $OUT.
set -uo pipefail
base=$1 rounds256=${2:-3} rounds512=${3:-2} step_rounds=${4:-0}
OUT=${OUT:-$PWD/cpu-compare-out}
PY=${PY:-/usr/bin/python3}
mkdir -p "$OUT"
threads=$(nproc)
echo "$(lscpu | sed -n "s/^Model name: *//p" | head -1), $threads cores" | tee "$OUT/host.txt"
for tag in base now; do
  src=.; [ $tag = base ] && src=$base
  cmake -S "$src" -B build-cpu-$tag -G Ninja -DHEATSOLVE_TESTS=OFF > "$OUT/configure_$tag.log" 2>&1 &&
    cmake --build build-cpu-$tag -j "$threads" > "$OUT/build_$tag.log" 2>&1 || { tail -20 "$OUT/build_$tag.log"; exit 1; }
done

# 2. The same fields. Chebyshev: a tuning cache per run holding the choice, so that both builds take
# the same path; its key is the one that the trial of a first run writes.
run() { # run TAG NAME PRECONDITIONER PRECISION THREADS CACHE
  HEATSOLVE_TUNING_CACHE="$6" OMP_NUM_THREADS=$5 build-cpu-$1/heatsolve inputs/letters.cfg -q --backend cpu \
    --set 'grid.n=[100,48,40]' --set 'time.scheme="crank_nicolson"' --set time.steps=10 --set time.dt=0.002 \
    --set "solver.preconditioner=\"$3\"" --set "solver.precision=\"$4\"" --set output.every=0 \
    --set output.png=false --set "output.dir=\"/tmp/cgcmp-$1-$2\"" --overwrite > "$OUT/run-$1-$2.txt" 2>&1 ||
    { echo "run $1 $2 failed:"; tail -5 "$OUT/run-$1-$2.txt"; }
}
for prec in double float; do
  for pc in jacobi none "chebyshev pairs" "chebyshev single steps"; do
    for t in 1 "$threads"; do
      name="$prec-${pc// /_}-$t" cache="$OUT/cache-$prec-${pc// /_}-$t"
      : > "$cache"
      case $pc in chebyshev*)
        run now trial chebyshev "$prec" "$t" "$cache"
        sed -i "s/\t[^\t]*$/\t${pc#chebyshev }/" "$cache"
        grep -q "chebyshev degree 8" "$cache" || echo "no Chebyshev choice in $cache" ;;
      esac
      for tag in base now; do run $tag "$name" "${pc%% *}" "$prec" "$t" "$cache"; done
      $PY - "$name" <<'PYEOF'
import glob, sys, h5py
name = sys.argv[1]
read = lambda tag: h5py.File(glob.glob(f"/tmp/cgcmp-{tag}-{name}/*_000010.hdf")[0])["VTKHDF/PointData/temperature"][...]
print(name + ": " + ("the same bits" if read("base").tobytes() == read("now").tobytes() else "DIFFERENT"))
PYEOF
    done
  done
done | tee "$OUT/bits.txt"

# 3. bench --cg alternated.
alternate() {
  local label=$1 rounds=$2; shift 2
  for round in $(seq "$rounds"); do
    for tag in base now; do
      log="$OUT/cg_${label}_${tag}_$round.txt"
      build-cpu-$tag/heatsolve bench --cg --backend cpu "$@" > "$log" 2>&1
      echo "== $label $tag round $round: copy $(grep -E "copy bandwidth" "$log" | grep -oE "[0-9.]+ GB/s")"
      grep -E "cg_apply|cheb_step|iteration" "$log"
    done
  done
}
alternate 256 "$rounds256" --size 256 --reps 10 | tee "$OUT/bench_cg.txt"
[ "$rounds512" -gt 0 ] && alternate 512 "$rounds512" --size 512 --reps 3 | tee -a "$OUT/bench_cg.txt"

# 4. The production step alternated.
for round in $(seq "$step_rounds"); do
  for tag in base now; do
    for size in 256 512; do
      build-cpu-$tag/heatsolve bench --backend cpu --size $size --reps 10 2>&1 |
        grep -E "copy bandwidth|<- production" | sed "s|^|[step $size $tag round $round] |"
    done
  done
done | tee "$OUT/bench_step.txt"
true
