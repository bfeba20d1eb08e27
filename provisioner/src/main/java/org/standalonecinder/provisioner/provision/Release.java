package org.standalonecinder.provisioner.provision;

import io.fabric8.kubernetes.api.model.PersistentVolume;
import java.time.Duration;
import java.util.Map;
import org.slf4j.MDC;
import org.standalonecinder.api.ClaimAnnotations;
import org.standalonecinder.provisioner.cinder.CinderClient;
import org.standalonecinder.provisioner.cinder.CinderException;
import org.standalonecinder.provisioner.cinder.CinderExport;
import org.standalonecinder.provisioner.cinder.Volume;
import org.standalonecinder.provisioner.controller.Pace;
import org.standalonecinder.provisioner.controller.ProvisionResult;
import org.standalonecinder.provisioner.controller.Provisioner.DeleteOutcome;
import org.standalonecinder.provisioner.controller.ProvisioningException;

/**
 * A released PV's storage going, in the reverse order of its making: the export, the volume, the
 * auth Secret. Each step treats "already gone" as done, so a release that failed half-way runs
 * again.
 *
 * <p>No worker waits while Cinder deletes the volume (zeroing a large one on LVM takes minutes):
 * the release asks for the delete and says when to look again; a look that finds the volume {@code
 * deleting} says so again, and the one that finds it gone deletes the auth Secret and lets the PV
 * go. What survives a restart is the PV (kept until then) and Cinder's {@code deleting}.
 */
final class Release {

  private final CinderClient cinder;
  private final ProvisionerSettings settings;
  private final Volumes volumes;
  private final AuthSecrets auth;
  private final CinderExport exports;
  private final Pace pace = new Pace(java.time.Clock.systemUTC());

  Release(
      CinderClient cinder,
      ProvisionerSettings settings,
      Volumes volumes,
      AuthSecrets auth,
      CinderExport exports) {
    this.cinder = cinder;
    this.settings = settings;
    this.volumes = volumes;
    this.auth = auth;
    this.exports = exports;
  }

  /** See {@link VolumeProvisioner#delete}. */
  DeleteOutcome delete(PersistentVolume pv) {
    Map<String, String> ann = pv.getMetadata().getAnnotations();
    if (ann == null || !settings.owns(ann.get(Names.ANN_IDENTITY))) {
      return DeleteOutcome.NOT_MINE;
    }
    boolean goEra = settings.adopted(ann.get(Names.ANN_IDENTITY));
    String volumeId = ann.get(ClaimAnnotations.VOLUME_ID);
    if (volumeId != null) {
      MDC.put("volume", volumeId);
    }
    try {
      Volume volume = volumeId == null ? null : cinder.getVolume(volumeId).orElse(null);
      if (volume != null) {
        if (volume.status().equals("deleting")) {
          return deleting(volumeId);
        }
        notPutBack(volume);
        if (volume.status().equals("backing-up")) {
          // Cinder deletes it only once the backup is made: nothing is undone before (its
          // attachments stay for the retry to take), so a release never races the backup service.
          throw busy(volumeId, volume.status());
        }
        if (Names.RESERVED.equals(ann.get(Names.ANN_ATTACHMENT))) {
          exports.withdrawReservation(volumeId, settings.connector());
        } else if (goEra && GoProvisionerPvs.RESERVED_STATUS.equals(volume.status())) {
          // Still as the Go provisioner left it (a repeat after os-unreserve finds it available).
          exports.withdrawReservation(volumeId, GoProvisionerPvs.CONNECTOR);
        }
        // The PV's attachment, and strays of retried attempts whose answers were lost: any of
        // them would block the delete.
        volumes.detachAll(volume);
        deleteUnlessSnapshotted(volumeId);
        return deleting(volumeId);
      }
    } catch (CinderException.NotFound gone) {
      // deleted under us: what we wanted
    } catch (RuntimeException e) {
      throw Failures.of(e);
    }
    if (volumeId != null) {
      pace.done(volumeId);
    }
    if (goEra) {
      GoProvisionerPvs.chapSecret(pv).ifPresent(ref -> auth.deleteOwn(ref));
    } else {
      auth.release(pv);
    }
    return DeleteOutcome.DELETED;
  }

  /**
   * Fails when Cinder did not do a delete it was asked for: {@code error_deleting} (which only an
   * admin undoes), or the volume back from {@code deleting} (see {@link #notDeleted}).
   */
  private void notPutBack(Volume volume) {
    String volumeId = volume.id();
    if (volume.status().equals("error_deleting")) {
      pace.done(volumeId);
      throw new ProvisioningException(
          "Cinder failed to delete volume "
              + volumeId
              + " (status error_deleting; see cinder-volume's log); it is asked again once an"
              + " admin resets it: cinder reset-state --state available "
              + volumeId,
          false,
          null);
    }
    if (pace.knows(volumeId)) {
      // asked before, and neither deleting nor gone: Cinder put it back
      pace.done(volumeId);
      throw notDeleted(volumeId, volume.status());
    }
  }

  /**
   * A delete Cinder accepted and then did not do: the volume is back (its backend refused, e.g. an
   * RBD image that a clone still depends on). A failure, so that the loop backs off before asking
   * again.
   */
  private static ProvisioningException notDeleted(String volumeId, String status) {
    return new ProvisioningException(
        "Cinder did not delete volume "
            + volumeId
            + ": it is "
            + status
            + " again after its deletion was asked (its backend keeps it: on RBD, a volume made"
            + " from it may still depend on it; see cinder-volume's log); asked again later",
        false,
        null);
  }

  /** Cinder is deleting the volume: the PV stays, and is looked at again. */
  private DeleteOutcome deleting(String volumeId) {
    Duration soFar = pace.seen(volumeId);
    return DeleteOutcome.inProgress(
        "Cinder is deleting volume " + volumeId + "; " + Pace.soFar(soFar),
        new ProvisionResult.Progress(soFar, Pace.nextLook(soFar)));
  }

  /**
   * Deletes the volume, unless Cinder keeps it for its snapshots: then the release waits for them
   * (retried, told as an event), since deleting them with it ({@code cascade}) would destroy what
   * the user kept on purpose.
   */
  private static ProvisioningException busy(String volumeId, String status) {
    return new ProvisioningException(
        "volume "
            + volumeId
            + " is "
            + status
            + " in Cinder"
            + (status.equals("backing-up") ? " (a backup of it is being made)" : "")
            + ", so it cannot be deleted yet; tried again",
        false,
        null);
  }

  private void deleteUnlessSnapshotted(String volumeId) {
    try {
      cinder.deleteVolume(volumeId);
    } catch (CinderException.BadRequest e) {
      if (!e.getMessage().contains("snapshots")) {
        throw e;
      }
      // Cinder's refusal reads the same for a status it does not delete in and for snapshots:
      // the status tells them apart (a volume being backed up is the common one).
      String status = cinder.getVolume(volumeId).map(Volume::status).orElse("available");
      if (!status.equals("available") && !status.startsWith("error")) {
        throw busy(volumeId, status);
      }
      throw new ProvisioningException(
          "volume "
              + volumeId
              + " has snapshots in Cinder, so it is kept until they are deleted (delete the"
              + " VolumeSnapshots taken of this claim, or the snapshots in Cinder); tried again"
              + " until then. Cinder said: "
              + e.getMessage(),
          false,
          e);
    }
  }
}
