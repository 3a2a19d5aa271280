#!/bin/bash
# A CUDA-aware Open MPI for `tools/gpu.sh transports`; run once on the development machine.
# Builds a GPU-aware Open MPI on the development machine for the GPU
# machines, whose Open MPI 4.1.6 is not CUDA-aware and which cannot fetch
# anything: Debian's Open MPI 4.1.4 source, configured with CUDA (the
# driver's libcuda is loaded at run time), its own hwloc, libevent and PMIx,
# installed in /opt/cuda-mpi and packed into .cuda-mpi/cuda-mpi.tar.gz (ignored
# by git), to carry to the GPU machine. Takes long (a whole Open MPI build).
# usage: tools/cuda_mpi_build.sh   (from the project root; needs /usr/local/cuda)
set -euo pipefail
root=$(git rev-parse --show-toplevel)
work=/tmp/cuda-mpi-src
if ! grep -qs deb-src /etc/apt/sources.list.d/*.sources; then
  sed 's/^Types: deb$/Types: deb-src/' /etc/apt/sources.list.d/debian.sources > /etc/apt/sources.list.d/debian-src.sources
  apt-get update -qq
fi
mkdir -p "$work" && cd "$work"
ls openmpi_*.orig.tar.* >/dev/null 2>&1 || apt-get source --download-only openmpi
tar -xf openmpi_*.orig.tar.*
cd openmpi-*/
./configure --prefix=/opt/cuda-mpi --with-cuda=/usr/local/cuda --disable-mpi-fortran --disable-oshmem \
  --without-ucx --without-verbs --without-ofi --without-psm2 --without-slurm --with-hwloc=internal \
  --with-libevent=internal --with-pmix=internal --disable-static --enable-shared > configure.log
make -j"$(nproc)" > make.log
make install > install.log
mkdir -p "$root/.cuda-mpi"
grep -qx '/.cuda-mpi/' "$root/.git/info/exclude" || echo '/.cuda-mpi/' >> "$root/.git/info/exclude"
tar -czf "$root/.cuda-mpi/cuda-mpi.tar.gz" -C /opt cuda-mpi
/opt/cuda-mpi/bin/ompi_info --parsable --all | grep mpi_built_with_cuda_support:value
