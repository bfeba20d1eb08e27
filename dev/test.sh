#!/usr/bin/env bash
# dev/test.sh - run every test of the project: the unit tests, and the integration
# tests (*IT) against a real OpenStack Cinder on loopback in noauth AND keystone mode.
#
# It installs what is missing (JDK 17 and Maven, and Cinder's Debian packages through
# dev/cinder-local/start.sh), starts the local Cinder unless one is already running,
# runs `mvn verify`, and stops Cinder again if it started it. Extra arguments go to
# Maven (e.g. dev/test.sh -pl provisioner -Dit.test=CinderClientIT).
# Needs root (apt-get, tgtd). Env: CINDER_LOCAL_STATE (default /tmp/cinder-local).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
STATE="${CINDER_LOCAL_STATE:-/tmp/cinder-local}"
export CINDER_LOCAL_STATE="$STATE"

"$ROOT/dev/ensure-jdk.sh"

started=0
stop_cinder() {
  if [ "$started" = 1 ]; then "$ROOT/dev/cinder-local/stop.sh" >/dev/null || true; fi
}
trap stop_cinder EXIT

if "$ROOT/dev/cinder-local/start.sh" --keystone --running; then
  echo "dev/test.sh: using the local Cinder that is already running ($STATE)"
else
  started=1
  # A fresh state: tests see only what they create.
  "$ROOT/dev/cinder-local/start.sh" --keystone --fresh
fi

cd "$ROOT"
mvn -B -ntp verify -Dcinder.local.env="$STATE/cinder-local.env" "$@"
