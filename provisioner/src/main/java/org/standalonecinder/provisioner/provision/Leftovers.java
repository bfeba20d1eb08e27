package org.standalonecinder.provisioner.provision;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.standalonecinder.provisioner.cinder.CinderClient;
import org.standalonecinder.provisioner.cinder.CinderException;
import org.standalonecinder.provisioner.cinder.Volume;
import org.standalonecinder.provisioner.controller.ProvisioningException;
import org.standalonecinder.provisioner.mapping.IscsiMapper;

/**
 * What provisioning left in Cinder with no PV: the volumes of a claim that went before its PV was
 * made, and, after a restart, every volume of this cluster never handed to a PV.
 */
final class Leftovers {

  private final CinderClient cinder;
  private final SecretStore secrets;
  private final ProvisionerSettings settings;
  private final Volumes volumes;

  Leftovers(
      CinderClient cinder, SecretStore secrets, ProvisionerSettings settings, Volumes volumes) {
    this.cinder = cinder;
    this.secrets = secrets;
    this.settings = settings;
    this.volumes = volumes;
  }

  /**
   * Deletes what provisioning left for a claim that is gone without a PV: volumes carrying the
   * claim's UID and this cluster's id that were never handed to a PV (detached first), and, once
   * Cinder has deleted them, the claim's CHAP Secret. This is what keeps a claim deleted while its
   * provisioning was failing from leaking a volume. A volume that was handed to its PV is left
   * alone, with its Secret: its PV is gone only if an admin deleted a retained one, and its data is
   * the admin's.
   *
   * <p>No worker waits while Cinder deletes: each call asks for what is not being deleted yet and
   * answers how many are still going; the caller calls again until none is.
   *
   * @return how many of the claim's volumes Cinder is still deleting (0: nothing is left)
   */
  int deleteOrphans(String claimUid) {
    String pvName = Names.pvName(claimUid);
    int going = 0;
    boolean kept = false;
    try {
      // One listing by the claim's name, then its identity checked here (two listings once):
      // this cluster's volumes of the claim, and those restored from a backup and left under
      // their source's identity (and state), never handed over, so the claim's.
      Map<String, String> identity = Names.identifying(claimUid, settings.clusterId());
      for (Volume v : cinder.findVolumes(pvName, Map.of())) {
        boolean restored = RestoredFromBackup.underAnotherIdentity(v, pvName, claimUid, null);
        boolean claims =
            pvName.equals(v.name()) && v.metadata().entrySet().containsAll(identity.entrySet());
        if (!restored && !claims) {
          continue;
        }
        if (!restored && Names.STATE_PROVISIONED.equals(v.metadata().get(Names.META_STATE))) {
          kept = true;
          continue;
        }
        going++;
        if (v.status().equals("deleting")) {
          continue; // asked before: Cinder refuses a second delete
        }
        if (v.status().equals("error_deleting")) {
          throw new ProvisioningException(
              "Cinder failed to delete volume "
                  + v.id()
                  + " of a deleted claim (status error_deleting; see cinder-volume's log); it is"
                  + " asked again once an admin resets it: cinder reset-state --state available "
                  + v.id(),
              false,
              null);
        }
        if (BeingMade.isBeingMade(v)) {
          deleteWhileMade(v);
          continue;
        }
        Volume detached = v;
        boolean failed = v.status().startsWith("error") && v.attachmentIds().isEmpty();
        if (!failed && (!v.attachmentIds().isEmpty() || !v.status().equals("available"))) {
          // A copy Cinder failed (error) is deleted as it is: it never becomes available.
          detached = volumes.makeAvailable(v);
        }
        cinder.deleteVolume(detached.id());
        volumes.made(detached.id());
      }
    } catch (CinderException.NotFound gone) {
      // deleted under us
    } catch (RuntimeException e) {
      throw Failures.of(e);
    }
    if (!kept && going == 0) {
      secrets.delete(settings.secretNamespace(), IscsiMapper.secretName(pvName));
    }
    return going;
  }

  /**
   * Deletes a volume Cinder is still making, without waiting for it: Cinder deletes one that no
   * backend took at once, and refuses one being filled; that one is deleted once it is made, at a
   * later try of the claim's key, which keeps trying.
   */
  private void deleteWhileMade(Volume v) {
    try {
      cinder.deleteVolume(v.id());
    } catch (CinderException.BadRequest beingFilled) {
      throw new ProvisioningException(
          "volume "
              + v.id()
              + " of a deleted claim is still being made by Cinder (status "
              + v.status()
              + "); it is deleted once Cinder has made it",
          false,
          beingFilled);
    }
    volumes.made(v.id());
  }

  /**
   * The volumes of this cluster still {@link Names#STATE_PROVISIONING}: after a restart, the only
   * trace of a provisioning that failed or was cut short. Volumes of other clusters are never
   * listed, nor volumes that lack the claim's identity.
   */
  List<Unfinished> unfinished() {
    Map<String, String> filter = new LinkedHashMap<>();
    filter.put(Names.META_CLUSTER, settings.clusterId());
    filter.put(Names.META_STATE, Names.STATE_PROVISIONING);
    try {
      return cinder.findVolumes(null, filter).stream()
          // Cinder filtered already; a second look costs nothing and guards the deletes.
          .filter(v -> settings.clusterId().equals(v.metadata().get(Names.META_CLUSTER)))
          .filter(v -> Names.STATE_PROVISIONING.equals(v.metadata().get(Names.META_STATE)))
          .filter(v -> v.metadata().get(Names.META_PVC_UID) != null)
          .filter(v -> v.metadata().get(Names.META_PVC_NAMESPACE) != null)
          .filter(v -> v.metadata().get(Names.META_PVC_NAME) != null)
          .map(
              v ->
                  new Unfinished(
                      v.id(),
                      v.metadata().get(Names.META_PVC_UID),
                      v.metadata().get(Names.META_PVC_NAMESPACE),
                      v.metadata().get(Names.META_PVC_NAME)))
          .toList();
    } catch (RuntimeException e) {
      throw Failures.of(e);
    }
  }
}
