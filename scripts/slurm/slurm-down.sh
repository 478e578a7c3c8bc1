#!/usr/bin/env bash
# Stop the private SLURM started by slurm-up.sh DIR: slurmd, slurmctld and munged, by PID.
set -u
DIR=${1:?usage: slurm-down.sh DIR}
stop() {
  local f=$1
  [ -f "$f" ] || return 0
  local pid
  pid=$(cat "$f")
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    kill "$pid" 2>/dev/null
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  fi
  rm -f "$f"
}
stop "$DIR/slurmd.daemon.pid"
stop "$DIR/slurmctld.daemon.pid"
stop "$DIR/munge/munged.pid"
exit 0
