package org.standalonecinder.provisioner.snapshot;

import java.util.Set;
import org.standalonecinder.provisioner.cinder.CinderClient;
import org.standalonecinder.provisioner.cinder.Volume;
import org.standalonecinder.provisioner.provision.Names;

/**
 * The volume a dynamic content asks to be taken of: it must be one this cluster's provisioner made,
 * and in a state Cinder takes a snapshot or backup of.
 *
 * <p>Only the provisioner's own volumes are taken: a content names its volume by id, and one made
 * by the snapshot-controller for another driver's PV (whose handle may be any Cinder volume's id)
 * or by anyone who may write contents must not reach the rest of the project.
 *
 * <p>Cinder refuses a snapshot or backup of a volume it is busy with (400 "Invalid volume": being
 * backed up, extended, attached); a large backup keeps a volume busy for an hour. That is a wait,
 * not a failure: asked anyway, the loop's retries would be spent on refusals for as long as it
 * lasts. A volume in an error state is a failure, retried with the backoff.
 */
final class SourceVolume {

  /** Where the volume stands: a failure, a wait, or neither (take it now). */
  record State(String failure, boolean isFinal, String busy) {
    static final State FREE = new State(null, false, null);
  }

  private static final Set<String> TAKEABLE = Set.of("available", "in-use");

  private final CinderClient cinder;
  private final String clusterId;

  SourceVolume(CinderClient cinder, String clusterId) {
    this.cinder = cinder;
    this.clusterId = clusterId;
  }

  /** Reads the volume {@code id} from Cinder and says whether {@code kind} may be taken of it. */
  State check(String id, Copy.Kind kind) {
    Volume v = cinder.getVolume(id).orElse(null);
    if (v == null) {
      return new State("Cinder has no volume " + id, true, null);
    }
    if (!clusterId.equals(v.metadata().get(Names.META_CLUSTER))) {
      return new State(
          "volume "
              + id
              + " was not made by this cluster's provisioner; only its own volumes are snapshotted",
          true,
          null);
    }
    if (TAKEABLE.contains(v.status())) {
      return State.FREE;
    }
    String asked = kind == Copy.Kind.BACKUP ? "a backup" : "a snapshot";
    if (v.status().startsWith("error")) {
      return new State(
          "volume "
              + id
              + " is "
              + v.status()
              + "; Cinder takes "
              + asked
              + " only of an available or in-use volume",
          false,
          null);
    }
    return new State(
        null,
        false,
        "waiting for volume "
            + id
            + " to be available or in use (it is "
            + v.status()
            + ") before Cinder can take "
            + asked
            + " of it");
  }
}
