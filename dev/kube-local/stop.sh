#!/usr/bin/env bash
# stop.sh - stop what start.sh started, by the PIDs it recorded in $STATE/run (each was started
# with setsid, so its PID is its process group, which is signalled). Nothing is stopped by name.
#   dev/kube-local/stop.sh [--state-dir DIR] [--purge]   (--purge also deletes DIR)
set -uo pipefail
STATE="${KUBE_LOCAL_STATE:-/tmp/kube-local}"
PURGE=0
while [ $# -gt 0 ]; do
  case "$1" in
    --state-dir) STATE="$2"; shift 2 ;;
    --purge) PURGE=1; shift ;;
    *) echo "kube-local stop: unknown argument $1" >&2; exit 2 ;;
  esac
done
RUN="$STATE/run"

matches() { tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null | grep -q -- "$2"; }

stop_one() { # name cmdline-substring
  local f="$RUN/$1.pid" p i
  [ -s "$f" ] || return 0
  p=$(cat "$f")
  if [ -d "/proc/$p" ] && matches "$p" "$2"; then
    kill -TERM -- "-$p" 2>/dev/null || kill -TERM "$p" 2>/dev/null
    for i in $(seq 1 40); do [ -d "/proc/$p" ] && matches "$p" "$2" || break; sleep 0.25; done
    if [ -d "/proc/$p" ] && matches "$p" "$2"; then
      echo "kube-local stop: $1 ($p) ignored SIGTERM, sending SIGKILL"
      kill -KILL -- "-$p" 2>/dev/null || kill -KILL "$p" 2>/dev/null
    fi
    echo "kube-local stop: stopped $1 ($p)"
  fi
  rm -f "$f"
}

# Reverse order of start.
stop_one kube-scheduler kube-scheduler
stop_one kube-controller-manager kube-controller-manager
stop_one kube-apiserver kube-apiserver
stop_one etcd etcd
if [ "$PURGE" = 1 ]; then rm -rf "$STATE"; fi
exit 0
