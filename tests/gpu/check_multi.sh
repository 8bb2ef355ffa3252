#!/usr/bin/env bash
# GPU check for multi-GPU windows (issue 6), on a machine with NVIDIA GPUs:
#   tests/gpu/check_multi.sh OUTDIR
# With two or more GPUs: doctor, clock sample and vouch run around tests/gpu/busy.cu loading
# both GPUs from one process (and a PyTorch NCCL all-reduce, NVLink multicast off), one window
# per GPU, a pairing check GPU by GPU, CUDA_VISIBLE_DEVICES respected (a leg limited to GPU 1
# samples GPU 1, checked against the PCI bus CUDA reports), and a leg that leaves GPU 1 idle
# judged per GPU. With one GPU: the CUDA_VISIBLE_DEVICES checks that one GPU allows, and
# "NOT RUN" lines for the rest. Never touches clocks. status.txt lists each step.
set -u
OUT=${1:?usage: check_multi.sh OUTDIR}
mkdir -p "$OUT"
VOUCH=${VOUCH:-./build/vouch}
BUSY=${BUSY:-$OUT/busy}
export VOUCH_LOCK_FILE=${VOUCH_LOCK_FILE:-/tmp/vouch-gpu-check.lock}
# NVLink multicast stays off (a program that uses it can take the host's GPUs out of service).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
unset CUDA_VISIBLE_DEVICES
: > "$OUT/status.txt"
fail=0
[ -x "$BUSY" ] || nvcc -O3 -arch=sm_90 -o "$BUSY" tests/gpu/busy.cu || exit 1
. "$(dirname "$0")/common.sh"
# Prints, per leg of a run record (or for a window), each GPU: index, UUID, PCI bus, verdict,
# busy readings, SM clock median; and checks the expectations given as JSON.
report() {  # report NAME PATH EXPECT_JSON
  python3 - "$1" "$2" "$3" <<'EOF' | tee -a "$OUT/status.txt"
import json, sys
name, path, expect = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
doc = json.load(open(path))
windows = [(l["index"], l["role"], l["window"]) for l in doc["legs"]] if "legs" in doc else [(0, "window", doc)]
ok = True
for idx, role, w in windows:
    got = []
    for g in w["gpus"]:
        f, st = g["fold"], g["static"]
        sm = f.get("sm_mhz") or {}
        got.append((st["index"], g.get("verdict", {}).get("status")))
        print(f"  {name} leg {idx} {role}: GPU {st['index']} {st['uuid']} bus {st['pci_bus_id']} "
              f"{g.get('verdict', {}).get('status')} busy {f['busy_readings']}/{f['readings']} "
              f"SM median {sm.get('median')} mean {sm.get('mean')}  ({w.get('gpu_source', '')})")
    if role != "warmup" and "gpus" in expect and [list(x) for x in got] != expect["gpus"]:
        ok = False
        print(f"  {name} leg {idx}: MISMATCH: GPUs {got}, expected {expect['gpus']}")
    for r in w["verdict"]["reasons"]:
        print(f"  {name} leg {idx} reason: {r}")
print(f"  {name}: {'as expected' if ok else 'NOT AS EXPECTED'}")
sys.exit(0 if ok else 1)
EOF
  [ $? = 0 ] || fail=1
}

nvidia-smi --query-gpu=index,name,uuid,pci.bus_id,driver_version,clocks.max.sm,clocks.applications.graphics,persistence_mode --format=csv > "$OUT/nvidia-smi.csv" 2>&1
cat "$OUT/nvidia-smi.csv" | tee -a "$OUT/status.txt"
N=$(nvidia-smi -L | grep -c '^GPU ')
UUID0=$(nvidia-smi --query-gpu=uuid --format=csv,noheader -i 0)
echo "GPUs: $N" | tee -a "$OUT/status.txt"
W="--mode compute --seconds 4"

step doctor 0 "$VOUCH" doctor
step doctor_json 0 "$VOUCH" doctor --json
# CUDA_VISIBLE_DEVICES by UUID prefix: the leg samples exactly that GPU.
step cvd_uuid_gpu0 0 "$VOUCH" run --warmup 0 --reps 1 --out "$OUT/cvd-uuid0" --env "CUDA_VISIBLE_DEVICES=${UUID0:0:12}" -- "$BUSY" $W
report cvd_uuid_gpu0 "$OUT/cvd-uuid0/record.json" '{"gpus": [[0, "valid"]]}'

if [ "$N" -lt 2 ]; then
  # One GPU: what CUDA does with an entry that names no GPU, against what vouch samples.
  step cvd_0_1_on_one 0 env CUDA_VISIBLE_DEVICES=0,1 "$VOUCH" run --warmup 0 --reps 1 --out "$OUT/cvd-01-one" -- "$BUSY" $W --all-devices
  report cvd_0_1_on_one "$OUT/cvd-01-one/record.json" '{"gpus": [[0, "valid"]]}'
  grep -h "busy: device\|devices=" "$OUT/cvd_0_1_on_one.out" | tee -a "$OUT/status.txt"
  step cvd_1_on_one 64 env CUDA_VISIBLE_DEVICES=1 "$VOUCH" run --warmup 0 --reps 1 --out "$OUT/cvd-1-one" -- "$BUSY" $W
  grep -h "CUDA_VISIBLE" "$OUT/cvd_1_on_one.err" | tee -a "$OUT/status.txt"
  step cuda_itself_cvd_1 2 env CUDA_VISIBLE_DEVICES=1 "$BUSY" --mode compute --seconds 1
  cat "$OUT/cuda_itself_cvd_1.err" | tee -a "$OUT/status.txt"
  step clock_cvd_0 0 env CUDA_VISIBLE_DEVICES=0 "$VOUCH" clock sample --quiet --out "$OUT/clock-cvd-0" -- "$BUSY" $W
  report clock_cvd_0 "$OUT/clock-cvd-0/window.json" '{"gpus": [[0, "valid"]]}'
  step doctor_gpu0 0 "$VOUCH" doctor --gpu 0
  # The all-reduce script's plumbing (NCCL start-up, markers, metrics) on the one GPU; a
  # one-rank all-reduce still runs NCCL's local kernel (seen: ~6 TB/s algbw), so the
  # measured region (after ~12 s of start-up) is valid.
  if python3 -c 'import torch' 2>/dev/null; then
    step nccl_one_rank 0 "$VOUCH" run --warmup 0 --reps 1 --out "$OUT/nccl-one" -- python3 tests/gpu/allreduce.py --seconds 3 --min-world 1
    grep -h "allreduce:" "$OUT"/nccl-one/legs/*/stdout.txt | tee -a "$OUT/status.txt"
    grep -h "event\|allreduce" "$OUT"/nccl-one/legs/*/metrics.jsonl 2>/dev/null | tee -a "$OUT/status.txt"
    grep -h "INVALID\|valid" "$OUT/nccl_one_rank.err" | tee -a "$OUT/status.txt"
  fi
  echo "NOT RUN (one GPU): both GPUs loaded, one window per GPU, pairing GPU by GPU, a leg limited to GPU 1, GPU 1 idle in a two-GPU leg" | tee -a "$OUT/status.txt"
else
  UUID1=$(nvidia-smi --query-gpu=uuid --format=csv,noheader -i 1)
  # Both GPUs from one process: one window per GPU, both valid, twice, then paired.
  step clock_both 0 "$VOUCH" clock sample --quiet --out "$OUT/clock-both" -- "$BUSY" $W --all-devices
  report clock_both "$OUT/clock-both/window.json" '{"gpus": [[0, "valid"], [1, "valid"]]}'
  step clock_both2 0 "$VOUCH" clock sample --quiet --out "$OUT/clock-both2" -- "$BUSY" $W --all-devices
  step pair_gpu_by_gpu 0 "$VOUCH" clock pair "$OUT/clock-both/window.json" "$OUT/clock-both2/window.json"
  cat "$OUT/pair_gpu_by_gpu.out" >> "$OUT/status.txt"
  step run_both 0 "$VOUCH" run --warmup 1 --reps 3 --out "$OUT/run-both" -- "$BUSY" $W --all-devices
  report run_both "$OUT/run-both/record.json" '{"gpus": [[0, "valid"], [1, "valid"]]}'
  # A leg limited to GPU 1 samples GPU 1; CUDA's device 0 is then the GPU on GPU 1's bus.
  step cvd_1 0 env CUDA_VISIBLE_DEVICES=1 "$VOUCH" run --warmup 0 --reps 2 --out "$OUT/cvd-1" --tee -- "$BUSY" $W
  report cvd_1 "$OUT/cvd-1/record.json" '{"gpus": [[1, "valid"]]}'
  grep -h "busy: device" "$OUT/cvd_1.out" | tee -a "$OUT/status.txt"
  step cvd_uuid_gpu1 0 "$VOUCH" run --warmup 0 --reps 1 --out "$OUT/cvd-uuid1" --env "CUDA_VISIBLE_DEVICES=${UUID1:0:12}" -- "$BUSY" $W
  report cvd_uuid_gpu1 "$OUT/cvd-uuid1/record.json" '{"gpus": [[1, "valid"]]}'
  # GPU 1 sits idle: named (CUDA_VISIBLE_DEVICES=0,1) it refuses the leg and is named;
  # not named, it is recorded as unused and the leg stands on GPU 0.
  step gpu1_idle_named 1 env CUDA_VISIBLE_DEVICES=0,1 "$VOUCH" run --warmup 0 --reps 1 --out "$OUT/gpu1-idle-named" -- "$BUSY" $W
  report gpu1_idle_named "$OUT/gpu1-idle-named/record.json" '{"gpus": [[0, "valid"], [1, "idle"]]}'
  step gpu1_idle_unnamed 0 "$VOUCH" run --warmup 0 --reps 1 --out "$OUT/gpu1-idle-unnamed" -- "$BUSY" $W
  report gpu1_idle_unnamed "$OUT/gpu1-idle-unnamed/record.json" '{"gpus": [[0, "valid"], [1, "unused"]]}'
  "$VOUCH" show "$OUT/gpu1-idle-named" > "$OUT/show-gpu1-idle-named.txt" 2>&1
  # A PyTorch NCCL all-reduce, one process per GPU (multicast off), as one leg.
  if python3 -c 'import torch; assert torch.cuda.device_count() >= 2' 2>/dev/null; then
    step nccl_allreduce 0 "$VOUCH" run --warmup 0 --reps 2 --out "$OUT/nccl" -- python3 tests/gpu/allreduce.py --seconds 5
    report nccl_allreduce "$OUT/nccl/record.json" '{"gpus": [[0, "valid"], [1, "valid"]]}'
  else
    echo "NOT RUN: PyTorch with two GPUs not found" | tee -a "$OUT/status.txt"
  fi
  # A/A over both GPUs: every pair is checked GPU by GPU.
  step ab_aa_both 0 "$VOUCH" ab --a-name A --b-name A2 --a-env RUN=a --b-env RUN=b --pairs 4 --seed 1 --band 1 \
    --headline iters_per_s --out "$OUT/ab-aa-both" -- "$BUSY" $W --all-devices
  grep -h "A/B verdict\|ratio \|refused" "$OUT/ab_aa_both.out" | tee -a "$OUT/status.txt"
  step ab_other_gpu 3 "$VOUCH" ab --a-env CUDA_VISIBLE_DEVICES=0 --b-env CUDA_VISIBLE_DEVICES=1 --pairs 4 --out "$OUT/ab-other" -- "$BUSY" $W
  cat "$OUT/ab_other_gpu.err" | tee -a "$OUT/status.txt"
fi
for d in "$OUT"/*/; do
  find "$d" -name samples.jsonl -size +2M -delete 2>/dev/null  # keep summaries; large raw samples go
done
echo "fail=$fail" | tee -a "$OUT/status.txt"
exit $fail
