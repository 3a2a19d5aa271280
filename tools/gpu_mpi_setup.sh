# Sourced after tools/gpu_setup.sh by the multi-GPU session scripts (on the
# GPU machine): mpirun as root with NVLink multicast off, the MPI build into
# build-gpu/mpi-build ($M), and $MPIRUN: one rank a GPU, 16 OpenMP threads a
# rank, no binding (mpirun's default binds a rank to one core).
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 NCCL_NVLS_ENABLE=0
bash tests/mpi_build.sh "$PWD" "$PWD/build-gpu/mpi-build" nvidia > "$OUT/mpi_build.log" 2>&1 || { tail -20 "$OUT/mpi_build.log"; exit 1; }
M=build-gpu/mpi-build/heatsolve
MPIRUN="mpirun --oversubscribe --bind-to none -x NCCL_NVLS_ENABLE -x OMP_NUM_THREADS=16 -x HEATSOLVE_TUNING_CACHE"
