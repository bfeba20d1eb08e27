package org.standalonecinder.provisioner.provision;

import java.time.Clock;
import org.standalonecinder.provisioner.cinder.CinderClient;
import org.standalonecinder.provisioner.cinder.CinderException;
import org.standalonecinder.provisioner.cinder.Volume;
import org.standalonecinder.provisioner.cinder.VolumeSpec;
import org.standalonecinder.provisioner.controller.FairPool;
import org.standalonecinder.provisioner.controller.ProvisioningException;

/**
 * Claims' volumes asked of Cinder off the claim loop's workers ({@link Background}): the create
 * call answers once Cinder has written the volume's row and cast it to its scheduler, which took up
 * to 800 ms on the lab's Cinder while it copied for other claims. The claim's next look takes the
 * new volume and goes on as with any volume it finds by the claim's name.
 */
final class Creates {

  private static final Background.Words WORDS =
      new Background.Words(
          "volume %s waits for its turn to be asked of Cinder (other namespaces' Cinder calls"
              + " first, or its own namespace's share of them)",
          "Cinder is asked for volume %s");

  private Creates() {}

  /** The creates of claims' volumes asked and not yet taken up, on {@code pool}. */
  static Background<Volume> background(FairPool pool, Clock clock) {
    return new Background<>(pool, clock, WORDS);
  }

  /**
   * Creates the volume; a zone Cinder does not know is the admin's to fix, said so; a snapshot or
   * backup that is busy is said to be so, and tried again.
   */
  static Volume create(CinderClient cinder, VolumeSpec spec, Placement placement) {
    try {
      return cinder.createVolume(spec);
    } catch (CinderException.BadRequest e) {
      String copy = spec.backupId() != null ? "backup " + spec.backupId() : null;
      copy = spec.snapshotId() != null ? "snapshot " + spec.snapshotId() : copy;
      // Cinder's "Originating <kind> status must be one of 'available'": a restore from the same
      // backup under way (Cinder allows one at a time), or the copy still being made
      if (copy != null && e.getMessage().contains("Originating")) {
        throw new ProvisioningException(
            "Cinder "
                + copy
                + " is busy (another restore from it, or its own making, is under way); the"
                + " claim is tried again. Cinder said: "
                + e.getMessage(),
            false,
            e);
      }
      String zone = spec.availabilityZone();
      if (zone == null || !e.getMessage().contains("vailability zone")) {
        throw e;
      }
      throw new ProvisioningException(
          "Cinder has no availability zone "
              + zone
              + " (from "
              + placement.from()
              + "): "
              + e.getMessage()
              + " When the nodes' zones are not Cinder's, set ignore-volume-az = true in the"
              + " cloud config's [BlockStorage]",
          true,
          e);
    }
  }
}
