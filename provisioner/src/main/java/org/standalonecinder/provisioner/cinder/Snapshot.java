package org.standalonecinder.provisioner.cinder;

/**
 * A Cinder snapshot.
 *
 * @param id Cinder's UUID
 * @param name its name
 * @param volumeId the volume it was taken of
 * @param status Cinder's status string
 * @param sizeGib size in GiB
 */
public record Snapshot(String id, String name, String volumeId, String status, int sizeGib) {}
