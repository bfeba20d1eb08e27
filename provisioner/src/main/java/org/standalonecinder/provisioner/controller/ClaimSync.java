package org.standalonecinder.provisioner.controller;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.storage.StorageClass;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.standalonecinder.api.ClaimAnnotations;
import org.standalonecinder.api.ClaimRef;

/**
 * What the loop does with a claim or a PV, in the order sig-storage-lib-external-provisioner does
 * it: is it this provisioner's, is it time (a class and, for {@code WaitForFirstConsumer}, a node),
 * does its PV exist already; then the provisioner's part, the PV's creation and the claim's events.
 * A released PV of this provisioner goes with its storage, or stays ({@code Retain}).
 */
final class ClaimSync {

  private static final Logger LOG = LoggerFactory.getLogger(ClaimSync.class);
  private static final ObjectMapper JSON = new ObjectMapper();

  private final KubernetesClient client;
  private final ClusterCache cache;
  private final Provisioner provisioner;
  private final EventRecorder events;
  private final ProvisionMetrics metrics;
  private final ScheduledExecutorService notices;
  private final java.util.function.Consumer<WorkKey> again;

  /** When this process first looked at each claim it is provisioning. */
  private final Pace looking = new Pace(java.time.Clock.systemUTC());

  /** How long a provisioning runs before its claim is told that it is under way. */
  static final Duration TELL_AFTER = Duration.ofSeconds(2);

  /**
   * @param notices where the {@code Provisioning} events of provisionings that last are told from
   * @param again brings a claim to the loop again at once (work it started in the background ended)
   */
  ClaimSync(
      KubernetesClient client,
      ClusterCache cache,
      Provisioner provisioner,
      EventRecorder events,
      ProvisionMetrics metrics,
      ScheduledExecutorService notices,
      java.util.function.Consumer<WorkKey> again) {
    this.client = client;
    this.again = again;
    this.cache = cache;
    this.provisioner = provisioner;
    this.events = events;
    this.metrics = metrics;
    this.notices = notices;
  }

  /** Whether Kubernetes named this provisioner for the claim. */
  boolean ours(PersistentVolumeClaim claim) {
    Map<String, String> ann = claim.getMetadata().getAnnotations();
    return ann != null && provisioner.name().equals(ClaimAnnotations.provisioner(ann));
  }

  /**
   * Brings the claim's storage about.
   *
   * @return when to look at the claim again, when the provisioner is still at it (Cinder is making
   *     its volume); empty when only a change of the claim or a resync brings it back
   */
  Optional<Duration> claim(PersistentVolumeClaim claim) {
    if (!ours(claim)) {
      return Optional.empty();
    }
    String volumeName = claim.getSpec().getVolumeName();
    if (volumeName != null && !volumeName.isEmpty()) {
      return provisioner.provisioned(claim);
    }
    if (claim.getMetadata().getDeletionTimestamp() != null) {
      return Optional.empty();
    }
    String className = claim.getSpec().getStorageClassName();
    if (className == null || className.isEmpty()) {
      return Optional.empty();
    }
    StorageClass sc = cache.storageClass(className);
    if (sc == null) {
      // A class and its first claim applied together may reach the caches in either order.
      sc = client.storage().v1().storageClasses().withName(className).get();
    }
    if (sc == null) {
      throw new ProvisioningException("StorageClass " + className + " not found", false, null);
    }
    if (!provisioner.name().equals(sc.getProvisioner())) {
      return Optional.empty();
    }
    Map<String, String> ann = claim.getMetadata().getAnnotations();
    if ("WaitForFirstConsumer".equals(sc.getVolumeBindingMode())
        && ann.get(ClaimAnnotations.SELECTED_NODE) == null) {
      return Optional.empty(); // the scheduler picks a node first
    }
    String pvName = ProvisionRequest.pvName(claim.getMetadata().getUid());
    // A PV made a moment ago may not be in the cache yet: that is caught where it matters, when
    // Cinder has the claim's volume already (the provisioner asks the API server then), so the
    // common claim, whose volume does not exist yet, costs no read here.
    if (cache.volume(pvName) != null) {
      return provisioner.provisioned(claim); // the binder takes it from here
    }
    // Before anything is made or told: a node that is gone makes the scheduler choose again.
    Map<String, String> nodeLabels = selectedNodeLabels(claim);
    return provision(claim, sc, pvName, nodeLabels);
  }

  private Optional<Duration> provision(
      PersistentVolumeClaim claim, StorageClass sc, String pvName, Map<String, String> nodeLabels) {
    String kind = provisioner.kind(claim);
    String uid = claim.getMetadata().getUid();
    // A claim's provisioning spans looks (Cinder makes and exports its volume in the background):
    // its time runs from the first look of this process.
    long started = System.nanoTime() - Math.max(0, looking.seen(uid).toNanos());
    String outcome = null;
    Notice notice = new Notice(claim);
    try {
      ProvisionRequest request = new ProvisionRequest(claim, sc, pvName, nodeLabels, notice::later);
      ProvisionResult result = provisioner.provision(request);
      switch (result.state()) {
        case FINISHED -> {
          notice.cancel();
          save(request, result);
          outcome = "succeeded";
          // The line an operator reads a slow Cinder or a backlog by.
          LOG.info(
              "provisioned {} in {} ms{}",
              pvName,
              (System.nanoTime() - started) / 1_000_000,
              result.detail());
        }
        case IN_BACKGROUND -> {
          // The work outlasts this sync: the claim is told what is under way once it has lasted
          // (as a quick one's notice). Its words change rarely, and the recorder writes a repeat
          // only after its quiet time.
          notice.cancel();
          if (result.progress().soFar().compareTo(TELL_AFTER) >= 0) {
            tellProvisioning(claim, ": " + result.detail());
          }
          LOG.debug("in background: {}", result.detail());
          if (result.progress().wake() != null) {
            WorkKey key =
                new WorkKey.Claim(
                    claim.getMetadata().getNamespace(), claim.getMetadata().getName());
            result.progress().wake().whenComplete((done, failed) -> again.accept(key));
          }
          return Optional.of(result.progress().after());
        }
        case NO_CHANGE, IGNORED -> LOG.debug("{}: {}", result.state(), result.detail());
      }
      return Optional.empty();
    } catch (ProvisioningException e) {
      outcome = e.isFinal() ? "refused" : "failed";
      throw e;
    } catch (RuntimeException e) {
      outcome = "failed";
      throw e;
    } finally {
      notice.cancel();
      if (outcome != null) {
        metrics.provisioned(kind, outcome, System.nanoTime() - started);
      }
      if ("succeeded".equals(outcome) || "refused".equals(outcome)) {
        looking.done(uid);
      }
    }
  }

  /**
   * The claim's {@code Provisioning} event, told only when the work lasts: a claim provisioned
   * within {@link #TELL_AFTER} gets one event, for its outcome (an event is a write to the API
   * server, and under a burst the writes bound the rate). A slow Cinder, or a clone of a large
   * volume, still shows within seconds that the provisioner is at it, and with what source.
   */
  private final class Notice {
    private final PersistentVolumeClaim claim;
    private String detail;
    private ScheduledFuture<?> pending;

    /** The look is over: a step still running elsewhere tells through its own result. */
    private boolean over;

    Notice(PersistentVolumeClaim claim) {
      this.claim = claim;
    }

    synchronized void later(String detail) {
      this.detail = detail;
      if (pending == null && !over) {
        try {
          pending = notices.schedule(this::tell, TELL_AFTER.toMillis(), TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException closing) {
          // the controller is closing: the provisioning's outcome is told as ever
        }
      }
    }

    synchronized void cancel() {
      over = true;
      if (pending != null) {
        pending.cancel(false);
      }
    }

    private void tell() {
      String d;
      synchronized (this) {
        d = detail;
      }
      tellProvisioning(claim, d);
    }
  }

  /** The claim's {@code Provisioning} event, in the words of Kubernetes' own provisioners. */
  private void tellProvisioning(PersistentVolumeClaim claim, String detail) {
    events.normal(
        claim,
        EventRecorder.PROVISIONING,
        "External provisioner is provisioning volume for claim "
            + claim.getMetadata().getNamespace()
            + "/"
            + claim.getMetadata().getName()
            + detail);
  }

  /** Creates the PV of a finished provisioning; undoes the storage when it cannot be saved. */
  private void save(ProvisionRequest request, ProvisionResult result) {
    PersistentVolume pv = result.volume();
    try {
      client.persistentVolumes().resource(pv).create();
    } catch (KubernetesClientException e) {
      if (e.getCode() != 409) {
        // Undone rather than leaked; the next try makes it anew.
        try {
          provisioner.delete(pv);
        } catch (RuntimeException undo) {
          e.addSuppressed(undo);
        }
        throw new ProvisioningException(
            "cannot create PersistentVolume " + request.pvName() + ": " + e.getMessage(), false, e);
      }
    }
    events.normal(
        request.claim(),
        EventRecorder.PROVISIONING_SUCCEEDED,
        "Successfully provisioned volume " + request.pvName() + result.detail());
    // After the event: what follows the PV (a clone's mark on the claim) runs off the worker, and
    // whoever waits for the mark finds the event told already.
    provisioner.created(request, pv);
  }

  /**
   * The labels of the node the scheduler selected for the claim ({@code WaitForFirstConsumer}),
   * empty when it selected none. A node that is gone cannot take the pod: its name is taken off the
   * claim, so the scheduler selects another, as Kubernetes' external provisioners do.
   */
  private Map<String, String> selectedNodeLabels(PersistentVolumeClaim claim) {
    Map<String, String> ann = claim.getMetadata().getAnnotations();
    String name = ann == null ? null : ann.get(ClaimAnnotations.SELECTED_NODE);
    if (name == null) {
      return Map.of();
    }
    // Anyone who may update the claim may write this annotation; a value that is no node name
    // (a "/" or "..") would reach another URL of the API server than the node's.
    boolean aName = ClaimRef.isName(name);
    Node node = aName ? client.nodes().withName(name).get() : null;
    if (node != null) {
      Map<String, String> labels = node.getMetadata().getLabels();
      return labels == null ? Map.of() : labels;
    }
    // Only the choice seen here: the scheduler may have chosen again meanwhile.
    String path = "/metadata/annotations/" + ClaimAnnotations.SELECTED_NODE.replace("/", "~1");
    ArrayNode patch = JSON.createArrayNode();
    patch.addObject().put("op", "test").put("path", path).put("value", name);
    patch.addObject().put("op", "remove").put("path", path);
    try {
      client
          .persistentVolumeClaims()
          .inNamespace(claim.getMetadata().getNamespace())
          .resource(claim) // named only, fabric8 would read the claim first
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
            : ClaimAnnotations.SELECTED_NODE
                + " is not a node name; it was taken off the claim (the scheduler writes it when"
                + " it selects a node)",
        false,
        null);
  }

  /**
   * Tears down a released PV of this provisioner whose policy is Delete; tells of a kept one.
   *
   * @return when to look at the PV again, while its storage is going
   */
  Optional<Duration> volume(PersistentVolume pv) {
    Map<String, String> ann = pv.getMetadata().getAnnotations();
    if (ann == null || !provisioner.name().equals(ann.get(ClaimAnnotations.PROVISIONED_BY))) {
      return Optional.empty();
    }
    if (pv.getStatus() == null || !"Released".equals(pv.getStatus().getPhase())) {
      return Optional.empty();
    }
    if (!"Delete".equals(pv.getSpec().getPersistentVolumeReclaimPolicy())) {
      provisioner.retained(pv);
      return Optional.empty();
    }
    Provisioner.DeleteOutcome outcome = provisioner.delete(pv);
    switch (outcome.state()) {
      case DELETED -> {
        client.persistentVolumes().withName(pv.getMetadata().getName()).delete();
        LOG.info("deleted PersistentVolume {}", pv.getMetadata().getName());
      }
      case IN_PROGRESS -> {
        tellDeleting(pv, outcome);
        return Optional.of(outcome.progress().after());
      }
      case NOT_MINE -> {
        if (toldNotMine.add(pv.getMetadata().getUid())) {
          // Once per PV and process: a resync must not add an event for it every few minutes.
          String why = provisioner.notMine(pv);
          LOG.warn("PersistentVolume {} {}", pv.getMetadata().getName(), why);
          events.warning(pv, EventRecorder.VOLUME_NOT_MINE, why);
        }
      }
    }
    return Optional.empty();
  }

  /**
   * Tells a PV whose storage is going what is under way, once it lasts; past {@link #STUCK_AFTER}
   * as a warning (looked at still: the storage may yet go).
   */
  private void tellDeleting(PersistentVolume pv, Provisioner.DeleteOutcome outcome) {
    Duration soFar = outcome.progress().soFar();
    if (soFar.compareTo(STUCK_AFTER) >= 0) {
      events.warning(
          pv,
          EventRecorder.VOLUME_DELETING,
          outcome.detail() + ": longer than expected; see the storage's log");
    } else if (soFar.compareTo(TELL_AFTER) >= 0) {
      events.normal(pv, EventRecorder.VOLUME_DELETING, outcome.detail());
    }
  }

  /** How long a PV's storage may take to go before it is told as a warning. */
  static final Duration STUCK_AFTER = Duration.ofMinutes(30);

  // Released PVs of this provisioner's name that another instance made, told about already.
  private final java.util.Set<String> toldNotMine =
      java.util.concurrent.ConcurrentHashMap.newKeySet();

  /** The PV is gone: it may be told about again should one of its uid ever come back. */
  void forget(PersistentVolume pv) {
    toldNotMine.remove(pv.getMetadata().getUid());
  }
}
