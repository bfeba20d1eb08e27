#!/bin/sh
# standalone-cinder - the attach CLI with its own Java runtime (docs/attach.md). Resolved from
# wherever it is linked or unpacked, so /usr/bin/standalone-cinder and an unpacked tarball's
# bin/standalone-cinder both find the runtime and the jar beside them.
# STANDALONE_CINDER_JAVA_OPTS: more JVM options (e.g. -Xmx256m).
here=$(dirname "$(readlink -f "$0")")
# A short-lived command: the quick compiler only and the smallest collector start it fastest.
# shellcheck disable=SC2086
exec "$here/../runtime/bin/java" -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Xshare:auto \
  ${STANDALONE_CINDER_JAVA_OPTS:-} -jar "$here/../lib/standalone-cinder-provisioner.jar" "$@"
