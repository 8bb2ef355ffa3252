#!/usr/bin/env bash
# GPU check for the foundation (issue 2), on a machine with an NVIDIA GPU:
#   tests/gpu/check_foundation.sh OUTDIR
# Builds tests/gpu/busy.cu, runs `vouch doctor` and `vouch clock sample` around it in a
# compute-bound and a memory-bound mode, and checks the static state against nvidia-smi,
# the clocks against [idle, max], the busy fraction under load and the process list.
# Then measures NVML's update periods, the poll cost, the sampler's CPU time, and the
# perturbation of sampling on the same load (5 alternated pairs). Never touches clocks.
set -uo pipefail
OUT=${1:?usage: check_foundation.sh OUTDIR}
mkdir -p "$OUT"
VOUCH=${VOUCH:-./build/vouch}
NVML_BENCH=${NVML_BENCH:-./build/nvml_bench}
BUSY=${BUSY:-$OUT/busy}
export VOUCH_LOCK_FILE=${VOUCH_LOCK_FILE:-/tmp/vouch-gpu-check.lock}
log() { echo "[check] $*" | tee -a "$OUT/check.log"; }
fail=0
if [ ! -x "$BUSY" ]; then
  nvcc -O3 -arch=sm_90 -o "$BUSY" tests/gpu/busy.cu 2>&1 | tee -a "$OUT/check.log" || { log "FAIL: nvcc"; exit 1; }
fi
date -u +%Y-%m-%dT%H:%M:%SZ > "$OUT/date.txt"
nvidia-smi > "$OUT/nvidia-smi.txt" 2>&1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.max.sm,clocks.applications.graphics,persistence_mode,pci.bus_id,clocks.sm \
  --format=csv,noheader,nounits > "$OUT/nvidia-smi-query.csv"
"$VOUCH" doctor --json > "$OUT/doctor.json"; echo "doctor exit $?" >> "$OUT/check.log"
"$VOUCH" doctor > "$OUT/doctor.txt" 2>&1
for mode in compute memory; do
  "$VOUCH" clock sample --out "$OUT/$mode" -- "$BUSY" --mode $mode --seconds 8 > "$OUT/$mode.txt" 2>&1
  echo "clock sample $mode exit $?" | tee -a "$OUT/check.log"
done
python3 - "$OUT" <<'PY' || fail=1
import json, sys, csv, os
out = sys.argv[1]
ok = True
def check(cond, what):
    global ok
    print(("ok   " if cond else "FAIL ") + what)
    ok = ok and cond
row = next(csv.reader(open(f"{out}/nvidia-smi-query.csv")))
row = [x.strip() for x in row]
name, uuid, driver, maxsm, appsm, pers, bus, _ = row
doc = json.load(open(f"{out}/doctor.json"))
st = doc["gpus"][0]["static"]
check(st["name"] == name, f"name {st['name']!r} == nvidia-smi {name!r}")
check(st["uuid"] == uuid, f"uuid {st['uuid']} == nvidia-smi {uuid}")
check(st["driver_version"] == driver, f"driver {st['driver_version']} == nvidia-smi {driver}")
check(str(st["max_sm_mhz"]) == maxsm, f"max SM clock {st['max_sm_mhz']} == nvidia-smi {maxsm}")
check(appsm in ("[N/A]", "N/A") or str(st["app_sm_mhz"]) == appsm, f"applications clock {st['app_sm_mhz']} == nvidia-smi {appsm}")
check(("Enabled" == pers) == bool(st["persistence"]), f"persistence {st['persistence']} == nvidia-smi {pers}")
check(st["pci_bus_id"].lower().endswith(bus.lower()[-12:]), f"PCI bus {st['pci_bus_id']} ~ nvidia-smi {bus}")
check(doc["simulated"] is False, "doctor says real device, not simulated")
for mode in ("compute", "memory"):
    p = f"{out}/{mode}/window.json"
    if not os.path.exists(p):
        check(False, f"{mode}: window.json exists"); continue
    w = json.load(open(p))
    f = w["gpus"][0]["fold"]
    sm = f["sm_mhz"]
    check(sm is not None and 100 <= sm["min"] <= sm["max"] <= st["max_sm_mhz"],
          f"{mode}: busy SM clock {sm['min']}..{sm['max']} MHz within [100, {st['max_sm_mhz']}]")
    check(f["busy_fraction"] > 0.8, f"{mode}: busy fraction {f['busy_fraction']:.3f} > 0.8")
    check(f["busy_readings"] >= 30, f"{mode}: {f['busy_readings']} busy readings >= 30")
    print(f"     {mode}: update period {f['update_period_s']*1000:.1f} ms, readings {f['readings']} from {f['polls']} polls, missed {f['missed_readings']}, verdict {w['verdict']['status']} {w['verdict']['reasons']}")
    names = set()
    for line in open(f"{out}/{mode}/samples.jsonl"):
        j = json.loads(line)
        for pr in j.get("processes", []):
            names.add(pr["name"])
    check("busy" in names, f"{mode}: process list shows the program (saw {sorted(names)})")
sys.exit(0 if ok else 1)
PY
log "static/clock/busy/process checks: $([ $fail = 0 ] && echo PASS || echo FAIL)"
# NVML update periods, poll cost and sampler CPU while the GPU is busy.
"$BUSY" --mode compute --seconds 14 > /dev/null &
bp=$!
sleep 1
"$NVML_BENCH" --seconds 5 > "$OUT/nvml_bench.json" 2>&1
wait $bp
# Perturbation: the same fixed work with and without vouch's sampler, alternated.
: > "$OUT/perturbation.txt"
for i in 1 2 3 4 5 6; do
  a=$("$BUSY" --mode compute --iters 400 | sed -n 's/.*gpu_ms=\([0-9.]*\).*/\1/p')
  b=$("$VOUCH" clock sample --quiet --out "$OUT/pert-$i" -- "$BUSY" --mode compute --iters 400 2>/dev/null | true; sed -n 's/.*gpu_ms=\([0-9.]*\).*/\1/p' "$OUT/pert-$i/stdout.txt")
  echo "pair $i plain_ms=$a sampled_ms=$b" | tee -a "$OUT/perturbation.txt"
done
python3 - "$OUT/perturbation.txt" <<'PY' | tee -a "$OUT/perturbation.txt"
import sys, re, statistics, math
r = []
for line in open(sys.argv[1]):
    m = re.search(r"plain_ms=([0-9.]+) sampled_ms=([0-9.]+)", line)
    if m: r.append(float(m.group(2)) / float(m.group(1)))
if r:
    print(f"ratio sampled/plain: mean {statistics.mean(r):.4f} median {statistics.median(r):.4f} min {min(r):.4f} max {max(r):.4f} sd {statistics.stdev(r) if len(r)>1 else 0:.4f} n {len(r)}")
PY
rm -rf "$OUT"/pert-*/samples.jsonl
log "done; fail=$fail"
exit $fail
