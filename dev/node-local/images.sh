#!/usr/bin/env bash
# images.sh - the node's container images, made here from Debian's packages (no registry is
# reachable): busybox (busybox-static) and pause (a static binary built with Debian's gcc), each an
# OCI image archive that `ctr -n k8s.io images import` takes.
#
#   dev/node-local/images.sh OUT_DIR     writes OUT_DIR/busybox.tar and OUT_DIR/pause.tar
# Names: standalone-cinder.local/busybox:1 and standalone-cinder.local/pause:1.
set -euo pipefail
OUT="${1:?usage: images.sh OUT_DIR}"
mkdir -p "$OUT"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
sha() { sha256sum "$1" | cut -d' ' -f1; }
size() { stat -c %s "$1"; }

# image NAME ROOTFS_DIR CMD_JSON: an OCI image archive of one uncompressed layer.
image() {
  local name=$1 rootfs=$2 cmd=$3 dir="$WORK/$1"
  mkdir -p "$dir/blobs/sha256"
  # Reproducible: sorted, owned by root, dated 2000-01-01.
  tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=2000-01-01 -C "$rootfs" -cf "$WORK/$name.layer" .
  local layer; layer=$(sha "$WORK/$name.layer")
  mv "$WORK/$name.layer" "$dir/blobs/sha256/$layer"
  printf '{"architecture":"amd64","os":"linux","config":{"Cmd":%s},"rootfs":{"type":"layers","diff_ids":["sha256:%s"]}}' \
    "$cmd" "$layer" >"$WORK/$name.config"
  local config; config=$(sha "$WORK/$name.config")
  local config_size; config_size=$(size "$WORK/$name.config")
  mv "$WORK/$name.config" "$dir/blobs/sha256/$config"
  printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:%s","size":%s},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar","digest":"sha256:%s","size":%s}]}' \
    "$config" "$config_size" "$layer" "$(size "$dir/blobs/sha256/$layer")" >"$WORK/$name.manifest"
  local manifest; manifest=$(sha "$WORK/$name.manifest")
  local manifest_size; manifest_size=$(size "$WORK/$name.manifest")
  mv "$WORK/$name.manifest" "$dir/blobs/sha256/$manifest"
  local ref="standalone-cinder.local/$name:1"
  printf '{"schemaVersion":2,"manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:%s","size":%s,"annotations":{"io.containerd.image.name":"%s","org.opencontainers.image.ref.name":"1"}}]}' \
    "$manifest" "$manifest_size" "$ref" >"$dir/index.json"
  echo '{"imageLayoutVersion":"1.0.0"}' >"$dir/oci-layout"
  tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=2000-01-01 -C "$dir" -cf "$OUT/$name.tar" .
  echo "$ref sha256:$manifest"
}

# busybox: the static binary and its applets as links.
mkdir -p "$WORK/busybox-root/bin" "$WORK/busybox-root/tmp"
cp /bin/busybox "$WORK/busybox-root/bin/busybox"
for applet in $(/bin/busybox --list); do
  [ "$applet" = busybox ] || ln -s busybox "$WORK/busybox-root/bin/$applet"
done
image busybox "$WORK/busybox-root" '["sh"]'

# pause: sleeps until a signal ends it, as the kubelet's sandbox holder does.
mkdir -p "$WORK/pause-root"
cat >"$WORK/pause.c" <<'C'
#include <signal.h>
#include <unistd.h>
static void done(int s) { (void) s; _exit(0); }
int main(void) {
  signal(SIGINT, done);
  signal(SIGTERM, done);
  for (;;) pause();
}
C
gcc -static -O2 -o "$WORK/pause-root/pause" "$WORK/pause.c"
image pause "$WORK/pause-root" '["/pause"]'
