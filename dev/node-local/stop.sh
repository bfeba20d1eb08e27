#!/usr/bin/env bash
# stop.sh - powers the node of a state dir off (its sessions logged out first), then makes sure
# its process is gone.   dev/node-local/stop.sh [--state-dir DIR]
set -uo pipefail
STATE="${NODE_LOCAL_STATE:-/tmp/node-local}"
[ "${1:-}" = --state-dir ] && STATE="$2"
PIDFILE="$STATE/uml.pid"
[ -f "$PIDFILE" ] || exit 0
PID=$(cat "$PIDFILE")
if kill -0 "$PID" 2>/dev/null; then
  [ -d "$STATE/share/req" ] && : > "$STATE/share/req/poweroff.sh"
  for ((i = 0; i < 100; i++)); do kill -0 "$PID" 2>/dev/null || break; sleep 0.1; done
  kill -0 "$PID" 2>/dev/null && kill -- -"$PID" 2>/dev/null
  for ((i = 0; i < 30; i++)); do kill -0 "$PID" 2>/dev/null || break; sleep 0.1; done
  kill -0 "$PID" 2>/dev/null && kill -9 -- -"$PID" 2>/dev/null
fi
# UML's helper processes (slirp, socat) are its children in the same session.
pkill -9 -f "umid=$(basename "$STATE") " 2>/dev/null
rm -f "$PIDFILE" "$STATE/node-local.env"
echo "node-local: stopped"
