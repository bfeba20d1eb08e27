#!/usr/bin/env bash
# dev/bench.sh - the benchmark (docs/benchmarks.md): builds the jars, starts the local Cinder
# (reusing one that runs), and prints one table in which every figure stands beside a baseline
# measured in the same run. Extra arguments go to the bench (e.g. --claims 500 --rounds 5).
# Env: BENCH_NO_CINDER=1 skips the real-Cinder rows (and starting Cinder); BENCH_NO_KUBE=1 the
# real-API-server rows (and starting dev/kube-local: built from Debian's source the first time).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
STATE="${CINDER_LOCAL_STATE:-/tmp/cinder-local}"
KUBE_STATE="${KUBE_LOCAL_STATE:-/tmp/kube-local}"
"$ROOT/dev/ensure-jdk.sh"
# The webhook's baselines and load: wrk, nginx (Debian's), openssl s_time; taskset pins them.
missing=""
for p in wrk nginx-light openssl util-linux; do
  dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed' || missing="$missing $p"
done
if [ -n "$missing" ]; then
  # Never let the package start a system nginx on port 80.
  added_policy=0
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d; chmod +x /usr/sbin/policy-rc.d; added_policy=1
  fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $missing >/dev/null \
    || { apt-get update >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $missing >/dev/null; }
  [ "$added_policy" = 1 ] && rm -f /usr/sbin/policy-rc.d
fi
cd "$ROOT"
mvn -B -ntp -q -DskipTests install -pl bench,webhook -am
args=()
started=0
if [ "${BENCH_NO_CINDER:-0}" != 1 ]; then
  # Reuse a running Cinder in either of the configurations the other scripts start.
  if ! "$ROOT/dev/cinder-local/start.sh" --running \
     && ! "$ROOT/dev/cinder-local/start.sh" --keystone --backend file,rbd --running; then
    "$ROOT/dev/cinder-local/start.sh" >/dev/null
    started=1
  fi
  args+=(--cinder-env "$STATE/cinder-local.env")
fi
kube_started=0
if [ "${BENCH_NO_KUBE:-0}" != 1 ]; then
  if ! "$ROOT/dev/kube-local/start.sh" --running; then
    "$ROOT/dev/kube-local/start.sh" >/dev/null
    kube_started=1
  fi
  args+=(--kube-env "$KUBE_STATE/kube-local.env")
fi
trap '[ "$started" = 1 ] && "$ROOT/dev/cinder-local/stop.sh" >/dev/null || true
      [ "$kube_started" = 1 ] && "$ROOT/dev/kube-local/stop.sh" >/dev/null || true' EXIT
echo "machine: $(nproc) cores, $(awk '/MemTotal/{printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(java -version 2>&1 | head -1)"
java -jar bench/target/standalone-cinder-bench.jar "${args[@]}" "$@"
