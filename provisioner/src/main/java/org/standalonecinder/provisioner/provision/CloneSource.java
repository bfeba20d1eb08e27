package org.standalonecinder.provisioner.provision;

import org.standalonecinder.api.ClaimRef;

/**
 * A clone's source, resolved down to its Cinder volume and checked to be clonable.
 *
 * @param claim the source claim
 * @param volumeId its Cinder volume
 * @param sizeGib the volume's size
 * @param availabilityZone the volume's zone
 * @param volumeType the volume's type
 * @param status the volume's status ({@code available} or {@code in-use})
 */
public record CloneSource(
    ClaimRef claim,
    String volumeId,
    int sizeGib,
    String availabilityZone,
    String volumeType,
    String status) {}
