#!/usr/bin/env bash
# start.sh - a real Kubernetes control plane on loopback: etcd (Debian's etcd-server),
# kube-apiserver and kube-controller-manager built from Debian's `kubernetes` source package
# by build.sh (cached outside the clone), with certificates made here.
#
#   sudo dev/kube-local/start.sh [--fresh] [--running] [--snapshots] [--state-dir DIR]
#   --running:   exit 0 if a control plane of this state dir answers, 1 if not; starts nothing
#   --fresh:     stop what runs from this state dir and start anew (empty etcd, new certificates)
#   --snapshots: also the snapshot API: the three snapshot.storage.k8s.io CRDs of
#                external-snapshotter v4.2.1 (v1 and v1beta1), read as data from
#                ../shared/snapshot-crds (beside the clone; KUBE_LOCAL_SNAPSHOT_CRDS) and
#                established before this exits; a missing directory is an error, never a skip.
#                No snapshot-controller runs here: the e2e suite runs a stand-in of its own (e2e's
#                SnapshotControllerStandIn; docs/testing.md). With --running: whether the API
#                server serves snapshot.storage.k8s.io/v1 too. Kept for the state dir: a later
#                start without the flag (a test restarting the API server) keeps them, until
#                --fresh.
#
# Everything listens on 127.0.0.1 only and is recorded by PID under $STATE/run; stop.sh
# ends exactly that. What it writes to $STATE:
#   admin.kubeconfig        cluster-admin (client certificate, group system:masters)
#   ca.crt                  the cluster CA (also the API server's serving CA)
#   kube-local.env          KUBE_LOCAL_KUBECONFIG, KUBE_LOCAL_SERVER, KUBE_LOCAL_CA,
#                           KUBE_LOCAL_BIN, KUBE_LOCAL_VERSION, KUBE_LOCAL_KUBECTL (sourceable)
#   logs/*.log              each component's log; logs/audit.log: every request of the
#                           standalone-cinder namespace's ServiceAccounts (JSON lines)
# The API server runs with Node,RBAC authorization, service-account tokens (signing key made
# here), and the admission plugins the project meets in real clusters (Mutating/Validating
# webhooks, NodeRestriction, DefaultStorageClass, StorageObjectInUseProtection,
# PersistentVolumeClaimResize...).
# The controller manager runs with --use-service-account-credentials (the PV binder, PVC
# protection, garbage collector, namespace and service-account token controllers); it starts
# only once the API server's RBAC bootstrap is done (before that its own lookups are refused).
# Its client may send 100 requests a second, not 20: at 20, the PV binder's events and
# annotations for a few thousand pending claims (the hostile-object tests) keep it minutes behind,
# and every claim of the cluster waits for it before any external provisioner may act.
# The node lifecycle controller runs with its defaults (a Node whose kubelet is silent for 40 s is
# NotReady and tainted unreachable; its pods evicted after their 300 s toleration), as on a real
# cluster: what happens to a claim when a node dies is tested here (e2e's NodeLossE2EIT).
#
# Env: KUBE_LOCAL_STATE (/tmp/kube-local), KUBE_LOCAL_API_PORT (6443),
#      KUBE_LOCAL_ETCD_PORT (2379; the peer port is +1), KUBE_LOCAL_CM_PORT (10257),
#      KUBE_LOCAL_CACHE (see build.sh), KUBE_LOCAL_TIMEOUT (60 s), KUBE_LOCAL_SNAPSHOT_CRDS.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=../apt-lock.sh
. "$HERE/../apt-lock.sh"
STATE="${KUBE_LOCAL_STATE:-/tmp/kube-local}"
API_PORT="${KUBE_LOCAL_API_PORT:-6443}"
ETCD_PORT="${KUBE_LOCAL_ETCD_PORT:-2379}"
CM_PORT="${KUBE_LOCAL_CM_PORT:-10257}"
SCHED_PORT="${KUBE_LOCAL_SCHED_PORT:-10259}"
TIMEOUT="${KUBE_LOCAL_TIMEOUT:-60}"
FRESH=0
CHECK_ONLY=0
SNAPSHOTS=0
SNAPSHOT_CRDS="${KUBE_LOCAL_SNAPSHOT_CRDS:-$HERE/../../../shared/snapshot-crds}"
while [ $# -gt 0 ]; do
  case "$1" in
    --fresh) FRESH=1; shift ;;
    --running) CHECK_ONLY=1; shift ;;
    --snapshots) SNAPSHOTS=1; shift ;;
    --state-dir) STATE="$2"; shift 2 ;;
    -h|--help) sed -n '2,43p' "$0"; exit 0 ;;
    *) echo "kube-local start: unknown argument $1" >&2; exit 2 ;;
  esac
done
# A control plane started with --snapshots keeps them when started again without the flag (a test
# that kills the API server restarts it so): the choice is kept in the state dir until --fresh.
if [ "$SNAPSHOTS" = 0 ] && [ "$FRESH" = 0 ] && [ -f "$STATE/snapshots" ]; then SNAPSHOTS=1; fi
RUN="$STATE/run"
PKI="$STATE/pki"
LOGS="$STATE/logs"
SERVER="https://127.0.0.1:$API_PORT"
log() { echo "kube-local: $*" >&2; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

# Whether the API server of this state dir answers /readyz with the admin's certificate.
api_ready() {
  [ -f "$PKI/admin.crt" ] || return 1
  curl -sf --max-time 2 --cacert "$PKI/ca.crt" --cert "$PKI/admin.crt" --key "$PKI/admin.key" \
    "$SERVER/readyz" >/dev/null 2>&1
}

alive() { # name
  local f="$RUN/$1.pid"
  [ -s "$f" ] && [ -d "/proc/$(cat "$f")" ]
}

# Whether the API server serves the snapshot API (its CRDs established).
snapshots_served() {
  curl -sf --max-time 2 --cacert "$PKI/ca.crt" --cert "$PKI/admin.crt" --key "$PKI/admin.key" \
    "$SERVER/apis/snapshot.storage.k8s.io/v1" 2>/dev/null | grep -q '"volumesnapshotcontents"'
}

if [ "$CHECK_ONLY" = 1 ]; then
  alive etcd && alive kube-apiserver && alive kube-controller-manager && alive kube-scheduler \
    && api_ready && { [ "$SNAPSHOTS" = 0 ] || snapshots_served; }
  exit $?
fi

t0=$(now)
if [ "$FRESH" = 1 ] || ! { alive etcd && alive kube-apiserver; }; then
  "$HERE/stop.sh" --state-dir "$STATE" >/dev/null 2>&1 || true
  [ "$FRESH" = 1 ] && rm -rf "$STATE/etcd" "$STATE/pki" "$STATE/snapshots"
fi
if [ "$SNAPSHOTS" = 1 ] && ! ls "$SNAPSHOT_CRDS"/snapshot.storage.k8s.io_*.yaml >/dev/null 2>&1; then
  log "--snapshots: no snapshot API CRDs (snapshot.storage.k8s.io_*.yaml) in $SNAPSHOT_CRDS (set KUBE_LOCAL_SNAPSHOT_CRDS)"
  exit 1
fi
if alive kube-apiserver && alive kube-controller-manager && alive kube-scheduler && api_ready \
  && { [ "$SNAPSHOTS" = 0 ] || snapshots_served; }; then
  log "already running ($STATE)"
  exit 0
fi

BIN="$("$HERE/build.sh")"
for p in etcd-server openssl curl; do
  if ! command -v "${p%-server}" >/dev/null 2>&1; then
    apt_lock
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$p" >/dev/null
    apt_unlock
  fi
done
VERSION="$("$BIN/kube-apiserver" --version | awk '{print $2}')"
t_built=$(now)
mkdir -p "$RUN" "$PKI" "$LOGS"
chmod 700 "$PKI"

# ---------------------------------------------------------------- certificates (once per state)
cert() { # name subject [client|server] [sans]
  local name="$1" subj="$2" kind="$3" sans="${4:-}"
  [ -f "$PKI/$name.crt" ] && return 0
  # RSA: clients read these keys too, and not every Kubernetes client reads a PKCS#8 EC key
  # (fabric8 7.8 fails with "Invalid DER: object is not integer").
  openssl req -new -newkey rsa:2048 -nodes \
    -keyout "$PKI/$name.key" -subj "$subj" -out "$PKI/$name.csr" 2>/dev/null
  {
    echo "basicConstraints=CA:FALSE"
    echo "keyUsage=critical,digitalSignature,keyEncipherment"
    if [ "$kind" = server ]; then echo "extendedKeyUsage=serverAuth"; else echo "extendedKeyUsage=clientAuth"; fi
    [ -n "$sans" ] && echo "subjectAltName=$sans"
  } >"$PKI/$name.ext"
  openssl x509 -req -in "$PKI/$name.csr" -CA "$PKI/ca.crt" -CAkey "$PKI/ca.key" -CAcreateserial \
    -days 365 -sha256 -extfile "$PKI/$name.ext" -out "$PKI/$name.crt" 2>/dev/null
  rm -f "$PKI/$name.csr" "$PKI/$name.ext"
  chmod 600 "$PKI/$name.key"
}
if [ ! -f "$PKI/ca.crt" ]; then
  openssl req -x509 -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
    -keyout "$PKI/ca.key" -subj "/CN=kube-local-ca" -days 365 -out "$PKI/ca.crt" \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null
  chmod 600 "$PKI/ca.key"
fi
cert apiserver "/CN=kube-apiserver" server \
  "IP:127.0.0.1,IP:10.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local"
cert admin "/O=system:masters/CN=kube-local-admin" client
cert controller-manager "/CN=system:kube-controller-manager" client
cert scheduler "/CN=system:kube-scheduler" client
# The API server's client certificate for admission webhooks (its AdmissionConfiguration below):
# a webhook started with --client-ca can tell the API server from any other caller.
cert webhook-client "/CN=kube-apiserver-webhook-client" client
if [ ! -f "$PKI/sa.key" ]; then
  openssl genrsa -out "$PKI/sa.key" 2048 2>/dev/null
  openssl rsa -in "$PKI/sa.key" -pubout -out "$PKI/sa.pub" 2>/dev/null
  chmod 600 "$PKI/sa.key"
fi
cp "$PKI/ca.crt" "$STATE/ca.crt"

kubeconfig() { # file user cert key
  cat >"$1" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: kube-local
  cluster:
    server: $SERVER
    certificate-authority: $PKI/ca.crt
users:
- name: $2
  user:
    client-certificate: $3
    client-key: $4
contexts:
- name: kube-local
  context: {cluster: kube-local, user: $2}
current-context: kube-local
EOF
  chmod 600 "$1"
}
kubeconfig "$STATE/admin.kubeconfig" admin "$PKI/admin.crt" "$PKI/admin.key"
kubeconfig "$STATE/controller-manager.kubeconfig" controller-manager \
  "$PKI/controller-manager.crt" "$PKI/controller-manager.key"
kubeconfig "$STATE/scheduler.kubeconfig" scheduler "$PKI/scheduler.crt" "$PKI/scheduler.key"

# ---------------------------------------------------------------- processes
# Each runs in its own session (setsid): its PID is its process group, which stop.sh signals.
launch() { # name cmd...
  local name="$1"; shift
  setsid "$@" >"$LOGS/$name.log" 2>&1 </dev/null &
  echo $! >"$RUN/$name.pid"
}
wait_for() { # what seconds command...
  local what="$1" secs="$2"; shift 2
  local end=$(( $(date +%s) + secs ))
  until "$@"; do
    if [ "$(date +%s)" -ge "$end" ]; then
      log "$what did not come up within ${secs}s; its log:"
      tail -30 "$LOGS/$what.log" >&2 || true
      exit 1
    fi
    sleep 0.1
  done
}

if ! alive etcd; then
  mkdir -p "$STATE/etcd"
  # A quota past etcd's 2 GiB: the suite writes claims of 200 KiB by the thousand
  # (HostileObjectsE2EIT), and the database file keeps their pages until a defragmentation.
  launch etcd /usr/bin/etcd --name kube-local --data-dir "$STATE/etcd" \
    --quota-backend-bytes 8589934592 \
    --listen-client-urls "http://127.0.0.1:$ETCD_PORT" \
    --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
    --listen-peer-urls "http://127.0.0.1:$((ETCD_PORT + 1))" \
    --initial-advertise-peer-urls "http://127.0.0.1:$((ETCD_PORT + 1))" \
    --initial-cluster "kube-local=http://127.0.0.1:$((ETCD_PORT + 1))"
  etcd_ok() { curl -sf --max-time 1 "http://127.0.0.1:$ETCD_PORT/health" | grep -q '"health":"true"'; }
  wait_for etcd "$TIMEOUT" etcd_ok
fi
t_etcd=$(now)

# An audit log of what the project's ServiceAccounts ask (verb, resource, name, the authorizer's
# decision): the e2e suite checks the manifests' RBAC against the calls the code really makes.
# The webhook's fuzz run alone writes about 100 MB of it, the size at which the API server would
# rotate the file by default: --audit-log-maxsize keeps a whole run in one file.
cat >"$STATE/audit-policy.yaml" <<'POLICY'
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
  - level: Metadata
    userGroups: ["system:serviceaccounts:standalone-cinder"]
  - level: None
POLICY
# The webhooks the suite starts listen on 127.0.0.1:19443 (the e2e suite, the demo) and :19444;
# the project's own Deployment on the first node (dev/node-local/deployment) is reached through the
# node's forward of 127.0.0.1:18443.
cat >"$STATE/webhook-client.kubeconfig" <<EOF
apiVersion: v1
kind: Config
users:
- name: "127.0.0.1:18443"
  user: {client-certificate: $PKI/webhook-client.crt, client-key: $PKI/webhook-client.key}
- name: "127.0.0.1:19443"
  user: {client-certificate: $PKI/webhook-client.crt, client-key: $PKI/webhook-client.key}
- name: "127.0.0.1:19444"
  user: {client-certificate: $PKI/webhook-client.crt, client-key: $PKI/webhook-client.key}
EOF
cat >"$STATE/admission.yaml" <<EOF
apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
- name: ValidatingAdmissionWebhook
  configuration:
    apiVersion: apiserver.config.k8s.io/v1
    kind: WebhookAdmissionConfiguration
    kubeConfigFile: $STATE/webhook-client.kubeconfig
- name: MutatingAdmissionWebhook
  configuration:
    apiVersion: apiserver.config.k8s.io/v1
    kind: WebhookAdmissionConfiguration
    kubeConfigFile: $STATE/webhook-client.kubeconfig
EOF
if ! alive kube-apiserver; then
  launch kube-apiserver "$BIN/kube-apiserver" \
    --admission-control-config-file "$STATE/admission.yaml" \
    --audit-policy-file "$STATE/audit-policy.yaml" \
    --audit-log-path "$LOGS/audit.log" --audit-log-format json --audit-log-mode blocking \
    --audit-log-maxsize 2048 \
    --etcd-servers "http://127.0.0.1:$ETCD_PORT" \
    --bind-address 127.0.0.1 --advertise-address 127.0.0.1 --secure-port "$API_PORT" \
    --insecure-port 0 \
    --tls-cert-file "$PKI/apiserver.crt" --tls-private-key-file "$PKI/apiserver.key" \
    --client-ca-file "$PKI/ca.crt" \
    --service-account-key-file "$PKI/sa.pub" \
    --service-account-signing-key-file "$PKI/sa.key" \
    --service-account-issuer "https://kubernetes.default.svc.cluster.local" \
    --api-audiences "https://kubernetes.default.svc.cluster.local" \
    --service-cluster-ip-range 10.0.0.0/24 \
    --authorization-mode Node,RBAC \
    --enable-admission-plugins NamespaceLifecycle,LimitRanger,ServiceAccount,NodeRestriction,DefaultStorageClass,DefaultTolerationSeconds,StorageObjectInUseProtection,PersistentVolumeClaimResize,MutatingAdmissionWebhook,ValidatingAdmissionWebhook,ResourceQuota \
    --endpoint-reconciler-type none \
    --allow-privileged=true \
    --profiling=false
fi
wait_for kube-apiserver "$TIMEOUT" api_ready
t_api=$(now)

if ! alive kube-controller-manager; then
  launch kube-controller-manager "$BIN/kube-controller-manager" \
    --kubeconfig "$STATE/controller-manager.kubeconfig" \
    --authentication-kubeconfig "$STATE/controller-manager.kubeconfig" \
    --authorization-kubeconfig "$STATE/controller-manager.kubeconfig" \
    --bind-address 127.0.0.1 --secure-port "$CM_PORT" --port 0 \
    --use-service-account-credentials \
    --service-account-private-key-file "$PKI/sa.key" \
    --root-ca-file "$PKI/ca.crt" \
    --cluster-signing-cert-file "$PKI/ca.crt" --cluster-signing-key-file "$PKI/ca.key" \
    --leader-elect=false \
    --kube-api-qps 100 --kube-api-burst 200 \
    --controllers '*,-nodeipam,-cloud-node-lifecycle,-service,-route' \
    --profiling=false
fi
cm_ok() { curl -sfk --max-time 1 "https://127.0.0.1:$CM_PORT/healthz" >/dev/null 2>&1; }
wait_for kube-controller-manager "$TIMEOUT" cm_ok
# The controllers are up once the token controller has given the default namespace its account.
sa_ok() {
  curl -sf --max-time 2 --cacert "$PKI/ca.crt" --cert "$PKI/admin.crt" --key "$PKI/admin.key" \
    "$SERVER/api/v1/namespaces/default/serviceaccounts/default" >/dev/null 2>&1
}
wait_for kube-controller-manager "$TIMEOUT" sa_ok
t_cm=$(now)

# The scheduler decides where pods go (and so WaitForFirstConsumer claims' nodes) once a kubelet
# registers a node (dev/node-local); with no node it has nothing to do.
if ! alive kube-scheduler; then
  launch kube-scheduler "$BIN/kube-scheduler" \
    --kubeconfig "$STATE/scheduler.kubeconfig" \
    --authentication-kubeconfig "$STATE/scheduler.kubeconfig" \
    --authorization-kubeconfig "$STATE/scheduler.kubeconfig" \
    --bind-address 127.0.0.1 --secure-port "$SCHED_PORT" --port 0 \
    --leader-elect=false --profiling=false
fi
sched_ok() { curl -sfk --max-time 1 "https://127.0.0.1:$SCHED_PORT/healthz" >/dev/null 2>&1; }
wait_for kube-scheduler "$TIMEOUT" sched_ok

# The snapshot API: its CRDs, as data, established before anything uses them. What a cluster's
# snapshot-controller does, the e2e suite's stand-in does (e2e's SnapshotControllerStandIn).
t_snap=$(now)
if [ "$SNAPSHOTS" = 1 ]; then
  touch "$STATE/snapshots"
  "$BIN/kubectl" --kubeconfig "$STATE/admin.kubeconfig" apply -f "$SNAPSHOT_CRDS/" >/dev/null
  "$BIN/kubectl" --kubeconfig "$STATE/admin.kubeconfig" wait --for condition=established \
    --timeout "${TIMEOUT}s" -f "$SNAPSHOT_CRDS/" >/dev/null
  crds_ok() { snapshots_served; }
  wait_for kube-apiserver "$TIMEOUT" crds_ok
fi

# kubectl 1.20's kustomize (2.0) cannot read the manifests (configMapGenerator `envs`): a newer
# kubectl, when the machine has one, applies them; it talks to a 1.20 server with a skew warning.
KUBECTL="$BIN/kubectl"
if command -v kubectl >/dev/null 2>&1; then KUBECTL="$(command -v kubectl)"; fi
cat >"$STATE/kube-local.env" <<EOF
KUBE_LOCAL_KUBECTL=$KUBECTL
KUBE_LOCAL_KUBECONFIG=$STATE/admin.kubeconfig
KUBE_LOCAL_SERVER=$SERVER
KUBE_LOCAL_CA=$STATE/ca.crt
KUBE_LOCAL_BIN=$BIN
KUBE_LOCAL_VERSION=$VERSION
KUBE_LOCAL_AUDIT_LOG=$LOGS/audit.log
KUBE_LOCAL_CONTROLLER_MANAGER_PID=$RUN/kube-controller-manager.pid
KUBE_LOCAL_WEBHOOK_CLIENT_CA=$PKI/ca.crt
KUBE_LOCAL_WEBHOOK_CLIENT_NAME=kube-apiserver-webhook-client
KUBE_LOCAL_SNAPSHOTS=$SNAPSHOTS
EOF
echo "READY kube-local $VERSION at $SERVER (build/cache $(awk -v a="$t0" -v b="$t_built" 'BEGIN{printf "%.1f", b-a}') s, etcd $(awk -v a="$t_built" -v b="$t_etcd" 'BEGIN{printf "%.1f", b-a}') s, kube-apiserver $(awk -v a="$t_etcd" -v b="$t_api" 'BEGIN{printf "%.1f", b-a}') s, controller-manager $(awk -v a="$t_api" -v b="$t_cm" 'BEGIN{printf "%.1f", b-a}') s, snapshots $(since "$t_snap") s; total $(since "$t0") s); KUBECONFIG=$STATE/admin.kubeconfig"
