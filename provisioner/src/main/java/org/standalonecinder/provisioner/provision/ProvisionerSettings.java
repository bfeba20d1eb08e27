package org.standalonecinder.provisioner.provision;

import java.util.Objects;
import java.util.regex.Pattern;

/**
 * What the provisioner needs to know about itself and the cluster.
 *
 * @param provisionerName the name StorageClasses and claims use, {@code
 *     openstack.org/standalone-cinder} by default
 * @param identity written on every PV this instance creates; only PVs with it are deleted
 * @param clusterId written into the metadata of every volume, so that clusters sharing a project
 *     never take each other's volumes
 * @param initiatorName the one iSCSI initiator IQN of the cluster's nodes: sent to Cinder in the
 *     connector and written into every PV
 * @param connectorHost the host name Cinder records for the export
 * @param connectorIp the address Cinder records for the export
 * @param secretNamespace the provisioner's own namespace, where CHAP Secrets live
 * @param multipath whether to ask Cinder for every portal
 */
public record ProvisionerSettings(
    String provisionerName,
    String identity,
    String clusterId,
    String initiatorName,
    String connectorHost,
    String connectorIp,
    String secretNamespace,
    boolean multipath) {

  public static final String DEFAULT_NAME = "openstack.org/standalone-cinder";

  private static final Pattern IQN = Pattern.compile("iqn\\.\\d{4}-\\d{2}\\.[^\\s:]+(:[^\\s]+)?");

  public ProvisionerSettings {
    Objects.requireNonNull(provisionerName, "provisionerName");
    Objects.requireNonNull(identity, "identity");
    Objects.requireNonNull(clusterId, "clusterId");
    Objects.requireNonNull(connectorHost, "connectorHost");
    Objects.requireNonNull(connectorIp, "connectorIp");
    Objects.requireNonNull(secretNamespace, "secretNamespace");
    if (initiatorName == null || !IQN.matcher(initiatorName).matches()) {
      throw new IllegalArgumentException(
          "initiator name '"
              + initiatorName
              + "' is not an iSCSI qualified name such as iqn.2026-11.org.example:k8s");
    }
  }
}
