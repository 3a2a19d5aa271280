#!/bin/sh
# Configures and compiles heatsolve for a GPU platform beside the default
# build: proves that the HIP sources build for AMD and NVIDIA on a machine
# without a GPU. usage: gpu_build.sh amd|nvidia SOURCE_DIR BUILD_DIR
# Exit 77 (skipped) when the platform's compiler is not installed.
set -eu
platform=$1 source=$2 build=$3
case $platform in
  amd) [ -x /usr/lib/llvm-15/bin/clang++ ] && [ -d /usr/lib/x86_64-linux-gnu/cmake/hip-lang ] || { echo "no HIP clang: skipped"; exit 77; } ;;
  nvidia) command -v nvcc >/dev/null || [ -x /usr/local/cuda/bin/nvcc ] || { echo "no nvcc: skipped"; exit 77; } ;;
esac
generator=""
command -v ninja >/dev/null && generator="-G Ninja"
cmake -S "$source" -B "$build" $generator -DHEATSOLVE_GPU="$platform" -DHEATSOLVE_NATIVE=OFF -DHEATSOLVE_TESTS=OFF
cmake --build "$build" -j 2
echo "heatsolve for $platform: built $(ls -la "$build/heatsolve")"
