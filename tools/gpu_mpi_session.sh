#!/bin/bash
# One call on nvidia-h200-x2 (issue 14): build with MPI, the gpu and mpi
# tests, a GPU periodic run, then the scaling benchmark. Logs under $OUT.
source tools/gpu_setup.sh
nvidia-smi topo -m > "$OUT/topo.txt" 2>&1
ompi_info --parsable --all 2>/dev/null | grep -i "mpi_built_with_cuda_support:value" > "$OUT/cuda_aware.txt"
source tools/gpu_mpi_setup.sh
timeout 900 ctest --test-dir build-gpu -L "gpu|mpi" --output-on-failure > "$OUT/ctest.log" 2>&1
grep -E "tests passed|Failed|\*\*\*" "$OUT/ctest.log" | head -30
for size in 512 1024; do
  $MPIRUN -np 2 $M bench --size $size --reps 7 --json "$OUT/scaling_$size.json" 2>&1 | tee "$OUT/scaling_$size.txt"
done
