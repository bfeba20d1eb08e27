#!/usr/bin/env bash
# start.sh - install (if missing) and start a real OpenStack Cinder
# (Debian bookworm packages, Cinder 21.3 / 2023.1 "Antelope") on loopback.
#
#   sudo ./start.sh [--backend file|fake|rbd|both|LIST] [--keystone] [--fresh]
#                          [--no-install] [--state-dir DIR] [--status] [--running]
#   --running: exit 0 if a Cinder of this configuration runs, 1 if not; starts nothing
#
# Components (all bound to 127.0.0.1, all started by this script and recorded
# by PID under $STATE/run, stopped by stop.sh):
#   rabbitmq-server (oslo.messaging transport)   127.0.0.1:5672 (+epmd 4369,
#                                                 dist 25672)
#   tgtd (user-space iSCSI target)               127.0.0.1:3260 (backend file)
#   mariadb (cinder's database)                   unix socket only, no TCP
#   cinder-volume, cinder-scheduler, cinder-api  127.0.0.1:8776
#   cinder-backup (posix driver: backups are files under $STATE/cinder/backups, apart from
#                  every volume backend)
#   keystone under uwsgi (only with --keystone)  127.0.0.1:5000, sqlite DB
#   a second cinder-api with auth_strategy=keystone (only with --keystone)
#                                                 127.0.0.1:8777 (API port + 1)
#   ceph-mon/mgr/osd (only for backend rbd)      127.0.0.1:3300/6789 + OSD/mgr ports
#
# Backends:
#   file  (default) lab driver cinder_local_drivers.file_tgt.FileTgtDriver:
#         sparse files + Cinder's stock TgtAdm target helper -> real iSCSI
#         targets with CHAP on 127.0.0.1:3260 (LVM is impossible here: the
#         kernel has no device-mapper).
#   fake  cinder.tests.fake_driver.FakeLoggingVolumeDriver (ships in
#         python3-cinder): API/scheduler/volume flow only, connection_info is
#         {"driver_volume_type":"iscsi","data":{"access_mode":"rw"}}.
#   rbd   upstream cinder.volume.drivers.rbd.RBDDriver on a one-node Ceph
#         (1 mon, 1 mgr, 1 bluestore OSD on a sparse 20 GB file, pool "volumes", cephx
#         user client.cinder); connection_info driver_volume_type "rbd".
#   both  = file,fake.  A comma list (e.g. file,rbd or file,fake,rbd) enables
#         several; volume types lab-iscsi / lab-fake / lab-rbd are created and
#         the first one listed is the default type. Types lab-multiattach (file) and
#         lab-rbd-multiattach (rbd), with multiattach="<is> True", are made too.
#
# Auth: the API on 127.0.0.1:8776 is always noauth (X-Auth-Token: <user>:<project>).
#       --keystone adds keystone and a second cinder-api on 8777 with
#       auth_strategy=keystone; both APIs share one database, scheduler and
#       volume service, so the tests of both modes run against one Cinder.
# Everything it learned is written to $STATE/cinder-local.env (sourceable).
#
# Env overrides: CINDER_LOCAL_STATE (default /tmp/cinder-local),
#   CINDER_LOCAL_BACKEND, CINDER_LOCAL_KEYSTONE=1, CINDER_LOCAL_API_PORT (8776),
#   CINDER_LOCAL_RABBIT_PORT (5672), CINDER_LOCAL_ISCSI_PORT (3260),
#   CINDER_LOCAL_KEYSTONE_PORT (5000), CINDER_LOCAL_TIMEOUT (180 s),
#   CINDER_LOCAL_QUOTA_VOLUMES/_SNAPSHOTS/_GIGABYTES (200/200/1000),
#   CINDER_LOCAL_STATS_INTERVAL (10 s), CINDER_LOCAL_KEEP_ON_FAIL=1.
# Files it needs beside it: stop.sh, ceph-setup.sh, keystone_setup.py,
#   drivers/cinder_local_drivers/{__init__,file_tgt}.py
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=../apt-lock.sh
. "$HERE/../apt-lock.sh"
STATE="${CINDER_LOCAL_STATE:-/tmp/cinder-local}"
BACKEND="${CINDER_LOCAL_BACKEND:-file}"
KEYSTONE="${CINDER_LOCAL_KEYSTONE:-0}"
API_PORT="${CINDER_LOCAL_API_PORT:-8776}"
KS_API_PORT="${CINDER_LOCAL_KEYSTONE_API_PORT:-$((API_PORT + 1))}"
RABBIT_PORT="${CINDER_LOCAL_RABBIT_PORT:-5672}"
RABBIT_DIST_PORT="${CINDER_LOCAL_RABBIT_DIST_PORT:-25672}"
ISCSI_PORT="${CINDER_LOCAL_ISCSI_PORT:-3260}"
KS_PORT="${CINDER_LOCAL_KEYSTONE_PORT:-5000}"
TIMEOUT="${CINDER_LOCAL_TIMEOUT:-180}"
NOAUTH_PROJECT="${CINDER_LOCAL_NOAUTH_PROJECT:-5f3c1a2b9d8e4f60a1b2c3d4e5f60718}"
INSTALL=1
FRESH=0
STATUS_ONLY=0
CHECK_ONLY=0
PY=/usr/bin/python3          # Debian's python (pyenv's python3 may be first)

while [ $# -gt 0 ]; do
  case "$1" in
    --backend) BACKEND="$2"; shift 2 ;;
    --backend=*) BACKEND="${1#*=}"; shift ;;
    --keystone) KEYSTONE=1; shift ;;
    --fresh) FRESH=1; shift ;;
    --no-install) INSTALL=0; shift ;;
    --state-dir) STATE="$2"; shift 2 ;;
    --status) STATUS_ONLY=1; shift ;;
    --running) CHECK_ONLY=1; shift ;;
    -h|--help) sed -n '2,45p' "$0"; exit 0 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done
[ "$BACKEND" = both ] && BACKEND=file,fake
for b in ${BACKEND//,/ }; do
  case "$b" in file|fake|rbd) ;; *) echo "bad --backend $BACKEND (file, fake, rbd or a comma list)" >&2; exit 2 ;; esac
done
has_backend() { case ",$BACKEND," in *,"$1",*) return 0 ;; *) return 1 ;; esac; }
NB=$(echo "${BACKEND//,/ }" | wc -w)
type_of() { case "$1" in file) echo lab-iscsi ;; fake) echo lab-fake ;; rbd) echo lab-rbd ;; esac; }

RUN="$STATE/run"; LOG="$STATE/log"
T_START=$(date +%s.%N)
# Seconds between two `date +%s.%N`s (awk: a fresh machine has it before any package is installed).
since() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", a - b }'; }
log() { printf '[cinder-local %6ss] %s\n' "$(since "$(date +%s.%N)" "$T_START")" "$*"; }
die() { echo "cinder-local: ERROR: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "must run as root (apt-get, tgtd, privsep)"

# On failure stop whatever this run started (CI must not leak processes);
# CINDER_LOCAL_KEEP_ON_FAIL=1 keeps them for debugging.
STARTED=0
on_exit() {
  local rc=$?
  if [ "$rc" != 0 ] && [ "$STARTED" = 1 ] && [ "${CINDER_LOCAL_KEEP_ON_FAIL:-0}" != 1 ]; then
    echo "cinder-local: failed (rc=$rc); logs in $LOG; stopping what was started" >&2
    CINDER_LOCAL_STATE="$STATE" "$HERE/stop.sh" >&2 || true
  fi
}
trap on_exit EXIT

# ----------------------------------------------------------------- helpers
pid_alive() { # pidfile expected-cmdline-substring
  local f="$1" pat="$2" p
  [ -s "$f" ] || return 1
  p=$(cat "$f")
  [ -d "/proc/$p" ] || return 1
  tr '\0' ' ' < "/proc/$p/cmdline" 2>/dev/null | grep -q -- "$pat"
}
port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
wait_for() { # description timeout command...
  local what="$1" t="$2"; shift 2
  local end=$(( $(date +%s) + t ))
  until "$@"; do
    [ "$(date +%s)" -lt "$end" ] || { echo "timeout waiting for $what" >&2; return 1; }
    sleep 0.25
  done
}
http_code() { curl -s -o /dev/null -w '%{http_code}' "$@" 2>/dev/null || true; }
spawn() { # name pidfile logfile cmd... : new session => pid == pgid
  local name="$1" pidf="$2" logf="$3"; shift 3
  # The command as given (NUL-separated), for service.sh's restart: the process's own command
  # line lost what ran before its exec (cinder-backup's private /etc/ceph)
  printf '%s\0' "$@" > "${pidf%.pid}.cmd"
  setsid "$@" >>"$logf" 2>&1 </dev/null &
  echo $! > "$pidf"
}
mem_report() {
  local f p tot=0 pss rss
  printf '%-22s %7s %9s %9s\n' service pid "rss(MiB)" "pss(MiB)"
  for f in "$RUN"/*.pid; do
    [ -e "$f" ] || continue
    p=$(cat "$f"); [ -d "/proc/$p" ] || continue
    # all processes of the session/group this pid leads (+ privsep helpers)
    for q in $(ps -eo pid=,sid= | awk -v s="$p" '$2==s || $1==s {print $1}') ; do
      rss=$(awk '/^Rss:/{print int($2/1024)}' /proc/$q/smaps_rollup 2>/dev/null || echo 0)
      pss=$(awk '/^Pss:/{print int($2/1024)}' /proc/$q/smaps_rollup 2>/dev/null || echo 0)
      printf '%-22s %7s %9s %9s  %s\n' "$(basename "$f" .pid)" "$q" "$rss" "$pss" \
        "$(tr '\0' ' ' </proc/$q/cmdline | cut -c1-60)"
      tot=$((tot + pss))
    done
  done
  echo "total PSS: ${tot} MiB"
}

if [ "$STATUS_ONLY" = 1 ]; then mem_report; exit 0; fi

# ----------------------------------------------------------------- install
PKGS="cinder-api cinder-scheduler cinder-volume cinder-backup rabbitmq-server mariadb-server python3-pymysql tgt sqlite3 python3-requests curl libiscsi-bin qemu-utils qemu-block-extra open-iscsi"
[ "$KEYSTONE" = 1 ] && PKGS="$PKGS keystone uwsgi-core uwsgi-plugin-python3"
has_backend rbd && PKGS="$PKGS ceph-mon ceph-mgr ceph-osd ceph-common python3-rbd python3-rados"
missing=""
for p in $PKGS; do
  dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed' || missing="$missing $p"
done
if [ -n "$missing" ] && [ "$CHECK_ONLY" = 0 ]; then
  [ "$INSTALL" = 1 ] || die "missing packages:$missing (and --no-install given)"
  log "installing:$missing"
  apt_lock
  export DEBIAN_FRONTEND=noninteractive
  # Debian's OpenStack packages ask debconf questions (dbconfig, rabbit,
  # keystone registration): answer "no" to all of them.
  debconf-set-selections <<'EOF'
cinder-common cinder/configure_db boolean false
cinder-common cinder/configure_rabbit boolean false
cinder-common cinder/configure_ksat boolean false
cinder-common cinder-common/dbconfig-install boolean false
cinder-api cinder/configure_api-endpoint boolean false
keystone keystone/configure_db boolean false
keystone keystone/create-admin-tenant boolean false
keystone keystone/register-endpoint boolean false
keystone keystone/dbconfig-install boolean false
EOF
  # Never let maintainer scripts start the packaged services (they would
  # bind 0.0.0.0 with the stock configs).  Most CI images already ship a
  # policy-rc.d that does exactly this; add one only for the install.
  added_policy=0
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d; chmod +x /usr/sbin/policy-rc.d; added_policy=1
  fi
  APT_OPTS=(-y --no-install-recommends -o DPkg::Lock::Timeout=600
            -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold)
  t0=$(date +%s)
  if ! apt-get install "${APT_OPTS[@]}" $missing >"$STATE.apt.log" 2>&1; then
    log "apt-get install failed; running apt-get update and retrying"
    apt-get update -o DPkg::Lock::Timeout=600 >>"$STATE.apt.log" 2>&1
    apt-get install "${APT_OPTS[@]}" $missing >>"$STATE.apt.log" 2>&1 \
      || { tail -30 "$STATE.apt.log" >&2; die "apt-get install failed (log: $STATE.apt.log)"; }
  fi
  [ "$added_policy" = 1 ] && rm -f /usr/sbin/policy-rc.d
  apt_unlock
  log "install done in $(( $(date +%s) - t0 ))s (log: $STATE.apt.log)"
fi

# ----------------------------------------------------------------- already up?
if pid_alive "$RUN/cinder-api.pid" cinder-api && pid_alive "$RUN/cinder-volume.pid" cinder-volume \
   && pid_alive "$RUN/cinder-scheduler.pid" cinder-scheduler && pid_alive "$RUN/rabbitmq.pid" rabbitmq \
   && pid_alive "$RUN/cinder-backup.pid" cinder-backup \
   && pid_alive "$RUN/mariadb.pid" mariadbd \
   && [ -s "$STATE/cinder-local.env" ] && [ "$(http_code "http://127.0.0.1:$API_PORT/")" = 300 ] \
   && [ "$(cat "$RUN/backend" 2>/dev/null)" = "$BACKEND" ] && [ "$(cat "$RUN/keystone" 2>/dev/null)" = "$KEYSTONE" ] \
   && { [ "$KEYSTONE" = 0 ] || pid_alive "$RUN/cinder-api-keystone.pid" cinder-api; }; then
  [ "$CHECK_ONLY" = 1 ] && exit 0
  log "already running (state $STATE); stop with stop.sh"
  cat "$STATE/cinder-local.env"
  exit 0
fi
[ "$CHECK_ONLY" = 1 ] && exit 1
# partially running: stop what is left, then start clean
if ls "$RUN"/*.pid >/dev/null 2>&1; then
  log "stale/partial run found in $RUN: stopping it first"
  CINDER_LOCAL_STATE="$STATE" "$HERE/stop.sh" || true
fi
if [ "$FRESH" = 1 ]; then log "--fresh: wiping $STATE"; rm -rf "$STATE"; fi

for port in "$API_PORT" "$RABBIT_PORT"; do
  port_open "$port" && die "127.0.0.1:$port is already in use by a process this script did not start"
done
if has_backend file && port_open "$ISCSI_PORT"; then die "127.0.0.1:$ISCSI_PORT (iSCSI) already in use"; fi
if has_backend rbd; then for port in 3300 6789; do port_open $port && die "127.0.0.1:$port (ceph-mon) already in use"; done; fi
if [ "$KEYSTONE" = 1 ]; then
  for port in "$KS_PORT" "$KS_API_PORT"; do
    port_open "$port" && die "127.0.0.1:$port (keystone or its cinder-api) already in use"
  done
fi

mkdir -p "$RUN" "$LOG" "$STATE/rabbitmq/home" "$STATE/rabbitmq/mnesia" "$STATE/rabbitmq/log" \
         "$STATE/cinder/lock" "$STATE/cinder/lib" "$STATE/cinder/tgt-conf" "$STATE/cinder/file-volumes"
echo "$BACKEND" > "$RUN/backend"; echo "$KEYSTONE" > "$RUN/keystone"
STARTED=1

# ----------------------------------------------------------------- rabbitmq
cat > "$STATE/rabbitmq/rabbitmq.conf" <<EOF
listeners.tcp.default = 127.0.0.1:$RABBIT_PORT
loopback_users.guest = true
log.console = true
log.console.level = warning
log.file = false
EOF
echo '[].' > "$STATE/rabbitmq/enabled_plugins"
: > "$STATE/rabbitmq/rabbitmq-env.conf"
# epmd (Erlang port mapper, 4369) is forked by rabbitmq and daemonizes; record
# it only if no epmd listened before (zombies of a previous epmd would fool
# pgrep, so look at the listening socket)
epmd_before=0; port_open 4369 && epmd_before=1
log "starting rabbitmq-server on 127.0.0.1:$RABBIT_PORT"
(
  export HOME="$STATE/rabbitmq/home" RABBITMQ_NODENAME=cinderlocal@localhost RABBITMQ_USE_LONGNAME=false \
    RABBITMQ_NODE_IP_ADDRESS=127.0.0.1 RABBITMQ_NODE_PORT="$RABBIT_PORT" RABBITMQ_DIST_PORT="$RABBIT_DIST_PORT" \
    ERL_EPMD_ADDRESS=127.0.0.1 RABBITMQ_CONFIG_FILE="$STATE/rabbitmq/rabbitmq.conf" \
    RABBITMQ_MNESIA_BASE="$STATE/rabbitmq/mnesia" RABBITMQ_LOG_BASE="$STATE/rabbitmq/log" \
    RABBITMQ_ENABLED_PLUGINS_FILE="$STATE/rabbitmq/enabled_plugins" \
    RABBITMQ_CONF_ENV_FILE="$STATE/rabbitmq/rabbitmq-env.conf" \
    RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS="-kernel inet_dist_use_interface {127,0,0,1}"
  spawn rabbitmq "$RUN/rabbitmq.pid" "$LOG/rabbitmq.log" /usr/lib/rabbitmq/bin/rabbitmq-server
)
wait_for "rabbitmq port $RABBIT_PORT" 90 port_open "$RABBIT_PORT" || { tail -20 "$LOG/rabbitmq.log" >&2; die "rabbitmq did not start"; }
if [ "$epmd_before" = 0 ]; then
  ss -ltnpH 'sport = :4369' 2>/dev/null | sed -n 's/.*"epmd",pid=\([0-9]*\).*/\1/p' | head -1 > "$RUN/epmd.pid"
  [ -s "$RUN/epmd.pid" ] || rm -f "$RUN/epmd.pid"
fi
log "rabbitmq up"

# ----------------------------------------------------------------- keystone
KS_ADMIN_PW=lab-admin-secret; KS_CINDER_PW=lab-cinder-secret; KS_PROV_PW=lab-provisioner-secret
KS_TRUSTEE_PW=lab-trustee-secret; KS_APPCRED_SECRET=lab-appcred-secret
KS_URL="http://127.0.0.1:$KS_PORT"
if [ "$KEYSTONE" = 1 ]; then
  mkdir -p "$STATE/keystone"
  cat > "$STATE/keystone/keystone.conf" <<EOF
[DEFAULT]
log_dir = $LOG
log_file = keystone.log
use_stderr = false
[database]
connection = sqlite:///$STATE/keystone/keystone.sqlite
[token]
provider = fernet
expiration = 86400
[fernet_tokens]
key_repository = $STATE/keystone/fernet-keys
[fernet_receipts]
key_repository = $STATE/keystone/fernet-keys
[credential]
key_repository = $STATE/keystone/credential-keys
[cache]
enabled = false
EOF
  KM=(keystone-manage --config-file "$STATE/keystone/keystone.conf")
  if [ ! -s "$STATE/keystone/keystone.sqlite" ]; then
    log "keystone: db_sync + fernet/credential setup + bootstrap"
    "${KM[@]}" db_sync >>"$LOG/keystone-manage.log" 2>&1
    # WAL: without it the single uwsgi worker hits "database is locked" on
    # POST /v3/services (a reader's lock blocks the writer's commit)
    sqlite3 "$STATE/keystone/keystone.sqlite" 'PRAGMA journal_mode=WAL;' >/dev/null
    "${KM[@]}" fernet_setup --keystone-user root --keystone-group root >>"$LOG/keystone-manage.log" 2>&1
    "${KM[@]}" credential_setup --keystone-user root --keystone-group root >>"$LOG/keystone-manage.log" 2>&1
    "${KM[@]}" bootstrap --bootstrap-password "$KS_ADMIN_PW" \
      --bootstrap-admin-url "$KS_URL/v3/" --bootstrap-internal-url "$KS_URL/v3/" \
      --bootstrap-public-url "$KS_URL/v3/" --bootstrap-region-id RegionOne >>"$LOG/keystone-manage.log" 2>&1
  fi
  log "starting keystone (uwsgi) on $KS_URL"
  OS_KEYSTONE_CONFIG_FILES="$STATE/keystone/keystone.conf" \
    spawn keystone "$RUN/keystone.pid" "$LOG/keystone-uwsgi.log" \
    uwsgi --plugin python3 --http-socket "127.0.0.1:$KS_PORT" --wsgi-file /usr/bin/keystone-wsgi-public \
          --master --processes 1 --threads 1 --die-on-term --need-app --lazy-apps --buffer-size 65535 \
          --add-header 'Connection: close'
  wait_for keystone 90 sh -c "[ \"\$(curl -s -o /dev/null -w '%{http_code}' $KS_URL/v3)\" = 200 ]" \
    || { tail -30 "$LOG/keystone-uwsgi.log" >&2; die "keystone did not answer"; }
  KS_IDS=$($PY "$HERE/keystone_setup.py" "$KS_URL" "$KS_ADMIN_PW" "$KS_CINDER_PW" "$KS_PROV_PW" \
           "http://127.0.0.1:$KS_API_PORT" RegionOne "$KS_TRUSTEE_PW" "$KS_APPCRED_SECRET")
  ks_id() { echo "$KS_IDS" | $PY -c "import json,sys; print(json.load(sys.stdin)['$1'])"; }
  K8S_PROJECT_ID=$(ks_id k8s_project_id); KS_TRUST_ID=$(ks_id trust_id); KS_APPCRED_ID=$(ks_id application_credential_id)
  log "keystone up; objects: $KS_IDS"
fi

# ----------------------------------------------------------------- ceph (rbd)
if has_backend rbd; then
  log "starting ceph (1 mon, 1 mgr, 1 bluestore OSD) on 127.0.0.1:3300/6789"
  "$HERE/ceph-setup.sh" "$STATE" "$RUN" "$LOG" || die "ceph did not start (logs: $LOG/ceph-*)"
  log "ceph up"
fi

# ----------------------------------------------------------------- mariadb
# Cinder's database. Not sqlite: four Cinder processes write to it (two APIs, the
# scheduler, the volume service) and sqlite answered "database is locked" (a 500)
# under that load even in WAL mode. Unix socket only: --skip-networking opens no port.
DB_DIR="$STATE/mysql"; DB_SOCK="$DB_DIR/mysqld.sock"; DB_PW=lab-db-secret
if [ ! -d "$DB_DIR/data/mysql" ]; then
  mkdir -p "$DB_DIR/data"
  log "mariadb: initializing $DB_DIR/data"
  mariadb-install-db --user=root --datadir="$DB_DIR/data" --auth-root-authentication-method=socket \
    --skip-test-db >>"$LOG/mariadb-install.log" 2>&1 || { tail -20 "$LOG/mariadb-install.log" >&2; die "mariadb-install-db failed"; }
fi
log "starting mariadb (unix socket $DB_SOCK, no TCP)"
# Long network timeouts: Cinder's services are eventlet processes, and on a loaded machine one can
# stall for tens of seconds mid-handshake (cinder-backup hashing a GiB); the server's defaults
# (connect 10 s, read 30 s) then close its connection, and the request it served is lost
# ("MySQL server has gone away", a backup left creating for good; seen in CI).
spawn mariadb "$RUN/mariadb.pid" "$LOG/mariadb.log" \
  mariadbd --user=root --datadir="$DB_DIR/data" --socket="$DB_SOCK" --pid-file="$DB_DIR/mariadbd.pid" \
    --skip-networking --log-error="$LOG/mariadb.err" --innodb-buffer-pool-size=64M \
    --innodb-log-file-size=16M --skip-log-bin --character-set-server=utf8mb4 \
    --connect-timeout=300 --net-read-timeout=600 --net-write-timeout=600
wait_for mariadb 60 mariadb-admin --socket="$DB_SOCK" --silent ping \
  || { tail -20 "$LOG/mariadb.err" >&2; die "mariadb did not start"; }
mariadb --socket="$DB_SOCK" -e "CREATE DATABASE IF NOT EXISTS cinder CHARACTER SET utf8mb4;
  CREATE USER IF NOT EXISTS 'cinder'@'localhost' IDENTIFIED BY '$DB_PW';
  GRANT ALL PRIVILEGES ON cinder.* TO 'cinder'@'localhost';" \
  || die "cannot create the cinder database"
log "mariadb up"

# ----------------------------------------------------------------- cinder.conf
CONF="$STATE/cinder/cinder.conf"
KS_CONF="$STATE/cinder/cinder-keystone.conf"
EB="$BACKEND"
{
cat <<EOF
[DEFAULT]
auth_strategy = noauth
my_ip = 127.0.0.1
host = cinder-local
state_path = $STATE/cinder/lib
log_dir = $LOG
use_stderr = false
debug = false
transport_url = rabbit://guest:guest@127.0.0.1:$RABBIT_PORT/
osapi_volume_listen = 127.0.0.1
osapi_volume_listen_port = $API_PORT
osapi_volume_workers = 1
api_paste_config = /etc/cinder/api-paste.ini
rootwrap_config = /etc/cinder/rootwrap.conf
enabled_backends = $EB
glance_api_servers = http://127.0.0.1:9292
report_interval = 5
periodic_interval = 10
scheduler_driver_init_wait_time = 10
# capacity in get_pools is the driver's periodic report (upstream default 60 s)
backend_stats_polling_interval = ${CINDER_LOCAL_STATS_INTERVAL:-10}
volumes_dir = $STATE/cinder/tgt-conf
# per-project quotas (upstream defaults 10 volumes / 10 snapshots / 1000 GB)
quota_volumes = ${CINDER_LOCAL_QUOTA_VOLUMES:-200}
quota_snapshots = ${CINDER_LOCAL_QUOTA_SNAPSHOTS:-200}
quota_gigabytes = ${CINDER_LOCAL_QUOTA_GIGABYTES:-1000}
quota_backups = ${CINDER_LOCAL_QUOTA_BACKUPS:-200}
quota_backup_gigabytes = ${CINDER_LOCAL_QUOTA_BACKUP_GIGABYTES:-1000}
# backups as files in a directory of their own: they outlive the volume and its backend
backup_driver = cinder.backup.drivers.posix.PosixBackupDriver
backup_posix_path = $STATE/cinder/backups
# uncompressed: the tests' volumes are mostly zeros, and zlib over every GiB made each backup
# wait for a CPU the tests share
backup_compression_algorithm = none
EOF
[ "$NB" -gt 1 ] && echo "default_volume_type = $(type_of "${BACKEND%%,*}")"
cat <<EOF

[database]
connection = mysql+pymysql://cinder:$DB_PW@localhost/cinder?unix_socket=$DB_SOCK&charset=utf8

[oslo_concurrency]
lock_path = $STATE/cinder/lock

[cinder_sys_admin]
# run privsep helpers directly (we are root) instead of sudo+cinder-rootwrap,
# whose filters only accept --config-file under /etc
helper_command = privsep-helper --config-file $CONF

[privsep_osbrick]
helper_command = privsep-helper --config-file $CONF

[file]
volume_driver = cinder_local_drivers.file_tgt.FileTgtDriver
volume_backend_name = file
target_helper = tgtadm
target_protocol = iscsi
target_ip_address = 127.0.0.1
target_port = $ISCSI_PORT
volumes_dir = $STATE/cinder/tgt-conf
file_volumes_dir = $STATE/cinder/file-volumes
file_capacity_gb = 100

[fake]
volume_driver = cinder.tests.fake_driver.FakeLoggingVolumeDriver
volume_backend_name = fake

[rbd]
volume_driver = cinder.volume.drivers.rbd.RBDDriver
volume_backend_name = rbd
rbd_pool = volumes
rbd_ceph_conf = $STATE/ceph/ceph.conf
rbd_user = cinder
rbd_secret_uuid = 457eb676-33da-42ec-9a8c-9293d545c337
rbd_flatten_volume_from_snapshot = false
report_discard_supported = true
EOF
} > "$CONF"

if [ "$KEYSTONE" = 1 ]; then
  # the keystone-authenticated API: same database, queue and backends
  mkdir -p "$LOG/keystone-api"
  sed -e "s/^auth_strategy = .*/auth_strategy = keystone/" \
      -e "s/^osapi_volume_listen_port = .*/osapi_volume_listen_port = $KS_API_PORT/" \
      -e "s#^log_dir = .*#log_dir = $LOG/keystone-api#" "$CONF" > "$KS_CONF"
  cat >> "$KS_CONF" <<EOF

[keystone_authtoken]
www_authenticate_uri = $KS_URL
auth_url = $KS_URL
auth_type = password
project_domain_name = Default
user_domain_name = Default
project_name = service
username = cinder
password = $KS_CINDER_PW
region_name = RegionOne
EOF
fi

if [ ! -e "$STATE/cinder/db-synced" ]; then
  log "cinder-manage db sync"
  cinder-manage --config-file "$CONF" db sync >>"$LOG/cinder-manage.stdout" 2>&1 || { tail -20 "$LOG/cinder-manage.log" >&2; die "db sync failed"; }
  touch "$STATE/cinder/db-synced"
fi

# ----------------------------------------------------------------- tgtd
if has_backend file; then
  echo "include $STATE/cinder/tgt-conf/*" > /etc/tgt/conf.d/cinder-local.conf
  log "starting tgtd on 127.0.0.1:$ISCSI_PORT"
  spawn tgtd "$RUN/tgtd.pid" "$LOG/tgtd.log" tgtd -f --iscsi "portal=127.0.0.1:$ISCSI_PORT"
  wait_for tgtd 30 port_open "$ISCSI_PORT" || { tail -20 "$LOG/tgtd.log" >&2; die "tgtd did not start"; }
  # re-create targets of volumes that were exported before a restart
  tgt-admin --execute >>"$LOG/tgtd.log" 2>&1 || true
fi

# ----------------------------------------------------------------- cinder
T_CINDER=$(date +%s.%N)
mkdir -p "$STATE/cinder/backups"
for svc in volume backup scheduler api; do
  log "starting cinder-$svc"
  cmd=(/usr/bin/cinder-$svc --config-file "$CONF")
  if [ "$svc" = backup ] && has_backend rbd; then
    # cinder-backup reads and writes RBD volumes through os-brick, which takes the Ceph user's key
    # only from /etc/ceph (as on any OpenStack backup host). The nodes share this machine's /etc
    # and put (and remove) their own key there, so cinder-backup gets a private /etc/ceph that
    # holds Cinder's key, in a mount namespace of its own.
    mkdir -p "$STATE/ceph/etc" /etc/ceph
    cp "$STATE/ceph/ceph.client.cinder.keyring" "$STATE/ceph/etc/"
    cmd=(unshare --mount --propagation private -- sh -c 'mount --bind "$0" /etc/ceph && exec "$@"' \
      "$STATE/ceph/etc" "${cmd[@]}")
  fi
  PYTHONPATH="$HERE/drivers${PYTHONPATH:+:$PYTHONPATH}" \
    spawn "cinder-$svc" "$RUN/cinder-$svc.pid" "$LOG/cinder-$svc.stdout" "${cmd[@]}"
done
if [ "$KEYSTONE" = 1 ]; then
  log "starting cinder-api (keystone) on 127.0.0.1:$KS_API_PORT"
  spawn cinder-api-keystone "$RUN/cinder-api-keystone.pid" "$LOG/cinder-api-keystone.stdout" \
    /usr/bin/cinder-api --config-file "$KS_CONF"
fi

API="http://127.0.0.1:$API_PORT"
wait_for cinder-api "$TIMEOUT" sh -c "[ \"\$(curl -s -o /dev/null -w '%{http_code}' $API/)\" = 300 ]" \
  || { tail -30 "$LOG/cinder-api.log" >&2; die "cinder-api did not answer"; }
log "cinder-api answers on $API"

# readiness: the noauth API sees every pool (admin through noauth)
TOKEN="admin:$NOAUTH_PROJECT"; PROJECT="$NOAUTH_PROJECT"
AH=(-H "X-Auth-Token: $TOKEN" -H "Content-Type: application/json")
pools_ready() {
  local want=$NB
  [ "$(curl -s "${AH[@]}" "$API/v3/$PROJECT/scheduler-stats/get_pools" \
      | $PY -c 'import json,sys
try: print(len(json.load(sys.stdin)["pools"]))
except Exception: print(0)')" -ge "$want" ]
}
wait_for "scheduler to see the backend pools" "$TIMEOUT" pools_ready \
  || { tail -30 "$LOG/cinder-volume.log" "$LOG/cinder-scheduler.log" >&2; die "backend never reported to the scheduler"; }
if [ "$KEYSTONE" = 1 ]; then
  KS_API="http://127.0.0.1:$KS_API_PORT"
  ks_api_ready() {
    local tok
    [ "$(http_code "$KS_API/")" = 300 ] || return 1
    tok=$(curl -s -D - -o /dev/null -H 'Content-Type: application/json' "$KS_URL/v3/auth/tokens" -d \
      "{\"auth\":{\"identity\":{\"methods\":[\"password\"],\"password\":{\"user\":{\"name\":\"provisioner\",\"domain\":{\"id\":\"default\"},\"password\":\"$KS_PROV_PW\"}}},\"scope\":{\"project\":{\"name\":\"k8s\",\"domain\":{\"id\":\"default\"}}}}}" \
      | awk 'tolower($1)=="x-subject-token:"{print $2}' | tr -d '\r')
    [ -n "$tok" ] && [ "$(http_code -H "X-Auth-Token: $tok" "$KS_API/v3/$K8S_PROJECT_ID/volumes")" = 200 ]
  }
  wait_for "keystone cinder-api" "$TIMEOUT" ks_api_ready \
    || { tail -30 "$LOG/keystone-api/cinder-api.log" >&2; die "the keystone cinder-api did not answer"; }
fi
T_READY=$(date +%s.%N)

if [ "$NB" -gt 1 ]; then
  existing=$(curl -s "${AH[@]}" "$API/v3/$PROJECT/types" \
    | $PY -c 'import json,sys; print(" ".join(t["name"] for t in json.load(sys.stdin)["volume_types"]))')
  for be in ${BACKEND//,/ }; do
    name=$(type_of "$be")
    if ! echo " $existing " | grep -q " $name "; then
      id=$(curl -s "${AH[@]}" -X POST "$API/v3/$PROJECT/types" -d "{\"volume_type\":{\"name\":\"$name\",\"os-volume-type-access:is_public\":true}}" \
           | $PY -c 'import json,sys; print(json.load(sys.stdin)["volume_type"]["id"])')
      curl -s -o /dev/null "${AH[@]}" -X POST "$API/v3/$PROJECT/types/$id/extra_specs" \
           -d "{\"extra_specs\":{\"volume_backend_name\":\"$be\"}}"
    fi
  done
fi

# Multiattach types, for ReadWriteMany claims: lab-multiattach on the iSCSI (file) backend and
# lab-rbd-multiattach on Ceph. Cinder's scheduler sends them only to pools that report
# multiattach (both drivers do), and its RBD driver makes their images without exclusive-lock.
multiattach_type() { case "$1" in file) echo lab-multiattach ;; rbd) echo lab-rbd-multiattach ;; esac; }
existing=$(curl -s "${AH[@]}" "$API/v3/$PROJECT/types" \
  | $PY -c 'import json,sys; print(" ".join(t["name"] for t in json.load(sys.stdin)["volume_types"]))')
for be in file rbd; do
  has_backend "$be" || continue
  name=$(multiattach_type "$be")
  echo " $existing " | grep -q " $name " && continue
  id=$(curl -s "${AH[@]}" -X POST "$API/v3/$PROJECT/types" -d "{\"volume_type\":{\"name\":\"$name\",\"os-volume-type-access:is_public\":true}}" \
       | $PY -c 'import json,sys; print(json.load(sys.stdin)["volume_type"]["id"])')
  curl -s -o /dev/null "${AH[@]}" -X POST "$API/v3/$PROJECT/types/$id/extra_specs" \
       -d "{\"extra_specs\":{\"multiattach\":\"<is> True\",\"volume_backend_name\":\"$be\"}}"
done

# ----------------------------------------------------------------- report
{
  echo "# generated by start.sh $(date -u +%FT%TZ)"
  echo "CINDER_LOCAL_STATE=$STATE"
  echo "CINDER_BACKEND=$BACKEND"
  echo "CINDER_ENDPOINT=$API/v3"
  echo "CINDER_PROJECT_ID=$PROJECT"
  echo "CINDER_PROJECT_ENDPOINT=$API/v3/$PROJECT"
  echo "CINDER_MAX_MICROVERSION=3.70"
  echo "CINDER_NOAUTH_TOKEN=admin:$PROJECT"
  if [ "$KEYSTONE" = 1 ]; then
    echo "CINDER_KEYSTONE_ENDPOINT=$KS_API/v3/$K8S_PROJECT_ID"
    echo "CINDER_KEYSTONE_PROJECT_ID=$K8S_PROJECT_ID"
    echo "OS_AUTH_URL=$KS_URL/v3"
    echo "OS_USERNAME=provisioner"
    echo "OS_PASSWORD=$KS_PROV_PW"
    echo "OS_PROJECT_NAME=k8s"
    echo "OS_USER_DOMAIN_NAME=Default"
    echo "OS_PROJECT_DOMAIN_NAME=Default"
    echo "OS_REGION_NAME=RegionOne"
    echo "OS_ADMIN_PASSWORD=$KS_ADMIN_PW"
    # the other v3 methods, under names that do not clash with the password auth above
    echo "CINDER_LOCAL_APPCRED_ID=$KS_APPCRED_ID"
    echo "CINDER_LOCAL_APPCRED_SECRET=$KS_APPCRED_SECRET"
    echo "CINDER_LOCAL_TRUST_ID=$KS_TRUST_ID"
    echo "CINDER_LOCAL_TRUSTEE_USER=trustee"
    echo "CINDER_LOCAL_TRUSTEE_PASSWORD=$KS_TRUSTEE_PW"
  fi
  has_backend file && echo "CINDER_ISCSI_PORTAL=127.0.0.1:$ISCSI_PORT"
  has_backend file && echo "CINDER_MULTIATTACH_TYPE=$(multiattach_type file)"
  has_backend rbd && echo "CINDER_RBD_MULTIATTACH_TYPE=$(multiattach_type rbd)"
  if has_backend rbd; then
    echo "CEPH_CONF=$STATE/ceph/ceph.conf"
    echo "CEPH_CLIENT_ID=cinder"
    echo "CEPH_CINDER_KEYRING=$STATE/ceph/ceph.client.cinder.keyring"
  fi
  [ "$NB" -gt 1 ] && echo "CINDER_VOLUME_TYPES=$(for b in ${BACKEND//,/ }; do printf '%s,' "$(type_of $b)"; done | sed 's/,$//')"
} > "$STATE/cinder-local.env"

log "READY: cinder $(since "$T_READY" "$T_CINDER")s after starting the cinder services, $(since "$T_READY" "$T_START")s in total"
echo
echo "Cinder v3 (noauth) : $API/v3/$PROJECT   (max microversion 3.70; send 'OpenStack-API-Version: volume 3.x')"
echo "Auth (noauth)      : header 'X-Auth-Token: <user>:<project>', e.g. 'X-Auth-Token: admin:$PROJECT'"
echo "                     project ids in URLs must match [0-9a-f-]+ (e.g. a UUID hex); /v3/<id>/... or /v3/... both work"
if [ "$KEYSTONE" = 1 ]; then
  echo "Cinder v3 (keystone): $KS_API/v3/$K8S_PROJECT_ID"
  echo "Auth (keystone)    : POST $KS_URL/v3/auth/tokens  user provisioner, project k8s, domain Default"
  echo "                     (passwords in the env file); catalog types volumev3 / block-storage"
fi
echo "Backend            : $BACKEND$(has_backend file && echo "; file = iSCSI targets by tgtd on 127.0.0.1:$ISCSI_PORT, CHAP")$(has_backend rbd && echo "; rbd = ceph pool volumes, conf $STATE/ceph/ceph.conf, user cinder")$([ "$NB" -gt 1 ] && echo "; volume types: $(for b in ${BACKEND//,/ }; do printf '%s ' "$(type_of $b)"; done)")"
echo "Env file           : $STATE/cinder-local.env     Logs: $LOG     Stop: $HERE/stop.sh"
