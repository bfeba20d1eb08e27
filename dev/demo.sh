#!/usr/bin/env bash
# dev/demo.sh - the main job on embedded defaults: start a real Cinder on loopback
# (installing it if missing), build, check the cloud with `standalone-cinder cinder
# check`, then run the provisioner end to end: a claim becomes a Cinder volume and an
# iSCSI PV, a stand-in node writes and reads data through it, the admission webhook (with the
# provisioner's resolver) judges clone requests and StorageClasses, the clone it admits is made
# in Cinder and holds the same data, and the release leaves nothing.
# Kubernetes is fabric8's mock API server (no kube-apiserver can run here).
#   dev/demo.sh [--keystone] [--keep]
#   --keystone  also start Keystone and check the keystone-authenticated API
#   --keep      leave Cinder running afterwards (dev/cinder-local/stop.sh stops it)
# Stops Cinder at the end if it started it, unless --keep. Needs root.
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
started=0
stop_cinder() { if [ "$started" = 1 ] && [ "$KEEP" = 0 ]; then "$ROOT/dev/cinder-local/stop.sh" >/dev/null || true; fi; }
trap stop_cinder EXIT
if "$ROOT/dev/cinder-local/start.sh" --keystone --running \
   || { [ ${#KEYSTONE[@]} = 0 ] && "$ROOT/dev/cinder-local/start.sh" --running; }; then
  echo "dev/demo.sh: using the local Cinder that is already running ($STATE)"
else
  started=1
  "$ROOT/dev/cinder-local/start.sh" "${KEYSTONE[@]}"
fi
# shellcheck disable=SC1091
. "$STATE/cinder-local.env"

cd "$ROOT"
mvn -B -q -ntp -Dstyle.color=never -pl demo -am package -DskipTests
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
java -jar demo/target/standalone-cinder-demo.jar "$STATE/cinder-local.env"
