package org.standalonecinder.provisioner.controller;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.storage.StorageClass;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;
import org.standalonecinder.api.ClaimRef;
import org.standalonecinder.provisioner.provision.CloneResolver;
import org.standalonecinder.provisioner.provision.CloneSource;
import org.standalonecinder.provisioner.provision.Names;
import org.standalonecinder.provisioner.provision.ProvisionerSettings;
import org.standalonecinder.provisioner.provision.ProvisioningException;
import org.standalonecinder.provisioner.provision.VolumeProvisioner;

/**
 * Watches claims, volumes and classes and drives {@link VolumeProvisioner}: a claim of ours becomes
 * a PV, a released PV of ours with reclaim policy Delete is torn down.
 *
 * <p>Informers feed a keyed work queue ({@code claim/ns/name}, {@code volume/name}) served by N
 * workers; a key is never worked on twice at once. Failures are retried per key with the {@link
 * RetryPolicy}; final failures (bad parameters) and exhausted retries end with a Warning event.
 * Every key is looked at again at each resync.
 *
 * <p>Binding is not ours: the PV carries a claimRef and Kubernetes' binder binds the pair, then
 * marks the PV Released when the claim goes.
 */
public final class ProvisionController implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(ProvisionController.class);
  private static final String CLAIM = "claim/";
  private static final String VOLUME = "volume/";
  private static final ObjectMapper JSON = new ObjectMapper();

  private final KubernetesClient client;
  private final VolumeProvisioner provisioner;
  private final ProvisionerSettings settings;
  private final EventRecorder events;
  private final RetryPolicy retry;
  private final int workers;
  private final Duration resync;
  private final WorkQueue queue = new WorkQueue();
  private final Map<String, Integer> failures = new ConcurrentHashMap<>();
  private final CloneResolver clones;
  private final ProvisionMetrics metrics;
  private final ClaimExpansion expansion;

  /** Claims whose expansion was refused, with what was tried (see {@link #expandIfAsked}). */
  private final Map<String, String> refusedExpansions = new ConcurrentHashMap<>();

  /**
   * UIDs of our claims deleted before their PV existed, by claim key. Swept under the claim's own
   * key, so a sweep never runs while the same claim is being provisioned.
   */
  private final Map<String, java.util.Set<String>> deletedClaims = new ConcurrentHashMap<>();

  private final List<Thread> threads = new ArrayList<>();
  private volatile java.util.function.BiConsumer<String, HasMetadata> processed = (k, o) -> {};
  private java.util.concurrent.ScheduledExecutorService sweeper;

  /** PVs whose volume this process has marked handed over (so a retained PV asks Cinder once). */
  private final java.util.Set<String> handedOver = ConcurrentHashMap.newKeySet();

  private SharedIndexInformer<PersistentVolumeClaim> claims;
  private SharedIndexInformer<PersistentVolume> volumes;
  private SharedIndexInformer<StorageClass> classes;
  private volatile boolean running;

  // Whether this replica acts: only the leader does; a standby keeps its caches warm.
  private volatile boolean active = true;

  public ProvisionController(
      KubernetesClient client,
      VolumeProvisioner provisioner,
      ProvisionerSettings settings,
      EventRecorder events,
      RetryPolicy retry,
      int workers,
      Duration resync) {
    this(
        client,
        provisioner,
        settings,
        events,
        retry,
        workers,
        resync,
        new io.micrometer.core.instrument.simple.SimpleMeterRegistry());
  }

  /**
   * @param registry where the provisioning and clone metrics go
   */
  public ProvisionController(
      KubernetesClient client,
      VolumeProvisioner provisioner,
      ProvisionerSettings settings,
      EventRecorder events,
      RetryPolicy retry,
      int workers,
      Duration resync,
      io.micrometer.core.instrument.MeterRegistry registry) {
    this.client = client;
    this.provisioner = provisioner;
    this.settings = settings;
    this.events = events;
    this.retry = retry;
    this.workers = workers;
    this.resync = resync;
    this.clones =
        provisioner.clones(new KubernetesClusterReader(client, settings.secretNamespace()));
    this.metrics = new ProvisionMetrics(registry);
    this.expansion =
        new ClaimExpansion(client, provisioner.expander(), events, java.time.Clock.systemUTC());
    metrics.queue(queue::size);
  }

  /** Starts the informers and the workers; returns once the caches are synced. */
  public void start() {
    running = true;
    long resyncMillis = resync.toMillis();
    classes = client.storage().v1().storageClasses().inform();
    volumes =
        client
            .persistentVolumes()
            .inform(
                new ResourceEventHandler<>() {
                  private final ResourceEventHandler<PersistentVolume> byKey =
                      handler(pv -> VOLUME + pv.getMetadata().getName());

                  @Override
                  public void onAdd(PersistentVolume pv) {
                    byKey.onAdd(pv);
                  }

                  @Override
                  public void onUpdate(PersistentVolume old, PersistentVolume pv) {
                    byKey.onUpdate(old, pv);
                  }

                  @Override
                  public void onDelete(PersistentVolume pv, boolean unknown) {
                    byKey.onDelete(pv, unknown);
                    // The memo holds only PVs that exist, so it stays as small as the cluster.
                    handedOver.remove(pv.getMetadata().getName());
                  }
                },
                resyncMillis);
    ResourceEventHandler<PersistentVolumeClaim> claimHandler =
        handler(c -> CLAIM + c.getMetadata().getNamespace() + "/" + c.getMetadata().getName());
    claims =
        client
            .persistentVolumeClaims()
            .inAnyNamespace()
            .inform(
                new ResourceEventHandler<>() {
                  @Override
                  public void onAdd(PersistentVolumeClaim c) {
                    claimHandler.onAdd(c);
                  }

                  @Override
                  public void onUpdate(PersistentVolumeClaim o, PersistentVolumeClaim c) {
                    claimHandler.onUpdate(o, c);
                  }

                  @Override
                  public void onDelete(PersistentVolumeClaim c, boolean unknown) {
                    claimHandler.onDelete(c, unknown);
                    refusedExpansions.remove(
                        CLAIM + c.getMetadata().getNamespace() + "/" + c.getMetadata().getName());
                    // A claim that goes before its PV exists may have left a volume behind.
                    if (ours(c) && c.getMetadata().getUid() != null) {
                      String key =
                          CLAIM + c.getMetadata().getNamespace() + "/" + c.getMetadata().getName();
                      deletedClaims
                          .computeIfAbsent(key, k -> ConcurrentHashMap.newKeySet())
                          .add(c.getMetadata().getUid());
                      queue.add(key);
                    }
                  }
                },
                resyncMillis);
    for (int i = 0; i < workers; i++) {
      Thread t = new Thread(this::work, "provision-worker-" + i);
      t.start();
      threads.add(t);
    }
    sweeper =
        java.util.concurrent.Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "orphan-sweep");
              t.setDaemon(true);
              return t;
            });
    // Once the caches are synced, then at every resync: what a previous run left in Cinder is
    // found again.
    sweeper.execute(this::sweepLoop);
    LOG.info(
        "controller started: provisioner {}, identity {}, {} workers",
        settings.provisionerName(),
        settings.identity(),
        workers);
  }

  /**
   * Stops acting at once: no worker takes another item and no sweep runs; the items in progress
   * finish (every step is safe to repeat by the replica that takes over). The informers go on, so a
   * standby is ready to act the moment it leads. Before {@link #start}: start as a standby.
   */
  public void pause() {
    if (active) {
      active = false;
      LOG.info("standing by: no claim or volume is worked on until this replica leads");
    }
  }

  /**
   * Acts again, looking at everything afresh: every claim and PV in the caches is queued and the
   * sweep runs, since what the last leader left half-done is known only to the cluster and Cinder.
   */
  public void resume() {
    active = true;
    LOG.info("leading: resyncing every claim and volume");
    if (claims != null) {
      claims
          .getStore()
          .list()
          .forEach(
              c ->
                  queue.add(
                      CLAIM + c.getMetadata().getNamespace() + "/" + c.getMetadata().getName()));
      volumes.getStore().list().forEach(pv -> queue.add(VOLUME + pv.getMetadata().getName()));
    }
    if (sweeper != null) {
      try {
        sweeper.execute(this::findUnfinished);
      } catch (java.util.concurrent.RejectedExecutionException closing) {
        // close() stopped the sweeper
      }
    }
  }

  /** Whether this replica acts (it leads, or no election runs). */
  public boolean active() {
    return active;
  }

  /** Whether the informers have listed everything once: the readiness of the controller. */
  public boolean synced() {
    return running
        && claims != null
        && claims.hasSynced()
        && volumes.hasSynced()
        && classes.hasSynced();
  }

  private <T extends HasMetadata> ResourceEventHandler<T> handler(
      java.util.function.Function<T, String> key) {
    return new ResourceEventHandler<>() {
      @Override
      public void onAdd(T obj) {
        queue.add(key.apply(obj));
      }

      @Override
      public void onUpdate(T oldObj, T newObj) {
        queue.add(key.apply(newObj));
      }

      @Override
      public void onDelete(T obj, boolean deletedFinalStateUnknown) {
        failures.remove(key.apply(obj));
      }
    };
  }

  private void work() {
    while (running) {
      String key;
      try {
        if (!active) {
          Thread.sleep(100);
          continue;
        }
        key = queue.take(Duration.ofMillis(500));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
      if (key == null) {
        continue;
      }
      if (!active) {
        // Paused while this worker waited: the key waits for the next leader's resync.
        queue.done(key);
        continue;
      }
      HasMetadata about = null;
      // Every log line of this item says which claim or PV (and, once known, volume) it is on.
      if (key.startsWith(CLAIM)) {
        MDC.put("claim", key.substring(CLAIM.length()));
      } else {
        MDC.put("pv", key.substring(VOLUME.length()));
      }
      try {
        about = process(key);
      } finally {
        MDC.clear();
        queue.done(key);
        processed.accept(key, about);
      }
    }
  }

  /** Works on one key; returns the object it looked at (null when it is gone). */
  private HasMetadata process(String key) {
    HasMetadata about = null;
    try {
      if (key.startsWith(CLAIM)) {
        about = claims.getStore().getByKey(key.substring(CLAIM.length()));
        java.util.Set<String> gone = deletedClaims.get(key);
        if (gone != null) {
          for (String uid : List.copyOf(gone)) {
            if (about == null || !uid.equals(about.getMetadata().getUid())) {
              sweepOrphans(key.substring(CLAIM.length()), uid);
            }
            gone.remove(uid);
          }
          deletedClaims.remove(key, java.util.Set.of());
        }
        if (about != null) {
          syncClaim((PersistentVolumeClaim) about);
        }
      } else {
        about = volumes.getStore().getByKey(key.substring(VOLUME.length()));
        if (about != null) {
          syncVolume((PersistentVolume) about);
        }
      }
      failures.remove(key);
    } catch (ExpansionFailed e) {
      failed(key, about, e.getMessage(), e.isFinal(), ClaimExpansion.RESIZE_FAILED);
    } catch (ProvisioningException e) {
      failed(key, about, e.getMessage(), e.isFinal(), null);
    } catch (RuntimeException e) {
      LOG.debug("{} failed", key, e);
      failed(key, about, e.toString(), false, null);
    }
    return about;
  }

  /**
   * Tells {@code listener} of every key worked on, with the object as it was then (null when gone),
   * once the work is done: what tests wait for instead of sleeping.
   */
  void onProcessed(java.util.function.BiConsumer<String, HasMetadata> listener) {
    this.processed = listener;
  }

  /** Runs {@link #findUnfinished} once the caches are synced, then at every resync. */
  private void sweepLoop() {
    if (!running) {
      return;
    }
    boolean ready = synced();
    if (ready && active) {
      findUnfinished();
    }
    try {
      sweeper.schedule(
          this::sweepLoop, ready ? Math.max(1, resync.toMillis()) : 100, TimeUnit.MILLISECONDS);
    } catch (java.util.concurrent.RejectedExecutionException closing) {
      // close() stopped the sweeper
    }
  }

  /**
   * Asks Cinder for this cluster's volumes that were never handed to a PV and queues the sweep of
   * each whose claim is gone. Memory alone would forget them at a restart; Cinder does not. A claim
   * that still exists is left to its own sync, which reuses its volume.
   */
  private void findUnfinished() {
    try {
      for (VolumeProvisioner.Unfinished u : provisioner.unfinished()) {
        // Its PV exists: a provisioner stopped between creating the PV and handing the volume
        // over (a crash, a lost Lease). The hand-over is all that is missing.
        PersistentVolume pv = volumes.getStore().getByKey(Names.pvName(u.claimUid()));
        if (pv != null
            && pv.getMetadata().getAnnotations() != null
            && u.volumeId().equals(pv.getMetadata().getAnnotations().get(Names.ANN_VOLUME_ID))
            && settings
                .identity()
                .equals(pv.getMetadata().getAnnotations().get(Names.ANN_IDENTITY))) {
          handOver(pv);
          continue;
        }
        String ref = u.namespace() + "/" + u.name();
        PersistentVolumeClaim c = claims.getStore().getByKey(ref);
        if (c != null && u.claimUid().equals(c.getMetadata().getUid())) {
          continue;
        }
        String key = CLAIM + ref;
        deletedClaims.computeIfAbsent(key, k -> ConcurrentHashMap.newKeySet()).add(u.claimUid());
        queue.add(key);
      }
    } catch (RuntimeException e) {
      // Cinder is down: the next resync asks again.
      LOG.info("cannot look for unfinished volumes in Cinder: {}", e.getMessage());
    }
    try {
      int n = provisioner.sweepSharedSecrets();
      if (n > 0) {
        LOG.info("deleted {} shared auth Secret(s) that no PV refers to", n);
      }
    } catch (RuntimeException e) {
      LOG.info("cannot sweep shared auth Secrets: {}", e.getMessage());
    }
  }

  /**
   * Counts a failure of the key, tells the object why ({@code reason}, or by default what the key
   * was being worked on for), and retries with backoff or gives up.
   */
  private void failed(
      String key, HasMetadata about, String message, boolean isFinal, String reason) {
    if (reason == null) {
      reason =
          key.startsWith(CLAIM)
              ? EventRecorder.PROVISIONING_FAILED
              : EventRecorder.VOLUME_FAILED_DELETE;
    }
    int n = failures.merge(key, 1, Integer::sum);
    // Nothing would bring an orphan sweep back once given up (its claim is gone): a leaked
    // volume is worse than a retry every few minutes, so a key with one never gives up.
    java.util.Set<String> sweeps = deletedClaims.get(key);
    boolean sweeping = sweeps != null && !sweeps.isEmpty();
    boolean giveUp = !sweeping && (isFinal || retry.exhausted(n));
    metrics.failed(key.startsWith(CLAIM) ? "claim" : "volume", giveUp);
    if (giveUp) {
      failures.remove(key);
      String note =
          isFinal
              ? message
              : message
                  + " (gave up after "
                  + n
                  + " attempts; will try again at the next change or resync)";
      LOG.warn("{}: {}", key, note);
      if (about != null) {
        events.warning(about, reason, note);
      }
      return;
    }
    Duration delay = retry.delay(n);
    LOG.info("{}: {}; attempt {} failed, retrying in {}s", key, message, n, delay.toSeconds());
    if (about != null) {
      events.warning(about, reason, message);
    }
    queue.addAfter(key, delay);
  }

  private boolean ours(PersistentVolumeClaim claim) {
    Map<String, String> ann = claim.getMetadata().getAnnotations();
    if (ann == null) {
      return false;
    }
    String wanted = org.standalonecinder.api.ClaimAnnotations.provisioner(ann);
    return settings.provisionerName().equals(wanted);
  }

  private void syncClaim(PersistentVolumeClaim claim) {
    if (!ours(claim)) {
      return;
    }
    String volumeName = claim.getSpec().getVolumeName();
    if (volumeName != null && !volumeName.isEmpty()) {
      finishCloneQuietly(claim);
      expandIfAsked(claim, volumeName);
      return;
    }
    if (claim.getMetadata().getDeletionTimestamp() != null) {
      return;
    }
    String className = claim.getSpec().getStorageClassName();
    if (className == null || className.isEmpty()) {
      return;
    }
    StorageClass sc = classes.getStore().getByKey(className);
    if (sc == null) {
      // A class and its first claim applied together may reach the caches in either order.
      sc = client.storage().v1().storageClasses().withName(className).get();
    }
    if (sc == null) {
      throw new ProvisioningException("StorageClass " + className + " not found", false, null);
    }
    if (!settings.provisionerName().equals(sc.getProvisioner())) {
      return;
    }
    Map<String, String> ann = claim.getMetadata().getAnnotations();
    if ("WaitForFirstConsumer".equals(sc.getVolumeBindingMode())
        && (ann == null || ann.get(Names.ANN_SELECTED_NODE) == null)) {
      return; // the scheduler picks a node first
    }
    String pvName = Names.pvName(claim.getMetadata().getUid());
    // The cache may not have seen a PV we created a moment ago; provisioning twice would
    // detach the first export, so ask the API server.
    // A clone request that cannot work is refused before anything is made: a class without
    // smartclone must never turn a clone request into a blank volume.
    Optional<ClaimRef> cloneOf = CloneResolver.requested(claim);
    if (volumes.getStore().getByKey(pvName) != null
        || client.persistentVolumes().withName(pvName).get() != null) {
      finishClone(claim, cloneOf);
      return; // provisioned; the binder takes it from here
    }
    long started = System.nanoTime();
    String outcome = "failed";
    try {
      provisionClaim(claim, sc, pvName, cloneOf);
      outcome = "succeeded";
    } catch (ProvisioningException e) {
      outcome = e.isFinal() ? "refused" : "failed";
      throw e;
    } finally {
      metrics.provisioned(cloneOf.isPresent(), outcome, System.nanoTime() - started);
    }
  }

  private void provisionClaim(
      PersistentVolumeClaim claim, StorageClass sc, String pvName, Optional<ClaimRef> cloneOf) {
    CloneSource source = null;
    boolean protectedSource = cloneOf.isPresent();
    if (cloneOf.isPresent()) {
      clones.verifyToken(claim, cloneOf.get());
      source = clones.resolve(cloneOf.get(), claim, sc);
      protect(cloneOf.get(), Names.cloneFinalizer(claim.getMetadata().getUid()));
    }
    try {
      events.normal(
          claim,
          EventRecorder.PROVISIONING,
          "External provisioner is provisioning volume for claim "
              + claim.getMetadata().getNamespace()
              + "/"
              + claim.getMetadata().getName()
              + (source == null
                  ? ""
                  : " as a clone of "
                      + source.claim()
                      + " (Cinder volume "
                      + source.volumeId()
                      + ")"));
      PersistentVolume pv = provisioner.provision(claim, sc, source, selectedNodeLabels(claim));
      // Cinder's clone is complete (the volume is available and exported): the source may go.
      cloneOf.ifPresent(src -> unprotect(src, Names.cloneFinalizer(claim.getMetadata().getUid())));
      protectedSource = false;
      try {
        client.persistentVolumes().resource(pv).create();
      } catch (KubernetesClientException e) {
        if (e.getCode() != 409) {
          // The PV cannot be saved: undo the volume rather than leak it; the next try makes it
          // anew.
          try {
            provisioner.delete(pv);
          } catch (RuntimeException undo) {
            e.addSuppressed(undo);
          }
          throw new ProvisioningException(
              "cannot create PersistentVolume " + pvName + ": " + e.getMessage(), false, e);
        }
      }
      String volumeId = pv.getMetadata().getAnnotations().get(Names.ANN_VOLUME_ID);
      handOver(pv);
      annotate(claim, volumeId, source == null ? null : source.claim());
      events.normal(
          claim,
          EventRecorder.PROVISIONING_SUCCEEDED,
          "Successfully provisioned volume "
              + pvName
              + " (Cinder volume "
              + volumeId
              + ")"
              + (source == null ? "" : ", a clone of " + source.claim()));
    } finally {
      if (protectedSource) {
        // The clone failed: a retry protects the source again before it clones.
        unprotect(cloneOf.get(), Names.cloneFinalizer(claim.getMetadata().getUid()));
      }
    }
  }

  /** A failure of an expansion: told as {@code VolumeResizeFailed}, not as provisioning. */
  private static final class ExpansionFailed extends ProvisioningException {
    ExpansionFailed(ProvisioningException cause) {
      super(cause.getMessage(), cause.isFinal(), cause);
    }
  }

  /** Grows the volume of a bound claim of ours whose request grew ({@link ClaimExpansion}). */
  private void expandIfAsked(PersistentVolumeClaim claim, String pvName) {
    if (claim.getMetadata().getDeletionTimestamp() != null
        || claim.getStatus() == null
        || !"Bound".equals(claim.getStatus().getPhase())) {
      return;
    }
    PersistentVolume pv = volumes.getStore().getByKey(pvName);
    if (pv == null
        || pv.getMetadata().getAnnotations() == null
        || !settings.identity().equals(pv.getMetadata().getAnnotations().get(Names.ANN_IDENTITY))
        || pv.getSpec().getClaimRef() == null
        || !claim.getMetadata().getUid().equals(pv.getSpec().getClaimRef().getUid())
        || !ClaimExpansion.wanted(claim, pv)) {
      return;
    }
    String className = claim.getSpec().getStorageClassName();
    StorageClass sc = className == null ? null : classes.getStore().getByKey(className);
    // Our own status edits change the claim too: a refusal stands until the request or the class
    // changes, or the provisioner restarts (a new max-microversion, say).
    String attempt =
        claim.getMetadata().getUid()
            + " "
            + claim.getSpec().getResources().getRequests()
            + " "
            + (sc == null ? "" : sc.getMetadata().getResourceVersion());
    String key = CLAIM + claim.getMetadata().getNamespace() + "/" + claim.getMetadata().getName();
    if (attempt.equals(refusedExpansions.get(key))) {
      return;
    }
    try {
      expansion.sync(claim, pv, sc);
      refusedExpansions.remove(key);
    } catch (ProvisioningException e) {
      if (e.isFinal()) {
        refusedExpansions.put(key, attempt);
      }
      throw new ExpansionFailed(e);
    } catch (io.fabric8.kubernetes.client.KubernetesClientException e) {
      throw new ExpansionFailed(new ProvisioningException(e.getMessage(), false, e));
    }
  }

  /**
   * The labels of the node the scheduler selected for the claim ({@code WaitForFirstConsumer}),
   * empty when it selected none. A node that is gone cannot take the pod: its name is taken off the
   * claim, so the scheduler selects another, as Kubernetes' external provisioners do.
   */
  private Map<String, String> selectedNodeLabels(PersistentVolumeClaim claim) {
    Map<String, String> ann = claim.getMetadata().getAnnotations();
    String name = ann == null ? null : ann.get(Names.ANN_SELECTED_NODE);
    if (name == null) {
      return Map.of();
    }
    // Anyone who may update the claim may write this annotation; a value that is no node name
    // (a "/" or "..") would reach another URL of the API server than the node's.
    boolean aName = org.standalonecinder.api.ClaimRef.isName(name);
    Node node = aName ? client.nodes().withName(name).get() : null;
    if (node != null) {
      Map<String, String> labels = node.getMetadata().getLabels();
      return labels == null ? Map.of() : labels;
    }
    // Only the choice seen here: the scheduler may have chosen again meanwhile.
    String path = "/metadata/annotations/" + Names.ANN_SELECTED_NODE.replace("/", "~1");
    com.fasterxml.jackson.databind.node.ArrayNode patch = JSON.createArrayNode();
    patch.addObject().put("op", "test").put("path", path).put("value", name);
    patch.addObject().put("op", "remove").put("path", path);
    try {
      client
          .persistentVolumeClaims()
          .inNamespace(claim.getMetadata().getNamespace())
          .withName(claim.getMetadata().getName())
          .patch(PatchContext.of(PatchType.JSON), patch.toString());
    } catch (KubernetesClientException e) {
      if (e.getCode() != 422) {
        throw e;
      }
      // chosen again (or taken off) since: the next sync sees the new choice
    }
    throw new ProvisioningException(
        aName
            ? "the node "
                + name
                + " the scheduler selected for this claim does not exist; the scheduler is asked"
                + " to select another"
            : Names.ANN_SELECTED_NODE
                + " is not a node name; it was taken off the claim (the scheduler writes it when"
                + " it selects a node)",
        false,
        null);
  }

  /**
   * Sets the claim's volume id and, for a clone, {@code k8s.io/CloneOf}. A merge patch: it carries
   * no resourceVersion, so the binder's concurrent writes do not make it fail.
   */
  private void annotate(PersistentVolumeClaim claim, String volumeId, ClaimRef cloneOf) {
    Map<String, String> ann = new java.util.LinkedHashMap<>();
    ann.put(Names.ANN_VOLUME_ID, volumeId);
    if (cloneOf != null) {
      ann.put(ClaimRef.CLONE_OF, cloneOf.toString());
    }
    ObjectNode patch = JSON.createObjectNode();
    ObjectNode annotations = patch.putObject("metadata").putObject("annotations");
    ann.forEach(annotations::put);
    try {
      client
          .persistentVolumeClaims()
          .inNamespace(claim.getMetadata().getNamespace())
          .withName(claim.getMetadata().getName())
          .patch(PatchContext.of(PatchType.JSON_MERGE), patch.toString());
    } catch (KubernetesClientException e) {
      if (cloneOf != null) {
        // CloneOf is how users (and CDI) see that the clone is done: fail, so it is retried.
        throw new ProvisioningException(
            "cannot mark claim "
                + claim.getMetadata().getName()
                + " as a clone of "
                + cloneOf
                + ": "
                + e.getMessage(),
            false,
            e);
      }
      // The PV has the id too; clones read the claim's copy, so say it, but do not fail.
      LOG.warn(
          "cannot annotate claim {} with its volume id: {}",
          claim.getMetadata().getName(),
          e.getMessage());
    }
  }

  /**
   * For a claim that is provisioned already (a crash may have come between the PV and the rest): a
   * clone gets its {@code k8s.io/CloneOf} and its source loses the protection finalizer.
   */
  private void finishCloneQuietly(PersistentVolumeClaim claim) {
    Optional<ClaimRef> src;
    try {
      src = CloneResolver.requested(claim);
    } catch (ProvisioningException e) {
      return; // a bad clone request on a provisioned claim: nothing to finish
    }
    // Failures to finish propagate: the key is retried.
    finishClone(claim, src);
  }

  private void finishClone(PersistentVolumeClaim claim, Optional<ClaimRef> src) {
    if (src.isEmpty()) {
      return;
    }
    Map<String, String> ann = claim.getMetadata().getAnnotations();
    if (ann == null || ann.get(ClaimRef.CLONE_OF) == null) {
      String pvName = Names.pvName(claim.getMetadata().getUid());
      PersistentVolume pv = volumes.getStore().getByKey(pvName);
      if (pv == null) {
        pv = client.persistentVolumes().withName(pvName).get();
      }
      Map<String, String> pvAnn = pv == null ? null : pv.getMetadata().getAnnotations();
      // Only a PV made as a clone makes the claim one: never mark a blank volume CloneOf.
      if (pvAnn != null && pvAnn.get(Names.ANN_CLONE_OF) != null && !cloneOfInApiServer(claim)) {
        annotate(
            claim,
            pvAnn.get(Names.ANN_VOLUME_ID),
            ClaimRef.parseCloneRequest(
                pvAnn.get(Names.ANN_CLONE_OF), claim.getMetadata().getNamespace()));
      }
    }
    // The cache says whether there is anything to remove; most resyncs need no API call.
    String finalizer = Names.cloneFinalizer(claim.getMetadata().getUid());
    PersistentVolumeClaim cached = claims.getStore().getByKey(src.get().toString());
    if (cached != null
        && cached.getMetadata().getFinalizers() != null
        && cached.getMetadata().getFinalizers().contains(finalizer)) {
      unprotect(src.get(), finalizer);
    }
  }

  /**
   * Whether the API server's copy of the claim has {@code k8s.io/CloneOf} (a gone claim counts as
   * having it: there is nothing to mark). The informer's copy can predate this provisioner's own
   * annotation when the binder wrote the claim in between; annotating again is harmless but is a
   * needless write per clone, and one whose presence depended on timing.
   */
  private boolean cloneOfInApiServer(PersistentVolumeClaim claim) {
    PersistentVolumeClaim fresh =
        client
            .persistentVolumeClaims()
            .inNamespace(claim.getMetadata().getNamespace())
            .withName(claim.getMetadata().getName())
            .get();
    if (fresh == null || !claim.getMetadata().getUid().equals(fresh.getMetadata().getUid())) {
      return true;
    }
    Map<String, String> ann = fresh.getMetadata().getAnnotations();
    return ann != null && ann.get(ClaimRef.CLONE_OF) != null;
  }

  /** Keeps the source claim (and so its volume) from going while the clone is made. */
  private void protect(ClaimRef source, String finalizer) {
    editFinalizers(
        source,
        c -> {
          if (c.getMetadata().getDeletionTimestamp() != null) {
            throw new ProvisioningException(
                "source claim " + source + " is being deleted", false, null);
          }
          List<String> f =
              c.getMetadata().getFinalizers() == null
                  ? new ArrayList<>()
                  : new ArrayList<>(c.getMetadata().getFinalizers());
          if (f.contains(finalizer)) {
            return false;
          }
          f.add(finalizer);
          c.getMetadata().setFinalizers(f);
          return true;
        });
  }

  private void unprotect(ClaimRef source, String finalizer) {
    editFinalizers(
        source,
        c -> {
          List<String> f = c.getMetadata().getFinalizers();
          if (f == null || !f.contains(finalizer)) {
            return false;
          }
          List<String> rest = new ArrayList<>(f);
          rest.remove(finalizer);
          c.getMetadata().setFinalizers(rest);
          return true;
        });
  }

  /**
   * Read-modify-write of a claim's finalizers, with the resourceVersion (finalizers are a list: a
   * blind write could drop someone else's), repeated on a conflict. A missing claim is done.
   */
  private void editFinalizers(
      ClaimRef ref, java.util.function.Predicate<PersistentVolumeClaim> change) {
    var resource =
        client.persistentVolumeClaims().inNamespace(ref.namespace()).withName(ref.name());
    for (int attempt = 1; ; attempt++) {
      PersistentVolumeClaim c = resource.get();
      if (c == null || !change.test(c)) {
        return;
      }
      try {
        client.persistentVolumeClaims().inNamespace(ref.namespace()).resource(c).update();
        return;
      } catch (KubernetesClientException e) {
        if (e.getCode() == 404) {
          return;
        }
        if (e.getCode() != 409 || attempt >= 5) {
          throw new ProvisioningException(
              "cannot update the finalizers of source claim " + ref + ": " + e.getMessage(),
              false,
              e);
        }
      }
    }
  }

  /**
   * Marks the PV's volume as the PV's (see {@link VolumeProvisioner#handOver}). A failure is only
   * logged: while the PV exists no sweep touches its volume, and a retained PV repairs it when it
   * is released.
   */
  private void handOver(PersistentVolume pv) {
    try {
      provisioner.handOver(pv);
      handedOver.add(pv.getMetadata().getName());
    } catch (ProvisioningException e) {
      LOG.warn(
          "cannot mark the volume of {} as handed over (retried when it is released): {}",
          pv.getMetadata().getName(),
          e.getMessage());
    }
  }

  private void sweepOrphans(String claimRef, String claimUid) {
    // A clone deleted while it was being made leaves its protection on the source.
    String finalizer = Names.cloneFinalizer(claimUid);
    for (PersistentVolumeClaim c : claims.getStore().list()) {
      if (c.getMetadata().getFinalizers() != null
          && c.getMetadata().getFinalizers().contains(finalizer)) {
        unprotect(
            new ClaimRef(c.getMetadata().getNamespace(), c.getMetadata().getName()), finalizer);
      }
    }
    String pvName = Names.pvName(claimUid);
    if (volumes.getStore().getByKey(pvName) != null
        || client.persistentVolumes().withName(pvName).get() != null) {
      return; // the PV exists: its release deletes the volume
    }
    // The cache may lag behind the API server; a delete cannot be taken back, so ask it.
    String[] ref = claimRef.split("/", 2);
    PersistentVolumeClaim live =
        client.persistentVolumeClaims().inNamespace(ref[0]).withName(ref[1]).get();
    if (live != null && claimUid.equals(live.getMetadata().getUid())) {
      return;
    }
    int n = provisioner.deleteOrphans(claimUid);
    if (n > 0) {
      LOG.info("deleted {} volume(s) left by deleted claim {}", n, claimUid);
    }
  }

  private void syncVolume(PersistentVolume pv) {
    Map<String, String> ann = pv.getMetadata().getAnnotations();
    if (ann == null
        || !settings.provisionerName().equals(ann.get(Names.ANN_PROVISIONED_BY))
        || !settings.identity().equals(ann.get(Names.ANN_IDENTITY))) {
      return;
    }
    if (pv.getStatus() == null || !"Released".equals(pv.getStatus().getPhase())) {
      return;
    }
    if (!"Delete".equals(pv.getSpec().getPersistentVolumeReclaimPolicy())) {
      // Retain (or Recycle): the volume stays as it is, and must outlive the PV if an admin
      // deletes it; a hand-over that failed when the PV was made is repaired here, once.
      if (!handedOver.contains(pv.getMetadata().getName())) {
        handOver(pv);
      }
      return;
    }
    if (provisioner.delete(pv) == VolumeProvisioner.DeleteOutcome.DELETED) {
      client.persistentVolumes().withName(pv.getMetadata().getName()).delete();
      LOG.info(
          "deleted volume {} (Cinder volume {})",
          pv.getMetadata().getName(),
          ann.get(Names.ANN_VOLUME_ID));
    }
  }

  /** Stops the informers and waits for the workers to finish their current item. */
  @Override
  public void close() {
    running = false;
    if (sweeper != null) {
      sweeper.shutdownNow();
    }
    queue.shutDown();
    for (SharedIndexInformer<?> i : new SharedIndexInformer<?>[] {claims, volumes, classes}) {
      if (i != null) {
        i.close();
      }
    }
    for (Thread t : threads) {
      try {
        t.join(TimeUnit.SECONDS.toMillis(30));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
    }
  }
}
