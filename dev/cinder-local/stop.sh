#!/usr/bin/env bash
# stop.sh - stop what start.sh started, by the PIDs it recorded
# in $STATE/run (each service was started with setsid, so its PID is also its
# process-group id; the group is signalled so forked workers and the privsep
# helper of cinder-volume go too).  Nothing is stopped by name.
#   ./stop.sh [--state-dir DIR] [--purge]   (--purge also deletes DIR)
set -uo pipefail
STATE="${CINDER_LOCAL_STATE:-/tmp/cinder-local}"
PURGE=0
while [ $# -gt 0 ]; do
  case "$1" in
    --state-dir) STATE="$2"; shift 2 ;;
    --purge) PURGE=1; shift ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done
RUN="$STATE/run"

matches() { tr '\0' ' ' < "/proc/$1/cmdline" 2>/dev/null | grep -q -- "$2"; }

stop_one() { # name expected-cmdline-substring [group]
  local name="$1" pat="$2" grp="${3:-group}" f="$RUN/$1.pid" p i
  [ -s "$f" ] || return 0
  p=$(cat "$f")
  if [ -d "/proc/$p" ] && matches "$p" "$pat"; then
    if [ "$grp" = group ]; then kill -TERM -- "-$p" 2>/dev/null || kill -TERM "$p" 2>/dev/null
    else kill -TERM "$p" 2>/dev/null; fi
    for i in $(seq 1 60); do [ -d "/proc/$p" ] && matches "$p" "$pat" || break; sleep 0.25; done
    if [ -d "/proc/$p" ] && matches "$p" "$pat"; then
      echo "cinder-local stop: $name ($p) ignored SIGTERM, sending SIGKILL"
      if [ "$grp" = group ]; then kill -KILL -- "-$p" 2>/dev/null || kill -KILL "$p"; else kill -KILL "$p"; fi
    fi
    # leftovers of the group (e.g. forked workers that outlived the leader)
    [ "$grp" = group ] && kill -KILL -- "-$p" 2>/dev/null
    echo "cinder-local stop: stopped $name ($p)"
  fi
  rm -f "$f"
}

stop_one cinder-api cinder-api
stop_one cinder-api-keystone cinder-api
stop_one cinder-scheduler cinder-scheduler
stop_one cinder-volume cinder-volume
stop_one cinder-backup cinder-backup
if [ -s "$RUN/tgtd.pid" ] && [ -d "/proc/$(cat "$RUN/tgtd.pid")" ]; then
  # tgtd ignores SIGTERM while targets exist; ask it to shut down
  p=$(cat "$RUN/tgtd.pid")
  if matches "$p" tgtd; then
    tgtadm --op delete --mode system --force >/dev/null 2>&1 || true
  fi
fi
stop_one tgtd tgtd; [ -n "${p:-}" ] && echo "cinder-local stop: tgtd ($p) shut down"
stop_one ceph-osd ceph-osd
stop_one ceph-mgr ceph-mgr
stop_one ceph-mon ceph-mon
stop_one keystone uwsgi
stop_one mariadb mariadbd
stop_one rabbitmq rabbitmq
stop_one epmd epmd single
rm -f /etc/tgt/conf.d/cinder-local.conf
if [ "$PURGE" = 1 ]; then rm -rf "$STATE"; echo "cinder-local stop: removed $STATE"; fi
exit 0
