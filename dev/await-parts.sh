#!/usr/bin/env bash
# dev/await-parts.sh STATUS_FILE - the gate before a module's integration tests (Maven's
# pre-integration-test, -Dparts.status): dev/test.sh starts the local parts (Cinder, the control
# plane, the nodes) beside the build, which compiles and runs the unit tests meanwhile, and writes
# the exit status of their start to STATUS_FILE (or of Cinder's alone, for the tests that need only
# Cinder: -Dcinder.status). Waits for it; fails if they did not start. Without
# a file named (a build that started nothing), nothing to wait for.
set -euo pipefail
status="${1:-}"
[ -n "$status" ] || exit 0
limit="${PARTS_TIMEOUT:-1800}"
t0=$SECONDS
while [ ! -s "$status" ]; do
  if ((SECONDS - t0 > limit)); then
    echo "dev/await-parts.sh: the local parts have not started after ${limit} s" >&2
    exit 1
  fi
  sleep 1
done
rc="$(cat "$status")"
if [ "$rc" != 0 ]; then
  echo "dev/await-parts.sh: the local parts did not start (exit $rc; their log: $(dirname "$status")/parts-start.log)" >&2
  exit 1
fi
if ((SECONDS - t0 > 0)); then
  echo "dev/await-parts.sh: waited $((SECONDS - t0)) s for the local parts"
fi
