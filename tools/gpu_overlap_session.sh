#!/bin/bash
# One call on nvidia-h200-x2 (issue 14): the halo exchange beside the update.
#   bash tools/gpu_overlap_session.sh   build (one process and MPI), the scaling benchmark at
#                                       512^3 and 1024^3, then ctest -L "gpu|mpi"
# Logs under $OUT.
source tools/gpu_setup.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 NCCL_NVLS_ENABLE=0
bash tests/mpi_build.sh "$PWD" "$PWD/build-gpu/mpi-build" nvidia > "$OUT/mpi_build.log" 2>&1 || { tail -20 "$OUT/mpi_build.log"; exit 1; }
M=build-gpu/mpi-build/heatsolve
MPIRUN="mpirun --oversubscribe --bind-to none -x NCCL_NVLS_ENABLE -x OMP_NUM_THREADS=16 -x HEATSOLVE_TUNING_CACHE"
for size in 512 1024; do
  $MPIRUN -np 2 $M bench --size $size --reps ${REPS:-9} --json "$OUT/scaling_$size.json" 2>&1 | tee "$OUT/scaling_$size.txt"
done
timeout ${TEST_LIMIT:-330} ctest --test-dir build-gpu -L "gpu|mpi" --output-on-failure > "$OUT/ctest.log" 2>&1
grep -E "tests passed|Failed|\*\*\*|Not Run|Skipped" "$OUT/ctest.log" | head -30
true
