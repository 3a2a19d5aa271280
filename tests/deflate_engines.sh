#!/bin/sh
# Builds heatsolve with zlib's deflate beside the default (ISA-L) build and
# checks that each reads the other's checkpoints (cli_tests.py deflate_engines).
# usage: deflate_engines.sh SOURCE_DIR BUILD_DIR PYTHON HEATSOLVE WORKDIR
# Exit 77 (skipped) when the default build has no ISA-L: both would be zlib.
set -eu
source=$1 build=$2 python=$3 heatsolve=$4 work=$5
if ! "$heatsolve" bench --io --size 8 --io-dir "$work" 2>/dev/null | grep -q "ISA-L"; then
  echo "the default build uses zlib (libisal-dev not installed): nothing to compare; skipped"
  exit 77
fi
generator=""
command -v ninja >/dev/null && generator="-G Ninja"
cmake -S "$source" -B "$build" $generator -DHEATSOLVE_DEFLATE=zlib -DHEATSOLVE_TESTS=OFF >/dev/null
cmake --build "$build" -j 2 --target heatsolve >/dev/null
HEATSOLVE_ZLIB="$build/heatsolve" exec "$python" "$source/tests/cli_tests.py" "$heatsolve" "$work" deflate_engines
