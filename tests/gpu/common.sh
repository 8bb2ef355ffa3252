# Shared by the GPU check scripts (sourced): OUT must be set and exist.
#   step NAME WANTED_RC COMMAND...   runs COMMAND with stdout in $OUT/NAME.out and stderr in
#                                    $OUT/NAME.err, appends a line to $OUT/status.txt, and
#                                    sets fail=1 when the exit code is not WANTED_RC.
fail=${fail:-0}
step() {
  local name=$1 want=$2
  shift 2
  local t0=$(date +%s)
  "$@" > "$OUT/$name.out" 2> "$OUT/$name.err"
  local rc=$?
  printf '%-24s rc=%-3s want=%-3s %4ss  %s\n' "$name" "$rc" "$want" "$(( $(date +%s) - t0 ))" "$*" | tee -a "$OUT/status.txt"
  [ "$rc" = "$want" ] || fail=1
}
