package org.standalonecinder.provisioner.provision;

/**
 * A volume of this cluster that was never handed to a PV, and the claim it was made for ({@link
 * VolumeProvisioner#unfinished}).
 *
 * @param volumeId the Cinder volume
 * @param claimUid the uid of the claim it was made for
 * @param namespace the claim's namespace
 * @param name the claim's name
 */
public record Unfinished(String volumeId, String claimUid, String namespace, String name) {}
