#!/usr/bin/env bash
# dev/images/build.sh - builds the project's three images from images/Dockerfile as it is, with
# buildah, on a machine that can pull no base image: the build arguments name base images made
# here from Debian's packages (mmdebstrap), as a user without docker.io or gcr.io would pass their
# own:
#   BUILD_IMAGE  Debian bookworm with openjdk-17-jdk-headless and maven (the build stage)
#   RUN_IMAGE    Debian bookworm's essential packages and openjdk-17-jre-headless, user 65532
#                (standing in for distroless' java17 nonroot: no shell is needed by the images)
#   NODE_IMAGE   Debian bookworm with apt (the node component installs its tools with it)
# The machine's extra CA certificates (/usr/local/share/ca-certificates, e.g. a proxy's that
# intercepts TLS) go into the build image, for Maven's downloads.
#
#   sudo dev/images/build.sh [--out DIR]
# Writes DIR/{webhook,provisioner,node}.tar (OCI archives, e.g. for `ctr images import`); DIR is
# target/images by default, each named as the manifests' short name resolves
# (docker.io/standalone-cinder/<target>:<version>). Base images are cached in buildah's storage,
# keyed by how they are made (the function below, its arguments, the mirror): a Debian point
# release does not make them anew; `buildah rmi --all` does.
# Env: IMAGES_VERSION (the images' tag, 0.1.0), DEBIAN_MIRROR (http://deb.debian.org/debian),
# IMAGES_TARGETS (the Dockerfile's targets to build: "webhook provisioner node").
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
OUT="$ROOT/target/images"
[ "${1:-}" = --out ] && OUT="$2"
VERSION="${IMAGES_VERSION:-0.1.0}"
read -r -a TARGETS <<<"${IMAGES_TARGETS:-webhook provisioner node}"
MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
export STORAGE_DRIVER=vfs
log() { echo "images: $*" >&2; }
now() { date +%s; }

if [ "$(id -u)" != 0 ]; then
  echo "dev/images/build.sh: run as root (it installs buildah and mmdebstrap)" >&2
  exit 2
fi
# shellcheck source=../apt-lock.sh
. "$ROOT/dev/apt-lock.sh"
MISSING=()
for p in buildah mmdebstrap; do command -v "$p" >/dev/null 2>&1 || MISSING+=("$p"); done
if [ ${#MISSING[@]} -gt 0 ]; then
  log "installing ${MISSING[*]}"
  apt_lock
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${MISSING[@]}" >/dev/null
  apt_unlock
fi

# base NAME VARIANT PACKAGES CONFIG...: a Debian root of those packages as localhost/NAME:KEY.
base() {
  local name="$1" variant="$2" packages="$3"
  shift 3
  local key
  key=$(printf '%s\n' "$(declare -f base)" "$MIRROR" "$@" "$name" "$variant" "$packages" | sha256sum | cut -c1-12)
  local image="localhost/standalone-cinder-base/$name:$key"
  if buildah inspect --type image "$image" >/dev/null 2>&1; then
    echo "$image"
    return
  fi
  local t0 tar c m
  t0=$(now)
  tar=$(mktemp --suffix .tar)
  mmdebstrap --mode=root --variant="$variant" ${packages:+--include="$packages"} --format=tar \
    bookworm "$tar" "deb $MIRROR bookworm main" >/dev/null 2>&1
  c=$(buildah from scratch)
  m=$(buildah mount "$c")
  tar -xf "$tar" -C "$m"
  rm -f "$tar"
  if [ "$name" = build ] && compgen -G '/usr/local/share/ca-certificates/*.crt' >/dev/null; then
    cp /usr/local/share/ca-certificates/*.crt "$m/usr/local/share/ca-certificates/"
    chroot "$m" update-ca-certificates >/dev/null 2>&1
    # Java's trust store too: the hook that would add them runs java, which cannot start in a
    # bare chroot (no /proc), and Maven trusts only that store. The host's keytool writes it.
    local crt
    command -v keytool >/dev/null || log "no keytool here (dev/ensure-jdk.sh): Maven in the build stage trusts only the public CAs"
    for crt in /usr/local/share/ca-certificates/*.crt; do
      keytool -importcert -noprompt -keystore "$m/etc/ssl/certs/java/cacerts" -storepass changeit \
        -alias "local-$(basename "$crt" .crt)" -file "$crt" >/dev/null 2>&1 || true
    done
  fi
  buildah umount "$c" >/dev/null
  buildah config --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "$@" "$c"
  buildah commit -q "$c" "$image" >/dev/null
  buildah rm "$c" >/dev/null
  log "base image $name made in $(($(now) - t0)) s"
  echo "$image"
}

t0=$(now)
BUILD=$(base build apt openjdk-17-jdk-headless,maven,ca-certificates-java)
RUN=$(base runtime essential openjdk-17-jre-headless --user 65532:65532)
NODE=none
[[ " ${TARGETS[*]} " == *" node "* ]] && NODE=$(base node apt "")
t_base=$(now)
mkdir -p "$OUT"
cd "$ROOT"
for target in "${TARGETS[@]}"; do
  t=$(now)
  # --layers: the build stage is built once for the three targets.
  buildah bud -q --layers --isolation chroot -f images/Dockerfile --target "$target" \
    --build-arg BUILD_IMAGE="$BUILD" --build-arg RUN_IMAGE="$RUN" --build-arg NODE_IMAGE="$NODE" \
    --build-arg VERSION="$VERSION" --build-arg REVISION="$(git rev-parse HEAD 2>/dev/null || echo unknown)" \
    -t "standalone-cinder/$target:$VERSION" . >"$OUT/$target.build.log" 2>&1 || {
    # The build stage's Maven says why on its standard output.
    log "$target did not build; the end of $OUT/$target.build.log:"
    tail -n 80 "$OUT/$target.build.log" >&2
    exit 1
  }
  rm -f "$OUT/$target.tar"
  buildah push -q "standalone-cinder/$target:$VERSION" "oci-archive:$OUT/$target.tar:docker.io/standalone-cinder/$target:$VERSION"
  log "$target built in $(($(now) - t)) s: $OUT/$target.tar ($(du -m "$OUT/$target.tar" | cut -f1) MiB)"
done
echo "READY images ${TARGETS[*]} in $OUT (base images $((t_base - t0)) s; total $(($(now) - t0)) s)"
