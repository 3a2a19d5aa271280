#!/bin/sh
# Builds one libFuzzer harness with clang (ASan + UBSan) and runs it for a
# bounded number of inputs with a fixed seed, so CI runs are repeatable.
# usage: run_fuzzer.sh config|checkpoint SOURCE_DIR WORK_DIR [RUNS]
# Longer runs by hand: WORK_DIR/fuzz_<name> -max_total_time=3600 WORK_DIR/corpus_<name>
set -eu
name=$1 source=$2 work=$3 runs=${4:-}
clang=$(command -v clang-15 || command -v clang || true)
[ -n "$clang" ] || { echo "no clang: skipped"; exit 77; }
mkdir -p "$work"
hdf5_cflags="-I/usr/include/hdf5/serial"
hdf5_libs="-L/usr/lib/x86_64-linux-gnu/hdf5/serial -lhdf5"
common="$source/solver/error.c $source/solver/problem.c $source/solver/space_order.c $source/solver/implicit.c $source/solver/materials.c"
case $name in
  config) sources="$source/io/config.c $source/io/config_materials.c $source/io/words.c $source/solver/regions.c $source/solver/initial.c $source/solver/font.c $common"; libs="$(pkg-config --libs libconfig) -lm"
          runs=${runs:-60000} ;;
  checkpoint) sources="$source/io/checkpoint.c $source/io/ckpt_materials.c $source/solver/regions.c $source/solver/initial.c $source/solver/font.c $source/io/compress.c $source/io/chunk_stream.c $source/io/ckpt_parts.c $source/io/fsutil.c $source/parallel/parallel_serial.c $common"
              libs="$hdf5_libs -lz -lm"; runs=${runs:-30000} ;;
  *) echo "unknown harness $name"; exit 2 ;;
esac
"$clang" -g -O1 -std=gnu11 -Wno-unknown-pragmas -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
  -DHEATSOLVE_VERSION='"fuzz"' -I"$source" $hdf5_cflags $(pkg-config --cflags libconfig) \
  "$source/tests/fuzz/fuzz_$name.c" $sources $libs -o "$work/fuzz_$name"
rm -rf "$work/corpus_$name"
cp -r "$source/tests/fuzz/corpus_$name" "$work/corpus_$name"
export ASAN_OPTIONS=detect_leaks=1
export LSAN_OPTIONS=suppressions=$source/tests/fuzz/lsan.supp:print_suppressions=0
# -close_fd_mask=2: the harness's own error messages (thousands) are muted, libFuzzer's report is not.
"$work/fuzz_$name" -seed=1 -runs="$runs" -max_len=65536 -close_fd_mask=2 -print_final_stats=1 "$work/corpus_$name"
