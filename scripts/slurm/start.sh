#!/usr/bin/env bash
# Starts a real Slurm cluster of several nodes on this one machine, for the fleet tests and
# bench/fleet: munged, slurmctld and one slurmd per node (slurmd -N NAME), Debian 12's
# slurm-wlm, as root, without systemd. Everything lives under one directory (its own munge
# key and socket, its own slurm.conf, state, spool and logs); nothing in /etc is touched.
#
#   bash scripts/slurm/start.sh [DIR]     (DIR: $VOUCH_SLURM_DIR, default /tmp/vouch-slurm)
#   eval "$(bash scripts/slurm/start.sh --env)"    prints the exports the clients need
#
# Nodes n1..n$VOUCH_SLURM_NODES (default 12) share this host: NodeHostname=localhost, each on
# its own port. Each has 2 CPUs (config_overrides: more than the VM has, on purpose: the
# tests' legs sleep) and two fake GPUs (gres gpu:2 on files under DIR/dev), so Slurm sets
# CUDA_VISIBLE_DEVICES and SLURM_JOB_GPUS as on a real GPU node.
# Bounded: fails with a clear message (and the daemons' logs) when the nodes are not idle
# within $VOUCH_SLURM_START_TIMEOUT seconds (default 60). Stop with scripts/slurm/stop.sh.
set -euo pipefail
env_only=0
if [ "${1:-}" = "--env" ]; then
  env_only=1
  shift
fi
dir=${1:-${VOUCH_SLURM_DIR:-/tmp/vouch-slurm}}
nodes=${VOUCH_SLURM_NODES:-12}
# Partitions besides "debug" (every node): NAME=NODES, space-separated. The default gives each
# fleet test its own nodes, so tests running at once never queue behind each other.
partitions=${VOUCH_SLURM_PARTITIONS-ab=n[1-4] fault=n[5-7] gate=n[8-10] intr=n[11-12]}
base_port=${VOUCH_SLURM_PORT:-}
timeout=${VOUCH_SLURM_START_TIMEOUT:-60}
if [ "$env_only" = 1 ]; then
  echo "export SLURM_CONF=$dir/slurm.conf VOUCH_SLURM_DIR=$dir"
  exit 0
fi
die() {
  echo "scripts/slurm/start.sh: $*" >&2
  for f in "$dir"/log/*.log; do
    [ -f "$f" ] && { echo "--- $f (last 15 lines)" >&2; tail -n 15 "$f" >&2; }
  done
  exit 1
}
for b in munged slurmctld slurmd sbatch squeue scontrol sinfo; do
  command -v "$b" >/dev/null || die "$b not found: install slurm-wlm and munge (scripts/setup.sh)"
done
[ "$(id -u)" -eq 0 ] || die "run as root (the daemons and the jobs run as root here)"
[ "$nodes" -ge 1 ] && [ "$nodes" -le 16 ] || die "VOUCH_SLURM_NODES=$nodes: 1 to 16"

# Ports: slurmctld on BASE, node i on BASE+i. Unless given, a free range is picked (two test
# runs on one machine must not meet).
port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
if [ -z "$base_port" ]; then
  for _ in $(seq 1 50); do
    base_port=$((20000 + (RANDOM % 4000) * 10))
    busy=0
    for p in $(seq "$base_port" $((base_port + nodes))); do port_busy "$p" && busy=1; done
    [ "$busy" = 0 ] && break
  done
fi

# A cluster already running from this directory is stopped first.
if [ -f "$dir/slurm.conf" ]; then bash "$(dirname "$0")/stop.sh" "$dir" >/dev/null 2>&1 || true; fi
mkdir -p "$dir"/{munge,state,spool,log,dev,run}
chmod 711 "$dir/munge"
rm -rf "${dir:?}"/state/* "${dir:?}"/spool/*

# munge: its own key and socket.
if [ ! -s "$dir/munge/munge.key" ]; then
  head -c 1024 /dev/urandom >"$dir/munge/munge.key"
fi
chmod 400 "$dir/munge/munge.key"
munged --force --key-file="$dir/munge/munge.key" --socket="$dir/munge/munge.socket" \
  --pid-file="$dir/run/munged.pid" --log-file="$dir/log/munged.log" \
  --seed-file="$dir/munge/munged.seed" || die "munged did not start"

# Character devices with /dev/null's numbers: slurmd wants a device per GPU, never opens it here.
for i in 0 1; do
  [ -c "$dir/dev/gpu$i" ] || { rm -f "$dir/dev/gpu$i"; mknod -m 666 "$dir/dev/gpu$i" c 1 3; }
done
host=$(hostname -s)
cat >"$dir/slurm.conf" <<EOF
# Written by scripts/slurm/start.sh: a test cluster of $nodes nodes on one host.
ClusterName=vouchci
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$base_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$dir/munge/munge.socket
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool/%n
SlurmctldPidFile=$dir/run/slurmctld.pid
SlurmdPidFile=$dir/run/slurmd-%n.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd-%n.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
LaunchParameters=use_interactive_step
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
SlurmdParameters=config_overrides
ReturnToService=2
JobRequeue=1
MpiDefault=none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
MinJobAge=600
KillWait=5
InactiveLimit=0
SlurmdTimeout=30
MessageTimeout=10
GresTypes=gpu
NodeName=DEFAULT CPUs=2 RealMemory=2000 Gres=gpu:2 State=UNKNOWN
EOF
for i in $(seq 1 "$nodes"); do
  echo "NodeName=n$i NodeHostname=localhost NodeAddr=127.0.0.1 Port=$((base_port + i))" >>"$dir/slurm.conf"
done
echo "PartitionName=debug Nodes=n[1-$nodes] Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO" \
  >>"$dir/slurm.conf"
for p in $partitions; do
  echo "PartitionName=${p%%=*} Nodes=${p#*=} MaxTime=INFINITE State=UP OverSubscribe=NO" >>"$dir/slurm.conf"
done
echo "Name=gpu File=$dir/dev/gpu[0-1]" >"$dir/gres.conf"

export SLURM_CONF=$dir/slurm.conf
slurmctld -c -f "$SLURM_CONF" || die "slurmctld did not start"
for i in $(seq 1 "$nodes"); do
  mkdir -p "$dir/spool/n$i"
  slurmd -c -N "n$i" -f "$SLURM_CONF" || die "slurmd n$i did not start"
done

# Bounded wait: every node idle.
deadline=$((SECONDS + timeout))
while :; do
  idle=$(sinfo -h -N -t idle -o '%N' 2>/dev/null | sort -u | wc -l)
  [ "$idle" -ge "$nodes" ] && break
  ((SECONDS < deadline)) || die "$idle of $nodes nodes idle after ${timeout} s; sinfo says: $(sinfo -N 2>&1 | tr '\n' ' ')"
  sleep 0.5
done
echo "slurm: $nodes nodes idle (SLURM_CONF=$SLURM_CONF)"
