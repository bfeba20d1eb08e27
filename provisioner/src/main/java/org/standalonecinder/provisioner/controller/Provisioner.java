package org.standalonecinder.provisioner.controller;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import java.util.List;

/**
 * What a storage system plugs into the claim loop ({@link ClaimController}), as
 * sig-storage-lib-external-provisioner's Provisioner: the loop decides which claims and PVs are
 * this provisioner's, when, and what is told to whom; the provisioner makes and removes storage.
 *
 * <p>Every method may run again for the same object (after a failure, a restart, a new leader), so
 * each must be safe to repeat. A {@link ProvisioningException} says whether a retry can help; any
 * other exception counts as one that can.
 */
public interface Provisioner {

  /** The name a class's {@code provisioner} and a claim's storage-provisioner annotation carry. */
  String name();

  /**
   * A label for the metrics of a claim's provisioning, from the claim alone and without failing
   * (e.g. {@code blank} or {@code clone}).
   */
  default String kind(PersistentVolumeClaim claim) {
    return "blank";
  }

  /**
   * Makes the storage of a claim of this provisioner's class that has no PV yet. The PV of a {@link
   * ProvisionResult.State#FINISHED} result is not created here: the loop creates it, calls {@link
   * #delete} if it cannot, and {@link #created} once it exists.
   */
  ProvisionResult provision(ProvisionRequest request);

  /** The PV of a finished provisioning exists now: what must follow it (safe to repeat). */
  default void created(ProvisionRequest request, PersistentVolume pv) {}

  /**
   * A claim of this provisioner that has its PV already: finishes what a stop may have cut short
   * and acts on changes of the claim (its size).
   *
   * @return when to look at the claim again, while the storage is changing (growing); empty when
   *     only a change of the claim or a resync brings it back
   */
  default java.util.Optional<java.time.Duration> provisioned(PersistentVolumeClaim claim) {
    return java.util.Optional.empty();
  }

  /**
   * Removes the storage of a released PV whose reclaim policy is Delete (or of a PV the loop could
   * not create). The loop deletes the PV after {@link DeleteOutcome#DELETED}, and looks again after
   * one {@link DeleteOutcome#inProgress}: no worker waits while the storage goes.
   */
  DeleteOutcome delete(PersistentVolume pv);

  /**
   * Why {@link #delete} left a released PV of this provisioner's name alone ({@link
   * DeleteOutcome#NOT_MINE}), and what an admin can do about it: told once as a Warning on the PV.
   */
  default String notMine(PersistentVolume pv) {
    return "released, but made by another instance of " + name() + "; its storage is left as it is";
  }

  /** A released PV that is kept (reclaim policy Retain): its storage must outlive it. */
  default void retained(PersistentVolume pv) {}

  /**
   * This replica stopped acting: work it started in the background and has not taken up is dropped
   * (the next leader finds the storage as it is).
   */
  default void paused() {}

  /** The claim or PV is gone from the cluster: forget what was kept about it. */
  default void forget(HasMetadata gone) {}

  /**
   * A claim of this provisioner went before its PV existed, or {@link #housekeeping} found what one
   * left: removes whatever provisioning made for it. Repeated until it succeeds and answers empty.
   *
   * @return when to call again, while the storage is still going (no worker waits for it); empty
   *     once nothing is left
   */
  default java.util.Optional<java.time.Duration> abandoned(WorkKey.Claim claim, String claimUid) {
    return java.util.Optional.empty();
  }

  /**
   * Runs once the caches are synced, at every resync and when this replica starts to lead: looks
   * for what a stopped process left half-done; returns the claims to hand to {@link #abandoned}.
   */
  default List<Abandoned> housekeeping() {
    return List.of();
  }

  /**
   * What {@link #delete} did.
   *
   * @param state what the loop does next
   * @param detail what is under way, for {@link State#IN_PROGRESS}: the PV's event says it
   * @param progress how long it has run and when to look again, for {@link State#IN_PROGRESS}
   */
  record DeleteOutcome(State state, String detail, ProvisionResult.Progress progress) {

    /** The storage is gone; the PV may be deleted. */
    public static final DeleteOutcome DELETED = new DeleteOutcome(State.DELETED, "", null);

    /** The PV is not this instance's: nothing was touched. */
    public static final DeleteOutcome NOT_MINE = new DeleteOutcome(State.NOT_MINE, "", null);

    public DeleteOutcome {
      java.util.Objects.requireNonNull(state, "state");
      if ((state == State.IN_PROGRESS) != (progress != null)) {
        throw new IllegalArgumentException("progress comes with IN_PROGRESS and only with it");
      }
    }

    /** The storage is going ({@code what}, as the PV is told); the PV stays until it is gone. */
    public static DeleteOutcome inProgress(String what, ProvisionResult.Progress progress) {
      return new DeleteOutcome(State.IN_PROGRESS, what, progress);
    }

    /** What {@link #delete} did. */
    public enum State {
      DELETED,
      NOT_MINE,
      IN_PROGRESS
    }
  }

  /**
   * A claim whose provisioning left something behind.
   *
   * @param claim the claim
   * @param claimUid the uid of the claim the leftovers were made for
   */
  record Abandoned(WorkKey.Claim claim, String claimUid) {}
}
