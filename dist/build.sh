#!/usr/bin/env bash
# dist/build.sh VERSION JAR OUT - the attach CLI for hosts: the `standalone-cinder` command with its
# own Java runtime (jlink), so a host needs no JDK. Makes, in OUT:
#   standalone-cinder_<version>_<arch>.deb          dpkg -i; the command in /usr/bin
#   standalone-cinder-<version>-linux-<arch>.tar.gz  unpack anywhere; bin/standalone-cinder
# Both hold the same tree: bin/standalone-cinder (a sh launcher), lib/ (the provisioner's jar),
# runtime/ (the JDK's modules the jar needs, from the JDK that builds it).
set -euo pipefail
VERSION="$1"; JAR="$2"; OUT="$3"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
[ -f "$JAR" ] || { echo "dist: no $JAR (build the provisioner first)" >&2; exit 1; }
for t in jlink dpkg-deb dpkg; do
  command -v "$t" >/dev/null || { echo "dist: needs $t (a JDK's jlink; Debian's dpkg)" >&2; exit 1; }
done
# Debian's versions sort 0.1.0~SNAPSHOT before 0.1.0.
DEB_VERSION="${VERSION/-SNAPSHOT/~SNAPSHOT}"
ARCH="$(dpkg --print-architecture)"
STAGE="$OUT/stage"
TREE="$STAGE/usr/lib/standalone-cinder"
rm -rf "$STAGE" && mkdir -p "$TREE/bin" "$TREE/lib" "$STAGE/usr/bin" "$STAGE/DEBIAN" \
  "$STAGE/usr/share/doc/standalone-cinder"

# The modules: jdeps --print-module-deps of the jar (java.base ... jdk.unsupported), and what it
# cannot see: the EC ciphers TLS to Keystone and Cinder negotiate (a service provider), and the
# XML parser (logging is set up in code, but a logback.xml an admin puts on the class path is read
# with it). The CLI commands run from this runtime in
# HostPackageIT, so a module that goes missing fails there.
MODULES=java.base,java.compiler,java.desktop,java.logging,java.naming,java.net.http,java.scripting,java.sql,java.xml,jdk.crypto.ec,jdk.management,jdk.unsupported
jlink --add-modules "$MODULES" --strip-debug --no-man-pages --no-header-files --compress=2 \
  --output "$TREE/runtime"
cp "$JAR" "$TREE/lib/standalone-cinder-provisioner.jar"
install -m 0755 "$HERE/standalone-cinder.sh" "$TREE/bin/standalone-cinder"
ln -s ../lib/standalone-cinder/bin/standalone-cinder "$STAGE/usr/bin/standalone-cinder"
cp "$HERE/../docs/attach.md" "$STAGE/usr/share/doc/standalone-cinder/attach.md"

# Depends: the packages of the shared libraries the runtime's java and libraries link to (as
# dpkg-shlibdeps would find them), leaving out the desktop ones java.desktop's AWT brings, which
# nothing here loads.
DEPENDS=$(
  find "$TREE/runtime" -type f \( -name '*.so' -o -path '*/bin/java' \) \
    ! -name 'libawt*' ! -name 'libfontmanager.so' ! -name 'libjawt.so' ! -name 'libjsound.so' \
    ! -name 'libsplashscreen.so' ! -name 'liblcms.so' ! -name 'libmlib_image.so' ! -name 'libjavajpeg.so' \
    -exec ldd {} \; 2>/dev/null | awk -v own="$TREE/" '$3 ~ /^\// && index($3, own) != 1 {print $3}' |
  sort -u |
  while read -r lib; do
    dpkg -S "$(readlink -f "$lib")" 2>/dev/null || dpkg -S "$lib" 2>/dev/null ||
      { echo "dist: no package holds $lib" >&2; exit 1; }
  done |
  cut -d: -f1 | sort -u | paste -sd, - | sed 's/,/, /g')
SIZE=$(du -sk "$STAGE/usr" | cut -f1)
cat > "$STAGE/DEBIAN/control" <<CONTROL
Package: standalone-cinder
Version: $DEB_VERSION
Architecture: $ARCH
Maintainer: standalone-cinder developers <standalone-cinder@localhost>
Installed-Size: $SIZE
Depends: $DEPENDS
Recommends: open-iscsi
Suggests: ceph-common
Section: admin
Priority: optional
Description: attach OpenStack Cinder volumes to a host without Nova
 The standalone-cinder command: "cinder attach" makes a Cinder volume a block
 device of this host (iSCSI through open-iscsi, Ceph RBD through the kernel's
 rbd client), "cinder detach" undoes it, "cinder connector" prints what Cinder
 is told about the host, "cinder check" walks the way to Cinder. It carries its
 own Java runtime. See /usr/share/doc/standalone-cinder/attach.md.
CONTROL

mkdir -p "$OUT"
DEB="$OUT/standalone-cinder_${DEB_VERSION}_${ARCH}.deb"
TGZ="$OUT/standalone-cinder-${VERSION}-linux-${ARCH}.tar.gz"
# Both at once: each is mostly one core's gzip.
dpkg-deb --root-owner-group -Zgzip --build "$STAGE" "$DEB" >/dev/null &
tar -C "$STAGE/usr/lib" --owner=0 --group=0 -czf "$TGZ" standalone-cinder
wait $!
rm -rf "$STAGE"
echo "dist: $(du -h "$DEB" | cut -f1) $DEB (Depends: $DEPENDS)"
echo "dist: $(du -h "$TGZ" | cut -f1) $TGZ"
