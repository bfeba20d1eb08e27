#!/bin/bash
# PID 1 of the node (a UML guest). Its root is the host's / through hostfs, read-only; a tmpfs
# overlay makes it writable without touching the host. pivot_root, not chroot: module autoload
# and user namespaces need the new root to be the real one.
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
mount -t proc proc /proc
KV=$(uname -r)
HERE=$(dirname "$(readlink -f "$0")")
mount -t tmpfs -o size=512m tmpfs /mnt
mkdir -p /mnt/upper /mnt/work /mnt/root /mnt/mods
mount -t hostfs -o ro,/usr/lib/uml/modules hostfs /mnt/mods
insmod "/mnt/mods/$KV/kernel/fs/overlayfs/overlay.ko" || echo "node-init: overlay module did not load"
umount /mnt/mods
if ! mount -t overlay overlay -o lowerdir=/,upperdir=/mnt/upper,workdir=/mnt/work /mnt/root; then
  echo "node-init: no overlay root"; echo o > /proc/sysrq-trigger; sleep 10
fi
umount /proc
mkdir -p /mnt/root/.oldroot
cd /mnt/root || exit 1
pivot_root . .oldroot
# Kernel arguments of the form key=value (nodeshare=..., nodename=...) arrive as environment.
exec chroot . /bin/bash "$HERE/guest-agent.sh"
