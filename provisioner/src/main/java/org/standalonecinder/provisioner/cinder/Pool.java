package org.standalonecinder.provisioner.cinder;

/**
 * A scheduler pool and its last reported capacity.
 *
 * @param name the pool's full name, {@code host@backend#pool}
 * @param backendName the {@code volume_backend_name}
 * @param storageProtocol e.g. {@code iSCSI}, {@code ceph}
 * @param total total capacity
 * @param free free capacity
 */
public record Pool(
    String name, String backendName, String storageProtocol, Capacity total, Capacity free) {}
