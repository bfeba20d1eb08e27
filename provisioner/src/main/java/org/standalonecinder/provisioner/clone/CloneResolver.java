package org.standalonecinder.provisioner.clone;

import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.storage.StorageClass;
import java.time.Instant;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import org.standalonecinder.api.ClaimAnnotations;
import org.standalonecinder.api.ClaimRef;
import org.standalonecinder.api.CloneRequest;
import org.standalonecinder.api.CloneToken;
import org.standalonecinder.api.ReferenceGrants;
import org.standalonecinder.provisioner.cinder.CinderClient;
import org.standalonecinder.provisioner.cinder.Volume;
import org.standalonecinder.provisioner.controller.ProvisioningException;
import org.standalonecinder.provisioner.provision.ClaimRequest;
import org.standalonecinder.provisioner.provision.CloneSource;
import org.standalonecinder.provisioner.provision.Placement;

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
   * Checks, when the clone is about to be made (for a WaitForFirstConsumer claim that may be days
   * after its admission), that a clone across namespaces may be made, on what the provisioner can
   * check itself or on a decision that came from the API server:
   *
   * <ol>
   *   <li>the source, as it is now, grants the clone to this namespace ({@code
   *       standalone-cinder.io/clone-grant}, or a ReferenceGrant in its namespace): its owner's
   *       consent needs no token, and so holds with the webhook bypassed, removed or let through
   *       ({@code failurePolicy: Ignore});
   *   <li>else the claim carries the webhook's token for this source and claim, the source is still
   *       the claim the webhook judged (its uid), and its basis still holds: the admin's policy
   *       allowed every clone, or the requester may still create pods in the source's namespace,
   *       and then only when the webhook authenticated the API server as the review's sender. Any
   *       pod that reaches the webhook can send it a review naming any requester, and a token given
   *       for that review can reach a claim through an update the webhook did not see.
   * </ol>
   *
   * @throws ProvisioningException (final) when it may not
   */
  public void verifyToken(PersistentVolumeClaim target, ClaimRef source) {
    ClaimRef self =
        new ClaimRef(target.getMetadata().getNamespace(), target.getMetadata().getName());
    if (source.namespace().equals(self.namespace())) {
      return;
    }
    String refused = "cloning " + source + " across namespaces is refused: ";
    PersistentVolumeClaim now = cluster.claim(source.namespace(), source.name()).orElse(null);
    if (now != null && consents(now, self.namespace())) {
      return;
    }
    Map<String, String> ann = target.getMetadata().getAnnotations();
    String token = ann == null ? null : ann.get(ClaimAnnotations.CLONE_TOKEN);
    String noGrant =
        "the source does not grant the clone to "
            + self.namespace()
            + " (annotation "
            + ClaimAnnotations.CLONE_GRANT
            + ", or a ReferenceGrant in "
            + source.namespace()
            + ")";
    if (token == null) {
      throw ProvisioningException.invalid(
          refused + noGrant + "; and the claim carries no " + ClaimAnnotations.CLONE_TOKEN);
    }
    Optional<CloneToken.Keys> keys = cluster.cloneTokenKeys();
    if (keys.isEmpty()) {
      throw ProvisioningException.invalid(
          refused
              + noGrant
              + ", and no webhook has created the key of its tokens (Secret "
              + CloneToken.KEY_SECRET
              + "): install the webhook");
    }
    String created = target.getMetadata().getCreationTimestamp();
    CloneToken.Claims claims;
    try {
      claims =
          CloneToken.verify(
              token, keys.get(), source, self, created == null ? null : Instant.parse(created));
    } catch (CloneToken.InvalidTokenException e) {
      throw ProvisioningException.invalid(refused + noGrant + "; and " + e.getMessage());
    }
    if (now == null || !Objects.equals(now.getMetadata().getUid(), claims.sourceUid())) {
      // Said the same whether it is gone or another claim now: either way not what was judged.
      throw ProvisioningException.invalid(
          refused
              + "the source claim is not the one admitted (deleted, or deleted and created again"
              + " under its name, since); create this claim again to have the present one judged");
    }
    switch (claims.basis()) {
      case GRANT ->
          throw ProvisioningException.invalid(
              refused
                  + "the source no longer grants the clone to "
                  + self.namespace()
                  + " (annotation "
                  + ClaimAnnotations.CLONE_GRANT
                  + ", or a ReferenceGrant in "
                  + source.namespace()
                  + ")");
      case REQUESTER -> {
        if (!claims.callerAuthenticated()) {
          throw ProvisioningException.invalid(
              refused
                  + noGrant
                  + ", and its token allows it on the requester's rights from a review whose"
                  + " sender the webhook did not authenticate (no --client-ca): anyone who"
                  + " reaches the webhook can name any requester");
        }
        if (!cluster.canCreatePods(claims.requester(), source.namespace())) {
          throw ProvisioningException.invalid(
              refused
                  + claims.requester().user()
                  + ", who asked for it, may no longer create pods in "
                  + source.namespace());
        }
      }
      case POLICY -> {
        // The admin's policy allowed every clone across namespaces: nothing to ask again.
      }
    }
  }

  /**
   * The source owner's consent as it is now: the source's grant annotation, or a ReferenceGrant in
   * its namespace (read only when the annotation does not say so already).
   */
  private boolean consents(PersistentVolumeClaim source, String namespace) {
    return grants(source, namespace)
        || ReferenceGrants.allowClaim(
            next -> cluster.referenceGrants(source.getMetadata().getNamespace(), next),
            namespace,
            source.getMetadata().getName());
  }

  private static boolean grants(PersistentVolumeClaim source, String namespace) {
    Map<String, String> ann = source.getMetadata().getAnnotations();
    return ClaimRef.grants(ann == null ? null : ann.get(ClaimAnnotations.CLONE_GRANT), namespace);
  }

  /**
   * Resolves and checks the source for a clone into {@code target} of class {@code sc}.
   *
   * @throws ProvisioningException saying why the clone cannot be made (now or at all)
   */
  public CloneSource resolve(ClaimRef source, PersistentVolumeClaim target, StorageClass sc) {
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
    return new CloneSource(
        source, v.id(), v.sizeGib(), v.availabilityZone(), v.volumeType(), v.status());
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
