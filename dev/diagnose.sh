#!/usr/bin/env bash
# dev/diagnose.sh - a short account of the machine and the local parts, printed by dev/test.sh
# when the build fails and before it stops the parts: CI keeps only the tail of its console, so
# what a failure needs to be understood (failing tests, load, Cinder's errors and volumes, the
# iSCSI targets) comes last and in a few lines. It prints nothing secret: Cinder's error lines
# are cut short and any that name a password, secret, key or token are left out.
# Usage: dev/diagnose.sh <test-output.log> <cinder state dir> [provisioner log...]
#        dev/diagnose.sh --left <cinder state dir>: only what the run left in Cinder and tgt
#        (dev/test.sh prints it after a green run: tests clean up, and this says whether they did)
set -uo pipefail
LEFT=0
if [ "${1:-}" = --left ]; then
  LEFT=1
  shift
  set -- /dev/null "$@"
fi
OUT="${1:?test output log}"
STATE="${2:?cinder state dir}"
shift 2
cut_line() { cut -c1-"${1:-170}"; }
quiet() { grep -viE 'pass(word)?|secret|token|key(ring)?|auth_' ; }

left() {
  if [ -f "$STATE/cinder-local.env" ]; then
    # shellcheck disable=SC1091
    . "$STATE/cinder-local.env"
    statuses=$(curl -s -m 10 -H "X-Auth-Token: $CINDER_NOAUTH_TOKEN" \
      -H 'OpenStack-API-Version: volume 3.50' \
      "$CINDER_PROJECT_ENDPOINT/volumes/detail?all_tenants=1&limit=1000" 2>/dev/null \
      | python3 -c 'import collections, json, sys
vs = json.load(sys.stdin)["volumes"]
c = collections.Counter(v["status"] for v in vs)
print(", ".join(f"{k} {n}" for k, n in sorted(c.items())) or "none")
# Whose they were: the claim each was made for (namespaces name the test class that made them).
m = lambda v, k: (v.get("metadata") or {}).get("kubernetes.io/created-for/pvc/" + k, "?")
w = collections.Counter(v["status"] + " " + m(v, "namespace") + "/" + m(v, "name") for v in vs)
for k, n in sorted(w.items())[:30]:
    print(f"  {k}" + (f" (x{n})" if n > 1 else ""))' 2>/dev/null)
    echo "cinder volumes by status: ${statuses:-(no answer from cinder-api)}"
  fi
  if command -v tgtadm >/dev/null 2>&1; then
    echo "iSCSI targets: $(tgtadm --lld iscsi --op show --mode target 2>/dev/null | grep -c '^Target')"
  fi
}
if [ "$LEFT" = 1 ]; then
  echo "== left by the run in Cinder and tgt"
  left
  exit 0
fi

echo "== diagnosis ($(date -u +%FT%TZ))"
echo "machine: load $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) cpus;" \
  "mem free $(awk '/MemAvailable/ {printf "%d MiB", $2/1024}' /proc/meminfo);" \
  "disk free $(df -Pm "$STATE" 2>/dev/null | awk 'NR==2 {print $4 " MiB"}')"
echo "failed (first line each):"
grep -E '^\[ERROR\]   [A-Za-z0-9_$.>]+[:.]' "$OUT" 2>/dev/null | sed 's/^\[ERROR\]   //' \
  | cut_line 200 | head -12 | sed 's/^/  /'

left
# The control plane: a dead or swamped kube-controller-manager names no provisioner for any claim,
# and from outside that looks like a provisioner doing nothing.
KSTATE="${KUBE_LOCAL_STATE:-/tmp/kube-local}"
if [ -f "$KSTATE/kube-local.env" ]; then
  # shellcheck disable=SC1091
  . "$KSTATE/kube-local.env"
  parts=""
  for p in etcd kube-apiserver kube-controller-manager kube-scheduler; do
    f="$KSTATE/run/$p.pid"
    if [ -s "$f" ] && [ -d "/proc/$(cat "$f")" ]; then parts="$parts $p up,"; else parts="$parts $p DOWN,"; fi
  done
  echo "kube-local:${parts%,}"
  cm="$KSTATE/logs/kube-controller-manager.log"
  if [ -f "$cm" ] && grep -q '^panic\|nil pointer' "$cm"; then
    echo "  kube-controller-manager panicked: $(grep -m1 '^panic\|nil pointer' "$cm" | cut_line 150)"
  fi
  # Claims by phase, and the namespaces holding the most pending ones.
  "$KUBE_LOCAL_KUBECTL" --kubeconfig "$KUBE_LOCAL_KUBECONFIG" --request-timeout=20s get pvc -A \
    --no-headers -o custom-columns=NS:.metadata.namespace,PHASE:.status.phase,GONE:.metadata.deletionTimestamp \
    2>/dev/null | awk '{n[$2 ($3 == "<none>" ? "" : ", deleting")]++; t++; if ($2 == "Pending") p[$1]++}
      END {printf "claims:"; if (!t) printf " none"; for (k in n) printf " %s %d;", k, n[k]; print "";
           for (k in p) print p[k], k}' | { read -r first; echo "$first"; sort -rn | head -4 \
      | awk '{print "  pending in " $2 ": " $1}'; }
fi
for f in "$STATE"/log/cinder-volume*.log "$STATE"/log/cinder-api*.log "$STATE"/log/cinder-scheduler*.log; do
  [ -f "$f" ] || continue
  n=$(grep -c ' ERROR ' "$f")
  echo "$(basename "$f"): $n ERROR lines; the last distinct ones:"
  # Cinder's line: date time pid LEVEL module [request] message; the message only.
  # (a traceback's lines carry the prefix too: only messages and the exceptions' own lines)
  grep ' ERROR ' "$f" | quiet | sed -E 's/^[0-9-]+ [0-9:.]+ [0-9]+ ERROR [^ ]+ (\[[^]]*\] )?//' \
    | grep -vE '^[[:space:]]|^Traceback|^$' | cut_line 150 | awk '!seen[$0]++' | tail -4 \
    | sed 's/^/  /'
done
for f in "$@"; do
  [ -f "$f" ] || continue
  echo "$(basename "$f"): $(grep -c ' WARN ' "$f") WARN, $(grep -c ' ERROR ' "$f") ERROR; the last:"
  grep -E ' (WARN|ERROR) ' "$f" | quiet | cut_line 170 | tail -3 | sed 's/^/  /'
done
