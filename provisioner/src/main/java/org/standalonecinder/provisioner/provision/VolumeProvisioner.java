package org.standalonecinder.provisioner.provision;

import io.fabric8.kubernetes.api.model.ObjectReferenceBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.SecretReference;
import io.fabric8.kubernetes.api.model.VolumeNodeAffinityBuilder;
import io.fabric8.kubernetes.api.model.storage.StorageClass;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;
import org.standalonecinder.api.AccessModes;
import org.standalonecinder.api.ClassParameters;
import org.standalonecinder.api.InvalidClassParametersException;
import org.standalonecinder.provisioner.cinder.Attachment;
import org.standalonecinder.provisioner.cinder.Backoff;
import org.standalonecinder.provisioner.cinder.CinderClient;
import org.standalonecinder.provisioner.cinder.CinderException;
import org.standalonecinder.provisioner.cinder.ConnectionInfo;
import org.standalonecinder.provisioner.cinder.Connector;
import org.standalonecinder.provisioner.cinder.ExportPath;
import org.standalonecinder.provisioner.cinder.Rollback;
import org.standalonecinder.provisioner.cinder.Volume;
import org.standalonecinder.provisioner.cinder.VolumeSpec;
import org.standalonecinder.provisioner.controller.Provisioner.DeleteOutcome;
import org.standalonecinder.provisioner.controller.ProvisioningException;
import org.standalonecinder.provisioner.mapping.Cephx;
import org.standalonecinder.provisioner.mapping.IscsiMapper;
import org.standalonecinder.provisioner.mapping.MappedVolume;
import org.standalonecinder.provisioner.mapping.MappingContext;
import org.standalonecinder.provisioner.mapping.RbdForm;
import org.standalonecinder.provisioner.mapping.RbdMapper;
import org.standalonecinder.provisioner.mapping.RbdOptions;
import org.standalonecinder.provisioner.mapping.SecretRefs;
import org.standalonecinder.provisioner.mapping.VolumeMappers;

/**
 * Turns a claim into a Cinder volume exported to the cluster and the PersistentVolume that
 * describes it, and back.
 *
 * <p>Provisioning is idempotent: the volume's name and metadata derive from the claim's UID, an
 * existing volume is looked up before one is created and reused (a different size is an error), and
 * a reused volume left attached by a crashed attempt is detached first. Whatever fails after the
 * volume exists undoes the completed steps in reverse order (export, volume, Secret) and reports
 * the original error.
 *
 * <p>Without Nova, the volume is attached to "the cluster": one connector with the cluster-wide
 * initiator name, through the attachments API when Cinder has it (3.44: create with a connector and
 * complete), else os-reserve and os-initialize_connection.
 */
public final class VolumeProvisioner {

  /** The largest volume we ask for; Cinder's own limit is the project quota. */
  static final long MAX_GIB = 64L * 1024;

  private static final Set<String> AVAILABLE = Set.of("available");

  /** Every status a reserved volume moves to while its reservation is carried on or undone. */
  private static final Set<String> NOT_RESERVED =
      Set.of("available", "attaching", "in-use", "detaching");

  /**
   * How long a volume must stay reserved with no attachment to count as left so. A reservation's
   * two statements run within one API request, milliseconds apart; a request still running after
   * this long is not one the API will finish.
   */
  static final Duration RESERVATION_GRACE = Duration.ofSeconds(15);

  /**
   * How long a new volume may stay {@code creating} before it is asked whether a scheduler ever
   * took it. The scheduler picks a backend within a second; a volume without one after this long
   * was most likely never cast to the scheduler (its API stopped between the volume's row and the
   * cast), and then it would stay {@code creating} for good.
   */
  static final Duration SCHEDULING_GRACE = Duration.ofSeconds(60);

  private static final Logger log = LoggerFactory.getLogger(VolumeProvisioner.class);
  private static final BigDecimal GIB = BigDecimal.valueOf(1L << 30);

  private final CinderClient cinder;
  private final SecretStore secrets;
  private final VolumeMappers mappers;
  private final ProvisionerSettings settings;
  private final Backoff backoff;
  private final Duration schedulingGrace;

  public VolumeProvisioner(
      CinderClient cinder,
      SecretStore secrets,
      VolumeMappers mappers,
      ProvisionerSettings settings,
      Backoff backoff) {
    this(cinder, secrets, mappers, settings, backoff, SCHEDULING_GRACE);
  }

  private VolumeProvisioner(
      CinderClient cinder,
      SecretStore secrets,
      VolumeMappers mappers,
      ProvisionerSettings settings,
      Backoff backoff,
      Duration schedulingGrace) {
    this.cinder = cinder;
    this.secrets = secrets;
    this.mappers = mappers;
    this.settings = settings;
    this.backoff = backoff;
    this.schedulingGrace = schedulingGrace;
  }

  /**
   * The same provisioner with another grace for volumes no scheduler took (60 s by default); the
   * reliability suite shortens it so that its case does not take a minute.
   */
  public VolumeProvisioner withSchedulingGrace(Duration grace) {
    return new VolumeProvisioner(cinder, secrets, mappers, settings, backoff, grace);
  }

  /** What grows this provisioner's volumes, on the same Cinder and with the same waits. */
  public VolumeExpander expander() {
    return new VolumeExpander(cinder, backoff);
  }

  /** The connector this cluster presents to Cinder. */
  public Connector connector() {
    return new Connector(
        settings.initiatorName(),
        settings.connectorHost(),
        settings.connectorIp(),
        settings.multipath(),
        settings.wwpns(),
        settings.wwnns());
  }

  /**
   * Creates (or finds) the claim's volume, exports it and returns the PV to create. The PV is not
   * created here; the caller creates it and calls {@link #delete} if it cannot.
   *
   * @throws ProvisioningException with everything done so far undone
   */
  public PersistentVolume provision(PersistentVolumeClaim claim, StorageClass storageClass) {
    return provision(claim, storageClass, null);
  }

  /**
   * As {@link #provision(PersistentVolumeClaim, StorageClass)}, as a Cinder clone of {@code source}
   * (resolved and checked by the clone resolver) when it is not null: in the source's zone unless
   * the class names one, with the class's type or else the source's.
   */
  public PersistentVolume provision(
      PersistentVolumeClaim claim, StorageClass storageClass, CloneSource source) {
    return provision(claim, storageClass, source, Map.of());
  }

  /**
   * As {@link #provision(PersistentVolumeClaim, StorageClass, CloneSource)}, for a claim the
   * scheduler selected a node for ({@code volume.kubernetes.io/selected-node}) whose labels are
   * {@code nodeLabels}: the volume is made in the node's zone and its PV is for that zone's nodes
   * (see {@link Placement}).
   */
  public PersistentVolume provision(
      PersistentVolumeClaim claim,
      StorageClass storageClass,
      CloneSource source,
      Map<String, String> nodeLabels) {
    ClaimRequest req = ClaimRequest.of(claim, storageClass);
    Map<String, String> claimAnnotations = claim.getMetadata().getAnnotations();
    Placement placement =
        Placement.decide(
            storageClass,
            req.params().availabilityZone(),
            claimAnnotations == null ? null : claimAnnotations.get(Names.ANN_SELECTED_NODE),
            nodeLabels,
            claim.getMetadata().getUid(),
            source == null ? null : source.availabilityZone(),
            settings.topology());
    if (source != null && source.sizeGib() > req.sizeGib()) {
      throw ProvisioningException.invalid(
          "source claim "
              + source.claim()
              + " holds "
              + source.sizeGib()
              + " GiB, more than this claim requests ("
              + req.sizeGib()
              + " GiB)");
    }
    String uid = claim.getMetadata().getUid();
    String pvName = Names.pvName(uid);
    RbdOptions rbd = rbdOptions(req.params());
    Rollback rollback = new Rollback();
    try {
      MDC.put("pv", pvName);
      Volume volume = findOrCreate(req, claim, pvName, source, placement, rollback);
      MDC.put("volume", volume.id());
      if (req.multiNode() && !volume.multiattach()) {
        throw ProvisioningException.invalid(
            "ReadWriteMany needs a multiattach volume type, and volume type '"
                + volume.volumeType()
                + "' is not one: set parameter type to a type with multiattach=\"<is> True\"");
      }
      String attachment;
      ConnectionInfo info;
      Connector connector = connector();
      if (ExportPath.of(cinder.apiVersions().used(), false) == ExportPath.ATTACHMENTS) {
        Attachment a = cinder.createAttachment(volume.id(), connector);
        rollback.push("delete attachment " + a.id(), () -> cinder.deleteAttachment(a.id()));
        cinder.completeAttachment(a.id());
        attachment = a.id();
        info = a.connectionInfo();
        if (info == null) {
          throw new ProvisioningException(
              "Cinder created attachment " + a.id() + " without connection info", false, null);
        }
      } else {
        cinder.reserve(volume.id());
        rollback.push("unreserve " + volume.id(), () -> cinder.unreserve(volume.id()));
        info = cinder.initializeConnection(volume.id(), connector);
        rollback.push(
            "terminate connection " + volume.id(),
            () -> cinder.terminateConnection(volume.id(), connector));
        attachment = Names.RESERVED;
      }
      MappedVolume mapped =
          mappers.map(
              info,
              new MappingContext(
                  pvName,
                  settings.initiatorName(),
                  req.params().fsType(),
                  req.block(),
                  req.readOnly(),
                  settings.secretNamespace(),
                  Names.secretLabels(pvName),
                  Names.sharedSecretLabels(),
                  rbd,
                  req.multiNode(),
                  req.params().iscsiChap() != null
                      ? "optional".equals(req.params().iscsiChap())
                      : settings.iscsiChapOptional()));
      mapped
          .secret()
          .ifPresent(
              s -> {
                String ns = s.getMetadata().getNamespace();
                String name = s.getMetadata().getName();
                // Pushed first: a put that times out may still have created the Secret.
                if (mapped.sharedSecret()) {
                  rollback.push(
                      "release shared secret " + name, () -> releaseShared(ns, name, pvName));
                  putShared(s, pvName);
                } else {
                  rollback.push("delete secret " + name, () -> secrets.delete(ns, name));
                  secrets.put(s);
                }
              });
      PersistentVolume pv =
          persistentVolume(claim, storageClass, req, pvName, volume, attachment, mapped, placement);
      if (source != null) {
        pv.getMetadata().getAnnotations().put(Names.ANN_CLONE_OF, source.claim().toString());
      }
      return pv;
    } catch (RuntimeException e) {
      rollback.run(e);
      throw asProvisioningFailure(e);
    }
  }

  private Volume findOrCreate(
      ClaimRequest req,
      PersistentVolumeClaim claim,
      String pvName,
      CloneSource source,
      Placement placement,
      Rollback rollback) {
    String uid = claim.getMetadata().getUid();
    List<Volume> found = cinder.findVolumes(pvName, Names.identifying(uid, settings.clusterId()));
    Volume volume;
    if (found.size() > 1) {
      throw new ProvisioningException(
          "Cinder has "
              + found.size()
              + " volumes named "
              + pvName
              + " for this claim ("
              + found.stream().map(Volume::id).toList()
              + "); delete the extra ones",
          true,
          null);
    } else if (found.size() == 1) {
      volume = found.get(0);
      if (volume.sizeGib() != req.sizeGib()) {
        throw ProvisioningException.invalid(
            "volume "
                + volume.id()
                + " of this claim exists with "
                + volume.sizeGib()
                + " GiB but the claim asks for "
                + req.sizeGib()
                + " GiB");
      }
      String zone = placement.cinderZone();
      if (zone != null && !zone.equals(volume.availabilityZone())) {
        // made for an earlier choice of node (the scheduler chose again): in the wrong zone now
        String id = volume.id();
        rollback.push("delete volume " + id, () -> cinder.deleteVolume(id));
        makeAvailable(volume);
        throw new ProvisioningException(
            "volume "
                + id
                + " of this claim is in zone "
                + volume.availabilityZone()
                + " and the claim now needs zone "
                + zone
                + " ("
                + placement.from()
                + "); it is deleted and a new one is made",
            false,
            null);
      }
    } else {
      Map<String, String> meta = new LinkedHashMap<>(Names.identifying(uid, settings.clusterId()));
      meta.put(Names.META_PVC_NAMESPACE, claim.getMetadata().getNamespace());
      meta.put(Names.META_PVC_NAME, claim.getMetadata().getName());
      meta.put(Names.META_PV_NAME, pvName);
      meta.put(Names.META_STATE, Names.STATE_PROVISIONING);
      VolumeSpec spec =
          VolumeSpec.blank(pvName, req.sizeGib())
              .withType(req.params().volumeType())
              .withDescription(
                  "Kubernetes claim "
                      + claim.getMetadata().getNamespace()
                      + "/"
                      + claim.getMetadata().getName());
      if (source != null) {
        meta.put(Names.META_CLONE_OF, source.volumeId());
        spec =
            spec.cloneOf(source.volumeId())
                .withDescription(spec.description() + ", a clone of " + source.claim());
      }
      volume =
          create(spec.withAvailabilityZone(placement.cinderZone()).withMetadata(meta), placement);
    }
    String id = volume.id();
    rollback.push("delete volume " + id, () -> cinder.deleteVolume(id));
    return makeAvailable(volume);
  }

  /** Creates the volume; a zone Cinder does not know is the admin's to fix, said so. */
  private Volume create(VolumeSpec spec, Placement placement) {
    try {
      return cinder.createVolume(spec);
    } catch (CinderException.BadRequest e) {
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

  /** Brings a new or reused volume to {@code available}, undoing a crashed attempt's export. */
  private Volume makeAvailable(Volume v) {
    if (v.status().equals("creating")) {
      return awaitCreated(v);
    }
    boolean detached = detachAll(v);
    if (!detached && v.status().equals("reserved")) {
      return releaseReservation(v);
    }
    if (!detached && v.status().equals("attaching")) {
      // os-reserve (+ initialize) of an older Cinder, or of a crashed attempt
      cinder.terminateConnection(v.id(), connector());
      cinder.unreserve(v.id());
    }
    return cinder.awaitVolumeStatus(v.id(), AVAILABLE, backoff);
  }

  /**
   * Waits for a {@code creating} volume, and deletes it when no scheduler ever took it. Cinder
   * itself tells the two apart: it deletes at once a volume that has no backend host yet, and
   * refuses (400) to delete one a backend is creating. So after {@link #SCHEDULING_GRACE} the
   * delete is the question, for any user (the host attribute that would answer it is admin-only). A
   * scheduler that was only down finds the volume gone when it comes back and drops its request.
   */
  private Volume awaitCreated(Volume v) {
    Duration grace = min(backoff.deadline(), schedulingGrace);
    CinderException.UnexpectedState waited;
    try {
      return cinder.awaitVolumeStatus(v.id(), AVAILABLE, backoff.withDeadline(grace));
    } catch (CinderException.UnexpectedState e) {
      if (!e.timedOut()) {
        throw e;
      }
      waited = e;
    }
    Volume now = cinder.getVolume(v.id()).orElse(null);
    if (now == null || !now.status().equals("creating")) {
      // it moved on (or went) between the last poll and this look: take it from where it is
      return now == null
          ? cinder.awaitVolumeStatus(v.id(), AVAILABLE, backoff)
          : makeAvailable(now);
    }
    try {
      cinder.deleteVolume(v.id());
    } catch (CinderException.BadRequest beingCreated) {
      Duration rest = backoff.deadline().minus(grace);
      if (rest.isNegative() || rest.isZero()) {
        throw waited;
      }
      return cinder.awaitVolumeStatus(v.id(), AVAILABLE, backoff.withDeadline(rest));
    }
    log.warn(
        "Cinder never scheduled volume {}: creating for {} s with no backend; deleted, a new one"
            + " is made",
        v.id(),
        grace.toSeconds());
    throw new ProvisioningException(
        "Cinder never scheduled volume "
            + v.id()
            + ": it stayed creating for "
            + grace.toSeconds()
            + " s with no backend (Cinder's API or scheduler stopped before taking it); it was"
            + " deleted and a new one is made",
        false,
        null);
  }

  private static Duration min(Duration a, Duration b) {
    return a.compareTo(b) < 0 ? a : b;
  }

  /**
   * Releases a volume that is {@code reserved} with no attachment. Cinder's attachment create sets
   * the volume {@code reserved} and then writes the attachment, in two statements: a cinder-api
   * killed between them leaves the volume so for good, and only os-reset_status brings it back
   * (os-unreserve wants {@code attaching}, a new attachment and a delete want {@code available}).
   * The reservation may also be live, the request of a failed attempt that the API is still
   * finishing, so the volume is reset only when it stays reserved with no attachment for {@link
   * #RESERVATION_GRACE}.
   */
  private Volume releaseReservation(Volume v) {
    Backoff grace = backoff.withDeadline(min(backoff.deadline(), RESERVATION_GRACE));
    try {
      Volume moved = cinder.awaitVolumeStatus(v.id(), NOT_RESERVED, grace);
      return makeAvailable(moved); // live after all: undo what it made like any other attempt's
    } catch (CinderException.UnexpectedState e) {
      if (!e.timedOut()) {
        throw e;
      }
    }
    List<Attachment> late = cinder.listAttachments(v.id());
    if (!late.isEmpty()) {
      late.forEach(a -> cinder.deleteAttachment(a.id()));
      return cinder.awaitVolumeStatus(v.id(), AVAILABLE, backoff);
    }
    try {
      cinder.resetToAvailable(v.id());
    } catch (CinderException.Forbidden e) {
      throw new ProvisioningException(
          "Cinder left volume "
              + v.id()
              + " reserved with no attachment (its API stopped while reserving it) and only an"
              + " admin may reset it: cinder reset-state --state available --attach-status detached "
              + v.id()
              + "; the claim is tried again",
          false,
          e);
    }
    log.warn(
        "Cinder left volume {} reserved with no attachment for {} s; its status was reset to"
            + " available",
        v.id(),
        grace.deadline().toSeconds());
    return cinder.awaitVolumeStatus(v.id(), AVAILABLE, backoff);
  }

  /**
   * Deletes every attachment of the volume. The volume's own list misses attachments that were
   * never completed, so Cinder's attachment list is asked too.
   *
   * @return whether there was any
   */
  private boolean detachAll(Volume v) {
    java.util.Set<String> ids = new java.util.TreeSet<>(v.attachmentIds());
    cinder.listAttachments(v.id()).forEach(a -> ids.add(a.id()));
    ids.forEach(cinder::deleteAttachment);
    return !ids.isEmpty();
  }

  private PersistentVolume persistentVolume(
      PersistentVolumeClaim claim,
      StorageClass sc,
      ClaimRequest req,
      String pvName,
      Volume volume,
      String attachment,
      MappedVolume mapped,
      Placement placement) {
    Map<String, String> annotations = new LinkedHashMap<>();
    annotations.put(Names.ANN_PROVISIONED_BY, settings.provisionerName());
    annotations.put(Names.ANN_VOLUME_ID, volume.id());
    annotations.put(Names.ANN_IDENTITY, settings.identity());
    annotations.put(Names.ANN_ATTACHMENT, attachment);
    PersistentVolume pv =
        new PersistentVolumeBuilder()
            .withNewMetadata()
            .withName(pvName)
            .withAnnotations(annotations)
            .endMetadata()
            .withNewSpec()
            .withCapacity(Map.of("storage", new Quantity(volume.sizeGib() + "Gi")))
            .withAccessModes(claim.getSpec().getAccessModes())
            .withClaimRef(
                new ObjectReferenceBuilder()
                    .withApiVersion("v1")
                    .withKind("PersistentVolumeClaim")
                    .withNamespace(claim.getMetadata().getNamespace())
                    .withName(claim.getMetadata().getName())
                    .withUid(claim.getMetadata().getUid())
                    .build())
            .withStorageClassName(sc.getMetadata().getName())
            .withPersistentVolumeReclaimPolicy(
                sc.getReclaimPolicy() == null ? "Delete" : sc.getReclaimPolicy())
            .withMountOptions(sc.getMountOptions())
            .withVolumeMode(req.block() ? "Block" : "Filesystem")
            .endSpec()
            .build();
    if (placement.nodeZone() != null) {
      pv.getSpec()
          .setNodeAffinity(
              new VolumeNodeAffinityBuilder()
                  .withNewRequired()
                  .addNewNodeSelectorTerm()
                  .addNewMatchExpression()
                  .withKey(settings.topology().zoneLabel())
                  .withOperator("In")
                  .withValues(placement.nodeZone())
                  .endMatchExpression()
                  .endNodeSelectorTerm()
                  .endRequired()
                  .build());
    }
    mapped.source().accept(pv.getSpec());
    return pv;
  }

  /**
   * Marks the PV's volume {@link Names#STATE_PROVISIONED}: it is the PV's from now on, and no
   * orphan sweep may delete it, whatever becomes of the PV (an admin may delete a retained one and
   * keep the data). Called once the PV exists; a volume that is already gone needs nothing.
   */
  public void handOver(PersistentVolume pv) {
    // The PV exists: from now on it, not the pending mark, keeps its shared Secret.
    settle(pv.getMetadata().getName());
    String volumeId = pv.getMetadata().getAnnotations().get(Names.ANN_VOLUME_ID);
    try {
      cinder.updateVolumeMetadata(volumeId, Map.of(Names.META_STATE, Names.STATE_PROVISIONED));
    } catch (CinderException.NotFound gone) {
      // nothing left to protect
    } catch (RuntimeException e) {
      throw asProvisioningFailure(e);
    }
  }

  /**
   * Withdraws the export, deletes the volume and the PV's auth Secret, in that order. Each step
   * treats "already gone" as done, so a delete that failed half-way can simply run again.
   *
   * @throws ProvisioningException (not final) when Cinder will not delete the volume yet
   */
  public DeleteOutcome delete(PersistentVolume pv) {
    Map<String, String> ann = pv.getMetadata().getAnnotations();
    if (ann == null || !settings.identity().equals(ann.get(Names.ANN_IDENTITY))) {
      return DeleteOutcome.NOT_MINE;
    }
    String volumeId = ann.get(Names.ANN_VOLUME_ID);
    if (volumeId != null) {
      MDC.put("volume", volumeId);
    }
    try {
      Volume volume = volumeId == null ? null : cinder.getVolume(volumeId).orElse(null);
      if (volume != null) {
        String attachment = ann.get(Names.ANN_ATTACHMENT);
        if (Names.RESERVED.equals(attachment)) {
          cinder.terminateConnection(volumeId, connector());
          cinder.unreserve(volumeId);
        }
        // The PV's attachment, and strays of retried attempts whose answers were lost: any of
        // them would block the delete.
        detachAll(volume);
        cinder.deleteVolume(volumeId);
        cinder.awaitVolumeDeleted(volumeId, backoff);
      }
    } catch (CinderException.NotFound gone) {
      // deleted under us: what we wanted
    } catch (RuntimeException e) {
      throw asProvisioningFailure(e);
    }
    String pvName = pv.getMetadata().getName();
    for (SecretReference ref : SecretRefs.of(pv.getSpec())) {
      String ns = ref.getNamespace() == null ? settings.secretNamespace() : ref.getNamespace();
      if (ref.getName().equals(IscsiMapper.secretName(pvName))) {
        secrets.delete(ns, ref.getName());
      } else if (ns.equals(settings.secretNamespace())) {
        releaseShared(ns, ref.getName(), pvName);
      }
    }
    settle(pvName);
    return DeleteOutcome.DELETED;
  }

  /**
   * Deletes what provisioning left for a claim that is gone without a PV: volumes carrying the
   * claim's UID and this cluster's id that were never handed to a PV (detached first), and the
   * claim's CHAP Secret. This is what keeps a claim deleted while its provisioning was failing from
   * leaking a volume. A volume that was handed to its PV is left alone, with its Secret: its PV is
   * gone only if an admin deleted a retained one, and its data is the admin's.
   *
   * @return how many volumes were deleted
   */
  public int deleteOrphans(String claimUid) {
    String pvName = Names.pvName(claimUid);
    int n = 0;
    boolean kept = false;
    try {
      for (Volume v :
          cinder.findVolumes(pvName, Names.identifying(claimUid, settings.clusterId()))) {
        if (Names.STATE_PROVISIONED.equals(v.metadata().get(Names.META_STATE))) {
          kept = true;
          continue;
        }
        Volume detached = v;
        if (!v.attachmentIds().isEmpty() || !v.status().equals("available")) {
          detached = makeAvailable(v);
        }
        cinder.deleteVolume(detached.id());
        cinder.awaitVolumeDeleted(detached.id(), backoff);
        n++;
      }
    } catch (CinderException.NotFound gone) {
      // deleted under us
    } catch (RuntimeException e) {
      throw asProvisioningFailure(e);
    }
    if (!kept) {
      secrets.delete(settings.secretNamespace(), IscsiMapper.secretName(pvName));
    }
    return n;
  }

  /**
   * The RBD choices for a claim of this class, its cephx key read before any Cinder call. A class
   * that names Ceph (any of rbdForm, cephClusterID, cephxSecret) expects RBD: its configuration
   * problems stop the claim here, with nothing made in Cinder. For other classes they are only
   * reported if Cinder exports over RBD (and then the export and the volume are undone).
   */
  private RbdOptions rbdOptions(ClassParameters p) {
    ProvisionerSettings.RbdDefaults d = settings.rbd();
    RbdForm form = p.rbdForm() != null ? RbdForm.parse(p.rbdForm()) : d.form();
    String clusterId = p.cephClusterId() != null ? p.cephClusterId() : d.clusterId();
    String secretName = p.cephxSecret() != null ? p.cephxSecret() : d.cephxSecret();
    Cephx cephx = secretName == null ? Cephx.none(settings.secretNamespace()) : cephx(secretName);
    if (p.namesCeph()) {
      if (!cephx.usable() && cephx.problem() != null) {
        throw new ProvisioningException(cephx.problem(), false, null);
      }
      if (form == RbdForm.CSI && clusterId == null) {
        throw new ProvisioningException(
            "StorageClass asks for ceph-csi volumes but names no cephClusterID, and the"
                + " provisioner has no --ceph-cluster-id",
            false,
            null);
      }
    }
    return new RbdOptions(form, clusterId, d.csiDriver(), d.imageFeatures(), cephx);
  }

  /** Reads the admin's cephx Secret; what is wrong with it becomes the reason, never the key. */
  private Cephx cephx(String name) {
    String ns = settings.secretNamespace();
    String where = "the cephx Secret " + ns + "/" + name;
    Optional<Secret> found;
    try {
      found = secrets.get(ns, name);
    } catch (RuntimeException e) {
      return Cephx.unusable(ns, name, "cannot read " + where + ": " + e.getMessage());
    }
    if (found.isEmpty()) {
      return Cephx.unusable(
          ns,
          name,
          where
              + " does not exist: create it with the key of the Ceph user Cinder names, e.g."
              + " kubectl -n "
              + ns
              + " create secret generic "
              + name
              + " --from-literal=key=\"$(ceph auth get-key client.cinder)\"");
    }
    Secret s = found.get();
    Map<String, String> labels = s.getMetadata() == null ? null : s.getMetadata().getLabels();
    if (labels == null || !"true".equals(labels.get(RbdMapper.CEPHX_LABEL))) {
      // A class names the Secret; only Secrets the admin marked may become the key that nodes
      // map images with (copied into a shared Secret), never another Secret of this namespace
      // (CHAP credentials, the webhook's CA or clone token key).
      return Cephx.unusable(
          ns,
          name,
          where
              + " is not marked as a cephx Secret: if it is one, label it: kubectl -n "
              + ns
              + " label secret "
              + name
              + " "
              + RbdMapper.CEPHX_LABEL
              + "=true");
    }
    String key;
    String user;
    try {
      key = value(s, RbdMapper.KEY);
      if (key == null) {
        key = value(s, RbdMapper.CSI_USER_KEY);
      }
      user = value(s, RbdMapper.CSI_USER_ID);
    } catch (IllegalArgumentException e) {
      return Cephx.unusable(ns, name, where + " holds a value that is not base64");
    }
    if (key == null) {
      return Cephx.unusable(
          ns,
          name,
          where
              + " has no key: put the cephx key under 'key' (or 'userKey'), and the user under"
              + " 'userID' if it is not the one Cinder names");
    }
    return Cephx.of(ns, name, user, key);
  }

  /** A Secret's value, trimmed (a key from a file ends with a newline), or null when blank. */
  private static String value(Secret s, String k) {
    String v = null;
    if (s.getStringData() != null && s.getStringData().get(k) != null) {
      v = s.getStringData().get(k);
    } else if (s.getData() != null && s.getData().get(k) != null) {
      v = new String(Base64.getDecoder().decode(s.getData().get(k).trim()), StandardCharsets.UTF_8);
    }
    return v == null || v.isBlank() ? null : v.trim();
  }

  // Shared Secrets: provisionings that put one and whose PV does not exist yet, by Secret.
  // A release never deletes a Secret that is pending, and a PV that exists is seen by the
  // release's look at the API server: together they close the window between a put and the PV's
  // creation. One process acts at a time (one replica, or the leader).
  private final Map<String, Set<String>> pendingShared = new HashMap<>();

  private void putShared(Secret s, String pvName) {
    synchronized (pendingShared) {
      pendingShared
          .computeIfAbsent(
              s.getMetadata().getNamespace() + "/" + s.getMetadata().getName(),
              k -> new HashSet<>())
          .add(pvName);
      secrets.put(s);
    }
  }

  /** The PV exists (or never will): it no longer holds its shared Secret as pending. */
  private void settle(String pvName) {
    synchronized (pendingShared) {
      pendingShared.values().forEach(users -> users.remove(pvName));
      pendingShared.values().removeIf(Set::isEmpty);
    }
  }

  /**
   * Deletes a shared Secret of ours once nothing needs it: no provisioning pending with it, and no
   * PV but {@code exceptPv} referring to it. Safe to repeat; a Secret without our labels is never
   * touched.
   */
  private void releaseShared(String ns, String name, String exceptPv) {
    synchronized (pendingShared) {
      Set<String> pending = pendingShared.get(ns + "/" + name);
      if (pending != null) {
        pending.remove(exceptPv);
        if (!pending.isEmpty()) {
          return;
        }
        pendingShared.remove(ns + "/" + name);
      }
      Optional<Secret> s = secrets.get(ns, name);
      if (s.isEmpty() || !isShared(s.get())) {
        return;
      }
      if (!secrets.referenced(ns, name, exceptPv)) {
        secrets.delete(ns, name);
      }
    }
  }

  private static boolean isShared(Secret s) {
    Map<String, String> labels = s.getMetadata().getLabels();
    return labels != null
        && Names.MANAGED_BY.equals(labels.get(Names.LABEL_MANAGED_BY))
        && labels.containsKey(Names.LABEL_SHARED_SECRET);
  }

  /**
   * Deletes the shared Secrets of ours that no PV refers to: those a crash left between their put
   * and their PV's creation. Run with the orphan sweep.
   *
   * @return how many were deleted
   */
  public int sweepSharedSecrets() {
    int n = 0;
    String ns = settings.secretNamespace();
    for (Secret s : secrets.list(ns, Names.sharedSecretLabels())) {
      String name = s.getMetadata().getName();
      synchronized (pendingShared) {
        if (pendingShared.containsKey(ns + "/" + name)
            || !isShared(s)
            || secrets.referenced(ns, name, null)) {
          continue;
        }
        secrets.delete(ns, name);
        n++;
      }
    }
    return n;
  }

  /**
   * A volume of this cluster that was never handed to a PV, and the claim it was made for.
   *
   * @param volumeId the Cinder volume
   * @param claimUid the uid of the claim it was made for
   * @param namespace the claim's namespace
   * @param name the claim's name
   */
  public record Unfinished(String volumeId, String claimUid, String namespace, String name) {}

  /**
   * The volumes of this cluster still {@link Names#STATE_PROVISIONING}: after a restart, the only
   * trace of a provisioning that failed or was cut short. Volumes of other clusters are never
   * listed, nor volumes that lack the claim's identity.
   */
  public List<Unfinished> unfinished() {
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
      throw asProvisioningFailure(e);
    }
  }

  private static ProvisioningException asProvisioningFailure(RuntimeException e) {
    if (e instanceof ProvisioningException p) {
      return p;
    }
    if (e instanceof org.standalonecinder.provisioner.mapping.UnmappableExportException u) {
      return new ProvisioningException(u.getMessage(), !u.awaitsConfiguration(), u);
    }
    if (e instanceof CinderException c) {
      // A timeout or outage may still succeed; a refusal of our parameters will not, except
      // while the volume is busy (snapshots, attached) which the user may change.
      boolean busy = c instanceof CinderException.BadRequest;
      // A volume that went to error has been rolled back (deleted); a new one may well succeed
      // once the scheduler finds room or the backend is back, so the claim is tried again with
      // backoff, as Kubernetes' external provisioners do.
      boolean failedVolume =
          c instanceof CinderException.UnexpectedState u
              && u.status() != null
              && u.status().startsWith("error");
      return new ProvisioningException(c.getMessage(), !c.retryable() && !busy && !failedVolume, c);
    }
    return new ProvisioningException(e.toString(), false, e);
  }

  /** The claim's request, validated against what this provisioner can do. */
  public record ClaimRequest(
      int sizeGib, ClassParameters params, boolean block, boolean readOnly, boolean multiNode) {

    public static ClaimRequest of(PersistentVolumeClaim claim, StorageClass sc) {
      ClassParameters params;
      try {
        params = ClassParameters.parse(sc.getParameters());
      } catch (InvalidClassParametersException e) {
        throw ProvisioningException.invalid(e.getMessage());
      }
      var spec = claim.getSpec();
      List<String> modes = spec.getAccessModes() == null ? List.of() : spec.getAccessModes();
      if (modes.isEmpty()) {
        throw ProvisioningException.invalid("the claim names no access mode");
      }
      for (String m : modes) {
        if (!List.of("ReadWriteOnce", "ReadOnlyMany", "ReadWriteOncePod", "ReadWriteMany")
            .contains(m)) {
          throw ProvisioningException.invalid("unknown access mode " + m);
        }
      }
      boolean block = "Block".equals(spec.getVolumeMode());
      if (!block && spec.getVolumeMode() != null && !"Filesystem".equals(spec.getVolumeMode())) {
        throw ProvisioningException.invalid("unknown volumeMode " + spec.getVolumeMode());
      }
      Quantity request =
          spec.getResources() == null || spec.getResources().getRequests() == null
              ? null
              : spec.getResources().getRequests().get("storage");
      if (request == null) {
        throw ProvisioningException.invalid("the claim requests no storage size");
      }
      BigDecimal bytes = Quantity.getAmountInBytes(request);
      if (bytes.signum() <= 0) {
        throw ProvisioningException.invalid("the claim requests " + request + " of storage");
      }
      long gib = bytes.divide(GIB, 0, RoundingMode.CEILING).longValueExact();
      if (gib > MAX_GIB) {
        throw ProvisioningException.invalid(
            "the claim requests " + request + "; the largest volume is " + MAX_GIB + " GiB");
      }
      Quantity limit =
          spec.getResources().getLimits() == null
              ? null
              : spec.getResources().getLimits().get("storage");
      if (limit != null
          && Quantity.getAmountInBytes(limit).compareTo(GIB.multiply(BigDecimal.valueOf(gib)))
              < 0) {
        throw ProvisioningException.invalid(
            "Cinder allocates whole GiB: the claim's request rounds up to "
                + gib
                + "Gi, above its limit of "
                + limit);
      }
      boolean readOnly = modes.stream().allMatch("ReadOnlyMany"::equals);
      boolean multiNode = modes.contains("ReadWriteMany");
      AccessModes.refusal(modes, spec.getVolumeMode())
          .ifPresent(
              reason -> {
                throw ProvisioningException.invalid(reason);
              });
      return new ClaimRequest((int) gib, params, block, readOnly, multiNode);
    }
  }

  /** For tests and the controller: how long waits for Cinder may take. */
  public static Backoff defaultBackoff() {
    return Backoff.DEFAULT.withDeadline(Duration.ofMinutes(5));
  }
}
