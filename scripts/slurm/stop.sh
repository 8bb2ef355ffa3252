#!/usr/bin/env bash
# Stops the cluster scripts/slurm/start.sh started from DIR (default $VOUCH_SLURM_DIR or
# /tmp/vouch-slurm): each daemon by the pid in its own pid file, and only those.
set -uo pipefail
dir=${1:-${VOUCH_SLURM_DIR:-/tmp/vouch-slurm}}
for f in "$dir"/run/slurmd-*.pid "$dir"/run/slurmctld.pid "$dir"/run/munged.pid; do
  [ -f "$f" ] || continue
  pid=$(cat "$f" 2>/dev/null)
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    kill "$pid" 2>/dev/null
    for _ in $(seq 1 50); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    kill -0 "$pid" 2>/dev/null && kill -9 "$pid" 2>/dev/null
  fi
  rm -f "$f"
done
exit 0
