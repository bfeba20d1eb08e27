package org.standalonecinder.provisioner.provision;

import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.storage.StorageClass;
import java.util.Map;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * Provisions as the claim loop does: looks again while Cinder is still making the volume ({@link
 * StillMaking}), without the loop's delay, since the fake Cinder makes a volume between two looks.
 */
public final class UntilMade {

  /** More looks than any fake volume takes: one held for good fails the test instead. */
  static final int LOOKS = 5;

  private UntilMade() {}

  public static PersistentVolume provision(
      VolumeProvisioner p, PersistentVolumeClaim claim, StorageClass sc) {
    return again(() -> p.provision(claim, sc, null, Map.of(), pv -> false));
  }

  public static PersistentVolume provision(
      VolumeProvisioner p, PersistentVolumeClaim claim, StorageClass sc, VolumeSource source) {
    return again(() -> p.provision(claim, sc, source, Map.of(), pv -> false));
  }

  public static PersistentVolume provision(
      VolumeProvisioner p,
      PersistentVolumeClaim claim,
      StorageClass sc,
      VolumeSource source,
      Map<String, String> nodeLabels) {
    return again(() -> p.provision(claim, sc, source, nodeLabels, pv -> false));
  }

  public static PersistentVolume provision(
      VolumeProvisioner p,
      PersistentVolumeClaim claim,
      StorageClass sc,
      VolumeSource source,
      Map<String, String> nodeLabels,
      Predicate<String> pvExists) {
    return again(() -> p.provision(claim, sc, source, nodeLabels, pvExists));
  }

  /** {@code provision} again while Cinder is still making the volume. */
  public static PersistentVolume again(Supplier<PersistentVolume> provision) {
    for (int look = 1; ; look++) {
      try {
        return provision.get();
      } catch (StillMaking e) {
        if (look >= LOOKS) {
          throw e;
        }
      }
    }
  }

  /**
   * Releases as the claim loop does: looks again while Cinder is deleting the volume, without the
   * loop's delay, since the fake Cinder deletes between two looks.
   */
  public static org.standalonecinder.provisioner.controller.Provisioner.DeleteOutcome release(
      VolumeProvisioner p, PersistentVolume pv) {
    for (int look = 0; look < LOOKS; look++) {
      var outcome = p.delete(pv);
      if (outcome.state()
          != org.standalonecinder.provisioner.controller.Provisioner.DeleteOutcome.State
              .IN_PROGRESS) {
        return outcome;
      }
    }
    throw new AssertionError("still deleting after " + LOOKS + " looks");
  }
}
