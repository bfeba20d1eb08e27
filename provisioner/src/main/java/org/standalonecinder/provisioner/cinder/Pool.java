package org.standalonecinder.provisioner.cinder;

/**
 * A scheduler pool and its last reported capacity.
 *
 * @param name the pool's full name, {@code host@backend#pool}
 * @param backendName the {@code volume_backend_name}
 * @param storageProtocol e.g. {@code iSCSI}, {@code ceph}
 * @param total total capacity
 * @param free free capacity
 * @param allocated what Cinder has allocated on it ({@code allocated_capacity_gb})
 * @param provisioned what its volumes may grow to ({@code provisioned_capacity_gb}; thin pools)
 * @param maxOverSubscriptionRatio how far provisioned may exceed total, or null when not reported
 */
public record Pool(
    String name,
    String backendName,
    String storageProtocol,
    Capacity total,
    Capacity free,
    Capacity allocated,
    Capacity provisioned,
    Double maxOverSubscriptionRatio) {

  /** With only total and free known. */
  public Pool(
      String name, String backendName, String storageProtocol, Capacity total, Capacity free) {
    this(
        name,
        backendName,
        storageProtocol,
        total,
        free,
        new Capacity.Unknown(),
        new Capacity.Unknown(),
        null);
  }
}
