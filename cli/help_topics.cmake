# The documents `vouch help TOPIC` prints, compiled into the binary (embed_help.cmake), and
# that scripts/release.sh ships under share/doc/vouch/ in every package:
#   NAME|SOURCE FILE|one line for `vouch help`
set(VOUCH_HELP_TOPICS
  "metrics|docs/metrics.md|where a leg's numbers come from: --metric, the VOUCH_METRICS channel"
  "gpu-trace|docs/gpu-trace.md|the CUPTI tracer (--gpu-trace) and its gpu.* metrics"
  "sim|tests/data/sim/README.md|the simulated device (--sim): scenarios, what it can show"
  "exit-codes|docs/exit-codes.md|what each command's exit status means"
  "bisect-method|docs/bisect.md|how bisect holds its error rate, resumes and reports"
  "throttle|docs/throttle.md|throttling from the driver's violation counters, per cause"
  "roof|docs/roof.md|a rate above the GPU's ceiling refused, and doctor --calibrate")
