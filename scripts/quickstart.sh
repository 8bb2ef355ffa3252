#!/usr/bin/env bash
# Installs what vouch needs (Debian 12, as root), builds it, and runs the main job on the
# default that needs no GPU: the SIMULATED device replaying telemetry recorded on an H200.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# The binary alone, optimised, without debug information or tests (the test command builds
# those), through ccache so that a second quick start rebuilds only what changed.
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DVOUCH_TESTS=OFF -DVOUCH_BENCH=OFF \
  -DCMAKE_CXX_COMPILER_LAUNCHER=ccache >/dev/null
ninja -C build   # vouch, and the tracer libvouch_cupti.so where CUDA with CUPTI was found
# On PATH: /usr/local/bin/vouch (and /usr/local/lib/libvouch_cupti.so where CUPTI was found).
# VOUCH_PREFIX=DIR installs elsewhere (e.g. $HOME/.local, then add $HOME/.local/bin to PATH).
cmake --install build --prefix "${VOUCH_PREFIX:-/usr/local}" >/dev/null
V=${VOUCH_PREFIX:-/usr/local}/bin/vouch
echo "installed: $V ($($V --version))"
S=tests/fixtures/nvml_h200_scenario.jsonl
say() { printf '\n=== %s\n' "$*"; }
say "SIMULATED: no GPU is used. The device replays $S, 40 s of NVML telemetry recorded on an"
echo "    NVIDIA H200 (idle; bf16 matrix products at the 700 W power cap; 4 GiB copies; idle)."
say "vouch doctor (simulated device): is the machine fit to measure?"
$V --sim "$S" doctor || true
say "1) the copy loop: SM clock flat at 1980 MHz -> a window you can quote (exit 0)"
$V clock replay "$S" --from 1795946971.36 --to 1795946983.28 || echo "(exit $?)"
say "2) the power-capped matrix products: clock wanders 1215-1980 MHz -> refused, with the reason (exit 3)"
$V clock replay "$S" --from 1795946955.64 --to 1795946969.35 || echo "(exit $?)"
say "3) the 1.4 s after the matrix products: idle bit clear but utilization 0 -> idle, no summary (exit 2)"
$V clock replay "$S" --from 1795946969.4 --to 1795946970.75 || echo "(exit $?)"
say "4) a live window around a command on the simulated device (replaying the copy loop)"
out=$(mktemp -d)
VOUCH_SIM_START=23.3 $V --sim "$S" --lock-file "$out/lock" clock sample --out "$out/window" -- sleep 3.5 \
  || echo "(exit $?)"
echo "evidence written under $out/window (samples.jsonl, window.json, stdout.txt, stderr.txt)"
say "5) two simulated GPUs, GPU 0 idle: the leg names both (CUDA_VISIBLE_DEVICES=0,1), so it is refused and the reason says which GPU (exit 1)"
X=tests/data/sim/h200x2_gpu0_idle.jsonl
CUDA_VISIBLE_DEVICES=0,1 $V --sim "$X" --lock-file "$out/lock" run --warmup 0 --reps 1 \
  --out "$out/two-gpus" -- sleep 3.5 || echo "(exit $?)"
say "6) the same leg limited to GPU 1 (CUDA_VISIBLE_DEVICES=1): one window, on GPU 1, valid (exit 0)"
CUDA_VISIBLE_DEVICES=1 $V --sim "$X" --lock-file "$out/lock" run --warmup 0 --reps 1 \
  --out "$out/gpu1" -- sleep 3.5 || echo "(exit $?)"
