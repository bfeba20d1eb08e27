package org.standalonecinder.provisioner.provision;

import java.time.Clock;
import java.util.Optional;
import java.util.function.Function;
import org.standalonecinder.provisioner.cinder.CinderExport;
import org.standalonecinder.provisioner.cinder.Rollback;
import org.standalonecinder.provisioner.cinder.Volume;
import org.standalonecinder.provisioner.controller.FairPool;

/**
 * Claims' volumes being exported to the cluster off the claim loop's workers ({@link Background}).
 * Cinder's export (an attachment with the cluster's connector, then its completion) makes a target
 * on the backend and took 4 s a claim on the lab's Cinder while it copied for other claims: a
 * worker that waited for it was a worker no other namespace's claim, release or growth could have.
 *
 * <p>The export's undo joins the attempt's rollback, which from then on belongs to the export: a
 * failed export runs it (export, then volume) before the claim's next look tells the failure; an
 * export that ended hands it over with the outcome, for what the look does next (the Secret).
 */
final class Exporting {

  /** What a finished export hands to the claim's next look. */
  record Exported(Volume volume, CinderExport.Exported export, Rollback rollback) {}

  private static final Background.Words WORDS =
      new Background.Words(
          "volume %s waits for its turn to be exported to the cluster (other namespaces' Cinder"
              + " calls first, or its own namespace's share of them)",
          "Cinder is exporting volume %s to the cluster (an attachment for the cluster's"
              + " connector)");

  private final Background<Exported> calls;

  Exporting(FairPool pool, Clock clock) {
    this.calls = new Background<>(pool, clock, WORDS);
  }

  /** Exports on the worker that asks, in one call. */
  static Exporting inline() {
    return new Exporting(FairPool.inline(), Clock.systemUTC());
  }

  /**
   * The claim's export, when one was started and has ended ({@link Background#finished}).
   *
   * @throws StillMaking while it waits or runs
   */
  Optional<Exported> finished(String claimUid) {
    return calls.finished(claimUid);
  }

  /**
   * Starts exporting the claim's {@code volume} ({@link Background#start}).
   *
   * @param export what exports, given the rollback
   * @return the outcome, when the pool ran the export at once
   * @throws StillMaking while it waits or runs, with the wake its end completes
   */
  Exported start(
      String claimUid,
      String namespace,
      Volume volume,
      Rollback rollback,
      Function<Rollback, CinderExport.Exported> export) {
    return calls.start(
        claimUid,
        namespace,
        volume.id(),
        () -> new Exported(volume, export.apply(rollback), rollback),
        rollback::run);
  }

  /** Whether an export of the claim was started and its outcome not yet taken. */
  boolean has(String claimUid) {
    return calls.has(claimUid);
  }

  /** The claim is gone ({@link Background#cancel}): whether its export is still running. */
  boolean cancel(String claimUid) {
    return calls.cancel(claimUid);
  }

  /** This replica stopped acting ({@link Background#drop}). */
  void drop() {
    calls.drop();
  }
}
