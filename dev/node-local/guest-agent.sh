#!/bin/bash
# The node's stage 2: a kernel with SCSI, iSCSI and RBD, its own iSCSI state, a network that
# reaches only the host's loopback, and an agent that runs the scripts the host drops into the
# shared folder, one after another.
#
# Environment (kernel arguments): nodeshare=<host folder, read-write through hostfs>,
# nodename=<host name>, nodeiqn=<default initiator name>, nodeports=<host ports to reach as
# 127.0.0.1, e.g. 3260,3300,6789,6800:7300,6443>.
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
T0=$(cut -d' ' -f1 /proc/uptime 2>/dev/null)
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mkdir -p /dev/pts /dev/shm
[ -e /dev/fd ] || ln -s /proc/self/fd /dev/fd
for i in 0 1 2; do n=(stdin stdout stderr); [ -e /dev/${n[$i]} ] || ln -s /proc/self/fd/$i /dev/${n[$i]}; done
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /dev/shm
mount -t tmpfs tmpfs /run
# The scripts beside this one may sit under /tmp on the host, which the next mount hides.
cp "$(dirname "$0")/guest-kubelet.sh" /run/
mount -t tmpfs tmpfs /tmp
mkdir -p /run/lock/iscsi /node
mount -t hostfs -o "$nodeshare" hostfs /node || { echo "node: no shared folder $nodeshare"; echo o > /proc/sysrq-trigger; }
exec >>/node/agent.log 2>&1
umount -l /.oldroot 2>/dev/null
echo "node: kernel $(uname -r), $(grep MemTotal /proc/meminfo | tr -s ' ')"

hostname "${nodename:-node-local}"
# No resolver and no host names but its own: the node reaches the host's loopback by address.
printf '# none: the node resolves nothing\n' > /etc/resolv.conf
printf '127.0.0.1 localhost\n127.0.1.1 %s\n' "${nodename:-node-local}" > /etc/hosts

rm -rf /usr/lib/modules; mkdir -p /usr/lib/modules
mount -t hostfs -o ro,/usr/lib/uml/modules hostfs /usr/lib/modules
# loop: the kubelet holds a raw block volume (volumeMode: Block) open through a loop device; xfs:
# a class may ask for it (fsType: xfs).
modprobe -a iscsi_tcp sd_mod ip_tables iptable_nat iptable_filter xt_nat nf_nat nf_conntrack loop xfs

# The node's own iSCSI state: never the host's node database or initiator name.
mkdir -p /etc/iscsi /var/lib/iscsi
mount -t tmpfs tmpfs /etc/iscsi
mount -t tmpfs tmpfs /var/lib/iscsi
mkdir -p /etc/iscsi/nodes /etc/iscsi/send_targets /etc/iscsi/ifaces
cp /.oldroot/etc/iscsi/iscsid.conf /etc/iscsi/ 2>/dev/null ||
  printf 'node.startup = manual\nnode.session.timeo.replacement_timeout = 120\n' > /etc/iscsi/iscsid.conf
echo "InitiatorName=${nodeiqn:-iqn.2026-11.org.standalonecinder:node-local}" > /etc/iscsi/initiatorname.iscsi

# Network. slirp maps 10.0.2.2 to the host's 127.0.0.1 and is an unrestricted NAT otherwise:
# the node gets a /32 route to that alias only, and anything else leaving eth0 is dropped.
# iptables-legacy: this kernel has no nftables for IPv4.
IPT=iptables-legacy
ip link set lo up
ip link set eth0 up
ip addr add 10.0.2.15/32 dev eth0
ip route add 10.0.2.2/32 dev eth0
$IPT -A OUTPUT -o eth0 ! -d 10.0.2.2/32 -j DROP
# The same for what the node forwards (its pods, with --kubelet).
$IPT -A FORWARD -o eth0 ! -d 10.0.2.2/32 -j DROP
# The host's services are named 127.0.0.1 in PVs and ceph.conf: reach them there.
sysctl -qw net.ipv4.conf.all.route_localnet=1 net.ipv4.conf.eth0.route_localnet=1
for p in ${nodeports//,/ }; do
  $IPT -t nat -A OUTPUT -d 127.0.0.1/32 -p tcp --dport "$p" -j DNAT --to-destination 10.0.2.2
done
$IPT -t nat -A POSTROUTING -o eth0 -s 127.0.0.0/8 -j SNAT --to-source 10.0.2.15

iscsid
UDEVD=/lib/systemd/systemd-udevd
if [ -x $UDEVD ]; then
  $UDEVD --daemon
  udevadm trigger --action=add
  timeout 20 udevadm settle
  UDEV=yes
else
  UDEV="no (systemd-udevd is not installed)"
fi

KUBELET=no
if [ -n "${nodekubelet:-}" ]; then
  if bash /run/guest-kubelet.sh "$nodekubelet"; then KUBELET=started; else KUBELET=failed; fi
fi

mkdir -p /node/req /node/run /node/out
printf 'kernel=%s\nudev=%s\nkubelet=%s\nready_after_s=%s\n' "$(uname -r)" "$UDEV" "$KUBELET" \
  "$(awk -v a="${T0:-0}" -v b="$(cut -d' ' -f1 /proc/uptime)" 'BEGIN{printf "%.1f", b-a}')" \
  > /node/ready.tmp && mv /node/ready.tmp /node/ready
echo "node: ready"

# Sleeping without a process: every exec costs 0.2-0.5 s in UML.
mkfifo /run/agent.wait && exec 9<>/run/agent.wait
while :; do
  for req in /node/req/*.sh; do
    [ -e "$req" ] || break
    id=${req##*/}; id=${id%.sh}
    mv "$req" "/node/run/$id.sh" || continue
    if [ "$id" = poweroff ]; then
      echo "node: powering off"
      iscsiadm -m node --logoutall=all >/dev/null 2>&1
      sync
      umount /node
      echo o > /proc/sysrq-trigger
      sleep 30
    fi
    (cd /tmp && bash "/node/run/$id.sh") > "/node/out/$id.out" 2>&1
    rc=$?
    # A script may hold a CHAP secret or a cephx key: it goes once it has run.
    rm -f "/node/run/$id.sh"
    echo $rc > "/node/out/$id.rc.tmp"
    mv "/node/out/$id.rc.tmp" "/node/out/$id.rc"
  done
  read -t 0.1 -u 9 _
done
