#!/bin/sh
# Builds heatsolve with AddressSanitizer + UndefinedBehaviorSanitizer beside
# the default build and runs the whole CPU test suite under it. Sanitizer
# reports exit with status 86, which no heatsolve path uses, so a test that
# expects exit 1 or 2 cannot mistake a report for a clean error.
# usage: sanitize_suite.sh SOURCE_DIR BUILD_DIR PYTHON
set -eu
source=$1 build=$2 python=$3
generator=""
command -v ninja >/dev/null && generator="-G Ninja"
cmake -S "$source" -B "$build" $generator -DHEATSOLVE_SANITIZE=ON -DHEATSOLVE_NATIVE=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DHEATSOLVE_PYTHON="$python"
cmake --build "$build" -j 2
export ASAN_OPTIONS=exitcode=86:detect_leaks=1:abort_on_error=0
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1:exitcode=86
# mpi: OpenMPI itself does not run clean under LeakSanitizer; the MPI tests run in the default build.
ctest --test-dir "$build" -j 2 --output-on-failure -LE "isa|build|paraview|gpu|sanitize|fuzz|mpi"
