#!/bin/sh
# Whether parallel HDF5 takes pre-compressed chunks from several ranks; rerun on a new HDF5 before using it.
# Builds and runs phdf5_direct_chunk.c on 2 ranks against Debian's parallel
# HDF5 (apt-get install libhdf5-openmpi-dev openmpi-bin), in a scratch folder.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mpicc -I/usr/include/hdf5/openmpi "$here/phdf5_direct_chunk.c" -L/usr/lib/x86_64-linux-gnu/hdf5/openmpi -lhdf5 \
  -o "$work/probe"
cd "$work"
OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun --oversubscribe -np 2 ./probe 2>/dev/null
