#!/usr/bin/env bash
# dev/demo.sh - the main job on embedded defaults: start a real Cinder and a real Kubernetes
# control plane on loopback (installing and building them if missing: the first build of
# kube-apiserver from Debian's source takes a few minutes, later starts seconds), build, check
# the cloud with `standalone-cinder cinder check`, then install the project from its manifests
# (where the node runs, as its own Deployment's Pod from the images built from images/Dockerfile;
# else the jars as host processes) and run it end to end: a claim applied with kubectl becomes a Cinder volume and an iSCSI PV
# that Kubernetes binds, a Pod on the node (dev/node-local --kubelet: a real kernel and kubelet;
# libiscsi stands in where it cannot start) writes a file to it, the API server asks the webhook
# about clone requests and StorageClasses, a Pod reads the same file from the clone it admits,
# and kubectl delete leaves nothing.
#   dev/demo.sh [--keystone] [--keep]
#   --keystone  also start Keystone and check the keystone-authenticated API
#   --keep      leave Cinder, the control plane and the node running afterwards (their stop.sh
#               stop them)
# Stops what it started at the end, unless --keep. Needs root.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
STATE="${CINDER_LOCAL_STATE:-/tmp/cinder-local}"
export CINDER_LOCAL_STATE="$STATE"
KEEP=0; KEYSTONE=()
for a in "$@"; do
  case "$a" in
    --keep) KEEP=1 ;;
    --keystone) KEYSTONE=(--keystone) ;;
    *) echo "usage: dev/demo.sh [--keystone] [--keep]" >&2; exit 2 ;;
  esac
done

"$ROOT/dev/ensure-jdk.sh"
KUBE_STATE="${KUBE_LOCAL_STATE:-/tmp/kube-local}"
export KUBE_LOCAL_STATE="$KUBE_STATE"
started=0
kube_started=0
stop_all() {
  if [ "$KEEP" = 1 ]; then return; fi
  if [ "${node_started:-0}" = 1 ]; then "$ROOT/dev/node-local/stop.sh" --state-dir "$NODE_STATE" >/dev/null || true; fi
  if [ "$kube_started" = 1 ]; then "$ROOT/dev/kube-local/stop.sh" >/dev/null || true; fi
  if [ "$started" = 1 ]; then "$ROOT/dev/cinder-local/stop.sh" >/dev/null || true; fi
}
trap stop_all EXIT
if "$ROOT/dev/kube-local/start.sh" --running; then
  echo "dev/demo.sh: using the local control plane that is already running ($KUBE_STATE)"
else
  kube_started=1
  "$ROOT/dev/kube-local/start.sh" --fresh
fi
if "$ROOT/dev/cinder-local/start.sh" --keystone --running \
   || { [ ${#KEYSTONE[@]} = 0 ] && "$ROOT/dev/cinder-local/start.sh" --running; }; then
  echo "dev/demo.sh: using the local Cinder that is already running ($STATE)"
else
  started=1
  "$ROOT/dev/cinder-local/start.sh" "${KEYSTONE[@]}"
fi
# shellcheck disable=SC1091
. "$STATE/cinder-local.env"

# The node: a real kernel (user-mode Linux) running the kubelet, where the demo's Pods use the
# claims. Where it cannot start, the demo says why and libiscsi in user space stands in for it.
NODE_STATE="${NODE_LOCAL_STATE:-/tmp/node-local}"
node_started=0
if "$ROOT/dev/node-local/start.sh" --state-dir "$NODE_STATE" --kubelet --running; then
  echo "dev/demo.sh: using the node that is already running ($NODE_STATE)"
elif NODE_LOCAL_MEM="${NODE_LOCAL_MEM:-2400M}" \
     "$ROOT/dev/node-local/start.sh" --state-dir "$NODE_STATE" --kubelet --forward 18443:8443 --fresh; then
  node_started=1
else
  echo "dev/demo.sh: the node did not start (above: why); the demo's node is a stand-in: libiscsi in user space, no kubelet, no Pods"
fi

cd "$ROOT"
mvn -B -q -ntp -Dstyle.color=never -pl demo -am package -DskipTests -DskipITs

# Where the node runs a kubelet, the project runs there as its own Deployment's Pod, from the
# images built from images/Dockerfile (a few minutes the first time; the base images are cached).
# Without them, or if the build fails, the demo runs the jars as host processes and says why.
IMAGES=()
if "$ROOT/dev/node-local/start.sh" --state-dir "$NODE_STATE" --kubelet --running; then
  mkdir -p "$ROOT/target"
  echo "dev/demo.sh: building the images (dev/images/build.sh; its log: target/images-build.log)"
  if IMAGES_TARGETS="webhook provisioner" "$ROOT/dev/images/build.sh" > "$ROOT/target/images-build.log" 2>&1; then
    IMAGES=("$ROOT/target/images")
  else
    echo "dev/demo.sh: the image build failed (target/images-build.log); the project runs as host processes"
  fi
fi
JAR=provisioner/target/standalone-cinder-provisioner.jar

cat > "$STATE/demo-noauth.conf" <<CONF
[Global]
cinder-endpoint = $CINDER_ENDPOINT
tenant-id = $CINDER_PROJECT_ID
username = demo
CONF
echo
echo "\$ standalone-cinder cinder check --cloud-config $STATE/demo-noauth.conf"
env -u OS_CLOUD -u OS_AUTH_URL -u OS_CINDER_ENDPOINT -u OS_PASSWORD \
  java -jar "$JAR" cinder check --cloud-config "$STATE/demo-noauth.conf"

if [ ${#KEYSTONE[@]} = 1 ]; then
  cat > "$STATE/demo-keystone.conf" <<CONF
[Global]
auth-url = $OS_AUTH_URL
username = $OS_USERNAME
password = "$OS_PASSWORD"
tenant-name = $OS_PROJECT_NAME
domain-name = Default
region = $OS_REGION_NAME
CONF
  echo
  echo "\$ standalone-cinder cinder check --cloud-config $STATE/demo-keystone.conf"
  env -u OS_CLOUD -u OS_AUTH_URL -u OS_CINDER_ENDPOINT -u OS_PASSWORD \
    java -jar "$JAR" cinder check --cloud-config "$STATE/demo-keystone.conf"
fi

echo
echo "\$ java -jar demo/target/standalone-cinder-demo.jar"
java -jar demo/target/standalone-cinder-demo.jar "$STATE/cinder-local.env" "$KUBE_STATE/kube-local.env" \
  "$NODE_STATE/node-local.env" "${IMAGES[@]}"
