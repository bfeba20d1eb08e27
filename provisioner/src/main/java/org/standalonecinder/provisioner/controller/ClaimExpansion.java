package org.standalonecinder.provisioner.controller;

import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaimCondition;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaimConditionBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.storage.StorageClass;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.time.Clock;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.standalonecinder.provisioner.provision.Names;
import org.standalonecinder.provisioner.provision.ProvisioningException;
import org.standalonecinder.provisioner.provision.VolumeExpander;

/**
 * Grows the volume of a bound claim whose request grew, as Kubernetes' external resizers do: the
 * Cinder volume first, then the PV's capacity, then the claim's status.
 *
 * <p>Kubernetes' expand controller leaves these claims to "an external controller" (the in-tree
 * iSCSI and FC plugins cannot expand), and kubelet grows a filesystem only for plugins that can
 * (in-tree iSCSI and FC cannot). So a raw block claim is done once the PV is bigger (its status
 * capacity is set here), while a filesystem claim keeps the {@code FileSystemResizePending}
 * condition until someone grows the filesystem on the node: the event says how. Every step is safe
 * to repeat: each compares what is with what is asked.
 */
final class ClaimExpansion {

  static final String RESIZING = "Resizing";
  static final String RESIZE_FAILED = "VolumeResizeFailed";
  static final String FS_RESIZE_PENDING = "FileSystemResizePending";

  private static final BigDecimal GIB = BigDecimal.valueOf(1L << 30);

  private final KubernetesClient client;
  private final VolumeExpander expander;
  private final EventRecorder events;
  private final Clock clock;

  ClaimExpansion(
      KubernetesClient client, VolumeExpander expander, EventRecorder events, Clock clock) {
    this.client = client;
    this.expander = expander;
    this.events = events;
    this.clock = clock;
  }

  /** Whether the claim asks for more than its PV has, or its status still lags behind the PV. */
  static boolean wanted(PersistentVolumeClaim claim, PersistentVolume pv) {
    int asked = gib(storage(claim.getSpec().getResources().getRequests()), RoundingMode.CEILING);
    int pvGib = gib(storage(pv.getSpec().getCapacity()), RoundingMode.FLOOR);
    if (asked > pvGib) {
      return true;
    }
    int status =
        claim.getStatus() == null
            ? 0
            : gib(storage(claim.getStatus().getCapacity()), RoundingMode.FLOOR);
    return status < pvGib && !hasCondition(claim, FS_RESIZE_PENDING);
  }

  /**
   * Brings the volume, the PV and the claim's status to the claim's request.
   *
   * @throws ProvisioningException when something cannot be done (now or at all)
   */
  void sync(PersistentVolumeClaim claim, PersistentVolume pv, StorageClass sc) {
    int asked = gib(storage(claim.getSpec().getResources().getRequests()), RoundingMode.CEILING);
    int pvGib = gib(storage(pv.getSpec().getCapacity()), RoundingMode.FLOOR);
    if (asked > pvGib) {
      if (sc == null || !Boolean.TRUE.equals(sc.getAllowVolumeExpansion())) {
        throw ProvisioningException.invalid(
            "StorageClass "
                + claim.getSpec().getStorageClassName()
                + " does not allow volume expansion (allowVolumeExpansion: true); the volume stays"
                + " at "
                + pvGib
                + " GiB");
      }
      if (pv.getSpec().getRbd() != null || pv.getSpec().getCsi() != null) {
        throw ProvisioningException.invalid(
            "growing Ceph RBD volumes is not supported yet; the volume stays at " + pvGib + " GiB");
      }
      String volumeId = pv.getMetadata().getAnnotations().get(Names.ANN_VOLUME_ID);
      setResizing(claim);
      events.normal(
          claim,
          RESIZING,
          "growing Cinder volume " + volumeId + " from " + pvGib + " to " + asked + " GiB");
      VolumeExpander.Grown grown;
      try {
        grown = expander.expand(volumeId, asked);
      } catch (ProvisioningException e) {
        if (e.isFinal()) {
          // Not growing until the claim or the admin changes something: not "Resizing" either.
          clearResizing(claim);
        }
        throw e;
      }
      pvGib = grown.toGib();
      int size = pvGib;
      client
          .persistentVolumes()
          .withName(pv.getMetadata().getName())
          .edit(p -> withCapacity(p, size));
    }
    finish(claim, pv, pvGib);
  }

  /** The claim's status once its PV has {@code pvGib}. */
  private void finish(PersistentVolumeClaim claim, PersistentVolume pv, int pvGib) {
    boolean block = "Block".equals(pv.getSpec().getVolumeMode());
    var resource =
        client
            .persistentVolumeClaims()
            .inNamespace(claim.getMetadata().getNamespace())
            .withName(claim.getMetadata().getName());
    if (block) {
      resource.editStatus(
          c -> {
            Map<String, Quantity> capacity =
                c.getStatus().getCapacity() == null
                    ? new LinkedHashMap<>()
                    : new LinkedHashMap<>(c.getStatus().getCapacity());
            capacity.put("storage", new Quantity(pvGib + "Gi"));
            c.getStatus().setCapacity(capacity);
            c.getStatus().setConditions(without(c, RESIZING, FS_RESIZE_PENDING));
            return c;
          });
      events.normal(
          claim,
          "VolumeResizeSuccessful",
          "volume grown to "
              + pvGib
              + " GiB; a node that has it attached sees the new size once it rescans the device"
              + " (iscsiadm -m session -R for iSCSI) or attaches it again");
      return;
    }
    if (hasCondition(claim, FS_RESIZE_PENDING)) {
      return;
    }
    String message =
        "the volume is "
            + pvGib
            + " GiB; kubelet's in-tree iSCSI and FC plugins do not grow filesystems: on the node,"
            + " rescan the device (iscsiadm -m session -R for iSCSI) and grow the filesystem"
            + " (resize2fs for ext4, xfs_growfs for xfs)";
    resource.editStatus(
        c -> {
          List<PersistentVolumeClaimCondition> conditions = without(c, RESIZING, FS_RESIZE_PENDING);
          conditions.add(condition(FS_RESIZE_PENDING, message));
          c.getStatus().setConditions(conditions);
          return c;
        });
    events.warning(claim, "FileSystemResizeRequired", message);
  }

  private void setResizing(PersistentVolumeClaim claim) {
    if (hasCondition(claim, RESIZING)) {
      return;
    }
    client
        .persistentVolumeClaims()
        .inNamespace(claim.getMetadata().getNamespace())
        .withName(claim.getMetadata().getName())
        .editStatus(
            c -> {
              List<PersistentVolumeClaimCondition> conditions =
                  without(c, RESIZING, FS_RESIZE_PENDING);
              conditions.add(condition(RESIZING, "growing the Cinder volume"));
              c.getStatus().setConditions(conditions);
              return c;
            });
  }

  private void clearResizing(PersistentVolumeClaim claim) {
    client
        .persistentVolumeClaims()
        .inNamespace(claim.getMetadata().getNamespace())
        .withName(claim.getMetadata().getName())
        .editStatus(
            c -> {
              c.getStatus().setConditions(without(c, RESIZING));
              return c;
            });
  }

  private PersistentVolumeClaimCondition condition(String type, String message) {
    String now = Instant.now(clock).truncatedTo(ChronoUnit.SECONDS).toString();
    return new PersistentVolumeClaimConditionBuilder()
        .withType(type)
        .withStatus("True")
        .withLastTransitionTime(now)
        .withLastProbeTime(now)
        .withMessage(message)
        .build();
  }

  private static PersistentVolume withCapacity(PersistentVolume p, int gib) {
    Map<String, Quantity> capacity =
        p.getSpec().getCapacity() == null
            ? new LinkedHashMap<>()
            : new LinkedHashMap<>(p.getSpec().getCapacity());
    capacity.put("storage", new Quantity(gib + "Gi"));
    p.getSpec().setCapacity(capacity);
    return p;
  }

  private static List<PersistentVolumeClaimCondition> without(
      PersistentVolumeClaim c, String... types) {
    List<PersistentVolumeClaimCondition> out = new ArrayList<>();
    if (c.getStatus().getConditions() != null) {
      for (PersistentVolumeClaimCondition cond : c.getStatus().getConditions()) {
        if (!List.of(types).contains(cond.getType())) {
          out.add(cond);
        }
      }
    }
    return out;
  }

  static boolean hasCondition(PersistentVolumeClaim c, String type) {
    return c.getStatus() != null
        && c.getStatus().getConditions() != null
        && c.getStatus().getConditions().stream().anyMatch(x -> type.equals(x.getType()));
  }

  private static Quantity storage(Map<String, Quantity> m) {
    return m == null ? null : m.get("storage");
  }

  private static int gib(Quantity q, RoundingMode mode) {
    if (q == null) {
      return 0;
    }
    return Quantity.getAmountInBytes(q).divide(GIB, 0, mode).intValueExact();
  }
}
