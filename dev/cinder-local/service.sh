#!/usr/bin/env bash
# service.sh - stop, start, freeze or thaw one Cinder service that start.sh started, to inject
# faults into a running local Cinder (the reliability suite stops cinder-api in the middle of a
# burst of claims).
#
#   sudo ./service.sh stop|start|pause|resume|purge SERVICE [--state-dir DIR]
#   SERVICE: cinder-api, cinder-api-keystone, cinder-volume, cinder-scheduler or cinder-backup
#   stop:   SIGKILL to the service's process group (as a crash: nothing is flushed), its command
#           line kept in $STATE/run/SERVICE.cmd
#   start:  the same command line again, in a new session, logging where start.sh logged; for
#           an API, returns once it answers again
#   pause:  SIGSTOP to the group: the port stays open and nothing answers (calls time out)
#   resume: SIGCONT
#   purge:  drops the requests waiting in the service's RPC queue (rabbitmqctl purge_queue), as if
#           the API that cast them had died first: with the scheduler stopped, a new volume's cast
#           waits there, and purging it leaves the volume never scheduled
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
STATE="${CINDER_LOCAL_STATE:-/tmp/cinder-local}"
ACTION="${1:-}"; SVC="${2:-}"; shift 2 || true
while [ $# -gt 0 ]; do
  case "$1" in
    --state-dir) STATE="$2"; shift 2 ;;
    *) echo "service.sh: unknown argument: $1" >&2; exit 2 ;;
  esac
done
case "$SVC" in
  cinder-api|cinder-api-keystone|cinder-volume|cinder-scheduler|cinder-backup) ;;
  *) echo "usage: service.sh stop|start|pause|resume|purge cinder-api|cinder-api-keystone|cinder-volume|cinder-scheduler|cinder-backup" >&2; exit 2 ;;
esac
RUN="$STATE/run"; LOG="$STATE/log"
PIDF="$RUN/$SVC.pid"; CMDF="$RUN/$SVC.cmd"

running_pid() {
  [ -s "$PIDF" ] || return 1
  local p; p=$(cat "$PIDF")
  [ -d "/proc/$p" ] && tr '\0' ' ' < "/proc/$p/cmdline" | grep -q -- "${SVC%-keystone}" && echo "$p"
}

answers() { # the API's version document: 300 Multiple Choices
  local port; port=$(sed -n 's/^CINDER_ENDPOINT=http:\/\/127.0.0.1:\([0-9]*\)\/.*/\1/p' "$STATE/cinder-local.env")
  [ "$SVC" = cinder-api-keystone ] && port=$((port + 1))
  [ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "http://127.0.0.1:$port/")" = 300 ]
}

case "$ACTION" in
  stop)
    p=$(running_pid) || { echo "service.sh: $SVC is not running" >&2; exit 1; }
    # NUL-separated, so arguments with spaces survive; start.sh keeps the command it ran (a
    # wrapper's exec leaves only the service's own line here)
    [ -s "$CMDF" ] || cp "/proc/$p/cmdline" "$CMDF"
    kill -KILL -- "-$p" 2>/dev/null || kill -KILL "$p"
    for _ in $(seq 1 40); do [ -d "/proc/$p" ] || break; sleep 0.25; done
    echo "service.sh: killed $SVC ($p)" ;;
  start)
    if running_pid >/dev/null; then echo "service.sh: $SVC already runs"; exit 0; fi
    [ -s "$CMDF" ] || { echo "service.sh: no command line kept for $SVC (stop it with service.sh first)" >&2; exit 1; }
    mapfile -d '' cmd < "$CMDF"
    PYTHONPATH="$HERE/drivers${PYTHONPATH:+:$PYTHONPATH}" \
      setsid "${cmd[@]}" >>"$LOG/$SVC.stdout" 2>&1 </dev/null &
    echo $! > "$PIDF"
    if [ "${SVC#cinder-api}" != "$SVC" ]; then
      for _ in $(seq 1 240); do answers && break; sleep 0.25; done
      answers || { echo "service.sh: $SVC does not answer after 60 s" >&2; exit 1; }
    fi
    echo "service.sh: started $SVC ($(cat "$PIDF"))" ;;
  pause|resume)
    p=$(running_pid) || { echo "service.sh: $SVC is not running" >&2; exit 1; }
    if [ "$ACTION" = pause ]; then sig=STOP; else sig=CONT; fi
    kill "-$sig" -- "-$p" 2>/dev/null || kill "-$sig" "$p"
    echo "service.sh: ${ACTION}d $SVC ($p)" ;;
  purge)
    # start.sh's node, with the cookie in its home; not the packaged wrapper, which runs as the
    # rabbitmq user and so reads another cookie
    HOME="$STATE/rabbitmq/home" /usr/lib/rabbitmq/bin/rabbitmqctl -q -n cinderlocal@localhost \
      purge_queue "${SVC%-keystone}"
    echo "service.sh: purged the queue of $SVC" ;;
  *) echo "usage: service.sh stop|start|pause|resume|purge SERVICE" >&2; exit 2 ;;
esac
