#!/usr/bin/env bash
# Issue #50's GPU measurements in one go, on a GPU machine after `npm ci` (an H200: a few minutes).
# JSON files in $OUT, else output/bench/gpu:
#   doctor.txt                    the webgpu adapter, its features and limits
#   webgpu_nano.json, wasm_nano.json            agentic bench at the peer's shape, GPU and CPU
#   webgpu_0.5b_full.json, webgpu_0.5b_lora.json  Qwen2.5-0.5B's shape: every weight, LoRA rank 8
#   train_webgpu.json, train_wasm.json          20 FrozenLake steps (no warm start, no validation),
#                                               wall time from process start, and steps per hour
#   profile_webgpu.txt            a nano training step by tfjs kernel (timestamp queries): where a
#                                 WGSL matmul of our own would pay, measured before it is written
#   torch_peer_nano.json          ../shared/bench/torch_peer.py, when python3 imports torch
# A measurement that fails is reported and skipped; the script then exits 1.
set -euo pipefail
cd "$(dirname "$0")/../.."
export PATH="$PWD/node_modules/.bin:$PATH"
out="${OUT:-output/bench/gpu}"
mkdir -p "$out"
# the keys of the training comparison (test/bench/gpu_script.test.ts checks them against the schema)
TRAIN_OVERRIDES="max_steps=20 warm_start.enabled=false eval_steps=0 track_with=[console,jsonl]"
failed=0

bench() {
  local name=$1
  shift
  bun src/cli/main.ts bench "$@" --out "$out/$name.json" >/dev/null || { echo "gpu.sh: $name failed" >&2; failed=1; }
}

train() {
  local backend=$1 start end
  start=$(date +%s.%N)
  # shellcheck disable=SC2086 # the overrides are words
  if bun src/cli/main.ts train $TRAIN_OVERRIDES "backend=$backend" "exp_name=gpu_$backend" "output_dir=$out/train_$backend" >"$out/train_$backend.log" 2>&1; then
    end=$(date +%s.%N)
    awk -v s="$start" -v e="$end" -v b="$backend" \
      'BEGIN { printf "{\"backend\":\"%s\",\"steps\":20,\"seconds\":%.1f,\"steps_per_hour\":%.0f}\n", b, e - s, 20 * 3600 / (e - s) }' >"$out/train_$backend.json"
  else
    echo "gpu.sh: train on $backend failed (see $out/train_$backend.log)" >&2
    failed=1
  fi
}

bun src/cli/main.ts doctor backend=webgpu >"$out/doctor.txt" || failed=1
bench webgpu_nano --backend webgpu
bench webgpu_0.5b_full --backend webgpu --model 0.5b --steps 3
bench webgpu_0.5b_lora --backend webgpu --model 0.5b --steps 3 --lora 8
bench wasm_nano --backend wasm
bun scripts/bench/profile_model.ts webgpu >"$out/profile_webgpu.txt" 2>&1 || { echo "gpu.sh: profile failed" >&2; failed=1; }
train webgpu
train wasm

peer=../shared/bench/torch_peer.py
if [ -f "$peer" ] && python3 -c 'import torch' 2>/dev/null; then
  # The peer is eager PyTorch on the CPU (it has no device option): the wasm path's peer, at nano
  # only; its shape flags would take 0.5B's, but a 0.5B step on the CPU would eat the budget.
  python3 "$peer" --threads "$(nproc)" >"$out/torch_peer_nano.json" || { echo "gpu.sh: torch peer failed" >&2; failed=1; }
fi
echo "gpu.sh: wrote $out" >&2
exit "$failed"
