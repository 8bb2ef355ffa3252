"""Checks a samples stream (vouch clock sample's samples.jsonl): every process snapshot's list
against the memory used read in the same poll. Prints, per change of memory used, when the
list changed, and the snapshots' count; exits 1 when a snapshot shows a list older than a
memory change seen at least one snapshot before it."""
import gzip, json, sys
samples, snaps = {}, []
for line in (gzip.open if sys.argv[1].endswith(".gz") else open)(sys.argv[1], "rt"):
    j = json.loads(line)
    if "processes" in j:
        snaps.append(j)
    elif j.get("mem_used_bytes") is not None:
        samples[round(j["t_s"], 6)] = j["mem_used_bytes"]
bad = 0
prev_mem, prev_list = None, None
for s in snaps:
    mem = samples.get(round(s["t_s"], 6))  # samples write t_s to 6 decimals
    lst = sorted((p["pid"], p.get("used_bytes")) for p in s["processes"])
    if mem != prev_mem:
        print(f"t={s['t_s']:.3f} memory used {prev_mem} -> {mem}: list {prev_list} -> {lst}")
        if prev_mem is not None and mem is not None and lst == prev_list and abs(mem - prev_mem) > (64 << 20):
            print("  the list did not change with a memory step over 64 MiB")
            bad += 1
    prev_mem, prev_list = mem, lst
print(f"{len(snaps)} snapshots, {len(samples)} samples with memory used, {bad} stale")
sys.exit(1 if bad else 0)
