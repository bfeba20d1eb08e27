#!/usr/bin/env bash
# start.sh - the node: a real Linux kernel (Debian's user-mode-linux, Linux 6.1, run as an
# unprivileged process, no KVM) with SCSI, iSCSI and RBD, whose root is this machine's own / seen
# read-only under a tmpfs overlay. Tests drive it through a shared folder: a script dropped into
# req/ runs in the node, its output and exit code come back in out/ (NodeLocal in the demo module).
#
#   sudo dev/node-local/start.sh [--fresh] [--running] [--kubelet] [--state-dir DIR]
#                                [--forward HOST_PORT:NODE_PORT]...
#   --running: exit 0 if a node of this state dir answers (with --kubelet: and runs a kubelet), 1 if
#              not; starts nothing
#   --fresh:   stop the node of this state dir and start a new one
#   --kubelet: the node also runs containerd and the kubelet built by dev/kube-local, registered
#              as a Node of the running dev/kube-local control plane (needed; its CA signs the
#              kubelet's certificate); READY once that Node is Ready. The Node is tainted
#              standalone-cinder.io/local-node=true:NoSchedule: only pods that tolerate it run there
#   --forward: connections to this machine's HOST_PORT reach the node's NODE_PORT (slirp's redir;
#              it listens on every address of this machine), e.g. a Pod's hostPort: how the API
#              server calls a webhook Pod. With --kubelet only (guest-kubelet.sh answers them)
#
# Network: UML's slirp transport, a user-space stack. In the node the host's 127.0.0.1 is 10.0.2.2;
# the node gets a /32 route to it and nothing else (no default route, no resolver, anything else
# leaving eth0 dropped), and the host's ports in $NODE_LOCAL_PORTS are reached as 127.0.0.1, as
# PVs and ceph.conf name them. On the host the node makes only loopback connections. With
# --kubelet the node's pods see the same: those ports at their own 127.0.0.1, and the API server
# at the `kubernetes` Service's address (guest-kubelet.sh).
#
# Writes $STATE/node-local.env: NODE_LOCAL_NAME (the state dir's name: the node's host name, so a
# second node runs from a second state dir), NODE_LOCAL_SHARE, NODE_LOCAL_PID, NODE_LOCAL_INITIATOR,
# NODE_LOCAL_KERNEL, NODE_LOCAL_UDEV, NODE_LOCAL_KUBELET (yes|no), NODE_LOCAL_FORWARDS (the
# --forward pairs, comma-separated) (sourceable). Logs: $STATE/console.log, $STATE/share/agent.log;
# with --kubelet, $STATE/share/kubelet/*.log.
#
# Env: NODE_LOCAL_STATE (/tmp/node-local), NODE_LOCAL_MEM (768M), NODE_LOCAL_TIMEOUT (90 s),
#      NODE_LOCAL_INITIATOR (iqn.2026-11.org.standalonecinder:local-node, the local install's),
#      NODE_LOCAL_PORTS (3260,3300,6789,6800:7300,6443,8776,8777,5000: tgt, Ceph's monitors and
#      OSDs, the API server, Cinder's API (noauth and Keystone) and Keystone, for the attach CLI),
#      KUBE_LOCAL_STATE (/tmp/kube-local), NODE_LOCAL_IMAGES (/var/cache/standalone-cinder/images:
#      the container images images.sh makes, cached by that script's hash)
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=../apt-lock.sh
. "$HERE/../apt-lock.sh"
STATE="${NODE_LOCAL_STATE:-/tmp/node-local}"
MEM="${NODE_LOCAL_MEM:-768M}"
TIMEOUT="${NODE_LOCAL_TIMEOUT:-90}"
INITIATOR="${NODE_LOCAL_INITIATOR:-iqn.2026-11.org.standalonecinder:local-node}"
PORTS="${NODE_LOCAL_PORTS:-3260,3300,6789,6800:7300,6443,8776,8777,5000}"
FRESH=0
CHECK_ONLY=0
KUBELET=0
FORWARDS=()
NODE_TAINT=standalone-cinder.io/local-node=true:NoSchedule
KUBE_STATE="${KUBE_LOCAL_STATE:-/tmp/kube-local}"
IMAGES="${NODE_LOCAL_IMAGES:-/var/cache/standalone-cinder/images}"
while [ $# -gt 0 ]; do
  case "$1" in
    --fresh) FRESH=1; shift ;;
    --running) CHECK_ONLY=1; shift ;;
    --kubelet) KUBELET=1; shift ;;
    --state-dir) STATE="$2"; shift 2 ;;
    --forward) FORWARDS+=("$2"); shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d'; exit 0 ;;
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
  [ -f "$STATE/uml.pid" ] && kill -0 "$(cat "$STATE/uml.pid")" 2>/dev/null && [ -f "$SHARE/ready" ] &&
    { [ "$KUBELET" = 0 ] || grep -qx NODE_LOCAL_KUBELET=yes "$STATE/node-local.env" 2>/dev/null; }
}

if [ "$CHECK_ONLY" = 1 ]; then
  running && exit 0 || exit 1
fi
if [ "$FRESH" = 1 ]; then
  "$HERE/stop.sh" --state-dir "$STATE" || true
fi
if [ "$KUBELET" = 1 ] && [ -f "$STATE/uml.pid" ] && ! running; then
  "$HERE/stop.sh" --state-dir "$STATE" >/dev/null || true   # a node without the kubelet asked for
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
# from this machine's root (open-iscsi, e2fsprogs and xfsprogs, kmod, iptables, udev, ceph-common
# for rbd), and gcc for uml-xstate.c.
NEED=(user-mode-linux slirp socat open-iscsi e2fsprogs xfsprogs kmod iptables udev gcc libc6-dev)
# The kubelet's runtime, its pods' network, and what images.sh makes the images from.
[ "$KUBELET" = 1 ] && NEED+=(containerd runc containernetworking-plugins busybox-static)
MISSING=()
for p in "${NEED[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || MISSING+=("$p")
done
if [ ${#MISSING[@]} -gt 0 ]; then
  log "installing ${MISSING[*]}"
  apt_lock
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${MISSING[@]}" >/dev/null
  apt_unlock
fi
T_PKG=$(since "$T0")

mkdir -p "$STATE"
rm -rf "$SHARE" "$STATE/uml" "$STATE/bin"
mkdir -p "$SHARE" "$STATE/uml" "$STATE/bin"
# The node sees this machine's files as nobody sees them, and a clone may sit where nobody cannot
# read: it runs copies of its scripts from the state dir.
install -m 0755 "$HERE/guest-init.sh" "$HERE/guest-agent.sh" "$HERE/guest-kubelet.sh" \
  "$HERE/slirp-pty.sh" "$STATE/bin/"
chown nobody:nogroup "$SHARE" "$STATE/uml"
touch "$STATE/slirp.log" && chown nobody:nogroup "$STATE/slirp.log"
# slirp reads its redirections from $HOME/.slirprc (UML's helper line cannot quote arguments);
# without an address they go to the node's 10.0.2.15.
for f in ${FORWARDS[@]+"${FORWARDS[@]}"}; do
  [[ "$f" =~ ^[0-9]+:[0-9]+$ ]] || { echo "node-local start: --forward HOST_PORT:NODE_PORT, not $f" >&2; exit 2; }
  echo "redir tcp ${f%%:*} ${f##*:}"
done > "$STATE/uml/.slirprc"
# UML's FPU state writes fail on hosts with a large XSAVE area (uml-xstate.c says why).
gcc -O2 -shared -fPIC -o "$STATE/bin/uml-xstate.so" "$HERE/uml-xstate.c" -ldl

KUBELET_ARG=()
if [ "$KUBELET" = 1 ]; then
  # shellcheck disable=SC1091
  . "$KUBE_STATE/kube-local.env" 2>/dev/null || {
    echo "node-local start: --kubelet needs dev/kube-local running ($KUBE_STATE/kube-local.env)" >&2
    exit 2
  }
  KDIR="$SHARE/kubelet"
  mkdir -p "$KDIR"
  KEY_IMAGES="$IMAGES/$(sha256sum "$HERE/images.sh" | cut -c1-16)"
  if [ ! -f "$KEY_IMAGES/pause.tar" ]; then
    log "making the node's container images into $KEY_IMAGES"
    "$HERE/images.sh" "$KEY_IMAGES.new" >/dev/null && rm -rf "$KEY_IMAGES" && mv "$KEY_IMAGES.new" "$KEY_IMAGES"
  fi
  cp "$KEY_IMAGES/busybox.tar" "$KEY_IMAGES/pause.tar" "$KDIR/"
  echo "$KUBE_LOCAL_BIN/kubelet" > "$KDIR/kubelet.path"
  # The kubelet's identity, as the Node authorizer knows nodes: it may read only the Secrets of
  # the pods and PVs bound to it.
  PKI="$KUBE_STATE/pki"
  openssl req -new -newkey rsa:2048 -nodes -keyout "$KDIR/kubelet.key" \
    -subj "/O=system:nodes/CN=system:node:$NAME" -out "$KDIR/kubelet.csr" 2>/dev/null
  printf 'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=clientAuth\n' \
    > "$KDIR/kubelet.ext"
  openssl x509 -req -in "$KDIR/kubelet.csr" -CA "$PKI/ca.crt" -CAkey "$PKI/ca.key" -CAcreateserial \
    -days 30 -sha256 -extfile "$KDIR/kubelet.ext" -out "$KDIR/kubelet.crt" 2>/dev/null
  rm -f "$KDIR/kubelet.csr" "$KDIR/kubelet.ext"
  cp "$KUBE_LOCAL_CA" "$KDIR/ca.crt"
  cat > "$KDIR/kubelet.kubeconfig" <<KC
apiVersion: v1
kind: Config
clusters: [{name: local, cluster: {server: "$KUBE_LOCAL_SERVER", certificate-authority: /node/kubelet/ca.crt}}]
users: [{name: node, user: {client-certificate: /node/kubelet/kubelet.crt, client-key: /node/kubelet/kubelet.key}}]
contexts: [{name: local, context: {cluster: local, user: node}}]
current-context: local
KC
  chown -R nobody:nogroup "$KDIR"
  chmod 700 "$KDIR"
  chmod 600 "$KDIR/kubelet.key"
  # A Node of this name from an earlier boot still says Ready (kube-local has no node lifecycle
  # controller to notice it went): only the new kubelet's registration may count.
  "$KUBE_LOCAL_KUBECTL" --kubeconfig "$KUBE_LOCAL_KUBECONFIG" delete node "$NAME" \
    --ignore-not-found --wait=false >/dev/null
  KUBELET_ARG=(nodekubelet=/node/kubelet)
  # containerd, the kubelet and the pods need more than the initiator alone.
  [ -z "${NODE_LOCAL_MEM:-}" ] && MEM=1200M
fi

T1=$(now)
ARGS=(mem="$MEM" umid="$NAME" uml_dir="$STATE/uml"
      root=/dev/root rootfstype=hostfs rootflags=/ ro
      init="$STATE/bin/guest-init.sh"
      eth0=slirp,,"$STATE/bin/slirp-pty.sh"
      con=null con0=null,fd:1 ssl=null
      nodeshare="$SHARE" nodename="$NAME" nodeiqn="$INITIATOR" nodeports="$PORTS"
      "${KUBELET_ARG[@]}")
SLIRP_LOG="$STATE/slirp.log" setsid setpriv --reuid=nobody --regid=nogroup --clear-groups \
  env HOME="$STATE/uml" SLIRP_LOG="$STATE/slirp.log" LD_PRELOAD="$STATE/bin/uml-xstate.so" \
  linux.uml "${ARGS[@]}" \
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
KUBELET_STATE=no
if [ "$KUBELET" = 1 ]; then
  T2=$(now)
  if ! grep -q '^kubelet=started' "$SHARE/ready"; then
    log "the node could not start containerd and the kubelet; its log:"
    tail -n 30 "$SHARE/agent.log" >&2
    "$HERE/stop.sh" --state-dir "$STATE" || true
    exit 1
  fi
  KC=("$KUBE_LOCAL_KUBECTL" --kubeconfig "$KUBE_LOCAL_KUBECONFIG")
  for ((i = 0; i < TIMEOUT * 2; i++)); do
    [ "$("${KC[@]}" get node "$NAME" -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null)" = True ] && break
    kill -0 "$PID" 2>/dev/null || break
    sleep 0.5
  done
  if [ "$("${KC[@]}" get node "$NAME" -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null)" != True ]; then
    log "the kubelet did not make Node $NAME Ready in ${TIMEOUT}s; its log:"
    tail -n 30 "$SHARE/kubelet/kubelet.log" >&2 2>/dev/null || tail -n 30 "$SHARE/agent.log" >&2
    "$HERE/stop.sh" --state-dir "$STATE" || true
    exit 1
  fi
  # The kubelet registers with this taint and the node lifecycle controller lifts it on its next
  # pass (every 5 s) once the Node is Ready: lifted here at once, so a test may schedule now.
  "${KC[@]}" taint node "$NAME" node.kubernetes.io/not-ready:NoSchedule- >/dev/null 2>&1 || true
  # Only pods that say they are for this node run here (the tests' and the demo's): the project's
  # own Deployment, which the install tests apply, has no image the node could pull.
  "${KC[@]}" taint node "$NAME" --overwrite "$NODE_TAINT" >/dev/null
  KUBELET_STATE=yes
  T_KUBELET=" kubelet Ready $(since "$T2") s;"
fi
KERNEL=$(sed -n 's/^kernel=//p' "$SHARE/ready")
UDEV=$(sed -n 's/^udev=//p' "$SHARE/ready")
cat > "$STATE/node-local.env" <<ENV
NODE_LOCAL_NAME=$NAME
NODE_LOCAL_SHARE=$SHARE
NODE_LOCAL_PID=$PID
NODE_LOCAL_INITIATOR=$INITIATOR
NODE_LOCAL_KERNEL=$KERNEL
NODE_LOCAL_UDEV=$UDEV
NODE_LOCAL_KUBELET=$KUBELET_STATE
NODE_LOCAL_FORWARDS=$(IFS=,; echo "${FORWARDS[*]+"${FORWARDS[*]}"}")
ENV
echo "READY $NAME (node-local): Linux $KERNEL as pid $PID (packages ${T_PKG} s, boot ${T_BOOT} s;${T_KUBELET:-} total $(since "$T0") s); udev: $UDEV; env: $STATE/node-local.env"
