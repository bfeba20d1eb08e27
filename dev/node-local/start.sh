#!/usr/bin/env bash
# start.sh - the node: a real Linux kernel (Debian's user-mode-linux, Linux 6.1, run as an
# unprivileged process, no KVM) with SCSI, iSCSI and RBD, whose root is this machine's own / seen
# read-only under a tmpfs overlay. Tests drive it through a shared folder: a script dropped into
# req/ runs in the node, its output and exit code come back in out/ (NodeLocal in the demo module).
#
#   sudo dev/node-local/start.sh [--fresh] [--running] [--state-dir DIR]
#   --running: exit 0 if a node of this state dir answers, 1 if not; starts nothing
#   --fresh:   stop the node of this state dir and start a new one
#
# Network: UML's slirp transport, a user-space stack. In the node the host's 127.0.0.1 is 10.0.2.2;
# the node gets a /32 route to it and nothing else (no default route, no resolver, anything else
# leaving eth0 dropped), and the host's ports in $NODE_LOCAL_PORTS are reached as 127.0.0.1, as
# PVs and ceph.conf name them. On the host the node makes only loopback connections.
#
# Writes $STATE/node-local.env: NODE_LOCAL_NAME (the state dir's name: the node's host name, so a
# second node runs from a second state dir), NODE_LOCAL_SHARE, NODE_LOCAL_PID, NODE_LOCAL_INITIATOR,
# NODE_LOCAL_KERNEL, NODE_LOCAL_UDEV (sourceable). Logs: $STATE/console.log, $STATE/share/agent.log.
#
# Env: NODE_LOCAL_STATE (/tmp/node-local), NODE_LOCAL_MEM (768M), NODE_LOCAL_TIMEOUT (90 s),
#      NODE_LOCAL_INITIATOR (iqn.2026-11.org.standalonecinder:local-node, the local install's),
#      NODE_LOCAL_PORTS (3260,3300,6789,6800:7300,6443,8776,8777,5000: tgt, Ceph's monitors and
#      OSDs, the API server, Cinder's API (noauth and Keystone) and Keystone, for the attach CLI)
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
STATE="${NODE_LOCAL_STATE:-/tmp/node-local}"
MEM="${NODE_LOCAL_MEM:-768M}"
TIMEOUT="${NODE_LOCAL_TIMEOUT:-90}"
INITIATOR="${NODE_LOCAL_INITIATOR:-iqn.2026-11.org.standalonecinder:local-node}"
PORTS="${NODE_LOCAL_PORTS:-3260,3300,6789,6800:7300,6443,8776,8777,5000}"
FRESH=0
CHECK_ONLY=0
while [ $# -gt 0 ]; do
  case "$1" in
    --fresh) FRESH=1; shift ;;
    --running) CHECK_ONLY=1; shift ;;
    --state-dir) STATE="$2"; shift 2 ;;
    -h|--help) sed -n '2,22p' "$0"; exit 0 ;;
    *) echo "node-local start: unknown argument $1" >&2; exit 2 ;;
  esac
done
SHARE="$STATE/share"
# One node per state dir: its name (host name, UML's umid) is the dir's, so two can run at once.
NAME="$(basename "$STATE")"
log() { echo "node-local: $*" >&2; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

running() {
  [ -f "$STATE/uml.pid" ] && kill -0 "$(cat "$STATE/uml.pid")" 2>/dev/null && [ -f "$SHARE/ready" ]
}

if [ "$CHECK_ONLY" = 1 ]; then
  running && exit 0 || exit 1
fi
if [ "$FRESH" = 1 ]; then
  "$HERE/stop.sh" --state-dir "$STATE" || true
fi
if running; then
  log "already running (pid $(cat "$STATE/uml.pid"))"
  exit 0
fi
if [ "$(id -u)" != 0 ]; then
  echo "node-local start: run as root (it installs packages; the node itself runs as nobody)" >&2
  exit 2
fi

T0=$(now)
# What the node runs, from Debian: the UML kernel and its modules, slirp, and what the node uses
# from this machine's root (open-iscsi, e2fsprogs, kmod, iptables, udev, ceph-common for rbd).
NEED=(user-mode-linux slirp socat open-iscsi e2fsprogs kmod iptables udev)
MISSING=()
for p in "${NEED[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || MISSING+=("$p")
done
if [ ${#MISSING[@]} -gt 0 ]; then
  log "installing ${MISSING[*]}"
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${MISSING[@]}" >/dev/null
fi
T_PKG=$(since "$T0")

mkdir -p "$STATE"
rm -rf "$SHARE" "$STATE/uml" "$STATE/bin"
mkdir -p "$SHARE" "$STATE/uml" "$STATE/bin"
# The node sees this machine's files as nobody sees them, and a clone may sit where nobody cannot
# read: it runs copies of its scripts from the state dir.
install -m 0755 "$HERE/guest-init.sh" "$HERE/guest-agent.sh" "$HERE/slirp-pty.sh" "$STATE/bin/"
chown nobody:nogroup "$SHARE" "$STATE/uml"
touch "$STATE/slirp.log" && chown nobody:nogroup "$STATE/slirp.log"

T1=$(now)
ARGS=(mem="$MEM" umid="$NAME" uml_dir="$STATE/uml"
      root=/dev/root rootfstype=hostfs rootflags=/ ro
      init="$STATE/bin/guest-init.sh"
      eth0=slirp,,"$STATE/bin/slirp-pty.sh"
      con=null con0=null,fd:1 ssl=null
      nodeshare="$SHARE" nodename="$NAME" nodeiqn="$INITIATOR" nodeports="$PORTS")
SLIRP_LOG="$STATE/slirp.log" setsid setpriv --reuid=nobody --regid=nogroup --clear-groups \
  env HOME="$STATE/uml" SLIRP_LOG="$STATE/slirp.log" linux.uml "${ARGS[@]}" \
  </dev/null >"$STATE/console.log" 2>&1 &
PID=$!
echo "$PID" > "$STATE/uml.pid"

for ((i = 0; i < TIMEOUT * 10; i++)); do
  [ -f "$SHARE/ready" ] && break
  if ! kill -0 "$PID" 2>/dev/null; then
    log "the node stopped while starting; console:"
    tail -n 30 "$STATE/console.log" >&2
    [ -f "$SHARE/agent.log" ] && tail -n 30 "$SHARE/agent.log" >&2
    exit 1
  fi
  sleep 0.1
done
if [ ! -f "$SHARE/ready" ]; then
  log "not ready after ${TIMEOUT}s; console:"
  tail -n 30 "$STATE/console.log" >&2
  [ -f "$SHARE/agent.log" ] && tail -n 30 "$SHARE/agent.log" >&2
  "$HERE/stop.sh" --state-dir "$STATE" || true
  exit 1
fi
T_BOOT=$(since "$T1")
KERNEL=$(sed -n 's/^kernel=//p' "$SHARE/ready")
UDEV=$(sed -n 's/^udev=//p' "$SHARE/ready")
cat > "$STATE/node-local.env" <<ENV
NODE_LOCAL_NAME=$NAME
NODE_LOCAL_SHARE=$SHARE
NODE_LOCAL_PID=$PID
NODE_LOCAL_INITIATOR=$INITIATOR
NODE_LOCAL_KERNEL=$KERNEL
NODE_LOCAL_UDEV=$UDEV
ENV
echo "READY $NAME (node-local): Linux $KERNEL as pid $PID (packages ${T_PKG} s, boot ${T_BOOT} s; total $(since "$T0") s); udev: $UDEV; env: $STATE/node-local.env"
