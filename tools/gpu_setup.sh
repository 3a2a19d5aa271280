# Sourced by the GPU session scripts (from the project root, on the GPU
# machine): environment, $OUT for logs, $PY, then configure and build the
# NVIDIA backend into build-gpu, stopping with the errors if that fails.
set -uo pipefail
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
source .device-deps/env.sh
# The tests need h5py: the GPU machines have it in /opt/torch/.venv.
PY=$(command -v python3)
[ -x /opt/torch/.venv/bin/python3 ] && PY=/opt/torch/.venv/bin/python3
export HEATSOLVE_TUNING_CACHE=/tmp/heatsolve-tuning.txt
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,clocks.max.mem --format=csv | tee "$OUT/gpu.txt"
cmake -S . -B build-gpu -G Ninja -DHEATSOLVE_GPU=nvidia -DHEATSOLVE_PYTHON="$PY" > "$OUT/configure.log" 2>&1 || { tail -30 "$OUT/configure.log"; exit 1; }
cmake --build build-gpu -j 16 > "$OUT/build.log" 2>&1 || { grep -E "error" -A3 "$OUT/build.log" | head -40; exit 1; }
