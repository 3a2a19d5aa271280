#!/bin/bash
# One call on nvidia-h200-x2 (issue 14): build with MPI, the gpu and mpi
# tests, a GPU periodic run, then the scaling benchmark. Logs under $OUT.
source tools/gpu_setup.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 NCCL_NVLS_ENABLE=0
nvidia-smi topo -m > "$OUT/topo.txt" 2>&1
ompi_info --parsable --all 2>/dev/null | grep -i "mpi_built_with_cuda_support:value" > "$OUT/cuda_aware.txt"
bash tests/mpi_build.sh "$PWD" "$PWD/build-gpu/mpi-build" nvidia > "$OUT/mpi_build.log" 2>&1 || { tail -20 "$OUT/mpi_build.log"; exit 1; }
MPIRUN="mpirun --oversubscribe -x NCCL_NVLS_ENABLE -x OMP_NUM_THREADS=8 -x HEATSOLVE_TUNING_CACHE"
H=build-gpu/mpi-build/heatsolve
timeout 900 ctest --test-dir build-gpu -L "gpu|mpi" --output-on-failure > "$OUT/ctest.log" 2>&1
grep -E "tests passed|Failed|\*\*\*" "$OUT/ctest.log" | head -30
for size in 512 1024; do
  $MPIRUN -np 2 $H bench --size $size --reps 7 --json "$OUT/scaling_$size.json" 2>&1 | tee "$OUT/scaling_$size.txt"
done
