package org.standalonecinder.provisioner.provision;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;

/**
 * The copies Cinder is making for claims (clones and restores), bounded by {@link CopyLimits}.
 *
 * <p>A claim's copy counts from its first look with room until Cinder has made it, the claim is
 * deleted, or its looks stop: each look renews it, and one not renewed for {@link #LEASE} no longer
 * counts (a claim whose looks fail before they reach Cinder, or that was given up, cannot hold room
 * for good). A new process starts with nothing counted, so right after a restart Cinder may be
 * copying up to twice the limits.
 */
final class CopiesInFlight {

  /**
   * How long a copy counts without a look: longer than the longest time between two looks at a
   * volume being made ({@link BeingMade#LONGEST_LOOK}), with room for a slow queue.
   */
  static final Duration LEASE = Duration.ofMinutes(2);

  private record Held(String namespace, Instant renewed) {}

  private final CopyLimits limits;
  private final Clock clock;
  private final Map<String, Held> held = new HashMap<>();
  private final Map<String, Integer> perNamespace = new HashMap<>();

  CopiesInFlight(CopyLimits limits, Clock clock) {
    this.limits = limits;
    this.clock = clock;
  }

  /**
   * Counts the claim's copy if there is room for it, or renews it when it counts already.
   *
   * @return null when counted, else why it must wait
   */
  synchronized String reserve(String claimUid, String namespace) {
    Instant now = clock.instant();
    expire(now);
    if (held.containsKey(claimUid)) {
      held.put(claimUid, new Held(held.get(claimUid).namespace(), now));
      return null;
    }
    int inNamespace = perNamespace.getOrDefault(namespace, 0);
    if (inNamespace >= limits.perNamespace()) {
      return inNamespace
          + " copies are in flight in namespace "
          + namespace
          + " (at most "
          + limits.perNamespace()
          + " at once, --max-copies-per-namespace)";
    }
    if (held.size() >= limits.total()) {
      return held.size()
          + " copies are in flight (at most "
          + limits.total()
          + " at once, --max-copies)";
    }
    held.put(claimUid, new Held(namespace, now));
    perNamespace.merge(namespace, 1, Integer::sum);
    return null;
  }

  /** Whether the claim's copy counts: Cinder may be filling its volume. */
  synchronized boolean counts(String claimUid) {
    expire(clock.instant());
    return held.containsKey(claimUid);
  }

  /** The claim's copy is made, failed or gone: it no longer counts. */
  synchronized void release(String claimUid) {
    Held h = held.remove(claimUid);
    if (h != null) {
      perNamespace.compute(h.namespace(), (k, n) -> n == null || n <= 1 ? null : n - 1);
    }
  }

  /** How many copies count now, overall. */
  synchronized int size() {
    expire(clock.instant());
    return held.size();
  }

  private void expire(Instant now) {
    Instant before = now.minus(LEASE);
    held.entrySet().stream()
        .filter(e -> e.getValue().renewed().isBefore(before))
        .map(Map.Entry::getKey)
        .toList()
        .forEach(this::release);
  }
}
