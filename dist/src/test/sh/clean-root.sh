#!/usr/bin/env bash
# clean-root.sh DEB TARBALL ROOT [CLOUD_CONF] - HostPackageIT's host: a root that holds only what
# the package depends on (the files of the packages its Depends names, and those packages in the
# root's dpkg database), a shell, readlink and dirname - no JDK. The package is installed with
# dpkg -i into it, the tarball unpacked beside, and the command run in it with chroot. Prints
# each step's output between markers for the test to read. Needs root (chroot, mount).
set -euo pipefail
DEB="$1"; TGZ="$2"; ROOT="$3"; CLOUD_CONF="${4:-}"
cleanup() { umount "$ROOT/proc" 2>/dev/null || true; }
trap cleanup EXIT
cleanup
rm -rf "$ROOT"
mkdir -p "$ROOT"/{bin,usr/bin,etc/iscsi,proc,opt,var/lib/dpkg/info,var/lib/dpkg/updates,var/lib/dpkg/triggers}
install -d -m 1777 "$ROOT/tmp"
: > "$ROOT/var/lib/dpkg/status"
for p in $(dpkg-deb -f "$DEB" Depends | tr -d ' ' | tr ',' ' '); do
  { dpkg-query -s "$p"; echo; } >> "$ROOT/var/lib/dpkg/status"
  dpkg-query -L "$p" > "$ROOT/var/lib/dpkg/info/$(dpkg-query -W -f='${binary:Package}' "$p").list"
  dpkg-query -L "$p" | while read -r f; do
    if [ -f "$f" ]; then cp -L --parents "$f" "$ROOT"; fi
  done
done
cp -L /bin/dash "$ROOT/bin/sh"
cp -L /usr/bin/readlink /usr/bin/dirname "$ROOT/usr/bin/"
echo "InitiatorName=iqn.2026-11.org.example:clean-root" > "$ROOT/etc/iscsi/initiatorname.iscsi"
[ -n "$CLOUD_CONF" ] && cp "$CLOUD_CONF" "$ROOT/etc/cloud.conf"

step() { echo "=== $1"; shift; "$@" 2>&1 || echo "=== exit $?"; }
step "java in the root" sh -c "ls '$ROOT'/usr/bin '$ROOT'/bin | grep -c '^java$' || true"
step "dpkg -i" dpkg --root="$ROOT" -i "$DEB"
step "dpkg -s" dpkg --root="$ROOT" -s standalone-cinder
mount -t proc proc "$ROOT/proc"
step "--version" chroot "$ROOT" /usr/bin/standalone-cinder --version
step "cinder connector" chroot "$ROOT" /usr/bin/standalone-cinder cinder connector
if [ -n "$CLOUD_CONF" ]; then
  step "cinder check" chroot "$ROOT" /usr/bin/standalone-cinder cinder check --cloud-config /etc/cloud.conf
fi
tar -C "$ROOT/opt" -xzf "$TGZ"
step "tarball --version" chroot "$ROOT" /opt/standalone-cinder/bin/standalone-cinder --version
step "dpkg -r" dpkg --root="$ROOT" -r standalone-cinder
step "after removal" sh -c "ls -A '$ROOT/usr/lib/standalone-cinder' 2>&1; ls '$ROOT/usr/bin'"
echo "=== end"
