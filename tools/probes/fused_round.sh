#!/bin/bash
# One device round of the fused sweeps (issue 37), run from the project root
# on the GPU host: build heatsolve and the fused tests of this tree, the
# fused bitwise tests, then `heatsolve bench` of this tree against main's
# (/tmp/b-main) at 512^3 in double and float, the split test, then 1024^3
# (FULL=0: not), the most important first (a round may cut the script).
# usage: fused_round.sh NAME [REPS]
name=${1:-fuse} reps=${2:-20}
nvidia-smi -L
cd .wt-$name && source ../.device-deps/env.sh || exit 1
b=/tmp/b-$name
start=$SECONDS
rm -f /tmp/tc-$name-*
cmake -S . -B $b -G Ninja -DHEATSOLVE_GPU=nvidia -DHEATSOLVE_PYTHON=/opt/torch/.venv/bin/python3 >/dev/null &&
  cmake --build $b -j16 --target heatsolve test_fused_steps test_fused_split 2>&1 | grep -i "error\|FAILED" | head -20
echo "build: $((SECONDS - start)) s"
[ -x $b/heatsolve ] || exit 1
echo "=== 1. fused sweeps bitwise equal to single steps (every fused kernel, every face type, both precisions)"
(cd $b/tests 2>/dev/null || cd $b; HEATSOLVE_TUNING_CACHE=/tmp/tc-$name-test timeout 20 ./test_fused_steps 2>&1 | tail -6; echo "test_fused_steps rc=${PIPESTATUS[0]}")
bench() { # size precision
  echo "=== bench $1^3 $2: new (fused and production rows), then main (production rows)"
  HEATSOLVE_TUNING_CACHE=/tmp/tc-$name-new timeout 30 $b/heatsolve bench --backend hip --size $1 --precision $2 --reps $reps 2>&1 | grep "fused\|copy\|solver_step\|production step\|zwindowf32  *2\|pairs_ntx  *4"
  [ -x /tmp/b-main/heatsolve ] && HEATSOLVE_TUNING_CACHE=/tmp/tc-$name-main timeout 20 /tmp/b-main/heatsolve bench --backend hip --size $1 --precision $2 --reps $reps 2>&1 | grep "copy\|solver_step\|production step"
  echo "elapsed $((SECONDS - start)) s"
}
bench 512 double
bench 512 float
(cd $b/tests 2>/dev/null || cd $b; HEATSOLVE_TUNING_CACHE=/tmp/tc-$name-test timeout 10 ./test_fused_split 2>&1 | tail -4; echo "test_fused_split rc=${PIPESTATUS[0]}")
[ "${FULL:-1}" = 1 ] || exit 0
bench 1024 double
bench 1024 float
