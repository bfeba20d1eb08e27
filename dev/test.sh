#!/usr/bin/env bash
# dev/test.sh - run every test of the project: the unit tests, the integration tests (*IT)
# against a real OpenStack Cinder on loopback in noauth AND keystone mode, with two backends at
# once (volume type lab-iscsi: iSCSI targets with CHAP, the default; lab-rbd: Cinder's upstream
# RBD driver on a one-node Ceph), and the end-to-end suite (e2e/) on a real Kubernetes control
# plane on loopback (dev/kube-local).
#
# It installs what is missing (JDK 17 and Maven, Node.js and npm, and Cinder's Debian packages through
# dev/cinder-local/start.sh), starts the local Cinder unless one is already running,
# runs `mvn verify`, and stops Cinder again if it started it. Extra arguments go to
# Maven (e.g. dev/test.sh -pl provisioner -Dit.test=CinderClientIT).
# Needs root (apt-get, tgtd, ceph). Env: CINDER_LOCAL_STATE (default /tmp/cinder-local),
# CINDER_LOCAL_BACKEND (default file,rbd; file alone skips Ceph, and the RBD tests then fail
# saying so).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
STATE="${CINDER_LOCAL_STATE:-/tmp/cinder-local}"
export CINDER_LOCAL_STATE="$STATE"
BACKEND="${CINDER_LOCAL_BACKEND:-file,rbd}"

"$ROOT/dev/ensure-jdk.sh"

# Node.js and npm for the manifests' schema check (e2e's ManifestsIT installs the
# kubernetes-models package with npm ci).
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "dev/test.sh: installing nodejs and npm"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends nodejs npm >/dev/null
fi

# ss (iproute2) for how long each of the API server's connections to the webhook has been idle
# (e2e's WebhookFuzzE2EIT).
if ! command -v ss >/dev/null 2>&1; then
  echo "dev/test.sh: installing iproute2"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends iproute2 >/dev/null
fi

KUBE_STATE="${KUBE_LOCAL_STATE:-/tmp/kube-local}"
export KUBE_LOCAL_STATE="$KUBE_STATE"
NODE_STATE="${NODE_LOCAL_STATE:-/tmp/node-local}"
# A second node, for what two nodes do at once (a ReadWriteMany Block PV logged in from both).
NODE2_STATE="${NODE_STATE}-2"
started=0
kube_started=0
node_started=""
waiting=()
stop_all() {
  # Starts still under way first, so nothing comes up after its stop.
  for p in "${waiting[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${waiting[@]}"; do wait "$p" 2>/dev/null || true; done
  for n in $node_started; do "$ROOT/dev/node-local/stop.sh" --state-dir "$n" >/dev/null || true; done
  if [ "$kube_started" = 1 ]; then "$ROOT/dev/kube-local/stop.sh" >/dev/null || true; fi
  if [ "$started" = 1 ]; then "$ROOT/dev/cinder-local/stop.sh" >/dev/null || true; fi
}
trap stop_all EXIT

# The parts start at once (their package installs take turns, dev/apt-lock.sh): Cinder, the
# longest (about 90 s warm), beside the control plane and then the nodes, which need the control
# plane but not Cinder until the tests run.
if "$ROOT/dev/cinder-local/start.sh" --keystone --backend "$BACKEND" --running; then
  echo "dev/test.sh: using the local Cinder that is already running ($STATE)"
else
  started=1
  # A fresh state: tests see only what they create.
  "$ROOT/dev/cinder-local/start.sh" --keystone --backend "$BACKEND" --fresh &
  waiting+=($!)
fi

# The real control plane for the end-to-end suite (e2e/): built from Debian's source package
# the first time (a few minutes; cached by version outside the clone), then started in seconds.
# With the snapshot API and the real snapshot-controller (../shared/snapshot-controller, built
# once with Debian's Go): the snapshot tests need them, and a missing source fails here.
if "$ROOT/dev/kube-local/start.sh" --snapshots --running; then
  echo "dev/test.sh: using the local control plane that is already running ($KUBE_STATE)"
else
  kube_started=1
  "$ROOT/dev/kube-local/start.sh" --snapshots --fresh
fi

# The nodes: real Linux kernels as user-space processes (Debian's user-mode-linux), whose kernel
# initiators log in to the PVs the provisioner makes. They reach Cinder, Ceph and the API server
# only as the host's loopback through their user-space networks.
# The first node also runs a kubelet (and containerd) registered with the local control plane:
# pods there mount claims through the kubelet's own volume plugins. The second is a kernel alone
# (what two nodes do at once; the attach CLI beside the kubelet's pods).
for n in "$NODE_STATE" "$NODE2_STATE"; do
  role=()
  [ "$n" = "$NODE_STATE" ] && role=(--kubelet)
  if "$ROOT/dev/node-local/start.sh" --state-dir "$n" "${role[@]}" --running; then
    echo "dev/test.sh: using the node that is already running ($n)"
  else
    node_started="$node_started $n"
    "$ROOT/dev/node-local/start.sh" --state-dir "$n" "${role[@]}" --fresh &
    waiting+=($!)
  fi
done
for p in "${waiting[@]}"; do
  wait "$p" || { echo "dev/test.sh: a part did not start (above: why)" >&2; exit 1; }
done
waiting=()

cd "$ROOT"
# The console goes to target/test-output.log too: with the processes' logs under */target, it is
# every log line of the run, and none may hold a password, token, cephx key or CHAP secret.
mkdir -p "$ROOT/target"
mvn -B -ntp verify -Dcinder.local.env="$STATE/cinder-local.env" \
  -Dkube.local.env="$KUBE_STATE/kube-local.env" -Dnode.local.env="$NODE_STATE/node-local.env" \
  -Dnode2.local.env="$NODE2_STATE/node-local.env" \
  "$@" 2>&1 | tee "$ROOT/target/test-output.log"
bash "$ROOT/dev/scan-secrets.sh" --self-test "$ROOT/target" "$ROOT"/*/target
