package org.standalonecinder.provisioner.controller;

import io.fabric8.kubernetes.api.model.HasMetadata;
import java.time.Duration;
import java.util.Optional;
import java.util.stream.Stream;

/** What one loop does with its keys; the engine does the rest. */
public interface LoopWork<K> {

  /** The object {@code key} names as cached now; null when it is gone. */
  HasMetadata lookUp(K key);

  /**
   * Works on {@code key}. Returns how soon the key is looked at again, or empty for "at its next
   * change or resync"; throws a {@link ProvisioningException} for a failure it names (final or
   * not), anything else for a failure that is retried.
   *
   * @param object what {@link #lookUp} answered
   */
  Optional<Duration> work(K key, HasMetadata object);

  /**
   * Tells a failed attempt where users look (events) and counts it (metrics). Returns whether it
   * was told now: a failure told before, or with nobody to tell it to, is logged quietly.
   */
  boolean tell(K key, HasMetadata object, KeyFailure failure);

  /** The reason a failure is told with when it names none. */
  String failureReason(K key);

  /** Whether {@code key} never gives up (what would bring it back is gone). */
  default boolean keepsTrying(K key) {
    return false;
  }

  /**
   * Whether {@code key}'s work waits on a step it runs off the workers: a look that only started
   * one, or found it under way, is no progress, so the key's conflicts so far still count.
   */
  default boolean stepUnderWay(K key) {
    return false;
  }

  /** Every key there is now: what a replica that starts to lead looks at. */
  Stream<K> everything();

  /**
   * The loop's periodic work (sweeps; starting informers that wait for an API).
   *
   * @param leading whether this replica acts: a standby only keeps its caches
   * @return how long until it runs again
   */
  Duration housekeeping(boolean leading);

  /** What the log lines of the key's work are labelled with, e.g. {@code claim}. */
  String logLabel(K key);
}
