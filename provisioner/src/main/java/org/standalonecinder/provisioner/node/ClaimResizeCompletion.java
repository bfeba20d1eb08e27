package org.standalonecinder.provisioner.node;

import io.fabric8.kubernetes.api.model.EventBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.math.BigDecimal;
import java.time.Clock;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.standalonecinder.api.ClaimAnnotations;
import org.standalonecinder.provisioner.expansion.Resize;

/**
 * Finishes a claim's expansion once its node grew the filesystem, as the kubelet does for volume
 * plugins that can grow one: the claim's {@code status.capacity} becomes its PV's, the {@code
 * FileSystemResizePending} condition goes, and the event {@code FileSystemResizeSuccessful} says
 * so.
 *
 * <p>Meant to run with the node's own credentials (the kubelet's): the API server's Node authorizer
 * then lets it read only the PVs and claims of the node's Pods and write only those claims' status,
 * and its NodeRestriction admission only their capacity and conditions. So a node can finish only
 * its own Pods' claims, whoever runs this.
 */
public final class ClaimResizeCompletion {

  /** The event's reason, the kubelet's own for the same. */
  public static final String RESIZED = "FileSystemResizeSuccessful";

  /** What became of a claim. */
  public enum Outcome {
    /** Its status now has its PV's capacity. */
    COMPLETED,
    /** Its status had the PV's capacity already. */
    ALREADY,
    /** Not yet: the PV or the device is not as big, or the claim does not say it waits. */
    NOT_YET,
    /** Not one this node finishes: not a PV of the project, not bound, gone. */
    NOT_OURS
  }

  /** An outcome and what it is about, for the log. */
  public record Result(Outcome outcome, String said) {}

  private static final Logger LOG = LoggerFactory.getLogger(ClaimResizeCompletion.class);

  private final KubernetesClient client;
  private final String node;
  private final Clock clock;

  /**
   * @param node this node's name, as its events' source
   */
  public ClaimResizeCompletion(KubernetesClient client, String node, Clock clock) {
    this.client = client;
    this.node = node;
    this.clock = clock;
  }

  /**
   * Whether {@code pvName} is the PV of a Cinder volume (the provisioner's, or one imported with
   * the volume's annotation), which the node may grow; an admin's own PVs are left as they are.
   */
  public boolean isCinderVolume(String pvName) {
    return cinders(client.persistentVolumes().withName(pvName).get());
  }

  private static boolean cinders(PersistentVolume pv) {
    return pv != null
        && pv.getMetadata().getAnnotations() != null
        && pv.getMetadata().getAnnotations().containsKey(ClaimAnnotations.VOLUME_ID);
  }

  /**
   * Finishes the resize of the claim bound to {@code pvName} if the node's device of it holds the
   * PV's capacity and the claim waits for its filesystem.
   *
   * @param deviceBytes the size of the node's device of the PV, as the kernel has it now
   */
  public Result complete(String pvName, long deviceBytes) {
    PersistentVolume pv = client.persistentVolumes().withName(pvName).get();
    if (!cinders(pv) || pv.getSpec().getClaimRef() == null) {
      return new Result(Outcome.NOT_OURS, pvName + ": not a bound PV of a Cinder volume");
    }
    var ref = pv.getSpec().getClaimRef();
    PersistentVolumeClaim claim =
        client
            .persistentVolumeClaims()
            .inNamespace(ref.getNamespace())
            .withName(ref.getName())
            .get();
    String name = ref.getNamespace() + "/" + ref.getName();
    if (claim == null || !claim.getMetadata().getUid().equals(ref.getUid())) {
      return new Result(Outcome.NOT_OURS, pvName + ": its claim " + name + " is gone");
    }
    Quantity capacity = storage(pv.getSpec().getCapacity());
    BigDecimal pvBytes = capacity == null ? BigDecimal.ZERO : Quantity.getAmountInBytes(capacity);
    Quantity status = claim.getStatus() == null ? null : storage(claim.getStatus().getCapacity());
    boolean pending = Resize.hasCondition(claim, Resize.FS_PENDING);
    if (!pending) {
      // Done only if the PV has caught up with the device too: Cinder grows the volume before the
      // provisioner grows the PV and marks the claim, and a pass may fall in between.
      boolean done =
          status != null
              && Quantity.getAmountInBytes(status).compareTo(pvBytes) >= 0
              && pvBytes.compareTo(BigDecimal.valueOf(deviceBytes)) >= 0;
      return done
          ? new Result(Outcome.ALREADY, name + ": its status has the PV's " + capacity)
          : new Result(Outcome.NOT_YET, name + ": does not wait for its filesystem yet");
    }
    if (BigDecimal.valueOf(deviceBytes).compareTo(pvBytes) < 0) {
      return new Result(
          Outcome.NOT_YET,
          name + ": the device has " + deviceBytes + " bytes, the PV " + capacity + ": not yet");
    }
    client
        .persistentVolumeClaims()
        .inNamespace(ref.getNamespace())
        .withName(ref.getName())
        .editStatus(c -> Resize.finished(c, capacity));
    tell(
        claim,
        "the node grew the filesystem of " + pvName + " to fill its " + capacity + " volume");
    return new Result(Outcome.COMPLETED, name + ": grown to " + capacity);
  }

  /**
   * A core/v1 Event, as the kubelet writes its own: a node may write those on every release, not
   * {@code events.k8s.io} ones. An event that cannot be written is only logged: the claim is done.
   */
  private void tell(PersistentVolumeClaim claim, String message) {
    String now = Instant.now(clock).truncatedTo(ChronoUnit.SECONDS).toString();
    try {
      client
          .v1()
          .events()
          .inNamespace(claim.getMetadata().getNamespace())
          .resource(
              new EventBuilder()
                  .withNewMetadata()
                  // The API server adds five characters; a name stays within 253.
                  .withGenerateName(
                      claim
                              .getMetadata()
                              .getName()
                              .substring(0, Math.min(claim.getMetadata().getName().length(), 240))
                          + ".")
                  .withNamespace(claim.getMetadata().getNamespace())
                  .endMetadata()
                  .withNewInvolvedObject()
                  .withApiVersion("v1")
                  .withKind("PersistentVolumeClaim")
                  .withNamespace(claim.getMetadata().getNamespace())
                  .withName(claim.getMetadata().getName())
                  .withUid(claim.getMetadata().getUid())
                  .endInvolvedObject()
                  .withType("Normal")
                  .withReason(RESIZED)
                  .withMessage(message)
                  .withNewSource()
                  .withComponent("standalone-cinder-node")
                  .withHost(node)
                  .endSource()
                  .withFirstTimestamp(now)
                  .withLastTimestamp(now)
                  .withCount(1)
                  .build())
          .create();
    } catch (KubernetesClientException e) {
      LOG.warn(
          "event {} about claim {}/{} not written: {}",
          RESIZED,
          claim.getMetadata().getNamespace(),
          claim.getMetadata().getName(),
          e.getMessage());
    }
  }

  private static Quantity storage(Map<String, Quantity> m) {
    return m == null ? null : m.get("storage");
  }
}
