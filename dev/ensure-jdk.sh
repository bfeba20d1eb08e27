#!/usr/bin/env bash
# dev/ensure-jdk.sh - install a JDK 17 and Maven from Debian's packages if missing.
set -euo pipefail
need=""
command -v javac >/dev/null 2>&1 || need="$need openjdk-17-jdk-headless"
command -v mvn >/dev/null 2>&1 || need="$need maven"
if [ -n "$need" ]; then
  echo "ensure-jdk: installing$need"
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y --no-install-recommends -o DPkg::Lock::Timeout=600 $need >/dev/null \
    || { apt-get update -o DPkg::Lock::Timeout=600 >/dev/null && \
         apt-get install -y --no-install-recommends -o DPkg::Lock::Timeout=600 $need >/dev/null; }
fi
