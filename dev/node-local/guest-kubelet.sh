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
mount -t tmpfs tmpfs /var/lib/containerd
mount -t tmpfs tmpfs /var/lib/kubelet
# cAdvisor refuses to start without a clock speed, and UML's /proc/cpuinfo has none.
{ cat /proc/cpuinfo; echo 'cpu MHz		: 1000.000'; } > /run/cpuinfo
mount --bind /run/cpuinfo /proc/cpuinfo
cat > /etc/containerd/config.toml <<'TOML'
version = 2
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "standalone-cinder.local/pause:1"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "/run/cni/net.d"
TOML
# Pods talk to each other on a bridge inside the node; nothing routes them further.
cat > /run/cni/net.d/10-pods.conflist <<'CNI'
{"cniVersion": "0.4.0", "name": "pods", "plugins": [
  {"type": "bridge", "bridge": "cni0", "isGateway": true, "ipMasq": false,
   "ipam": {"type": "host-local", "ranges": [[{"subnet": "10.88.0.0/24"}]]}},
  {"type": "loopback"}]}
CNI
containerd >"$DIR/containerd.log" 2>&1 &
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
