#!/bin/bash
# Calls on nvidia-h200-x2 (issue 14): halo buffers registered with NCCL (direct
# GPU-to-GPU transfers) against NCCL's FIFO path (NCCL_LOCAL_REGISTER=0,
# NCCL's own switch). Logs under $OUT.
#   bash tools/gpu_register_session.sh bench [ROUNDS]   the NCCL log of the registration, then
#                                                        the scaling benchmark at 512^3 and 1024^3,
#                                                        both paths alternated
#   bash tools/gpu_register_session.sh tests             ctest -L "gpu|mpi", then Crank-Nicolson
#                                                        512^3 on two GPUs, both paths
#   bash tools/gpu_register_session.sh ctas [LIMITS [ROUNDS]]   the benchmark at each NCCL_MAX_CTAS
#                                                        (default "2 4 8 16"; "default": heatsolve's)
source tools/gpu_setup.sh
source tools/gpu_mpi_setup.sh
scaling() { # SIZE TAG [mpirun options...]
  local size=$1 tag=$2; shift 2
  $MPIRUN -np 2 "$@" $M bench --size "$size" --reps ${REPS:-5} > "$OUT/scaling_${size}_$tag.txt" 2>&1
  echo "== $size^3, $tag"; grep -E "^(strong|weak)" "$OUT/scaling_${size}_$tag.txt"
}
case "${1:-bench}" in
bench)
  $MPIRUN -np 2 -x NCCL_DEBUG=INFO -x NCCL_DEBUG_SUBSYS=INIT,REG $M inputs/letters.cfg --set 'grid.n=[256,256,256]' \
    --set time.steps=20 --set output.every=0 --set output.png=false --set 'output.dir="/tmp/reg"' --overwrite \
    > "$OUT/register_log.txt" 2>&1
  grep -icE "IPC register buffer" "$OUT/register_log.txt"
  grep -m1 "halos" "$OUT/register_log.txt"
  for round in $(seq 1 "${2:-2}"); do
    for size in 512 1024; do
      for reg in 0 1; do scaling $size "register${reg}_$round" -x NCCL_LOCAL_REGISTER=$reg; done
    done
  done
  [ -n "${TESTS:-}" ] && timeout 300 ctest --test-dir build-gpu -R "$TESTS" --output-on-failure > "$OUT/ctest.log" 2>&1
  [ -n "${TESTS:-}" ] && grep -E "tests passed|Failed|\*\*\*|Not Run|Skipped" "$OUT/ctest.log" | head ;;
tests)
  timeout ${TEST_LIMIT:-330} ctest --test-dir build-gpu -L "gpu|mpi" --output-on-failure > "$OUT/ctest.log" 2>&1
  grep -E "tests passed|Failed|\*\*\*|Not Run|Skipped" "$OUT/ctest.log" | head -30
  CN="--set time.scheme=\"crank_nicolson\" --set time.cfl=50 --set output.every=0 --set output.png=false --set grid.n=[512,512,512] --set time.steps=60"
  for round in 1 2; do
    for reg in 0 1; do
      $MPIRUN -np 2 -x NCCL_LOCAL_REGISTER=$reg $M inputs/letters.cfg $CN --set "output.dir=\"/tmp/cn$reg\"" --overwrite 2>&1 \
        | grep -E "^summary|halos" | sed "s|^|[register $reg] |"
    done
  done ;;
ctas) # [LIMITS [ROUNDS]]: "default" is heatsolve's own limit
  $MPIRUN -np 2 $M bench --size 256 --reps 1 | grep -m1 "halos"
  for round in $(seq 1 "${3:-1}"); do
    for size in 512 1024; do
      for ctas in ${2:-2 4 8 16}; do
        if [ "$ctas" = default ]; then scaling $size "default_$round"
        else scaling $size "ctas${ctas}_$round" -x NCCL_MAX_CTAS=$ctas; fi
      done
    done
  done ;;
esac
true
