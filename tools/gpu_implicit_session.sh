#!/bin/bash
# One call on the GPU machine for the implicit solver: build, the gpu test
# suite, compute-sanitizer on the implicit GPU-vs-CPU test, bench --cg,
# iteration counts and the letters time-to-solution comparison.
# usage (from the project root): bash tools/gpu_implicit_session.sh
source tools/gpu_setup.sh
ctest --test-dir build-gpu -L gpu --output-on-failure --timeout 900 > "$OUT/ctest_gpu.log" 2>&1
grep -E "Test +#|tests passed|relative difference|bitwise|observed order|dt_max|heat change" "$OUT/ctest_gpu.log" | head -80
grep -q "tests failed" "$OUT/ctest_gpu.log" && grep -E "FAILED|Error|error" "$OUT/ctest_gpu.log" | head -30
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
"$CS" --tool memcheck --error-exitcode 99 build-gpu/tests/test_implicit gpu_vs_cpu > "$OUT/sanitizer_implicit.log" 2>&1
echo "compute-sanitizer memcheck test_implicit gpu_vs_cpu: exit $? $(grep -E 'ERROR SUMMARY' "$OUT/sanitizer_implicit.log")"
B=build-gpu/heatsolve
for prec in double float; do
  $B bench --cg --size 512 --precision $prec --reps 30 | tee "$OUT/bench_cg_512_$prec.txt"
done
$B bench --size 512 --reps 30 | grep -E "copy|production" | tee "$OUT/bench_512_double.txt"
# Iterations per step against dt / dt_max, letters case, first 3 steps.
for pc in chebyshev jacobi none; do
  for cfl in 1 10 100 1000; do
    line=$($B inputs/letters.cfg --backend hip --set "time.scheme=\"crank_nicolson\"" --set time.cfl=$cfl.0 \
      --set time.steps=3 --set output.every=0 --set output.png=false --set 'output.dir="/tmp/it"' \
      --set "solver.preconditioner=\"$pc\"" --set solver.max_iterations=100000 | grep "^CG:")
    echo "$pc cfl=$cfl: $line" | tee -a "$OUT/iterations.txt"
  done
done
$PY tools/implicit_accuracy.py $B --backend hip --explicit-steps 8000 --cfl 9,18,36,72,144 --ref-cfl 2.25 \
  --schemes crank_nicolson,backward_euler 2>&1 | tee "$OUT/accuracy_gpu.txt"
(cd "$OUT" && tar czf logs.tar.gz --remove-files *.txt *.log 2>/dev/null; ls "$OUT")
