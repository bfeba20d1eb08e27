package org.standalonecinder.demo;

import java.nio.file.Path;
import java.util.List;

/**
 * The command lines of the installation's processes: the shipped jars with the images' JVM options,
 * sized as in the Pod, and the flags the manifests give the containers.
 */
final class LocalCommands {

  private LocalCommands() {}

  /** The provisioner, leading by a short Lease and serving the clone check. */
  static List<String> provisioner(
      Path root,
      String provisionerJar,
      Path cloudConfig,
      String clusterId,
      int provisionerHealth,
      int resolverPort,
      Path token,
      Path kubeconfig) {
    return List.of(
        // The image's JVM options (images/Dockerfile passes the same file), sized as in the
        // Pod: the JVM sees the container's memory limit (manifests/base) as the machine's.
        "@" + root.resolve("images/jvm/provisioner.options"),
        "-XX:MaxRAM=384m",
        "-jar",
        provisionerJar,
        "run",
        "--cloud-config",
        cloudConfig.toString(),
        "--cluster-id",
        clusterId,
        "--initiator-name",
        LocalInstall.INITIATOR,
        "--connector-ip",
        "127.0.0.1",
        "--namespace",
        LocalInstall.NS,
        "--workers",
        "4",
        "--resync-seconds",
        "30",
        // Used only by RBD exports; a Cinder without Ceph never asks for it.
        "--cephx-secret",
        LocalInstall.CEPHX_SECRET,
        // Leader election as deployed, with a short Lease so that a failover takes seconds.
        "--instance",
        "provisioner",
        "--lease-duration-seconds",
        String.valueOf(LocalInstall.LEASE_SECONDS),
        "--renew-deadline-seconds",
        "4",
        "--retry-period-seconds",
        "1",
        "--health-address",
        "127.0.0.1",
        "--health-port",
        String.valueOf(provisionerHealth),
        // The webhook's clone check, as the Pod's provisioner container serves it.
        "--resolver-port",
        String.valueOf(resolverPort),
        "--resolver-token-file",
        token.toString(),
        "--kubeconfig",
        kubeconfig.toString());
  }

  /** The webhook, its certificates and policy re-checked every 2 s. */
  static List<String> webhook(
      Path root, String webhookJar, Path kubeconfig, Path policy, int resolverPort, Path token) {
    return List.of(
        "@" + root.resolve("images/jvm/webhook.options"),
        "-XX:MaxRAM=256m",
        "-jar",
        webhookJar,
        "serve",
        "--kubeconfig",
        kubeconfig.toString(),
        "--namespace",
        LocalInstall.NS,
        "--listen",
        "127.0.0.1",
        "--port",
        String.valueOf(LocalInstall.WEBHOOK_PORT),
        "--san",
        "127.0.0.1",
        "--policy-file",
        policy.toString(),
        // Certificates and the policy file re-checked every 2 s (30 s in a cluster).
        "--refresh-seconds",
        "2",
        "--resolver",
        "http://127.0.0.1:" + resolverPort,
        "--resolver-token-file",
        token.toString());
  }
}
