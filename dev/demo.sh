#!/usr/bin/env bash
# dev/demo.sh - the main job on embedded defaults: start a real Cinder on loopback
# (installing it if missing), build the provisioner, and run its diagnostic,
# `standalone-cinder cinder check`, against that Cinder. Stops Cinder afterwards if
# it started it (--keep leaves it running). Needs root.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
STATE="${CINDER_LOCAL_STATE:-/tmp/cinder-local}"
export CINDER_LOCAL_STATE="$STATE"
KEEP=0; [ "${1:-}" = --keep ] && KEEP=1

"$ROOT/dev/ensure-jdk.sh"
started=0
stop_cinder() { if [ "$started" = 1 ] && [ "$KEEP" = 0 ]; then "$ROOT/dev/cinder-local/stop.sh" >/dev/null || true; fi; }
trap stop_cinder EXIT
if "$ROOT/dev/cinder-local/start.sh" --keystone --running || "$ROOT/dev/cinder-local/start.sh" --running; then
  echo "dev/demo.sh: using the local Cinder that is already running ($STATE)"
else
  started=1
  "$ROOT/dev/cinder-local/start.sh"
fi
# shellcheck disable=SC1091
. "$STATE/cinder-local.env"

cd "$ROOT"
mvn -B -q -ntp -pl provisioner -am package -DskipTests
cat > "$STATE/demo-cloud.conf" <<CONF
[Global]
cinder-endpoint = $CINDER_ENDPOINT
tenant-id = $CINDER_PROJECT_ID
username = demo
CONF
echo
echo "\$ standalone-cinder cinder check --cloud-config $STATE/demo-cloud.conf"
env -u OS_CLOUD -u OS_AUTH_URL -u OS_CINDER_ENDPOINT \
  java -jar provisioner/target/standalone-cinder-provisioner.jar cinder check --cloud-config "$STATE/demo-cloud.conf"
