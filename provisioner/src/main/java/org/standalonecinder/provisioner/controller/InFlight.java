package org.standalonecinder.provisioner.controller;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;

/**
 * Slow operations Cinder carries for the loops (a claim's copy, a snapshot's backup), bounded
 * overall and per namespace, so that one namespace's burst takes neither Cinder's whole capacity
 * nor starts hundreds of them on one backend. An operation past the bounds waits in its loop's
 * queue, told why, without asking Cinder.
 *
 * <p>An operation counts from its first look with room until Cinder has done it, its object is
 * deleted, or its looks stop: each look renews it, and one not renewed for {@link #LEASE} no longer
 * counts (an object whose looks fail before they reach Cinder, or that was given up, cannot hold
 * room for good). A new process starts with nothing counted, so right after a restart Cinder may be
 * carrying up to twice the bounds; what a look finds under way in Cinder is counted as it is found
 * ({@link #hold}).
 */
public final class InFlight {

  /**
   * How long an operation counts without a look: far longer than the longest time between two looks
   * ({@link Pace#LONGEST_LOOK}), so that a slow queue or a few failed looks in a row (the backoff
   * reaches minutes) do not let its room go while Cinder still carries it; as long as the pace
   * remembers a look ({@link Pace#FORGOTTEN_AFTER}).
   */
  public static final Duration LEASE = Pace.FORGOTTEN_AFTER;

  /**
   * The bounds and how they are named.
   *
   * @param noun what is counted, plural ("copies")
   * @param total overall
   * @param perNamespace in one namespace
   * @param totalSetting the setting of {@code total}, named in what a waiting object is told
   * @param perNamespaceSetting the setting of {@code perNamespace}
   */
  public record Limits(
      String noun, int total, int perNamespace, String totalSetting, String perNamespaceSetting) {
    public Limits {
      if (total < 1 || perNamespace < 1) {
        throw new IllegalArgumentException(noun + " limits must be at least 1");
      }
    }
  }

  private record Held(String namespace, Instant renewed) {}

  private final Limits limits;
  private final Clock clock;
  private final Map<String, Held> held = new HashMap<>();
  private final Map<String, Integer> perNamespace = new HashMap<>();

  public InFlight(Limits limits, Clock clock) {
    this.limits = limits;
    this.clock = clock;
  }

  /**
   * Counts the object's operation if there is room for it, or renews it when it counts already.
   *
   * @param key the object (a claim's uid, a content's name)
   * @return null when counted, else why it must wait
   */
  public synchronized String reserve(String key, String namespace) {
    Instant now = clock.instant();
    expire(now);
    if (held.containsKey(key)) {
      held.put(key, new Held(held.get(key).namespace(), now));
      return null;
    }
    int inNamespace = perNamespace.getOrDefault(namespace, 0);
    if (inNamespace >= limits.perNamespace()) {
      return inNamespace
          + " "
          + limits.noun()
          + " are in flight in namespace "
          + namespace
          + " (at most "
          + limits.perNamespace()
          + " at once, "
          + limits.perNamespaceSetting()
          + ")";
    }
    if (held.size() >= limits.total()) {
      return held.size()
          + " "
          + limits.noun()
          + " are in flight (at most "
          + limits.total()
          + " at once, "
          + limits.totalSetting()
          + ")";
    }
    hold(key, namespace);
    return null;
  }

  /**
   * Counts (or renews) an operation found under way in Cinder, room or not: it is in flight
   * whatever the bounds say, and what waits behind it must see so.
   */
  public synchronized void hold(String key, String namespace) {
    Held was = held.put(key, new Held(namespace, clock.instant()));
    if (was == null) {
      perNamespace.merge(namespace, 1, Integer::sum);
    }
  }

  /** Whether the object's operation counts: Cinder may be carrying it. */
  public synchronized boolean counts(String key) {
    expire(clock.instant());
    return held.containsKey(key);
  }

  /** The object's operation is done, failed or gone: it no longer counts. */
  public synchronized void release(String key) {
    Held h = held.remove(key);
    if (h != null) {
      perNamespace.compute(h.namespace(), (k, n) -> n == null || n <= 1 ? null : n - 1);
    }
  }

  /** How many operations count now, overall. */
  public synchronized int size() {
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
