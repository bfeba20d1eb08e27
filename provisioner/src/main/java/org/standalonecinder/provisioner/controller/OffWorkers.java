package org.standalonecinder.provisioner.controller;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.standalonecinder.api.ClaimAnnotations;

/**
 * A {@link Provisioner} whose slow steps run on a {@link FairPool}, off the loop's workers: a
 * worker that looks at a claim (or a released PV) starts the step and goes on; the step's end
 * brings the key back at once, and that look takes its outcome. A worker so holds a key for the
 * time of a cache read and an API write, whatever the storage is doing, and a namespace's burst, or
 * a slow storage, takes no more than its share of the pool.
 *
 * <p>One step at a time per claim (provisioning, what follows its PV, the clean-up after it is
 * deleted) and per PV. A claim deleted while its provisioning runs is cleaned up after the step
 * ends (what it makes exists only then); one deleted while it waits for its turn never runs it. A
 * step's outcome is taken only for the claim as it was asked for: a claim whose spec or annotations
 * changed meanwhile is provisioned again (which finds what the step made). A replica that stops
 * leading drops what has not begun, and what runs ends unseen ({@link Calls#drop}).
 *
 * <p>Steps that are quick by nature stay on the worker: a bound claim's look ({@link #provisioned},
 * at every resync for every claim), a kept PV's, and the housekeeping, which has a thread of its
 * own.
 */
final class OffWorkers implements Provisioner {

  private static final Logger LOG = LoggerFactory.getLogger(OffWorkers.class);

  private static final String CREATED = "created";
  private static final String ABANDONED = "abandoned";

  private final Provisioner inner;
  private final Calls<Object> calls;
  private final Consumer<WorkKey> again;
  private final Consumer<WorkKey> unschedule;
  private final Clock clock;

  /** What each claim's running step said it makes, for the claim's event. */
  private final Map<String, String> notes = new ConcurrentHashMap<>();

  /**
   * @param again brings a key back to the loop at once: what a step's end calls
   * @param unschedule drops a key's delayed look ({@link Loop#unschedule}): the look that takes a
   *     step's outcome decides anew when the key comes back, so the looks that found the step under
   *     way leave none behind
   */
  OffWorkers(
      Provisioner inner,
      FairPool pool,
      Consumer<WorkKey> again,
      Consumer<WorkKey> unschedule,
      Clock clock) {
    this.inner = inner;
    this.calls = new Calls<>(pool, clock);
    this.again = again;
    this.unschedule = unschedule;
    this.clock = clock;
  }

  /** A step's outcome, or the call that carries it still. */
  private sealed interface Step {
    record Done(Object outcome) implements Step {}

    record Pending(Calls.Call<Object> call) implements Step {}
  }

  @Override
  public String name() {
    return inner.name();
  }

  @Override
  public String kind(PersistentVolumeClaim claim) {
    return inner.kind(claim);
  }

  @Override
  public ProvisionResult provision(ProvisionRequest request) {
    PersistentVolumeClaim claim = request.claim();
    String key = claimKey(claim.getMetadata().getUid());
    // What the step says once it knows what it makes ("as a clone of …"), for the claim's event:
    // the look that asked is over by then.
    ProvisionRequest telling =
        new ProvisionRequest(
            claim,
            request.storageClass(),
            request.pvName(),
            request.nodeLabels(),
            detail -> {
              notes.put(key, detail);
              request.starting(detail);
            });
    Step step =
        step(
            key,
            keyOf(claim),
            claim.getMetadata().getNamespace(),
            asked(claim),
            "its volume",
            () -> inner.provision(telling));
    if (step instanceof Step.Done done) {
      notes.remove(key);
      return (ProvisionResult) done.outcome();
    }
    Calls.Call<Object> call = ((Step.Pending) step).call();
    Duration soFar = call.soFar(clock);
    String note = call.running() ? notes.getOrDefault(key, "") : "";
    return ProvisionResult.inBackground(
        (call.running() ? "the provisioner is making " : "waits for its namespace's turn to make ")
            + call.subject()
            + note
            + "; "
            + Pace.soFar(soFar),
        new ProvisionResult.Progress(soFar, nextLook(soFar)));
  }

  /**
   * When a look at a step that waits or runs comes back: its end brings the key back anyway; the
   * look at {@link ClaimSync#TELL_AFTER} tells the claim that it is under way, as a quick step's
   * notice would have.
   */
  private static Duration nextLook(Duration soFar) {
    Duration toTell = ClaimSync.TELL_AFTER.minus(soFar);
    return toTell.isNegative() || toTell.isZero()
        ? Pace.LONGEST_LOOK
        : toTell.plusMillis(TELL_MARGIN_MS);
  }

  /** A look meant to tell comes this much after the step has lasted long enough to be told. */
  private static final long TELL_MARGIN_MS = 50;

  /**
   * What follows a PV's creation (its volume's hand-over, a clone's mark) runs in the background
   * too, after the loop has told the claim it succeeded, and is never cancelled by a later look of
   * the claim (which waits for it). Its end brings the claim back only when it failed: that look
   * repairs the mark (the claim's PV is there by then), and the housekeeping the hand-over, as
   * after a crash between the two.
   */
  @Override
  public void created(ProvisionRequest request, PersistentVolume pv) {
    PersistentVolumeClaim claim = request.claim();
    Step step =
        step(
            claimKey(claim.getMetadata().getUid()),
            null,
            claim.getMetadata().getNamespace(),
            CREATED,
            "what follows its PV",
            () -> {
              try {
                inner.created(request, pv);
              } catch (VirtualMachineError e) {
                throw e;
              } catch (Throwable e) {
                LOG.warn(
                    "what follows PersistentVolume {} failed: {}; repaired at the claim's next look",
                    pv.getMetadata().getName(),
                    e.toString());
                again.accept(keyOf(claim));
              }
              return Boolean.TRUE;
            });
    if (step instanceof Step.Pending pending) {
      // Nobody takes its outcome: it goes as it ends.
      pending.call().end().whenComplete((outcome, failure) -> calls.discard(pending.call()));
    }
  }

  @Override
  public Optional<Duration> provisioned(PersistentVolumeClaim claim) {
    return inner.provisioned(claim);
  }

  /**
   * A released PV's storage goes in the background. The undo of a PV that could not be created (it
   * has no uid: the API server never stored it) runs here, on the worker: the claim's retry must
   * not meet it half-way.
   */
  @Override
  public DeleteOutcome delete(PersistentVolume pv) {
    if (pv.getMetadata().getUid() == null) {
      return inner.delete(pv);
    }
    String name = pv.getMetadata().getName();
    Step step =
        step(
            "pv/" + name,
            new WorkKey.Volume(name),
            lineOf(pv),
            pv.getMetadata().getUid(),
            "the storage of " + name,
            () -> inner.delete(pv));
    if (step instanceof Step.Done done) {
      return (DeleteOutcome) done.outcome();
    }
    Calls.Call<Object> call = ((Step.Pending) step).call();
    Duration soFar = call.soFar(clock);
    return DeleteOutcome.inProgress(
        (call.running()
                ? "the provisioner is deleting "
                : "waits for its namespace's turn to delete ")
            + call.subject()
            + "; "
            + Pace.soFar(soFar),
        new ProvisionResult.Progress(soFar, Pace.LONGEST_LOOK));
  }

  @Override
  public String notMine(PersistentVolume pv) {
    return inner.notMine(pv);
  }

  @Override
  public void retained(PersistentVolume pv) {
    inner.retained(pv);
  }

  @Override
  public void paused() {
    calls.drop(new ProvisioningException("this replica stopped leading", false, null));
    inner.paused();
  }

  @Override
  public void forget(HasMetadata gone) {
    inner.forget(gone);
  }

  /**
   * A deleted claim's clean-up waits for a step of the claim that runs (what it makes exists only
   * once it ends) and cancels one that waits for its turn.
   */
  @SuppressWarnings("unchecked")
  @Override
  public Optional<Duration> abandoned(WorkKey.Claim claim, String claimUid) {
    Step step =
        step(
            claimKey(claimUid),
            claim,
            claim.namespace(),
            ABANDONED,
            "what deleted claim " + claimUid + " left",
            () -> inner.abandoned(claim, claimUid));
    if (step instanceof Step.Done done) {
      return (Optional<Duration>) done.outcome();
    }
    return Optional.of(Pace.LONGEST_LOOK);
  }

  @Override
  public List<Abandoned> housekeeping() {
    return inner.housekeeping();
  }

  /**
   * The key's step for {@code tag}: its outcome once it has ended; else it waits or runs, and its
   * end brings {@code wake} back to the loop (null: nothing waits for it). A step of the key for
   * another tag that runs is waited for; one that waits is cancelled; one that ended is dropped
   * unseen (its outcome was for another version of the object, or another kind of look).
   */
  private Step step(
      String key, WorkKey wake, String line, String tag, String subject, Supplier<Object> call) {
    Calls.Call<Object> known = calls.get(key).orElse(null);
    if (known != null) {
      boolean same = known.tag().equals(tag) && !known.stale();
      if (!known.ended()) {
        if (same || CREATED.equals(known.tag()) || calls.cancel(key)) {
          return new Step.Pending(known);
        }
      } else if (same) {
        if (wake != null) {
          unschedule.accept(wake);
        }
        return new Step.Done(calls.take(known));
      } else {
        calls.discard(known);
      }
    }
    notes.remove(key);
    Calls.Call<Object> started = calls.start(key, line, subject, tag, call, e -> {});
    if (started.stale()) {
      return new Step.Pending(started); // this replica stands by: asked anew once it leads
    }
    if (started.ended()) {
      return new Step.Done(calls.take(started));
    }
    if (wake != null) {
      started.end().whenComplete((outcome, failure) -> again.accept(wake));
    }
    return new Step.Pending(started);
  }

  private static String claimKey(String uid) {
    return "claim/" + uid;
  }

  private static WorkKey keyOf(PersistentVolumeClaim claim) {
    return new WorkKey.Claim(claim.getMetadata().getNamespace(), claim.getMetadata().getName());
  }

  /**
   * What a provisioning was asked for: the claim's spec and the annotations a provisioning reads
   * (the node the scheduler chose, a clone's request, grant and token, the provisioner named). Not
   * its resource version nor its other annotations and labels: writes that change none of these (a
   * tool's annotation, a finalizer) must not undo a made volume's export, nor let a tenant keep its
   * claim from ever binding at the cost of Cinder's work.
   */
  static String asked(PersistentVolumeClaim claim) {
    Map<String, String> read = new TreeMap<>();
    Map<String, String> ann = claim.getMetadata().getAnnotations();
    if (ann != null) {
      ann.forEach(
          (k, v) -> {
            if (READ.contains(k) || k.startsWith(OWN_PREFIX)) {
              read.put(k, v);
            }
          });
    }
    // A digest: the tag is kept with the claim's call, and a claim's spec may be a megabyte long.
    return "provision " + org.standalonecinder.api.Digests.sha256Hex(claim.getSpec() + " " + read);
  }

  private static final Set<String> READ =
      Set.of(
          ClaimAnnotations.SELECTED_NODE,
          ClaimAnnotations.CLONE_REQUEST,
          ClaimAnnotations.STORAGE_PROVISIONER,
          ClaimAnnotations.STORAGE_PROVISIONER_BETA);

  private static final String OWN_PREFIX = "standalone-cinder.io/";

  /** A released PV's line: its claim's namespace, as the claim's steps had. */
  private static String lineOf(PersistentVolume pv) {
    var ref = pv.getSpec() == null ? null : pv.getSpec().getClaimRef();
    return ref == null || ref.getNamespace() == null ? "" : ref.getNamespace();
  }
}
