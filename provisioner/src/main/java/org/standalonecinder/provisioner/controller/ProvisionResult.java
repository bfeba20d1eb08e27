package org.standalonecinder.provisioner.controller;

import io.fabric8.kubernetes.api.model.PersistentVolume;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CompletionStage;

/**
 * What a {@link Provisioner#provision} did.
 *
 * @param state what the loop does next
 * @param volume the PV to create, for {@link State#FINISHED} only
 * @param detail said after the PV's name in the claim's event (finished), or why (the others): for
 *     {@link State#IN_BACKGROUND}, what is under way, as the claim's {@code Provisioning} event
 *     says it
 * @param progress for {@link State#IN_BACKGROUND} only: how long the work has run, and when the
 *     loop looks at the claim again
 */
public record ProvisionResult(
    State state, PersistentVolume volume, String detail, Progress progress) {

  /**
   * How far work in the background has got.
   *
   * @param soFar how long it has run (by the storage's own record where it has one)
   * @param after when to look at it again
   * @param wake when it completes, the loop looks again at once (null: only after {@code after});
   *     for work this process carries itself, whose end it knows
   */
  public record Progress(Duration soFar, Duration after, CompletionStage<?> wake) {
    public Progress {
      Objects.requireNonNull(soFar, "soFar");
      Objects.requireNonNull(after, "after");
    }

    /** Work whose end only a look tells. */
    public Progress(Duration soFar, Duration after) {
      this(soFar, after, null);
    }
  }

  /** What the loop does with a claim after a provisioning. */
  public enum State {
    /** The storage exists: the loop creates {@link #volume()} and tells the claim. */
    FINISHED,
    /**
     * The storage is being made: the loop looks again after a delay, without counting a failure.
     */
    IN_BACKGROUND,
    /** Nothing was done and nothing is pending: the loop waits for the next change. */
    NO_CHANGE,
    /** The claim is not this provisioner's to make after all: nothing is done or told. */
    IGNORED
  }

  public ProvisionResult {
    Objects.requireNonNull(state, "state");
    if ((state == State.FINISHED) != (volume != null)) {
      throw new IllegalArgumentException("a PV comes with FINISHED and only with it");
    }
    if ((state == State.IN_BACKGROUND) != (progress != null)) {
      throw new IllegalArgumentException("progress comes with IN_BACKGROUND and only with it");
    }
    detail = detail == null ? "" : detail;
  }

  /** The storage exists, described by {@code pv}. */
  public static ProvisionResult finished(PersistentVolume pv, String detail) {
    return new ProvisionResult(State.FINISHED, pv, detail, null);
  }

  /** The storage is being made ({@code what}, as the claim is told). */
  public static ProvisionResult inBackground(String what, Progress progress) {
    return new ProvisionResult(State.IN_BACKGROUND, null, what, progress);
  }

  public static ProvisionResult noChange(String why) {
    return new ProvisionResult(State.NO_CHANGE, null, why, null);
  }

  public static ProvisionResult ignored(String why) {
    return new ProvisionResult(State.IGNORED, null, why, null);
  }
}
