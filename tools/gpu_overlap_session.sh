#!/bin/bash
# One call on nvidia-h200-x2 (issue 14): the halo exchange beside the update.
#   bash tools/gpu_overlap_session.sh [bench]   build (one process and MPI), the scaling
#                                               benchmark at 512^3 and 1024^3, then (without
#                                               `bench`) ctest -L "gpu|mpi"
# Logs under $OUT.
source tools/gpu_setup.sh
source tools/gpu_mpi_setup.sh
for size in 512 1024; do
  $MPIRUN -np 2 $M bench --size $size --reps ${REPS:-9} --json "$OUT/scaling_$size.json" 2>&1 | tee "$OUT/scaling_$size.txt"
done
[ "${1:-}" = bench ] && exit 0
timeout ${TEST_LIMIT:-330} ctest --test-dir build-gpu -L "gpu|mpi" --output-on-failure > "$OUT/ctest.log" 2>&1
grep -E "tests passed|Failed|\*\*\*|Not Run|Skipped" "$OUT/ctest.log" | head -30
true
