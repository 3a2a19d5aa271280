#!/bin/sh
# Builds heatsolve with -DHEATSOLVE_MPI=ON beside the default build, for the
# mpi tests (mpi_tests.py), with the same GPU platform as the default build.
# usage: mpi_build.sh SOURCE_DIR BUILD_DIR [GPU_PLATFORM [CMAKE_OPTIONS...]]
# Exit 77 (skipped) where no MPI is installed (apt-get install openmpi-bin libopenmpi-dev).
set -eu
source=$1 build=$2 gpu=${3:-off}
shift $(( $# < 3 ? $# : 3 ))
if ! command -v mpicc >/dev/null || ! command -v mpirun >/dev/null; then
  echo "mpicc or mpirun not found (apt-get install openmpi-bin libopenmpi-dev): skipped"
  exit 77
fi
generator=""
command -v ninja >/dev/null && generator="-G Ninja"
cmake -S "$source" -B "$build" $generator -DHEATSOLVE_MPI=ON -DHEATSOLVE_GPU="$gpu" -DHEATSOLVE_TESTS=OFF "$@" >/dev/null
cmake --build "$build" -j 2 --target heatsolve >/dev/null
echo "built $build/heatsolve with MPI"
