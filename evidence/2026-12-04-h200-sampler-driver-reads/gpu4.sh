set -u
O=${OUT:?}
{ date -u; uptime; nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv; git log --oneline -1; } > "$O/machine.txt" 2>&1
ONLY="shipped|clock_cupti|discard" LOADS="b2b torchb2b" B2B_ARGS="--seconds 2" SECS=2 ROUNDS=4 \
  timeout 420 bash bench/cupti/screen.sh "$O/screen" > "$O/screen.log" 2>&1
echo "screen: exit $?" >> "$O/status.txt"
cp "$O/screen/summary.txt" "$O/screen/screen.jsonl" "$O/screen/check.txt" "$O/" 2>/dev/null
rm -rf "$O/screen"
cat "$O/status.txt" "$O/summary.txt"
