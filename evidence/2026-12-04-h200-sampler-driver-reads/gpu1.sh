#!/usr/bin/env bash
# Issue 24, seventh pass, GPU call 1: where the sampler's CPU goes (NVML call by call, the
# sampler thread before/after the one-call driver reads) and the tracer's device-buffer switches.
set -u
O=${OUT:?}
date -u > "$O/started.txt"
BENCHES="before=.carry/bin/sampler_bench_before now=.carry/bin/sampler_bench" ROUNDS=2 SECS=3 \
  timeout 240 bash bench/telemetry/nvml_costs.sh "$O/nvml" > "$O/nvml.log" 2>&1
echo "nvml_costs: exit $?" >> "$O/status.txt"
ONLY="shipped|devbuf_32mb|devbuf_256mb|devbuf_host" LOADS="b2b torchb2b" B2B_ARGS="--seconds 2" \
  SECS=2 ROUNDS=3 timeout 300 bash bench/cupti/screen.sh "$O/screen" > "$O/screen.log" 2>&1
echo "screen: exit $?" >> "$O/status.txt"
rm -rf "$O/screen/traces" "$O/screen"/*.so "$O/screen/launch_cost" "$O/nvml/nvml_calls"
date -u >> "$O/started.txt"
cat "$O/status.txt" "$O/nvml/machine.txt" "$O/nvml/sampler_bench.txt" "$O/screen/summary.txt"
