package org.standalonecinder.provisioner.snapshot;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.Map;
import org.standalonecinder.api.ClaimRef;
import org.standalonecinder.provisioner.cinder.CinderClient;
import org.standalonecinder.provisioner.cinder.Volume;
import org.standalonecinder.provisioner.controller.ProvisioningException;
import org.standalonecinder.provisioner.provision.VolumeSource;

/**
 * Resolves the VolumeSnapshot a claim is to be restored from down to its Cinder snapshot or backup,
 * and checks that it may be: the snapshot is ready, its content is of this provisioner's driver and
 * bound to that very snapshot, Cinder has the snapshot or backup {@code available}, and the claim
 * keeps the volume mode the snapshot was taken in (unless the content allows a change). Read from
 * the API server, not a cache: what it finds decides whose data a new volume holds.
 */
public final class RestoreResolver {

  private final KubernetesClient client;
  private final CinderClient cinder;
  private final Copies copies;
  private final String driver;

  public RestoreResolver(KubernetesClient client, CinderClient cinder, String driver) {
    this.client = client;
    this.cinder = cinder;
    this.copies = new Copies(cinder);
    this.driver = driver;
  }

  /**
   * The source of the restore of {@code snapshot} into {@code claim}.
   *
   * @throws ProvisioningException final when the snapshot can never fill the claim, else (not yet
   *     ready, not there yet) to be retried
   */
  public VolumeSource resolve(ClaimRef snapshot, PersistentVolumeClaim claim) {
    String what = "VolumeSnapshot " + snapshot;
    GenericKubernetesResource rawContent = content(snapshot, what);
    Content content = Content.of(rawContent);
    Copy cs = copy(content, what);
    checkMode(what, rawContent, content, cs, claim);
    if (cs.kind() == Copy.Kind.BACKUP) {
      // Cinder's backup service writes a backup into a new volume of any type, in any zone.
      return new VolumeSource.FromBackup(
          snapshot, cs.id(), cs.volumeId(), cs.sizeGib(), cs.status());
    }
    // A volume made from a snapshot is of its type and in its zone: those of the volume it was
    // taken of, when Cinder still has it.
    Volume from = cinder.getVolume(cs.volumeId()).orElse(null);
    return new VolumeSource.FromSnapshot(
        snapshot,
        cs.id(),
        from == null ? null : from.id(),
        cs.sizeGib(),
        from == null ? null : from.availabilityZone(),
        from == null ? null : from.volumeType(),
        cs.status());
  }

  /**
   * The content of a ready snapshot, checked to be this driver's and bound to that very snapshot.
   */
  private GenericKubernetesResource content(ClaimRef snapshot, String what) {
    GenericKubernetesResource raw =
        client
            .genericKubernetesResources(SnapshotApi.SNAPSHOTS)
            .inNamespace(snapshot.namespace())
            .withName(snapshot.name())
            .get();
    if (raw == null) {
      throw new ProvisioningException(what + " does not exist (yet)", false, null);
    }
    VolumeSnapshot s = VolumeSnapshot.of(raw);
    Map<String, Object> status = Json.map(raw.getAdditionalProperties().get("status"));
    if (!Boolean.TRUE.equals(status.get("readyToUse")) || s.boundContentName() == null) {
      throw new ProvisioningException(what + " is not ready to use yet", false, null);
    }
    GenericKubernetesResource rawContent =
        client
            .genericKubernetesResources(SnapshotApi.CONTENTS)
            .withName(s.boundContentName())
            .get();
    if (rawContent == null) {
      throw new ProvisioningException(
          what + " is bound to content " + s.boundContentName() + ", which does not exist",
          false,
          null);
    }
    Content c = Content.of(rawContent);
    if (!driver.equals(c.driver())) {
      throw ProvisioningException.invalid(
          what
              + " was taken by driver "
              + ClaimRef.quote(c.driver())
              + "; this class restores only snapshots of "
              + driver);
    }
    // The content must say it is this snapshot's: a VolumeSnapshot's status is not proof alone.
    if (!snapshot.namespace().equals(c.snapshotNamespace())
        || !snapshot.name().equals(c.snapshotName())
        || !s.uid().equals(c.snapshotUid())) {
      throw ProvisioningException.invalid(
          what + " names content " + c.name() + ", which is bound to another snapshot");
    }
    return rawContent;
  }

  /** The content's Cinder snapshot or backup, ready to be restored from. */
  private Copy copy(Content c, String what) {
    String handle = c.handle();
    Copy cs = handle == null ? null : copies.get(handle).orElse(null);
    if (cs == null) {
      throw ProvisioningException.invalid(
          what
              + ": Cinder has no snapshot or backup "
              + handle
              + " (its content "
              + c.name()
              + " names it)");
    }
    // A backup Cinder is restoring (into this claim's volume, or another's) is whole: a second
    // restore from it is refused by Cinder and told busy, and this claim's own looks go on.
    boolean restoring = cs.kind() == Copy.Kind.BACKUP && "restoring".equals(cs.status());
    if (!cs.ready() && !restoring) {
      throw new ProvisioningException(
          what + ": " + cs.describe() + " is " + cs.status() + ", not available",
          cs.status().startsWith("error"),
          null);
    }
    return cs;
  }

  /**
   * A snapshot of a Block claim restored as a filesystem (or the reverse) would hand the node a
   * device it misreads, or a filesystem its owner wrote byte by byte for the node's kernel to
   * mount: refused unless the content's admin allowed it, as Kubernetes does. The mode is the
   * content's; a content that says none (one an admin makes for an existing snapshot) has the mode
   * its copy recorded when this provisioner took it. A copy whose record disagrees with its content
   * (its metadata is any Cinder user's to write) restores into neither without the admin's leave.
   */
  private static void checkMode(
      String what,
      GenericKubernetesResource raw,
      Content content,
      Copy copy,
      PersistentVolumeClaim claim) {
    Map<String, String> ann = raw.getMetadata().getAnnotations();
    boolean allowed = ann != null && "true".equals(ann.get(SnapshotApi.ALLOW_MODE_CHANGE));
    if (allowed) {
      return;
    }
    String recorded = copy.metadata().get(SnapshotApi.META_SOURCE_MODE);
    String stated = content.sourceVolumeMode();
    String wanted =
        claim.getSpec().getVolumeMode() == null ? "Filesystem" : claim.getSpec().getVolumeMode();
    if (stated != null && recorded != null && !stated.equals(recorded)) {
      throw ProvisioningException.invalid(
          what
              + " is of a "
              + ClaimRef.quote(stated)
              + " volume by its content, and its Cinder "
              + copy.kind().noun
              + " "
              + copy.id()
              + " says "
              + ClaimRef.quote(recorded)
              + ": it is restored only with the annotation "
              + SnapshotApi.ALLOW_MODE_CHANGE
              + ": \"true\" on its content");
    }
    String taken = stated != null ? stated : recorded;
    if (taken != null && !taken.equals(wanted)) {
      throw ProvisioningException.invalid(
          what
              + " was taken of a "
              + ClaimRef.quote(taken)
              + " volume and this claim asks for "
              + wanted
              + "; an admin may allow it with the annotation "
              + SnapshotApi.ALLOW_MODE_CHANGE
              + ": \"true\" on its content");
    }
  }
}
