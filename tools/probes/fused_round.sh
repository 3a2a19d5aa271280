#!/bin/bash
# One device round of the fused sweeps (issue 37), run from the project root
# on the GPU host: build this tree, the fused bitwise tests, then
# `heatsolve bench` of this tree against main's (/tmp/b-main) at 512^3 (and
# 1024^3 when time is left), then Nsight Compute on the chosen fused kernels.
# usage: fused_round.sh NAME [REPS]
name=${1:-fuse} reps=${2:-20}
nvidia-smi -L
cd .wt-$name && source ../.device-deps/env.sh || exit 1
b=/tmp/b-$name
start=$SECONDS
cmake -S . -B $b -G Ninja -DHEATSOLVE_GPU=nvidia -DHEATSOLVE_PYTHON=/opt/torch/.venv/bin/python3 >/dev/null &&
  cmake --build $b -j16 2>&1 | grep -v "ptxas info\|bytes stack frame\|^\[" | tail -5
echo "build: $((SECONDS - start)) s"
[ -x $b/heatsolve ] || exit 1
echo "=== 1. fused sweeps bitwise equal to single steps (every fused kernel, every face type, both precisions)"
timeout 40 ctest --test-dir $b -R "gpu_fused_steps_bitwise|gpu_fused_split_bitwise" --output-on-failure 2>&1 | tail -15
for size in 512; do for prec in double float; do
  echo "=== 2. bench $size^3 $prec: new (every variant), then main (production rows)"
  timeout 40 $b/heatsolve bench --backend hip --size $size --precision $prec --reps $reps 2>&1
  [ -x /tmp/b-main/heatsolve ] && timeout 30 /tmp/b-main/heatsolve bench --backend hip --size $size --precision $prec --reps $reps 2>&1 | grep "copy\|solver_step\|production step"
done; done
echo "elapsed $((SECONDS - start)) s"
echo "=== 2b. SASS opcode counts of heat_fused<T, K=2, BX, BY, R, V, paired, not deep, no hints>, then a listing"
cuobjdump=$(command -v cuobjdump || echo /usr/local/cuda/bin/cuobjdump)
for k in dLi2ELi32ELi16ELi2ELi1 fLi2ELi32ELi16ELi2ELi1 dLi2ELi32ELi32ELi1ELi2 fLi2ELi32ELi32ELi1ELi2 dLi3ELi32ELi16ELi2ELi1; do
  fn="_Z10heat_fusedI${k}ELb1ELb0ELi0EEvPT_PKS0_13stencil_shape14stencil_coeffsIS0_E11halo_coeffsIS0_Ei11deep_ghostsIS0_E"
  timeout 20 $cuobjdump -sass -fun "$fn" $b/heatsolve > /tmp/sass-$k.txt 2>&1
  echo "--- $k: $(grep -c '/\*[0-9a-f]\{4\}\*/' /tmp/sass-$k.txt) instructions"
  grep '/\*[0-9a-f]\{4\}\*/' /tmp/sass-$k.txt | sed -E 's#^ */\*[0-9a-f]+\*/ *##' | awk '{op=$1; if (op ~ /^@/) op=$2; sub(/\..*/,"",op); print op}' | sort | uniq -c | sort -rn | head -30 | tr '\n' ' '; echo
done
grep '/\*[0-9a-f]\{4\}\*/' /tmp/sass-fLi2ELi32ELi32ELi1ELi2.txt | sed 's/ *\/\* 0x[0-9a-f]* \*\/ *$//; s/^ *//' | head -1500
echo "=== 3. Nsight Compute, 512^3: one sweep of each kernel named"
ncu=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
for k in "double, 2, 32, 16, 2, 1, true, false, 0>" "double, 2, 32, 32, 1, 2, true, false, 0>" "float, 2, 32, 32, 1, 2, true, false, 0>" "double, 3, 32, 16, 2, 1, true, false, 0>"; do
  prec=${k%%,*}
  echo "--- heat_fused<$k"
  timeout 25 $ncu --clock-control none --kernel-name-base demangled --kernel-name "regex:heat_fused<$k" -c 1 \
    --section SpeedOfLight --section Occupancy --section WarpStateStats --section SchedulerStats --section LaunchStats \
    $b/heatsolve bench --backend hip --size 512 --precision $prec --reps 2 2>&1 | grep -v "^heat_\|^solver_step\|^seed\|^lap\|==PROF== \(Profiling\|Disconnected\|Connected\)" | grep -v "^ *-*$" | head -90
done
echo "elapsed $((SECONDS - start)) s"
