package org.standalonecinder.provisioner.clone;

import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.storage.StorageClass;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.standalonecinder.api.ClaimAnnotations;
import org.standalonecinder.api.ClaimRef;
import org.standalonecinder.api.CloneRequest;
import org.standalonecinder.provisioner.cinder.CinderClient;
import org.standalonecinder.provisioner.cinder.Volume;
import org.standalonecinder.provisioner.controller.ProvisioningException;
import org.standalonecinder.provisioner.provision.ClaimRequest;
import org.standalonecinder.provisioner.provision.Placement;
import org.standalonecinder.provisioner.provision.VolumeSource;

/**
 * Finds out whether and from what a claim is to be cloned, and resolves the source claim to a
 * Cinder volume that can be cloned into the claim's class: source claim → bound PV of ours → its
 * Cinder volume, checked for status, size, zone and type. The provisioner uses it before cloning,
 * and the webhook asks the same questions through the resolver endpoint before admitting a clone,
 * so that a clone that would fail is refused at {@code kubectl apply} time.
 *
 * <p>Failures are {@link ProvisioningException}s whose message says what to change; final ones
 * cannot be fixed by waiting (the class does not allow clones, the source is not ours), the others
 * may pass later (the source is not bound yet, its volume is busy).
 */
public final class CloneResolver {

  private static final Set<String> CLONABLE = Set.of("available", "in-use");

  private final ClusterReader cluster;
  private final CinderClient cinder;
  private final String provisionerName;
  private final Placement.Topology topology;
  private final CloneConsent consent;

  /**
   * @param provisionerName our provisioner's name: a source's PV must have been provisioned by it
   */
  public CloneResolver(ClusterReader cluster, CinderClient cinder, String provisionerName) {
    this(cluster, cinder, provisionerName, Placement.Topology.DEFAULT);
  }

  /** With the nodes' zone label, to check a source's zone against a class's allowed zones. */
  public CloneResolver(
      ClusterReader cluster,
      CinderClient cinder,
      String provisionerName,
      Placement.Topology topology) {
    this.cluster = cluster;
    this.cinder = cinder;
    this.provisionerName = provisionerName;
    this.topology = topology;
    this.consent = new CloneConsent(cluster);
  }

  /**
   * The claim the given claim asks to be a clone of: its {@code k8s.io/CloneRequest}, or a native
   * {@code dataSourceRef}/{@code dataSource} naming a claim; empty for a blank volume.
   *
   * @throws ProvisioningException (final) for a bad annotation, two different sources, or a data
   *     source that is no claim (a Cinder volume of ours cannot be filled from it)
   */
  public static Optional<ClaimRef> requested(PersistentVolumeClaim claim) {
    CloneRequest r = read(claim);
    return Optional.ofNullable(r.dataSource() != null ? r.dataSource() : r.annotated());
  }

  /**
   * What the claim asks to be filled from, checked: a clone's source, a snapshot to restore, a
   * populated kind, or nothing.
   *
   * @throws ProvisioningException (final) for a bad annotation or data source, or two sources
   */
  public static CloneRequest read(PersistentVolumeClaim claim) {
    Map<String, String> ann = claim.getMetadata().getAnnotations();
    var spec = claim.getSpec();
    var ref = spec.getDataSourceRef();
    var plain = spec.getDataSource();
    CloneRequest r =
        CloneRequest.read(
            claim.getMetadata().getNamespace(),
            ann == null ? null : ann.get(ClaimAnnotations.CLONE_REQUEST),
            ref == null
                ? null
                : new CloneRequest.DataSource(
                    ref.getApiGroup(), ref.getKind(), ref.getName(), ref.getNamespace()),
            plain == null
                ? null
                : new CloneRequest.DataSource(
                    plain.getApiGroup(), plain.getKind(), plain.getName(), null));
    if (r.annotationError() != null) {
      throw ProvisioningException.invalid(r.annotationError());
    }
    if (r.dataSourceError() != null) {
      throw ProvisioningException.invalid(r.dataSourceError() + "; no blank volume was made");
    }
    if (r.conflicting()) {
      throw ProvisioningException.invalid(
          ClaimAnnotations.CLONE_REQUEST
              + " names "
              + r.annotated()
              + " but the data source names "
              + (r.dataSource() != null
                  ? r.dataSource()
                  : r.snapshot() != null ? "VolumeSnapshot " + r.snapshot() : r.populator())
              + "; name one source");
    }
    return r;
  }

  /**
   * Checks, when the clone is about to be made, that a clone across namespaces may be made: see
   * {@link CloneConsent#verify}.
   *
   * @return the uid of the source claim the consent was read from, for {@link #resolve} (null
   *     within a namespace)
   * @throws ProvisioningException (final) when it may not
   */
  public String verifyToken(PersistentVolumeClaim target, ClaimRef source) {
    return consent.verify(target, source);
  }

  /**
   * Resolves and checks the source for a clone into {@code target} of class {@code sc}.
   *
   * @param judgedUid the uid of the source claim whose consent {@link #verifyToken} read, or null:
   *     the data is read of that very claim, never of one created again under its name between the
   *     two reads (the grant of one claim would otherwise copy another's data)
   * @throws ProvisioningException saying why the clone cannot be made (now or at all)
   */
  public VolumeSource.Clone resolve(
      ClaimRef source, PersistentVolumeClaim target, StorageClass sc, String judgedUid) {
    ClaimRequest req = ClaimRequest.of(target, sc);
    if (!req.params().smartclone()) {
      throw ProvisioningException.invalid(
          "the claim asks to clone "
              + source
              + ", but StorageClass "
              + sc.getMetadata().getName()
              + " does not allow cloning (its smartclone parameter is not \"true\"); no blank"
              + " volume was made: use a class with smartclone \"true\"");
    }
    PersistentVolumeClaim claim =
        cluster
            .claim(source.namespace(), source.name())
            .orElseThrow(() -> retry("source claim " + source + " does not exist"));
    if (judgedUid != null && !judgedUid.equals(claim.getMetadata().getUid())) {
      // Not final: the next look reads both again, of one claim.
      throw retry(
          "source claim "
              + source
              + " was deleted and created again while it was being checked; it is checked again");
    }
    if (claim.getMetadata().getDeletionTimestamp() != null
        && !SourceProtection.holds(claim, target.getMetadata().getUid())) {
      // A source held for this clone is deleted only once the clone is made: Cinder copies it.
      throw retry("source claim " + source + " is being deleted");
    }
    PersistentVolume pv = boundVolume(source, claim);
    Map<String, String> ann = pv.getMetadata().getAnnotations();
    String volumeId = ann == null ? null : ann.get(ClaimAnnotations.VOLUME_ID);
    if (volumeId == null || !provisionerName.equals(ann.get(ClaimAnnotations.PROVISIONED_BY))) {
      throw ProvisioningException.invalid(
          "source claim " + source + " was not provisioned by " + provisionerName);
    }
    String sourceMode = mode(claim);
    String targetMode = req.block() ? "Block" : "Filesystem";
    if (!sourceMode.equals(targetMode)) {
      throw ProvisioningException.invalid(
          "source claim "
              + source
              + " has volumeMode "
              + sourceMode
              + " and this claim "
              + targetMode
              + "; they must match");
    }
    Volume v = sourceVolume(source, volumeId);
    fits(v, source, req, sc);
    return new VolumeSource.Clone(
        source,
        claim.getMetadata().getUid(),
        v.id(),
        v.sizeGib(),
        v.availabilityZone(),
        v.volumeType(),
        v.status());
  }

  /** The source's Cinder volume, in a status Cinder clones. */
  private Volume sourceVolume(ClaimRef source, String volumeId) {
    Volume v =
        cinder
            .getVolume(volumeId)
            .orElseThrow(
                () ->
                    ProvisioningException.invalid(
                        "the Cinder volume "
                            + volumeId
                            + " of source claim "
                            + source
                            + " is gone"));
    if (!CLONABLE.contains(v.status())) {
      throw retry(
          "the Cinder volume "
              + volumeId
              + " of source claim "
              + source
              + " is "
              + v.status()
              + "; Cinder clones available or in-use volumes");
    }
    return v;
  }

  /**
   * Whether the source's volume can be cloned into a claim of {@code req} in class {@code sc}: no
   * larger than asked, in a zone the class allows, of the class's type.
   *
   * @throws ProvisioningException (final) saying what to change
   */
  private void fits(Volume v, ClaimRef source, ClaimRequest req, StorageClass sc) {
    if (v.sizeGib() > req.sizeGib()) {
      throw ProvisioningException.invalid(
          "source claim "
              + source
              + " holds "
              + v.sizeGib()
              + " GiB, more than this claim requests ("
              + req.sizeGib()
              + " GiB); request at least "
              + v.sizeGib()
              + "Gi");
    }
    String zone = req.params().availabilityZone();
    if (zone != null && !zone.equals(v.availabilityZone())) {
      throw ProvisioningException.invalid(
          "source claim "
              + source
              + " is in availability zone "
              + v.availabilityZone()
              + " and StorageClass "
              + sc.getMetadata().getName()
              + " asks for "
              + zone
              + "; Cinder clones within a zone: use a class without availability or with "
              + v.availabilityZone());
    }
    java.util.TreeSet<String> allowed = Placement.allowedZones(sc, topology.zoneLabel());
    if (!topology.ignoreVolumeAz()
        && !allowed.isEmpty()
        && !allowed.contains(v.availabilityZone())) {
      throw ProvisioningException.invalid(
          "source claim "
              + source
              + " is in zone "
              + v.availabilityZone()
              + ", which StorageClass "
              + sc.getMetadata().getName()
              + " does not allow ("
              + topology.zoneLabel()
              + " in "
              + allowed
              + "); a clone stays in its source's zone: use a class that allows "
              + v.availabilityZone());
    }
    String type = req.params().volumeType();
    if (type != null && !type.equals(v.volumeType())) {
      throw ProvisioningException.invalid(
          "source claim "
              + source
              + " has volume type "
              + v.volumeType()
              + " and StorageClass "
              + sc.getMetadata().getName()
              + " asks for "
              + type
              + "; a clone keeps its source's type: use a class without type or with "
              + v.volumeType());
    }
  }

  /**
   * The PV the source claim is bound to. A claim's {@code spec.volumeName} is the user's to write,
   * so it proves nothing: only a Bound claim whose PV names that very claim (namespace, name and
   * uid) in its {@code claimRef} owns the PV's data. Anything else is refused before Cinder is
   * asked, or a claim naming another namespace's PV would copy that namespace's data.
   */
  private PersistentVolume boundVolume(ClaimRef source, PersistentVolumeClaim claim) {
    String phase = claim.getStatus() == null ? null : claim.getStatus().getPhase();
    String pvName = claim.getSpec() == null ? null : claim.getSpec().getVolumeName();
    if (!"Bound".equals(phase) || pvName == null || pvName.isEmpty()) {
      throw retry(
          "source claim "
              + source
              + " is not Bound yet (phase "
              + (phase == null ? "unknown" : phase)
              + "); a clone is made once it is");
    }
    PersistentVolume pv =
        cluster
            .volume(pvName)
            .orElseThrow(
                () -> retry("the PV " + pvName + " of source claim " + source + " is gone"));
    var ref = pv.getSpec() == null ? null : pv.getSpec().getClaimRef();
    String uid = claim.getMetadata().getUid();
    if (ref == null
        || !source.namespace().equals(ref.getNamespace())
        || !source.name().equals(ref.getName())
        || uid == null
        || !uid.equals(ref.getUid())) {
      // Whose claim it is bound to is not said: the requester may not see other namespaces.
      throw ProvisioningException.invalid(
          "source claim "
              + source
              + " names PV "
              + pvName
              + " in spec.volumeName, but that PV is not bound to it: only the claim a PV is"
              + " bound to can be cloned");
    }
    return pv;
  }

  private static ProvisioningException retry(String message) {
    return new ProvisioningException(message, false, null);
  }

  private static String mode(PersistentVolumeClaim c) {
    return c.getSpec() == null || c.getSpec().getVolumeMode() == null
        ? "Filesystem"
        : c.getSpec().getVolumeMode();
  }
}
