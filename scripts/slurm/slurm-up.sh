#!/usr/bin/env bash
# Bring up a private single-node SLURM (munge + slurmctld + slurmd) on localhost, as root, without
# systemd, for tests: everything lives in DIR (config, key, state, spool, logs, PIDs) and uses its
# own ports, so it does not touch a system installation.
#
#   bash scripts/slurm/slurm-up.sh DIR        # prints the line to source: export SLURM_CONF=DIR/slurm.conf
#   bash scripts/slurm/slurm-down.sh DIR      # stops the daemons by PID
#
# Needs Debian's slurm-wlm and munge. Exit 0 once the node is idle; 2 if a tool is missing or the
# cluster does not come up within 30 s (the logs in DIR say why).
set -euo pipefail
DIR=${1:?usage: slurm-up.sh DIR}
for tool in munged slurmctld slurmd sinfo; do
  command -v "$tool" >/dev/null 2>&1 || { echo "slurm-up: $tool not found (apt-get install slurm-wlm munge)" >&2; exit 2; }
done
[ "$(id -u)" -eq 0 ] || { echo "slurm-up: run as root (the daemons run as root here)" >&2; exit 2; }
mkdir -p "$DIR"/{state,spool,log,munge}
DIR=$(cd "$DIR" && pwd)
host=$(hostname -s)
cpus=$(nproc)
mem=$(( $(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 - 512 ))
port=${DPMU_SLURM_PORT:-16817}

# munge with its own key and socket
if [ ! -f "$DIR/munge/munge.key" ]; then
  dd if=/dev/urandom of="$DIR/munge/munge.key" bs=1024 count=1 status=none
  chmod 0400 "$DIR/munge/munge.key"
fi
chmod 0700 "$DIR/munge"
munged --force --key-file="$DIR/munge/munge.key" --socket="$DIR/munge/munge.socket" \
  --pid-file="$DIR/munge/munged.pid" --log-file="$DIR/log/munged.log" --seed-file="$DIR/munge/munge.seed"

cat >"$DIR/slurm.conf" <<CONF
ClusterName=dpmu-test
SlurmctldHost=$host
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$DIR/munge/munge.socket
CredType=cred/munge
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool
SlurmctldPidFile=$DIR/slurmctld.pid
SlurmdPidFile=$DIR/slurmd.pid
SlurmctldLogFile=$DIR/log/slurmctld.log
SlurmdLogFile=$DIR/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
SlurmctldTimeout=30
SlurmdTimeout=30
InactiveLimit=0
MinJobAge=300
KillWait=5
Waittime=0
NodeName=$host CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF

export SLURM_CONF="$DIR/slurm.conf"
slurmctld -D -c -f "$SLURM_CONF" >>"$DIR/log/slurmctld.out" 2>&1 &
echo $! >"$DIR/slurmctld.daemon.pid"
slurmd -D -f "$SLURM_CONF" >>"$DIR/log/slurmd.out" 2>&1 &
echo $! >"$DIR/slurmd.daemon.pid"
for _ in $(seq 1 300); do
  if sinfo -h -o %t 2>/dev/null | grep -q '^idle'; then
    echo "export SLURM_CONF=$SLURM_CONF"
    exit 0
  fi
  sleep 0.1
done
echo "slurm-up: the node did not become idle in 30 s; see $DIR/log/" >&2
exit 2
