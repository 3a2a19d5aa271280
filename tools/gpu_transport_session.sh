#!/bin/bash
# One call on a one-GPU machine (issue 14): the GPU halo transports under a
# GPU-aware Open MPI, which the GPU machines lack. Built on the development
# machine from Debian's Open MPI source with CUDA (tools/cuda_mpi_build.sh)
# and carried as .cuda-mpi. Two ranks share the GPU: the mpi tests of bits,
# restarts and failures (the transports test among them), then 512^3 runs of each transport, the
# exchange's cost and the scaling benchmark. Logs under $OUT.
set -uo pipefail
tar -xzf .cuda-mpi/cuda-mpi.tar.gz -C /opt || exit 1
export PATH=/opt/cuda-mpi/bin:$PATH
source tools/gpu_setup.sh
ompi_info --parsable --all 2>/dev/null | grep -E "mpi_built_with_cuda_support:value|ompi:version:full" | tee "$OUT/cuda_aware.txt"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 NCCL_NVLS_ENABLE=0
timeout 420 ctest --test-dir build-gpu -R "build_mpi|mpi_(gpu_transports|explicit|implicit|restart|failing|bad)" \
  --output-on-failure -V > "$OUT/ctest_mpi.log" 2>&1
grep -E "tests passed|Failed|\*\*\*|Skipped" "$OUT/ctest_mpi.log" | head -30
grep -E "^[0-9]+: (mpi|nccl|host|auto|2 GPU|euler|crank|backward|restart|bad|FAILED)" "$OUT/ctest_mpi.log"
M=build-gpu/mpi-build/heatsolve
MPIRUN="mpirun --oversubscribe --bind-to none -x NCCL_NVLS_ENABLE -x OMP_NUM_THREADS=8 -x HEATSOLVE_TUNING_CACHE"
run="inputs/letters.cfg --set grid.n=[512,512,512] --set time.steps=300 --set output.every=0 --set output.png=false"
for i in 1 2; do
  for t in host mpi; do
    $MPIRUN -np 2 $M $run --set "parallel.transport=\"$t\"" --set "output.dir=\"/tmp/tr_$t\"" --overwrite \
      > "$OUT/run_${t}_$i.txt" 2>&1
    echo "$t: $(grep -E 'halos:' "$OUT/run_${t}_$i.txt" | sed 's/.*halos: //')"
    grep -E "^summary:|ranks: 2" "$OUT/run_${t}_$i.txt"
  done
done
$MPIRUN -np 2 $M bench --size 512 --reps 7 --json "$OUT/scaling_512.json" > "$OUT/scaling_512.txt" 2>&1
tail -12 "$OUT/scaling_512.txt"
# The default demo on the GPU: where each checkpoint's time goes (issue 17).
for i in 1 2 3; do
  rm -rf /tmp/demo && mkdir -p /tmp/demo && cp -r inputs /tmp/demo/
  (cd /tmp/demo && /usr/bin/time -f "wall %e s" "$OLDPWD/build-gpu/heatsolve" inputs/letters.cfg --backend hip) > "$OUT/demo_$i.txt" 2>&1
  grep -E "^summary|^start-up|^checkpoints|^wall" "$OUT/demo_$i.txt"
done
