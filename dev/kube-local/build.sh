#!/usr/bin/env bash
# build.sh - build kube-apiserver, kube-controller-manager, kube-scheduler and the kubelet (and a
# matching kubectl)
# from Debian bookworm's source package `kubernetes` (1.20.x, fully vendored) with
# Debian's Go, once, into a cache outside the clone.
#
#   sudo dev/kube-local/build.sh [--cache DIR] [--print-bin-dir] [--prepare]
#
# --prepare does only what takes the apt lock (dev/apt-lock.sh): the build's packages and the
# source package's download, kept for the build that follows. dev/test.sh runs it before it starts
# Cinder, whose packages hold the lock for minutes on a fresh machine: the build, the longest
# part of a fresh start, then goes on beside Cinder's install instead of after it.
#
# The cache is keyed by the source package's version: a new version builds anew,
# the same version is reused (a build takes about 4 minutes on 2 cores).
# Everything comes from Debian's archive (the deb-src entry is derived from the
# machine's own apt sources), nothing else is downloaded.
#
# One fix is applied to the vendored source: github.com/modern-go/reflect2 v1.0.1
# does not work with Go >= 1.18 (kube-apiserver faults in json-iterator's map
# iteration on the first patch a mutating webhook returns); Debian's
# golang-github-modern-go-reflect2-dev (1.0.2) carries the fixed files.
#
# Env: KUBE_LOCAL_CACHE (default /var/cache/standalone-cinder/kube).
set -euo pipefail
# shellcheck source=../apt-lock.sh
. "$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/apt-lock.sh"

CACHE="${KUBE_LOCAL_CACHE:-/var/cache/standalone-cinder/kube}"
PRINT_ONLY=0
PREPARE=0
while [ $# -gt 0 ]; do
  case "$1" in
    --cache) CACHE="$2"; shift 2 ;;
    --print-bin-dir) PRINT_ONLY=1; shift ;;
    --prepare) PREPARE=1; shift ;;
    -h|--help) sed -n '2,24p' "$0"; exit 0 ;;
    *) echo "build.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done

log() { echo "kube-local build: $*" >&2; }
BINS=(kube-apiserver kube-controller-manager kube-scheduler kubelet kubectl)
# gcc and libc6-dev: the kubelet is built with cgo (its vendored gonvml); golang-go only recommends gcc.
PACKAGES=(golang-go golang-github-modern-go-reflect2-dev etcd-server dpkg-dev rsync gcc libc6-dev)

apt_updated=0
apt_update_once() {
  if [ "$apt_updated" = 0 ]; then apt-get update -qq; apt_updated=1; fi
}

# A deb-src twin of every deb entry the machine already has, so `apt-get source`
# reaches the same archive and suite as the binaries.
ensure_deb_src() {
  local src=/etc/apt/sources.list.d/standalone-cinder-src.sources
  [ -f "$src" ] && return 0
  local found=0
  : >"$src.tmp"
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -e "$f" ] || continue
    [ "$f" = "$src" ] && continue
    if grep -q '^Types:.*\bdeb\b' "$f"; then
      sed -E 's/^Types:.*$/Types: deb-src/' "$f" >>"$src.tmp"; echo >>"$src.tmp"; found=1
    fi
  done
  if [ -f /etc/apt/sources.list ] && grep -qE '^deb ' /etc/apt/sources.list; then
    sed -nE 's/^deb (.*)$/deb-src \1/p' /etc/apt/sources.list >/etc/apt/sources.list.d/standalone-cinder-src.list
    found=1
  fi
  if [ "$found" = 0 ]; then rm -f "$src.tmp"; log "no apt source to derive a deb-src entry from"; exit 1; fi
  mv "$src.tmp" "$src"
  apt_updated=0
}

source_version() {
  apt-cache showsrc kubernetes 2>/dev/null | sed -n 's/^Version: //p' | sort -V | tail -1
}

apt_lock
ensure_deb_src
apt_update_once
apt_unlock
VERSION="$(source_version)"
if [ -z "$VERSION" ]; then log "apt-get knows no source package 'kubernetes'"; exit 1; fi
KEY="$(echo "$VERSION" | tr -c 'A-Za-z0-9.+~_\n-' '_')"
BIN_DIR="$CACHE/$KEY/bin"

if [ "$PRINT_ONLY" = 1 ]; then echo "$BIN_DIR"; exit 0; fi

missing=()
for p in "${PACKAGES[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  log "installing ${missing[*]}"
  apt_lock
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  apt_unlock
fi

have_all=1
for b in "${BINS[@]}"; do [ -x "$BIN_DIR/$b" ] || have_all=0; done
if [ "$have_all" = 1 ]; then
  log "cached: kubernetes $VERSION in $BIN_DIR"
  echo "$BIN_DIR"
  exit 0
fi

start=$(date +%s)
WORK="$CACHE/$KEY/work"
# The download is kept (marked whole once apt-get is done) for the build after a --prepare, or
# after a build that failed; the source is unpacked afresh each time.
if [ ! -f "$WORK/downloaded" ]; then
  rm -rf "$WORK"; mkdir -p "$WORK"
  log "fetching source package kubernetes $VERSION"
  apt_lock
  (cd "$WORK" && apt-get source -qq --download-only "kubernetes=$VERSION" >/dev/null)
  apt_unlock
  touch "$WORK/downloaded"
fi
if [ "$PREPARE" = 1 ]; then
  log "prepared: packages installed, kubernetes $VERSION downloaded in $(( $(date +%s) - start )) s"
  exit 0
fi
rm -rf "$WORK/src" "$WORK/gopath"
(cd "$WORK" && dpkg-source -x --no-check ./*.dsc src >/dev/null)
SRC="$WORK/src"

# The vendored reflect2 1.0.1 -> Debian's 1.0.2 (see the header).
R2_VENDOR="$SRC/vendor/github.com/modern-go/reflect2"
R2_DEB=/usr/share/gocode/src/github.com/modern-go/reflect2
if [ ! -d "$R2_DEB" ]; then log "missing $R2_DEB"; exit 1; fi
# Replaced, not overlaid: 1.0.2 dropped files of 1.0.1 (go_above_17.go would redeclare).
rm -f "$R2_VENDOR"/*.go "$R2_VENDOR"/*.s
for f in "$R2_DEB"/*.go "$R2_DEB"/*.s; do
  case "$f" in *_test.go|*'*'*) continue ;; esac
  cp "$f" "$R2_VENDOR"/
done
log "replaced vendored reflect2 with Debian's $(dpkg-query -W -f '${Version}' golang-github-modern-go-reflect2-dev)"

# The GOPATH layout of the package's own debian/rules: k8s.io/kubernetes under _output.
GOPATH_DIR="$WORK/gopath"
mkdir -p "$GOPATH_DIR/src/k8s.io"
ln -sfn "$SRC" "$GOPATH_DIR/src/k8s.io/kubernetes"
log "building ${BINS[*]} with $(go version | cut -d' ' -f3)"
(
  cd "$GOPATH_DIR/src/k8s.io/kubernetes"
  export GOPATH="$GOPATH_DIR" GO111MODULE=off GOFLAGS=-mod=vendor GOCACHE="$CACHE/go-build" \
    KUBE_GIT_VERSION="v${VERSION%%+*}" KUBE_GIT_TREE_STATE=clean
  export GOFLAGS=
  make WHAT="cmd/kube-apiserver cmd/kube-controller-manager cmd/kube-scheduler cmd/kubelet cmd/kubectl" >"$WORK/build.log" 2>&1 \
    || { tail -40 "$WORK/build.log" >&2; exit 1; }
)
mkdir -p "$BIN_DIR"
for b in "${BINS[@]}"; do
  f="$(find "$SRC/_output" -type f -name "$b" -perm -u+x | head -1)"
  [ -n "$f" ] || { log "build produced no $b"; exit 1; }
  # Renamed into place: a running binary of an earlier build cannot be overwritten ("text file busy").
  cp "$f" "$BIN_DIR/$b.new"
  mv -f "$BIN_DIR/$b.new" "$BIN_DIR/$b"
done
echo "$VERSION" >"$CACHE/$KEY/VERSION"
rm -rf "$WORK"
log "built kubernetes $VERSION in $(( $(date +%s) - start )) s into $BIN_DIR"
echo "$BIN_DIR"
