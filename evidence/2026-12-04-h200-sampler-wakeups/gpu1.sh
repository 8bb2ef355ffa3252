set -u
O=${OUT:?}
export LD_LIBRARY_PATH=$PWD/.carry/lib
{ date -u; uptime; nproc; uname -r; nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv; grep -m1 "CONFIG_HZ=" /boot/config-$(uname -r) 2>/dev/null; cat /sys/devices/system/clocksource/clocksource0/current_clocksource; } > "$O/machine.txt" 2>&1
B=.carry/bin
# 1. A thread that only wakes every 10 ms: default, 1 ms timer slack, pinned, both. 4 s each way.
for r in 1 2 3; do
  for v in default slack pin both; do
    a=(); case $v in slack) a=(--slack-us 1000);; pin) a=(--pin);; both) a=(--slack-us 1000 --pin);; esac
    echo "round $r $v: $($B/wakeup_bench --seconds 4 "${a[@]}")"
  done
done | tee "$O/wakeup.txt"
# 2. The sampler on real NVML, 12 s each, order rotated.
for r in 1 2 3; do
  order="default slack pin"; [ $r = 2 ] && order="pin default slack"; [ $r = 3 ] && order="slack pin default"
  for v in $order; do
    a=(); case $v in slack) a=(--timer-slack-us 1000);; pin) a=(--pin);; esac
    echo "round $r $v: $(timeout 40 $B/sampler_bench --seconds 12 "${a[@]}" 2>&1 | tail -1)"
  done
done | tee "$O/sampler_bench.txt"
