#!/usr/bin/env bash
# dev/test.sh - run every test of the project: the unit tests, the integration tests (*IT)
# against a real OpenStack Cinder on loopback in noauth AND keystone mode, with two backends at
# once (volume type lab-iscsi: iSCSI targets with CHAP, the default; lab-rbd: Cinder's upstream
# RBD driver on a one-node Ceph), and the end-to-end suite (e2e/) on a real Kubernetes control
# plane on loopback (dev/kube-local).
#
# It installs what is missing (JDK 17 and Maven, Node.js and npm, and Cinder's Debian packages through
# dev/cinder-local/start.sh), starts the local parts (Cinder, the control plane, the nodes) that
# are not running already beside `mvn verify` (the integration tests wait for them), and stops
# again what it started. The parts' start logs to target/parts-start.log. Extra arguments go to
# Maven (e.g. dev/test.sh -pl provisioner -Dit.test=CinderClientIT).
# Needs root (apt-get, tgtd, ceph). Env: CINDER_LOCAL_STATE (default /tmp/cinder-local),
# CINDER_LOCAL_BACKEND (default file,rbd; file alone skips Ceph, and the RBD tests then fail
# saying so), DEV_TEST_AT_ONCE=1 (the end-to-end suite and the other tests at once; below).
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
parts_pid=""
images_pid=""
others_pid=""
IMAGES_STATUS="$ROOT/target/images.status"
OTHERS_STATUS="$ROOT/target/others.status"
# PID and every process under it (a build's buildah, a Maven's forks), found before any is stopped.
kill_tree() {
  local pids=("$1") i=0 c
  while [ "$i" -lt "${#pids[@]}" ]; do
    for c in $(pgrep -P "${pids[$i]}"); do pids+=("$c"); done
    i=$((i + 1))
  done
  kill -TERM "${pids[@]}" 2>/dev/null || true
}
stop_all() {
  # Starts still under way first, so nothing comes up after its stop; an image build or the other
  # tests (DEV_TEST_AT_ONCE) with all they started, while their status file is not written.
  if [ -n "$images_pid" ] && [ ! -s "$IMAGES_STATUS" ]; then kill_tree "$images_pid"; fi
  if [ -n "$others_pid" ] && [ ! -s "$OTHERS_STATUS" ]; then kill_tree "$others_pid"; fi
  for p in $parts_pid $images_pid $others_pid; do
    kill "$p" 2>/dev/null || true
    wait "$p" 2>/dev/null || true
  done
  for n in $node_started; do "$ROOT/dev/node-local/stop.sh" --state-dir "$n" >/dev/null || true; done
  if [ "$kube_started" = 1 ]; then "$ROOT/dev/kube-local/stop.sh" >/dev/null || true; fi
  if [ "$started" = 1 ]; then "$ROOT/dev/cinder-local/stop.sh" >/dev/null || true; fi
}
trap stop_all EXIT

# What runs already is used as it is (a second to ask each part); the rest starts beside the build,
# which compiles and runs the unit tests meanwhile: the integration tests wait for the parts
# (dev/await-parts.sh, at Maven's pre-integration-test), which saves most of a cold start.
# Cinder, the longest (about 90 s warm), starts beside the control plane and then the nodes, which
# need the control plane but not Cinder until the tests run. A fresh state each: tests see only
# what they create.
if "$ROOT/dev/cinder-local/start.sh" --keystone --backend "$BACKEND" --running; then
  echo "dev/test.sh: using the local Cinder that is already running ($STATE)"
else
  started=1
fi
# The real control plane for the end-to-end suite (e2e/): built from Debian's source package
# the first time (a few minutes; cached by version outside the clone), then started in seconds.
# With the snapshot API (its CRDs, as data, from ../shared/snapshot-crds): the snapshot tests need
# it, and missing CRDs fail here. The suite plays the snapshot-controller's part with a stand-in of
# its own (e2e's SnapshotControllerStandIn), in the e2e JVM.
if "$ROOT/dev/kube-local/start.sh" --snapshots --running; then
  echo "dev/test.sh: using the local control plane that is already running ($KUBE_STATE)"
else
  kube_started=1
fi
# The nodes: real Linux kernels as user-space processes (Debian's user-mode-linux), whose kernel
# initiators log in to the PVs the provisioner makes. They reach Cinder, Ceph and the API server
# only as the host's loopback through their user-space networks.
# Both run a kubelet (and containerd) registered with the local control plane: pods there mount
# claims through the kubelet's own volume plugins, and a ReadWriteMany claim is used by a pod on
# each at once. The attach CLI runs as root in the second beside its kubelet's pods.
# The first node also runs the project's own Deployment as Pods (e2e's DeploymentE2EIT): it holds
# the two images (about 2400M of memory in all) and forwards the webhook's hostPort to the host's
# 18443, where the API server calls it.
node_role() {
  if [ "$1" = "$NODE_STATE" ]; then echo "--kubelet --forward 18443:8443"; else echo --kubelet; fi
}
node_mem() { if [ "$1" = "$NODE_STATE" ]; then echo "${NODE_LOCAL_MEM:-2400M}"; else echo "${NODE_LOCAL_MEM:-}"; fi; }
for n in "$NODE_STATE" "$NODE2_STATE"; do
  # shellcheck disable=SC2046
  if "$ROOT/dev/node-local/start.sh" --state-dir "$n" $(node_role "$n") --running; then
    echo "dev/test.sh: using the node that is already running ($n)"
  else
    node_started="$node_started $n"
  fi
done

# Cinder's start, its exit status written as soon as it ends: the provisioner's integration tests
# need Cinder alone (-Dcinder.status), and run while a fresh machine still builds the control plane.
start_cinder() {
  local child rc
  trap 'kill "$child" 2>/dev/null; wait "$child"; exit 143' TERM
  "$ROOT/dev/cinder-local/start.sh" --keystone --backend "$BACKEND" --fresh &
  child=$!
  wait "$child" && rc=0 || rc=$?
  echo "$rc" > "$CINDER_STATUS"
  return "$rc"
}

start_parts() {
  local pids=()
  trap 'kill "${pids[@]}" 2>/dev/null; wait; exit 143' TERM
  if [ "$kube_started" = 1 ]; then
    # The control plane's packages and source first (build.sh --prepare): a fresh machine's
    # Cinder holds the apt lock for minutes, and the build (the longest start there) would wait.
    # Cached, this is an apt-get update.
    "$ROOT/dev/kube-local/build.sh" --prepare >/dev/null || return 1
  fi
  if [ "$started" = 1 ]; then
    start_cinder &
    pids+=($!)
  else
    echo 0 > "$CINDER_STATUS"
  fi
  if [ "$kube_started" = 1 ]; then
    "$ROOT/dev/kube-local/start.sh" --snapshots --fresh &
    pids+=($!)
    if ! wait "$!"; then
      kill "${pids[@]}" 2>/dev/null
      wait
      return 1
    fi
  fi
  for n in $node_started; do
    # shellcheck disable=SC2046
    NODE_LOCAL_MEM="$(node_mem "$n")" "$ROOT/dev/node-local/start.sh" --state-dir "$n" $(node_role "$n") --fresh &
    pids+=($!)
  done
  local rc=0
  for p in "${pids[@]}"; do wait "$p" || rc=1; done
  return "$rc"
}

mkdir -p "$ROOT/target"
PARTS_STATUS="$ROOT/target/parts-start.status"
PARTS_LOG="$ROOT/target/parts-start.log"
CINDER_STATUS="$ROOT/target/cinder-start.status"
rm -f "$PARTS_STATUS" "$CINDER_STATUS"
# A start that failed before Cinder's ended fails the tests waiting for Cinder too.
( start_parts > "$PARTS_LOG" 2>&1 && rc=0 || rc=$?
  [ -s "$CINDER_STATUS" ] || echo "$rc" > "$CINDER_STATUS"
  echo "$rc" > "$PARTS_STATUS" ) &
parts_pid=$!

# The webhook's and the provisioner's images, built from images/Dockerfile as a user would
# (dev/images/build.sh: base images from Debian's packages, buildah, Maven inside the build stage),
# beside the rest and at a lower priority than the tests. Only e2e's DeploymentE2EIT needs them,
# the end-to-end suite's first class; it waits for the status file (-Dimages.status).
IMAGES_LOG="$ROOT/target/images-build.log"
rm -f "$IMAGES_STATUS"
( IMAGES_TARGETS="webhook provisioner" nice -n 10 "$ROOT/dev/images/build.sh" > "$IMAGES_LOG" 2>&1
  echo $? > "$IMAGES_STATUS" ) &
images_pid=$!

cd "$ROOT"
# The console goes to target/test-output.log too: with the processes' logs under */target, it is
# every log line of the run, and none may hold a password, token, cephx key or CHAP secret.
PROPS=(-Dcinder.local.env="$STATE/cinder-local.env" -Dkube.local.env="$KUBE_STATE/kube-local.env"
  -Dnode.local.env="$NODE_STATE/node-local.env" -Dnode2.local.env="$NODE2_STATE/node-local.env"
  -Dparts.status="$PARTS_STATUS" -Dcinder.status="$CINDER_STATUS" -Ddeployment.e2e=true -Dimages.status="$IMAGES_STATUS")
set +e
if [ $# -gt 0 ] || [ "${DEV_TEST_AT_ONCE:-0}" != 1 ]; then
  mvn -B -ntp verify "${PROPS[@]}" "$@" 2>&1 | tee "$ROOT/target/test-output.log"
  mvn_rc=${PIPESTATUS[0]}
else
  # DEV_TEST_AT_ONCE=1 (not yet the default: of three runs here, one lost a probe of
  # DeploymentE2EIT's Pods to the load beside it, one a unit test's 10 s wait when niced):
  # the whole run, in two Maven runs at once after one build. The end-to-end suite (the demo
  # module's integration tests, then e2e/'s) spends about half its time waiting for the nodes'
  # kernels and for Kubernetes' controllers; the other tests (every unit test, and the other
  # modules' integration tests), mostly CPU, fill that time instead of going first. Not at a lower
  # priority: niced beside the busiest classes, a unit test's 10 s wait ran out. They touch neither
  # the control plane nor the nodes, only the local Cinder, which e2e's CinderFaultsE2EIT takes
  # down: it waits for their end (-Dothers.status). Their console goes to
  # target/others-output.log; its summary is printed when they end.
  OTHERS="api,certs,webhook,provisioner,dist,bench"
  OTHERS_LOG="$ROOT/target/others-output.log"
  rm -f "$OTHERS_STATUS"
  mvn -B -ntp install -DskipTests 2>&1 | tee "$ROOT/target/test-output.log"
  mvn_rc=${PIPESTATUS[0]}
  if [ "$mvn_rc" = 0 ]; then
    # The packaged jars of the install above are what the suite starts: these runs call the test
    # goals alone, so nothing is packaged again under the suite's feet.
    ( mvn -B -ntp -pl "$OTHERS,demo,e2e" surefire:test "${PROPS[@]}" &&
        bash "$ROOT/dev/await-parts.sh" "$PARTS_STATUS" &&
        mvn -B -ntp -pl "$OTHERS" failsafe:integration-test failsafe:verify "${PROPS[@]}"
      echo $? > "$OTHERS_STATUS" ) > "$OTHERS_LOG" 2>&1 &
    others_pid=$!
    mvn -B -ntp verify -pl demo,e2e "${PROPS[@]}" -Dothers.status="$OTHERS_STATUS" \
      -Dtest=none -Dsurefire.failIfNoSpecifiedTests=false 2>&1 |
      tee -a "$ROOT/target/test-output.log"
    mvn_rc=${PIPESTATUS[0]}
    wait "$others_pid"
    others_pid=""
    echo "dev/test.sh: the other modules' tests ($OTHERS; their console: target/others-output.log):"
    grep -h 'Tests run:\|FAIL\|ERROR\]\|BUILD' "$OTHERS_LOG" | grep -v ' -- in ' || true
    if [ "$(cat "$OTHERS_STATUS" 2>/dev/null)" != 0 ]; then
      [ "$mvn_rc" != 0 ] || mvn_rc=1
      cat "$OTHERS_LOG" >> "$ROOT/target/test-output.log"
    fi
  fi
fi
set -e
# The parts' start, as it went (what each took; why one did not start).
if [ -s "$PARTS_STATUS" ]; then
  if [ "$(cat "$PARTS_STATUS")" = 0 ]; then grep -h '^READY' "$PARTS_LOG" || true; else cat "$PARTS_LOG"; fi
fi
if [ -s "$IMAGES_STATUS" ]; then
  if [ "$(cat "$IMAGES_STATUS")" = 0 ]; then grep -h '^READY\|built in\|made in' "$IMAGES_LOG" || true; else cat "$IMAGES_LOG"; fi
fi
if [ "$mvn_rc" != 0 ]; then
  bash "$ROOT/dev/diagnose.sh" "$ROOT/target/test-output.log" "$STATE" \
    "$ROOT"/e2e/target/e2e/logs/provisioner*.log || true
  exit "$mvn_rc"
fi
bash "$ROOT/dev/diagnose.sh" --left "$STATE" || true
bash "$ROOT/dev/scan-secrets.sh" --self-test "$ROOT/target" "$ROOT"/*/target
