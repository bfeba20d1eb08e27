package org.standalonecinder.provisioner.controller;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.BiConsumer;
import java.util.function.Function;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The claim loop, knowing nothing of the storage behind it: the informers' events become keys
 * ({@link WorkKey}) of a {@link Loop}, the engine every loop runs on, and each key is worked on by
 * {@link ClaimSync}, which calls the {@link Provisioner} where storage is made or removed. Failures
 * are retried per key; final failures and exhausted retries end with a Warning event. Every key is
 * looked at again at each resync, and the provisioner's {@link Provisioner#housekeeping} runs then.
 *
 * <p>Binding is not ours: the PV carries a claimRef and Kubernetes' binder binds the pair, then
 * marks the PV Released when the claim goes.
 */
public final class ClaimController implements Engine.Part {

  private static final Logger LOG = LoggerFactory.getLogger(ClaimController.class);

  private final ClusterCache cache;
  private final Provisioner provisioner;
  private final FairPool steps;
  private final EventRecorder events;
  private final RetryPolicy retry;

  /** How soon what a deleted claim left is tried again while a claim of its name lives. */
  static final Duration LEFTOVERS_AGAIN = Duration.ofSeconds(30);

  private final Duration resync;
  private final ProvisionMetrics metrics;
  private final ClaimSync sync;
  private final ScheduledExecutorService notices;
  private final Loop<WorkKey> loop;

  /**
   * UIDs of claims gone before their PV existed, by claim. Handed to the provisioner under the
   * claim's own key, so that never happens while the same claim is being provisioned.
   */
  private final Map<WorkKey.Claim, Set<String>> abandoned = new ConcurrentHashMap<>();

  private volatile boolean running;

  /**
   * @param cache the informers' view, shared with the provisioner; started here
   * @param resync how often every key and the housekeeping come again
   * @param registry where the provisioning metrics go
   * @param steps where the provisioner's slow steps run, off the workers ({@link OffWorkers}): the
   *     pool the provisioner's own background work shares; {@link FairPool#inline()} runs each on
   *     the worker that asks
   */
  public ClaimController(
      KubernetesClient client,
      ClusterCache cache,
      Provisioner provisioner,
      EventRecorder events,
      RetryPolicy retry,
      int workers,
      Duration resync,
      MeterRegistry registry,
      FairPool steps) {
    this.cache = cache;
    this.provisioner =
        new OffWorkers(
            provisioner, steps, this::again, this::unschedule, java.time.Clock.systemUTC());
    this.events = events;
    this.retry = retry;
    this.resync = resync;
    this.metrics = new ProvisionMetrics(registry);
    this.notices =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "provisioning-notices");
              t.setDaemon(true);
              return t;
            });
    this.steps = steps;
    this.sync =
        new ClaimSync(client, cache, this.provisioner, events, metrics, notices, this::again);
    // Claims take turns by namespace; PVs, which only admins make, share one line.
    LoopMetrics loopMetrics = new LoopMetrics(registry);
    this.loop =
        new Loop<>(
            "claims",
            workers,
            retry,
            k -> k instanceof WorkKey.Claim c ? c.namespace() : "",
            new Claims(),
            loopMetrics);
    loopMetrics.steps("claims", steps);
    metrics.queue(loop::size);
  }

  /** Work a key started in the background ended: the key is worked on again at once. */
  private void again(WorkKey key) {
    loop.add(key);
  }

  /** A look took a background step's outcome: the delayed look that waited for it is dropped. */
  private void unschedule(WorkKey key) {
    loop.unschedule(key);
  }

  /** The informers' view this controller reads: for a test that must wait until it has a change. */
  ClusterCache cache() {
    return cache;
  }

  @Override
  public Loop<WorkKey> loop() {
    return loop;
  }

  /** Starts the informers and the workers. */
  @Override
  public void start() {
    running = true;
    cache.start(
        handler(
            c -> new WorkKey.Claim(c.getMetadata().getNamespace(), c.getMetadata().getName()),
            this::claimGone),
        handler(
            pv -> new WorkKey.Volume(pv.getMetadata().getName()),
            pv -> {
              sync.forget(pv);
              provisioner.forget(pv);
            }));
    loop.start();
    LOG.info("controller started: provisioner {}, {}", provisioner.name(), loop.workersAlive());
  }

  /**
   * Stops acting at once: no worker takes another key and no housekeeping runs; the keys in
   * progress finish (every step is safe to repeat by the replica that takes over). The informers go
   * on and keys wait in the queue, so a standby is ready the moment it leads. Before {@link
   * #start}: start as a standby.
   */
  @Override
  public void pause() {
    if (loop.active()) {
      loop.pause();
      // Before the calls are dropped: what a worker still at its key starts is born stale.
      steps.standBy();
      provisioner.paused();
      LOG.info("standing by: no claim or volume is worked on until this replica leads");
    }
  }

  /**
   * Acts again, looking at everything afresh: every claim and PV in the caches is queued and the
   * housekeeping runs, since what the last leader left half-done is known only to the cluster and
   * the storage.
   */
  @Override
  public void resume() {
    LOG.info("leading: resyncing every claim and volume");
    steps.act();
    loop.resume();
  }

  /** Whether this replica acts (it leads, or no election runs). */
  public boolean active() {
    return loop.active();
  }

  /** Whether the informers have listed everything once: the readiness of the controller. */
  public boolean synced() {
    return running && cache.synced();
  }

  /**
   * Tells {@code listener} of every key worked on, with the object as it was then (null when gone),
   * once the work is done: what tests wait for instead of sleeping.
   */
  void onProcessed(BiConsumer<WorkKey, HasMetadata> listener) {
    loop.onProcessed(listener);
  }

  /** Whether {@code key} waits in the queue (a standby holds what arrives). */
  boolean waiting(WorkKey key) {
    return loop.waiting(key);
  }

  /** Whether {@code key} comes back after a delay (a retry, work in background). */
  boolean scheduled(WorkKey key) {
    return loop.scheduled(key);
  }

  private <T extends HasMetadata> ResourceEventHandler<T> handler(
      Function<T, WorkKey> key, java.util.function.Consumer<T> gone) {
    return new ResourceEventHandler<>() {
      @Override
      public void onAdd(T obj) {
        loop.add(key.apply(obj));
      }

      @Override
      public void onUpdate(T oldObj, T newObj) {
        loop.add(key.apply(newObj));
      }

      @Override
      public void onDelete(T obj, boolean deletedFinalStateUnknown) {
        loop.forget(key.apply(obj));
        gone.accept(obj);
      }
    };
  }

  /** A claim that goes before its PV exists may have left storage behind. */
  private void claimGone(PersistentVolumeClaim c) {
    provisioner.forget(c);
    if (sync.ours(c) && c.getMetadata().getUid() != null) {
      abandon(
          new Provisioner.Abandoned(
              new WorkKey.Claim(c.getMetadata().getNamespace(), c.getMetadata().getName()),
              c.getMetadata().getUid()));
    }
  }

  private void abandon(Provisioner.Abandoned a) {
    abandoned.computeIfAbsent(a.claim(), k -> ConcurrentHashMap.newKeySet()).add(a.claimUid());
    loop.add(a.claim());
  }

  /**
   * The workers alive, of those started: what {@code /healthz} reports. A worker that died is
   * replaced at once, so fewer than all means that could not be done.
   */
  public String workersAlive() {
    return loop.workersAlive();
  }

  /** Whether every worker is alive (always, between {@link #start} and {@link #close}). */
  public boolean workersHealthy() {
    return loop.healthy();
  }

  /** What the claim loop does with a key; the engine does the rest. */
  private final class Claims implements LoopWork<WorkKey> {

    @Override
    public HasMetadata lookUp(WorkKey key) {
      return key instanceof WorkKey.Claim c
          ? cache.claim(c.namespace(), c.name())
          : cache.volume(((WorkKey.Volume) key).name());
    }

    @Override
    public Optional<Duration> work(WorkKey key, HasMetadata about) {
      if (key instanceof WorkKey.Claim c) {
        PersistentVolumeClaim claim = (PersistentVolumeClaim) about;
        Optional<Duration> leftovers = leftovers(c, claim);
        Optional<Duration> again = claim == null ? Optional.empty() : sync.claim(claim);
        if (leftovers.isPresent()
            && (again.isEmpty() || again.get().compareTo(leftovers.get()) > 0)) {
          again = leftovers;
        }
        return again;
      }
      return about == null ? Optional.empty() : sync.volume((PersistentVolume) about);
    }

    /**
     * Removes what deleted claims of this name left. A failure fails the key when no claim of the
     * name lives; one that lives (made again under the same name) is not held behind the old one's
     * leftovers (a volume Cinder is still copying cannot be deleted for hours), which are tried
     * again later.
     *
     * @return when to look again, while leftovers remain (Cinder is deleting them, or they are
     *     tried again later)
     */
    private Optional<Duration> leftovers(WorkKey.Claim c, PersistentVolumeClaim claim) {
      Set<String> gone = abandoned.get(c);
      if (gone == null) {
        return Optional.empty();
      }
      Duration soonest = null;
      for (String uid : List.copyOf(gone)) {
        if (claim == null || !uid.equals(claim.getMetadata().getUid())) {
          Optional<Duration> going;
          try {
            going = provisioner.abandoned(c, uid);
          } catch (RuntimeException e) {
            if (claim == null) {
              throw e;
            }
            LOG.info("{}: what deleted claim {} left stays for now: {}", c, uid, e.getMessage());
            going = Optional.of(LEFTOVERS_AGAIN);
          }
          if (going.isPresent()) {
            soonest = soonest == null || going.get().compareTo(soonest) < 0 ? going.get() : soonest;
            continue;
          }
        }
        gone.remove(uid);
      }
      abandoned.remove(c, Set.of());
      return Optional.ofNullable(soonest);
    }

    @Override
    public String failureReason(WorkKey key) {
      return key instanceof WorkKey.Claim
          ? EventRecorder.PROVISIONING_FAILED
          : EventRecorder.VOLUME_FAILED_DELETE;
    }

    @Override
    public boolean keepsTrying(WorkKey key) {
      // Nothing would bring leftovers back once given up (their claim is gone).
      Set<String> leftovers = key instanceof WorkKey.Claim c ? abandoned.get(c) : null;
      return leftovers != null && !leftovers.isEmpty();
    }

    @Override
    public boolean tell(WorkKey key, HasMetadata about, KeyFailure f) {
      metrics.failed(key instanceof WorkKey.Claim ? "claim" : "volume", f.gaveUp());
      return about == null || events.warning(about, f.reason(), f.note());
    }

    @Override
    public Stream<WorkKey> everything() {
      return Stream.concat(
          cache.claims().stream()
              .map(
                  c ->
                      new WorkKey.Claim(c.getMetadata().getNamespace(), c.getMetadata().getName())),
          cache.volumes().stream().map(pv -> new WorkKey.Volume(pv.getMetadata().getName())));
    }

    @Override
    public Duration housekeeping(boolean leading) {
      if (!synced()) {
        return Duration.ofMillis(100);
      }
      if (leading) {
        try {
          provisioner.housekeeping().forEach(ClaimController.this::abandon);
        } catch (RuntimeException e) {
          // The storage is down: the next resync asks again.
          LOG.info("housekeeping failed: {}", e.getMessage());
        }
      }
      return resync;
    }

    @Override
    public String logLabel(WorkKey key) {
      return key instanceof WorkKey.Claim ? "claim" : "pv";
    }
  }

  /**
   * Stops the workers (they finish their current key), then the steps running off them ({@link
   * FairPool#close(Deadline)}: half of what is left, then interrupted), then the informers, all by
   * {@code by}: unless it returns more than 0 (a worker or step that ignored its interrupt),
   * nothing of this replica acts once it returns, so the caller may close the clients and hand the
   * lead on.
   */
  @Override
  public int close(Deadline by) {
    running = false;
    int left = loop.close(by) + steps.close(by);
    notices.shutdownNow();
    cache.close();
    return left;
  }

  /** The Lease was lost: the running steps are interrupted now, not waited for. */
  @Override
  public void abandon() {
    steps.close(Duration.ZERO);
  }
}
