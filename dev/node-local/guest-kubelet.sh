#!/bin/bash
# Run by the node's agent when start.sh was given --kubelet: containerd (CRI) with runc on cgroup
# v2, a CNI bridge for pods, the images made by images.sh, and the kubelet that registers this
# node with the local control plane. Everything but the kubelet's binary comes from the host's
# root as the node sees it (Debian's containerd, runc, containernetworking-plugins).
#
# $1: the folder start.sh filled (kubelet.kubeconfig and its certificate, ca.crt, busybox.tar,
# pause.tar, the kubelet binary's path in `kubelet.path`). Logs: containerd.log, kubelet.log there.
set -e
DIR=$1
NODE=$(hostname)
mountpoint -q /sys/fs/cgroup || mount -t cgroup2 cgroup2 /sys/fs/cgroup
modprobe -a overlay br_netfilter veth bridge nf_conntrack xt_conntrack iptable_nat
sysctl -qw net.ipv4.ip_forward=1 net.bridge.bridge-nf-call-iptables=1
# Pods and images live in the node's memory, never on the host's disk.
# The CNI configuration under /run, not /etc/cni: a host with podman or buildah has a root-only
# /etc/cni/net.d, which the node (seeing the host's root as nobody) can neither enter nor shadow.
mkdir -p /var/lib/containerd /var/lib/kubelet /etc/containerd /run/cni/net.d /run/containerd
# Room for the project's images too (DeploymentE2EIT; tmpfs takes memory only as it fills): at
# the default half of the memory the kubelet saw image-filesystem pressure and evicted their Pod.
mount -t tmpfs -o size=90% tmpfs /var/lib/containerd
mount -t tmpfs tmpfs /var/lib/kubelet
# cAdvisor refuses to start without a clock speed, and UML's /proc/cpuinfo has none.
{ cat /proc/cpuinfo; echo 'cpu MHz		: 1000.000'; } > /run/cpuinfo
mount --bind /run/cpuinfo /proc/cpuinfo
cat > /etc/containerd/config.toml <<'TOML'
version = 2
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "standalone-cinder.local/pause:1"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/run/cni/bin"
    conf_dir = "/run/cni/net.d"
TOML
# The pods' network: a bridge inside the node, hostPorts (portmap: how a webhook Pod is called
# through start.sh --forward), and what the node itself sees of the host (guest-agent.sh): the
# host's ports in $nodeports at the pod's own 127.0.0.1 (Cinder's catalog and ceph.conf name
# them so), and the API server at the `kubernetes` Service's 10.0.0.1:443 (the one Service the
# node plays kube-proxy for). Nothing else leaves the node.
mkdir -p /run/cni/bin /run/node-bin
ln -sf /usr/lib/cni/* /run/cni/bin/
# The plugins run iptables and ip6tables (portmap tears down both); this kernel has the legacy
# ones only (guest-agent.sh).
modprobe ip6table_nat
for t in iptables iptables-save iptables-restore ip6tables ip6tables-save ip6tables-restore; do
  ln -sf "/usr/sbin/${t/tables/tables-legacy}" "/run/node-bin/$t"
done
cat > /run/cni/bin/host-loopback <<'PLUGIN'
#!/bin/bash
# A chained CNI plugin: in the pod's network namespace, the host's ports at 127.0.0.1 (as the
# node has them), then the result it was given.
conf=$(cat)
case "$CNI_COMMAND" in
  VERSION) echo '{"cniVersion":"0.4.0","supportedVersions":["0.3.0","0.3.1","0.4.0"]}' ;;
  ADD)
    ports=$(sed -n 's/.*"ports": *"\([0-9,:]*\)".*/\1/p' <<<"$conf")
    nsenter --net="$CNI_NETNS" bash -c '
      set -e
      sysctl -qw net.ipv4.conf.all.route_localnet=1 net.ipv4.conf.eth0.route_localnet=1
      for p in ${1//,/ }; do
        iptables-legacy -t nat -A OUTPUT -d 127.0.0.1/32 -p tcp --dport "$p" -j DNAT --to-destination 10.0.2.2
      done
      iptables-legacy -t nat -A POSTROUTING -o eth0 -s 127.0.0.0/8 -j MASQUERADE' _ "$ports" >&2 \
      || { echo '{"code":100,"msg":"host-loopback: the pod network namespace refused its rules"}'; exit 1; }
    python3 -c 'import json, sys
c = json.load(sys.stdin)
r = c["prevResult"]
r["cniVersion"] = c["cniVersion"]
print(json.dumps(r))' <<<"$conf" ;;
esac
PLUGIN
chmod 755 /run/cni/bin/host-loopback
cat > /run/cni/net.d/10-pods.conflist <<CNI
{"cniVersion": "0.4.0", "name": "pods", "plugins": [
  {"type": "bridge", "bridge": "cni0", "isGateway": true, "ipMasq": false,
   "ipam": {"type": "host-local", "ranges": [[{"subnet": "10.88.0.0/24"}]],
            "routes": [{"dst": "0.0.0.0/0"}]}},
  {"type": "portmap", "capabilities": {"portMappings": true}},
  {"type": "host-loopback", "ports": "${nodeports:-}"},
  {"type": "loopback"}]}
CNI
IPT=iptables-legacy
# The way in (start.sh --forward): slirp hands the node a forwarded connection with the source it
# had on this machine, 127.0.0.1 for the API server. The node takes such packets on eth0
# (accept_local, route_localnet), marks their connection, and routes what answers it (from its own
# sockets or, through a hostPort, from a Pod) back out of eth0 instead of to its own loopback.
sysctl -qw net.ipv4.conf.all.accept_local=1 net.ipv4.conf.eth0.accept_local=1 \
  net.ipv4.conf.all.route_localnet=1 net.ipv4.tcp_fwmark_accept=1
$IPT -t mangle -A PREROUTING -i eth0 -s 127.0.0.1/32 -j MARK --set-xmark 0x1000/0x1000
$IPT -t mangle -A PREROUTING -i eth0 -s 127.0.0.1/32 -j CONNMARK --set-xmark 0x1000/0x1000
$IPT -t mangle -A PREROUTING -i cni0 -j CONNMARK --restore-mark --nfmask 0x1000 --ctmask 0x1000
$IPT -t mangle -A OUTPUT -j CONNMARK --restore-mark --nfmask 0x1000 --ctmask 0x1000
$IPT -I OUTPUT -o eth0 -d 127.0.0.1/32 -m mark --mark 0x1000/0x1000 -j ACCEPT
$IPT -I FORWARD -o eth0 -d 127.0.0.1/32 -m mark --mark 0x1000/0x1000 -j ACCEPT
ip rule add pref 10 fwmark 0x1000/0x1000 lookup 100
ip rule add pref 20 lookup local
ip rule del pref 0
ip route add 127.0.0.1/32 dev eth0 table 100
$IPT -t nat -A POSTROUTING -o eth0 -s 10.88.0.0/24 -j SNAT --to-source 10.0.2.15
$IPT -t nat -A PREROUTING -d 10.0.0.1/32 -p tcp --dport 443 -j DNAT --to-destination 10.0.2.2:6443
$IPT -t nat -A OUTPUT -d 10.0.0.1/32 -p tcp --dport 443 -j DNAT --to-destination 10.0.2.2:6443
PATH=/run/node-bin:$PATH containerd >"$DIR/containerd.log" 2>&1 &
for _ in $(seq 100); do [ -S /run/containerd/containerd.sock ] && break; sleep 0.1; done
ctr -n k8s.io images import "$DIR/busybox.tar" >/dev/null
ctr -n k8s.io images import "$DIR/pause.tar" >/dev/null
# The API server never calls this kubelet (it cannot reach the node): its own port only
# answers the node itself.
"$(cat "$DIR/kubelet.path")" \
  --kubeconfig="$DIR/kubelet.kubeconfig" \
  --container-runtime=remote --container-runtime-endpoint=unix:///run/containerd/containerd.sock \
  --pod-infra-container-image=standalone-cinder.local/pause:1 \
  --cgroup-driver=cgroupfs --cgroups-per-qos=false --enforce-node-allocatable= \
  --fail-swap-on=false --hostname-override="$NODE" --node-ip=10.0.2.15 \
  --root-dir=/var/lib/kubelet --anonymous-auth=false --authentication-token-webhook=false \
  --authorization-mode=AlwaysAllow --read-only-port=0 --address=127.0.0.1 \
  --register-node=true --node-status-update-frequency=1s --sync-frequency=10s \
  --v=2 >"$DIR/kubelet.log" 2>&1 &
echo "node: kubelet started as $NODE"
