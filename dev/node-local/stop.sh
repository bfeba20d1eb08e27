#!/usr/bin/env bash
# stop.sh - powers the node of a state dir off (its sessions logged out first), then makes sure
# its process is gone.   dev/node-local/stop.sh [--state-dir DIR] [--power-cut]
#   --power-cut: no shutdown: the node's processes are killed at once (SIGKILL), as a node loses
#                its power; nothing in it logs out or unmounts. Its state dir stays (start.sh
#                --state-dir DIR boots it again, as a node comes back).
set -uo pipefail
STATE="${NODE_LOCAL_STATE:-/tmp/node-local}"
CUT=0
while [ $# -gt 0 ]; do
  case "$1" in
    --state-dir) STATE="$2"; shift 2 ;;
    --power-cut) CUT=1; shift ;;
    *) echo "node-local stop: unknown argument $1" >&2; exit 2 ;;
  esac
done
PIDFILE="$STATE/uml.pid"
[ -f "$PIDFILE" ] || exit 0
PID=$(cat "$PIDFILE")
if kill -0 "$PID" 2>/dev/null; then
  if [ "$CUT" = 0 ]; then
    [ -d "$STATE/share/req" ] && : > "$STATE/share/req/poweroff.sh"
    for ((i = 0; i < 100; i++)); do kill -0 "$PID" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$PID" 2>/dev/null && kill -- -"$PID" 2>/dev/null
    for ((i = 0; i < 30; i++)); do kill -0 "$PID" 2>/dev/null || break; sleep 0.1; done
  fi
  kill -0 "$PID" 2>/dev/null && kill -9 -- -"$PID" 2>/dev/null
fi
# UML's helper processes (slirp, socat) are its children in the same session.
pkill -9 -f "umid=$(basename "$STATE") " 2>/dev/null
for ((i = 0; i < 50; i++)); do kill -0 "$PID" 2>/dev/null || break; sleep 0.1; done
rm -f "$PIDFILE" "$STATE/node-local.env"
echo "node-local: $([ "$CUT" = 1 ] && echo "power cut" || echo stopped)"
