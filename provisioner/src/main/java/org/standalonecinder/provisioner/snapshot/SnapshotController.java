package org.standalonecinder.provisioner.snapshot;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import java.time.Clock;
import java.time.Duration;
import java.util.Optional;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.standalonecinder.provisioner.cinder.CinderClient;
import org.standalonecinder.provisioner.controller.ClusterCache;
import org.standalonecinder.provisioner.controller.Deadline;
import org.standalonecinder.provisioner.controller.Engine;
import org.standalonecinder.provisioner.controller.EventRecorder;
import org.standalonecinder.provisioner.controller.FairPool;
import org.standalonecinder.provisioner.controller.KeyFailure;
import org.standalonecinder.provisioner.controller.Loop;
import org.standalonecinder.provisioner.controller.LoopMetrics;
import org.standalonecinder.provisioner.controller.LoopWork;
import org.standalonecinder.provisioner.controller.Pace;
import org.standalonecinder.provisioner.controller.PooledWork;
import org.standalonecinder.provisioner.controller.RetryPolicy;
import org.standalonecinder.provisioner.provision.ProvisionerSettings;

/**
 * The snapshot loop: the snapshot informers ({@link SnapshotCache}) feed keys to a {@link Loop},
 * the engine every loop runs on, whose workers make the contents of dynamic snapshots of this
 * provisioner's claims ({@link SnapshotSync}) and serve the contents of its driver ({@link
 * ContentSync}). Failures are retried with the {@link RetryPolicy} and told as events on the
 * content and on its VolumeSnapshot. At each resync the sweep deletes Cinder snapshots taken for a
 * content that is gone under {@code Delete}.
 *
 * <p>It runs only where the cluster serves {@code snapshot.storage.k8s.io/v1}; until then it looks
 * again every minute. Like the claim loop, only the leader acts.
 */
public final class SnapshotController implements Engine.Part {

  private static final Logger LOG = LoggerFactory.getLogger(SnapshotController.class);

  // Event reasons as the CSI snapshotter tells them.
  static final String CREATION_FAILED = "SnapshotCreationFailed";
  static final String DELETE_FAILED = "SnapshotDeleteError";
  static final String CONTENT_FAILED = "SnapshotContentCreationFailed";

  static final String UNDERWAY = "SnapshotUnderway";
  static final String DELETING = "SnapshotDeleting";
  static final String STUCK = "SnapshotStuck";

  /** How long work has to last before the content and its snapshot are told of it. */
  static final Duration TELL_AFTER = Duration.ofSeconds(2);

  /**
   * How the loop follows what Cinder does in the background (no worker waits for it), and how much
   * of it it lets Cinder carry at once.
   *
   * @param stuckAfter how long a snapshot may be taken, or a snapshot or backup deleted, before it
   *     is told as a warning (looked at still: Cinder may yet finish)
   * @param firstLook how soon work found under way is looked at again; the looks grow from there
   *     ({@link Pace})
   * @param backups the bounds on backups being taken at once, and on snapshots kept
   */
  public record Timing(Duration stuckAfter, Duration firstLook, SnapshotLimits backups) {
    public static final Timing DEFAULT =
        new Timing(Duration.ofMinutes(30), Pace.FIRST_LOOK, SnapshotLimits.DEFAULT);

    /** With the default bounds on backups. */
    public Timing(Duration stuckAfter, Duration firstLook) {
      this(stuckAfter, firstLook, SnapshotLimits.DEFAULT);
    }

    /** The same, with these bounds on backups. */
    public Timing withBackups(SnapshotLimits limits) {
      return new Timing(stuckAfter, firstLook, limits);
    }
  }

  private final EventRecorder events;
  private final Duration resync;
  private final SnapshotCache cache;
  private final ContentSync contents;
  private final SnapshotSync snapshots;
  private final SnapshotMetrics metrics;
  private final Loop<SnapshotKey> loop;
  private final FairPool steps;
  private final PooledWork<SnapshotKey> work;

  /** Threads of the pool the contents' steps (each a few Cinder calls) run on, off the workers. */
  public static final int STEP_THREADS = 8;

  /**
   * @param cluster the claim loop's view of claims and PVs (started by the claim loop)
   * @param workers how many keys are worked on at once
   * @param resync how often everything is looked at again and the sweep runs
   * @param steps where the contents' steps run, off the workers ({@link PooledWork}); {@link
   *     FairPool#inline()} runs each on the worker that asks
   */
  public SnapshotController(
      KubernetesClient client,
      ClusterCache cluster,
      CinderClient cinder,
      ProvisionerSettings settings,
      EventRecorder events,
      RetryPolicy retry,
      int workers,
      Duration resync,
      Timing timing,
      Clock clock,
      io.micrometer.core.instrument.MeterRegistry registry,
      FairPool steps) {
    this.events = events;
    this.steps = steps;
    this.resync = resync;
    this.cache = new SnapshotCache(client, resync);
    this.metrics = new SnapshotMetrics(registry);
    // A snapshot and its content take turns with the other namespaces' by the namespace of the
    // snapshot (its claim's): one tenant's hundred backups delay another's snapshot by one key.
    // A content's step asks Cinder (find, take, read, delete); a snapshot's only reads the caches
    // and writes its content, as does a ready content's: only the steps that ask Cinder leave the
    // workers.
    this.work =
        new PooledWork<>(
            new Snapshots(),
            steps,
            this::asksCinder,
            this::lineOf,
            k -> loop().add(k),
            k -> loop().unschedule(k),
            clock);
    LoopMetrics loopMetrics = new LoopMetrics(registry);
    this.loop = new Loop<>("snapshots", workers, retry, this::lineOf, work, loopMetrics);
    loopMetrics.steps("snapshots", steps);
    metrics.queue(loop::size);
    ContentWrites writes = new ContentWrites(client);
    this.contents =
        new ContentSync(
            writes,
            cinder,
            cache::snapshotClass,
            settings.provisionerName(),
            settings.clusterId(),
            timing,
            this::underway,
            clock,
            metrics);
    this.snapshots =
        new SnapshotSync(
            writes,
            cluster,
            cache::classOf,
            name -> cache.content(name) != null,
            settings,
            metrics::contentMade,
            cache.caps(settings.provisionerName(), timing.backups(), clock));
    wakeOnClaims(cluster);
  }

  /** A snapshot applied with its claim waits for the claim to be bound, not for a resync. */
  private void wakeOnClaims(ClusterCache cluster) {
    cluster.alsoOnClaims(
        new ResourceEventHandler<>() {
          @Override
          public void onAdd(PersistentVolumeClaim c) {
            cache
                .unboundSnapshotsOf(c.getMetadata().getNamespace(), c.getMetadata().getName())
                .forEach(loop::add);
          }

          @Override
          public void onUpdate(PersistentVolumeClaim old, PersistentVolumeClaim c) {
            onAdd(c);
          }

          @Override
          public void onDelete(PersistentVolumeClaim c, boolean unknown) {}
        });
  }

  /** Whether the key's step asks Cinder: a content of ours being taken, read or deleted. */
  private boolean asksCinder(SnapshotKey key, HasMetadata object) {
    GenericKubernetesResource raw = (GenericKubernetesResource) object;
    return key instanceof SnapshotKey.ContentOf
        && contents.ours(raw)
        && Content.of(raw).asksCinder();
  }

  private String lineOf(SnapshotKey key) {
    if (key instanceof SnapshotKey.Of o) {
      return o.namespace();
    }
    // A content that cannot be read waits in the common line (WorkQueue); its work says why.
    GenericKubernetesResource content = cache.content(((SnapshotKey.ContentOf) key).name());
    String ns = content == null ? null : Content.of(content).snapshotNamespace();
    return ns == null ? "" : ns;
  }

  /**
   * The loop: its start starts the workers and, once the cluster serves the snapshot API, the
   * informers (its housekeeping looks); paused, the informers go on.
   */
  @Override
  public Loop<SnapshotKey> loop() {
    return loop;
  }

  /** Whether the snapshot API was found and its informers have listed everything once. */
  public boolean serving() {
    return cache.synced();
  }

  /**
   * Tells {@code listener} of every key worked on, once the work (and what it told) is done: what
   * tests wait for instead of sleeping.
   */
  void onProcessed(java.util.function.Consumer<SnapshotKey> listener) {
    loop.onProcessed((k, o) -> listener.accept(k));
  }

  /** What the snapshot loop does with a key; the engine does the rest. */
  private final class Snapshots implements LoopWork<SnapshotKey> {

    @Override
    public HasMetadata lookUp(SnapshotKey key) {
      // The cached copy, even just after this loop wrote the content: every step is looked up
      // before it is done (the Cinder snapshot by name and metadata), and every write carries the
      // resourceVersion read, so a copy the cache has not caught up with meets a 409 and is looked
      // at again (the engine does) instead of costing a GET per content at every event and resync.
      return key instanceof SnapshotKey.ContentOf c
          ? cache.content(c.name())
          : cache.snapshot(((SnapshotKey.Of) key).namespace(), ((SnapshotKey.Of) key).name());
    }

    @Override
    public Optional<Duration> work(SnapshotKey key, HasMetadata object) {
      GenericKubernetesResource about = (GenericKubernetesResource) object;
      if (about == null) {
        return Optional.empty();
      }
      if (key instanceof SnapshotKey.ContentOf) {
        return contents.ours(about) ? contents.sync(about) : Optional.empty();
      }
      snapshots.sync(VolumeSnapshot.of(about));
      return Optional.empty();
    }

    @Override
    public String failureReason(SnapshotKey key) {
      return key instanceof SnapshotKey.ContentOf ? CREATION_FAILED : CONTENT_FAILED;
    }

    @Override
    public boolean tell(SnapshotKey key, HasMetadata object, KeyFailure f) {
      GenericKubernetesResource about = (GenericKubernetesResource) object;
      boolean content = key instanceof SnapshotKey.ContentOf;
      if (content && about != null) {
        metrics.failed(contents.operation(Content.of(about)), f.isFinal());
      }
      return about != null && SnapshotController.this.tell(about, content, f.reason(), f.note());
    }

    @Override
    public Stream<SnapshotKey> everything() {
      return cache.keys().stream();
    }

    @Override
    public Duration housekeeping(boolean leading) {
      try {
        cache.startIfServed(loop::add, loop::forget);
        if (leading && cache.synced()) {
          contents.sweep();
        }
      } catch (RuntimeException e) {
        LOG.info("snapshot housekeeping failed: {}", e.getMessage());
      }
      return cache.started() ? resync : cache.checkEvery();
    }

    @Override
    public String logLabel(SnapshotKey key) {
      return key instanceof SnapshotKey.Of ? "volumesnapshot" : "content";
    }
  }

  /**
   * Tells a content and its VolumeSnapshot what Cinder is doing, once it lasts: a snapshot taken in
   * a second costs no event (an event is a write to the API server); a backup that takes an hour,
   * or a deletion Cinder does not finish, is seen with its time so far. The event recorder writes
   * the same words again only after its quiet time, and the words change ever more rarely.
   */
  private void underway(
      GenericKubernetesResource content, String what, Duration soFar, boolean late) {
    if (soFar.compareTo(TELL_AFTER) < 0) {
      return;
    }
    String note = what + "; " + Pace.soFar(soFar);
    if (late) {
      tell(
          content,
          true,
          STUCK,
          note
              + ": longer than expected; if it does not end, see the log of cinder-volume (a"
              + " snapshot) or cinder-backup (a backup)",
          true);
    } else {
      tell(content, true, what.startsWith("Cinder is deleting") ? DELETING : UNDERWAY, note, false);
    }
  }

  /** Tells the object, and for a content its VolumeSnapshot too (what users describe). */
  private boolean tell(
      GenericKubernetesResource about, boolean content, String reason, String note) {
    return tell(about, content, reason, note, true);
  }

  private boolean tell(
      GenericKubernetesResource about,
      boolean content,
      String reason,
      String note,
      boolean warning) {
    boolean told = warning ? events.warning(about, reason, note) : told(about, reason, note);
    if (content) {
      Content c = Content.of(about);
      if (c.snapshotNamespace() != null && c.snapshotName() != null) {
        GenericKubernetesResource ref = new GenericKubernetesResource();
        ref.setApiVersion(SnapshotApi.API_VERSION);
        ref.setKind("VolumeSnapshot");
        String uid = c.snapshotUid() == null || c.snapshotUid().isEmpty() ? null : c.snapshotUid();
        ref.setMetadata(
            new ObjectMetaBuilder()
                .withNamespace(c.snapshotNamespace())
                .withName(c.snapshotName())
                .withUid(uid)
                .build());
        if (warning) {
          events.warning(ref, reason, note);
        } else {
          events.normal(ref, reason, note);
        }
      }
    }
    return told;
  }

  private boolean told(GenericKubernetesResource about, String reason, String note) {
    events.normal(about, reason, note);
    return true;
  }

  /** One sweep now (what the resync does): for tests. */
  void sweep() {
    contents.sweep();
  }

  /**
   * Stops acting: no worker takes another key, and no step waits or starts ({@link PooledWork}).
   */
  @Override
  public void pause() {
    loop.pause();
    work.standBy();
  }

  @Override
  public void resume() {
    work.act();
    loop.resume();
  }

  /** The Lease was lost: the running steps are interrupted now, not waited for. */
  @Override
  public void abandon() {
    steps.close(Duration.ZERO);
  }

  /**
   * Stops the workers, then the steps off them ({@link FairPool#close(Deadline)}), then the
   * informers, all by {@code by}.
   */
  @Override
  public int close(Deadline by) {
    int left = loop.close(by) + steps.close(by);
    cache.close();
    return left;
  }
}
