#!/bin/bash
# One call on nvidia-h200-x2 (issue 14): the GPU implicit solver on several
# ranks. Builds (one process and MPI), runs ctest -L "gpu|mpi" (implicit runs
# bitwise across rank counts on the GPUs, the periodic mode implicit on the
# GPU), the CG benchmark on one GPU, and a Crank-Nicolson letters run on one
# GPU and on two. Logs under $OUT.
source tools/gpu_setup.sh
source tools/gpu_mpi_setup.sh
B=build-gpu/heatsolve
timeout ${TEST_LIMIT:-300} ctest --test-dir build-gpu -L "gpu|mpi" --output-on-failure > "$OUT/ctest.log" 2>&1
grep -E "tests passed|Failed|\*\*\*|Not Run|Skipped" "$OUT/ctest.log" | head -30
$B bench --cg --size 512 --reps 10 2>&1 | tee "$OUT/bench_cg_512.txt" | tail -8
CN="--set time.scheme=\"crank_nicolson\" --set time.cfl=50 --set output.every=0 --set output.png=false --set grid.n=[512,512,512]"
same_field() { $PY -c "import h5py, numpy, sys
a, b = (h5py.File(f, 'r')['VTKHDF/PointData/temperature'][()] for f in sys.argv[1:])
print('the same bits' if a.tobytes() == b.tobytes() else 'DIFFERENT: max difference %g' % numpy.abs(a - b).max())" "$@"; }
for steps in 20 60; do
  rm -rf /tmp/cn1 /tmp/cn2
  $B inputs/letters.cfg --backend hip $CN --set time.steps=$steps --set 'output.dir="/tmp/cn1"' 2>&1 | grep -E "summary|CG:" | sed "s|^|[1 GPU, $steps steps] |" | tee -a "$OUT/cn.txt"
  $MPIRUN -np 2 $M inputs/letters.cfg $CN --set time.steps=$steps --set 'output.dir="/tmp/cn2"' 2>&1 | grep -E "summary|CG:|halos" | sed "s|^|[2 GPUs, $steps steps] |" | tee -a "$OUT/cn.txt"
  f=$(printf "letters_%06d.hdf" $steps)
  echo "[$steps steps] 1 GPU against 2 GPUs: $(same_field /tmp/cn1/$f /tmp/cn2/$f)" | tee -a "$OUT/cn.txt"
done
true
