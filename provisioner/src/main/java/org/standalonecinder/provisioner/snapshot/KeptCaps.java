package org.standalonecinder.provisioner.snapshot;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.function.Predicate;
import java.util.function.ToIntFunction;

/**
 * The caps on what is kept ({@link SnapshotLimits#keptPerClaim}, {@link
 * SnapshotLimits#keptPerNamespace}), counted in what holds Cinder's space: the contents of this
 * provisioner's driver, by the volume they snapshot (one claim's) and by their VolumeSnapshot's
 * namespace, whatever their VolumeSnapshots now say (a class changed, a deletion held by a claim
 * restoring from it), with the contents this process made that the cache has not shown yet. A
 * VolumeSnapshot is admitted, or refused in a few index look-ups, with words that stay the same
 * while the cap does (the event recorder says them once).
 */
final class KeptCaps {

  /** How long a content made here is counted before the cache shows it (or it failed). */
  static final Duration PENDING = Duration.ofMinutes(2);

  private record Pending(String namespace, String volumeId, Instant since) {}

  private final SnapshotLimits limits;
  private final ToIntFunction<String> ofVolume;
  private final ToIntFunction<String> inNamespace;
  private final Predicate<String> cached;
  private final Clock clock;
  private final Map<String, Pending> pending = new HashMap<>();

  /**
   * @param ofVolume how many contents of this driver the cache holds of a Cinder volume
   * @param inNamespace how many the cache holds for the VolumeSnapshots of a namespace
   * @param cached whether the cache holds the content of this name
   */
  KeptCaps(
      SnapshotLimits limits,
      ToIntFunction<String> ofVolume,
      ToIntFunction<String> inNamespace,
      Predicate<String> cached,
      Clock clock) {
    this.limits = limits;
    this.ofVolume = ofVolume;
    this.inNamespace = inNamespace;
    this.cached = cached;
    this.clock = clock;
  }

  /**
   * Admits the content {@code contentName} of {@code s} (a snapshot of volume {@code volumeId}) and
   * counts it from now on, or says why not.
   */
  synchronized Optional<String> admit(VolumeSnapshot s, String volumeId, String contentName) {
    Instant now = clock.instant();
    pending
        .entrySet()
        .removeIf(
            e ->
                cached.test(e.getKey())
                    || e.getValue().since().isBefore(now.minus(PENDING))
                    || e.getKey().equals(contentName));
    int ofClaim = ofVolume.applyAsInt(volumeId);
    int ofNamespace = inNamespace.applyAsInt(s.namespace());
    for (Pending p : pending.values()) {
      ofClaim += p.volumeId().equals(volumeId) ? 1 : 0;
      ofNamespace += p.namespace().equals(s.namespace()) ? 1 : 0;
    }
    if (ofClaim >= limits.keptPerClaim()) {
      return Optional.of(
          over(s, "claim " + s.claimName(), limits.keptPerClaim(), "--max-snapshots-per-claim"));
    }
    if (ofNamespace >= limits.keptPerNamespace()) {
      return Optional.of(
          over(
              s,
              "namespace " + s.namespace(),
              limits.keptPerNamespace(),
              "--max-snapshots-per-namespace"));
    }
    pending.put(contentName, new Pending(s.namespace(), volumeId, now));
    return Optional.empty();
  }

  private static String over(VolumeSnapshot s, String of, int cap, String flag) {
    return "VolumeSnapshot "
        + s.key()
        + " is not made: "
        + of
        + " already keeps "
        + cap
        + " snapshots and backups, the most "
        + flag
        + " allows; it is made at a look after one of them is deleted";
  }
}
