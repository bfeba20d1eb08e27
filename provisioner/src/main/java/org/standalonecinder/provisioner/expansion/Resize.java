package org.standalonecinder.provisioner.expansion;

import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaimCondition;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaimConditionBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import java.time.Clock;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What a claim's resize says, as Kubernetes' resizers and kubelet write it: the conditions ({@code
 * Resizing} while the volume grows, {@code FileSystemResizePending} until a node grows the
 * filesystem), the failure's event reason, and what "finished" means (the status's capacity is the
 * new size, neither condition left). The claim loop ({@link ClaimExpansion}) and the node component
 * speak it alike.
 */
public final class Resize {

  /** The condition (and event reason) while the volume grows. */
  public static final String RESIZING = "Resizing";

  /** The event reason of a growth that failed. */
  public static final String FAILED = "VolumeResizeFailed";

  /** The condition of a claim whose volume grew and whose filesystem a node has yet to grow. */
  public static final String FS_PENDING = "FileSystemResizePending";

  private Resize() {}

  /**
   * The claim with its resize finished: its status's capacity {@code capacity}, no {@link
   * #RESIZING} or {@link #FS_PENDING} condition (the provisioner's end of a raw block claim's
   * growth, and the node's of a filesystem's).
   */
  public static PersistentVolumeClaim finished(PersistentVolumeClaim c, Quantity capacity) {
    Map<String, Quantity> m =
        c.getStatus().getCapacity() == null
            ? new LinkedHashMap<>()
            : new LinkedHashMap<>(c.getStatus().getCapacity());
    m.put("storage", capacity);
    c.getStatus().setCapacity(m);
    c.getStatus().setConditions(without(c, RESIZING, FS_PENDING));
    return c;
  }

  /** Whether the claim's status has a condition of {@code type}. */
  public static boolean hasCondition(PersistentVolumeClaim c, String type) {
    return c.getStatus() != null
        && c.getStatus().getConditions() != null
        && c.getStatus().getConditions().stream().anyMatch(x -> type.equals(x.getType()));
  }

  /** The claim's conditions but those of {@code types}. */
  static List<PersistentVolumeClaimCondition> without(PersistentVolumeClaim c, String... types) {
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

  /** A true condition of {@code type}, probed and changed now. */
  static PersistentVolumeClaimCondition condition(String type, String message, Clock clock) {
    String now = Instant.now(clock).truncatedTo(ChronoUnit.SECONDS).toString();
    return new PersistentVolumeClaimConditionBuilder()
        .withType(type)
        .withStatus("True")
        .withLastTransitionTime(now)
        .withLastProbeTime(now)
        .withMessage(message)
        .build();
  }
}
