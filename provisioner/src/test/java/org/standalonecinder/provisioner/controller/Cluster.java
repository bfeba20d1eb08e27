package org.standalonecinder.provisioner.controller;

import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.PersistentVolumeStatusBuilder;
import io.fabric8.kubernetes.api.model.storage.StorageClass;
import io.fabric8.kubernetes.api.model.storage.StorageClassBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.function.BooleanSupplier;
import org.standalonecinder.api.ClaimAnnotations;
import org.standalonecinder.provisioner.provision.Fixtures;
import org.standalonecinder.provisioner.provision.KubernetesSecretStore;
import org.standalonecinder.provisioner.provision.Names;
import org.standalonecinder.provisioner.provision.ProvisionerSettings;

/**
 * What tests do to the mock API server, including the part of Kubernetes the mock lacks (the
 * binder's release of a PV whose claim is gone).
 */
public final class Cluster {

  private Cluster() {}

  /**
   * A fresh CRUD mock API server. One per test: a shared one carries the previous test's watches
   * and objects, and its client's connection pool once ran dry in CI (a 10 s timeout).
   */
  /** Starts the cache with handlers that do nothing: for a test of what reads it. */
  public static void startCache(ClusterCache cache) {
    cache.start(nothing(), nothing());
  }

  private static <T> io.fabric8.kubernetes.client.informers.ResourceEventHandler<T> nothing() {
    return new io.fabric8.kubernetes.client.informers.ResourceEventHandler<>() {
      @Override
      public void onAdd(T obj) {}

      @Override
      public void onUpdate(T oldObj, T newObj) {}

      @Override
      public void onDelete(T obj, boolean deletedFinalStateUnknown) {}
    };
  }

  public static io.fabric8.kubernetes.client.server.mock.KubernetesMockServer newApiServer() {
    var server =
        new io.fabric8.kubernetes.client.server.mock.KubernetesMockServer(
            new io.fabric8.mockwebserver.Context(),
            new io.fabric8.mockwebserver.MockWebServer(),
            new HashMap<>(),
            new io.fabric8.kubernetes.client.server.mock.KubernetesCrudDispatcher(),
            false);
    server.init();
    return server;
  }

  /**
   * A controller as the unit tests run it: retries after 50 ms to 200 ms and gives up after 3, two
   * workers. Not started.
   */
  public static ClaimController controller(
      KubernetesClient client,
      org.standalonecinder.provisioner.cinder.CinderClient cinder,
      ProvisionerSettings settings,
      io.micrometer.core.instrument.MeterRegistry registry) {
    return parts(client, cinder, settings, registry).controller();
  }

  /** A snapshot loop's timings for tests: looks from 50 ms on, late after 5 s. */
  public static final org.standalonecinder.provisioner.snapshot.SnapshotController.Timing QUICK =
      new org.standalonecinder.provisioner.snapshot.SnapshotController.Timing(
          Duration.ofSeconds(5), Duration.ofMillis(50));

  /** As {@link #controller}, with other bounds on the copies in flight. */
  public static ClaimController controller(
      KubernetesClient client,
      org.standalonecinder.provisioner.cinder.CinderClient cinder,
      ProvisionerSettings settings,
      io.micrometer.core.instrument.MeterRegistry registry,
      org.standalonecinder.provisioner.provision.CopyLimits copies) {
    return parts(client, cinder, settings, registry, copies).controller();
  }

  /** Every loop as the unit tests run them (see {@link #controller}). Not started. */
  public static org.standalonecinder.provisioner.app.Wiring.Parts parts(
      KubernetesClient client,
      org.standalonecinder.provisioner.cinder.CinderClient cinder,
      ProvisionerSettings settings,
      io.micrometer.core.instrument.MeterRegistry registry) {
    return parts(
        client,
        cinder,
        settings,
        registry,
        org.standalonecinder.provisioner.provision.CopyLimits.DEFAULT);
  }

  private static org.standalonecinder.provisioner.app.Wiring.Parts parts(
      KubernetesClient client,
      org.standalonecinder.provisioner.cinder.CinderClient cinder,
      ProvisionerSettings settings,
      io.micrometer.core.instrument.MeterRegistry registry,
      org.standalonecinder.provisioner.provision.CopyLimits copies) {
    return parts(client, cinder, settings, registry, copies, QUICK);
  }

  /** As {@link #parts}, with the snapshot loop's timings and limits. */
  public static org.standalonecinder.provisioner.app.Wiring.Parts parts(
      KubernetesClient client,
      org.standalonecinder.provisioner.cinder.CinderClient cinder,
      ProvisionerSettings settings,
      io.micrometer.core.instrument.MeterRegistry registry,
      org.standalonecinder.provisioner.provision.CopyLimits copies,
      org.standalonecinder.provisioner.snapshot.SnapshotController.Timing timing) {
    return org.standalonecinder.provisioner.app.Wiring.build(
        client,
        cinder,
        new org.standalonecinder.provisioner.provision.VolumeProvisioner(
                cinder,
                new KubernetesSecretStore(client),
                org.standalonecinder.provisioner.mapping.VolumeMappers.standard(),
                settings,
                org.standalonecinder.provisioner.cinder.Backoff.DEFAULT)
            .withCopyLimits(copies)
            .withBackgroundThreads(2),
        settings,
        new EventRecorder(client, "standalone-cinder", "test-0", java.time.Clock.systemUTC()),
        new RetryPolicy(Duration.ofMillis(50), Duration.ofMillis(200), 3),
        2,
        Duration.ofSeconds(30),
        registry,
        timing);
  }

  /** Settings of a provisioner instance of its own cluster id. */
  public static ProvisionerSettings settings(String cluster) {
    return new ProvisionerSettings(
        ProvisionerSettings.DEFAULT_NAME,
        cluster,
        cluster,
        "iqn.2026-11.org.standalonecinder:" + cluster.toLowerCase().replaceAll("[^a-z0-9-]", "-"),
        cluster,
        "127.0.0.1",
        "standalone-cinder",
        false);
  }

  /**
   * Stops a mock server made by {@link #newApiServer()}. fabric8's mock sometimes fails to close
   * within its own 10 s (seen twice in about a dozen CI runs, after the test had passed); each test
   * has its own server, so a server left closing cannot affect another test.
   */
  public static void destroy(io.fabric8.kubernetes.client.server.mock.KubernetesMockServer server) {
    try {
      server.destroy();
    } catch (IllegalStateException e) {
      System.err.println("mock API server did not close in time: " + e.getMessage());
    }
  }

  public static StorageClass createClass(
      KubernetesClient k,
      String name,
      String provisioner,
      Map<String, String> params,
      String reclaim,
      String binding) {
    return k.storage()
        .v1()
        .storageClasses()
        .resource(
            new StorageClassBuilder()
                .withNewMetadata()
                .withName(name)
                .endMetadata()
                .withProvisioner(provisioner)
                .withParameters(params)
                .withReclaimPolicy(reclaim)
                .withVolumeBindingMode(binding)
                .build())
        .create();
  }

  /** Our class with reclaim Delete and immediate binding. */
  public static StorageClass createClass(
      KubernetesClient k, String name, Map<String, String> params) {
    return createClass(k, name, ProvisionerSettings.DEFAULT_NAME, params, "Delete", "Immediate");
  }

  /** A claim as the API server has it once Kubernetes named its provisioner. */
  public static PersistentVolumeClaim createClaim(
      KubernetesClient k,
      String name,
      String className,
      String provisioner,
      String volumeMode,
      Map<String, String> annotations) {
    Map<String, String> ann = new HashMap<>(annotations);
    ann.put(ClaimAnnotations.STORAGE_PROVISIONER, provisioner);
    PersistentVolumeClaim c = Fixtures.claimOf(null, name, "1Gi", volumeMode);
    c.getMetadata().setAnnotations(ann);
    c.getSpec().setStorageClassName(className);
    return k.persistentVolumeClaims().inNamespace("apps").resource(c).create();
  }

  public static PersistentVolumeClaim createClaim(
      KubernetesClient k, String name, String className) {
    return createClaim(
        k, name, className, ProvisionerSettings.DEFAULT_NAME, "Filesystem", Map.of());
  }

  /** The storage capacity a PV has now, as the API server has it. */
  public static io.fabric8.kubernetes.api.model.Quantity capacityOf(
      KubernetesClient k, String pvName) {
    return k.persistentVolumes().withName(pvName).get().getSpec().getCapacity().get("storage");
  }

  public static PersistentVolume pvOf(KubernetesClient k, PersistentVolumeClaim c) {
    return k.persistentVolumes().withName(Names.pvName(c.getMetadata().getUid())).get();
  }

  /**
   * Waits until the controller's own cache holds this version of the PV (or a later one): a test
   * that changes what only an admin changes must not race the informer.
   */
  public static void awaitCached(ClaimController controller, PersistentVolume pv) {
    String wanted = pv.getMetadata().getResourceVersion();
    await(
        "the controller's cache has PV " + pv.getMetadata().getName() + " at " + wanted,
        () -> {
          PersistentVolume seen = controller.cache().volume(pv.getMetadata().getName());
          return seen != null
              && Long.parseLong(seen.getMetadata().getResourceVersion()) >= Long.parseLong(wanted);
        },
        Duration.ofSeconds(30));
  }

  /**
   * What Kubernetes' binder does once the PV of a claim exists: the claim names the PV (a merge
   * patch, as the provisioner may be annotating the claim meanwhile) and the PV is Bound.
   *
   * @return the bound PV
   */
  public static PersistentVolume bind(KubernetesClient k, PersistentVolumeClaim claim) {
    String pvName = Names.pvName(claim.getMetadata().getUid());
    await(
        "PV " + pvName,
        () -> k.persistentVolumes().withName(pvName).get() != null,
        Duration.ofSeconds(60));
    k.persistentVolumeClaims()
        .inNamespace(claim.getMetadata().getNamespace())
        .withName(claim.getMetadata().getName())
        .patch(
            io.fabric8.kubernetes.client.dsl.base.PatchContext.of(
                io.fabric8.kubernetes.client.dsl.base.PatchType.JSON_MERGE),
            "{\"spec\":{\"volumeName\":\"" + pvName + "\"}}");
    PersistentVolume pv = k.persistentVolumes().withName(pvName).get();
    pv.setStatus(new PersistentVolumeStatusBuilder().withPhase("Bound").build());
    PersistentVolume bound = k.persistentVolumes().resource(pv).updateStatus();
    claimBound(k, claim.getMetadata().getNamespace(), claim.getMetadata().getName(), "1Gi");
    return bound;
  }

  /** What the binder leaves in a bound claim's status (a merge patch of the status). */
  public static void claimBound(KubernetesClient k, String ns, String name, String size) {
    k.persistentVolumeClaims()
        .inNamespace(ns)
        .withName(name)
        .subresource("status")
        .patch(
            io.fabric8.kubernetes.client.dsl.base.PatchContext.of(
                io.fabric8.kubernetes.client.dsl.base.PatchType.JSON_MERGE),
            "{\"status\":{\"phase\":\"Bound\",\"accessModes\":[\"ReadWriteOnce\"],"
                + "\"capacity\":{\"storage\":\""
                + size
                + "\"}}}");
  }

  /** What Kubernetes' binder does once a PV's claim is gone. */
  public static void release(KubernetesClient k, PersistentVolume pv) {
    pv.setStatus(new PersistentVolumeStatusBuilder().withPhase("Released").build());
    k.persistentVolumes().resource(pv).updateStatus();
  }

  /**
   * The fake Cinder's calls but the orphan sweep's listing of unfinished volumes, which runs at
   * start and at every resync whatever the claims are.
   */
  public static java.util.List<String> claimCalls(
      org.standalonecinder.provisioner.cinder.FakeCinderClient cinder) {
    return cinder.log().stream().filter(l -> !l.equals("findVolumes null")).toList();
  }

  public static void await(String what, BooleanSupplier condition, Duration timeout) {
    long end = System.nanoTime() + timeout.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > end) {
        throw new AssertionError("timed out waiting for " + what);
      }
      try {
        Thread.sleep(20);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new AssertionError(e);
      }
    }
  }

  /**
   * Runs {@code work} (a user-space initiator's commands, say) on another thread, so that a test
   * can have two of them at once; its exception, checked or not, fails the future.
   */
  public static <T> java.util.concurrent.CompletableFuture<T> background(
      java.util.concurrent.Callable<T> work) {
    var f = new java.util.concurrent.CompletableFuture<T>();
    Thread t =
        new Thread(
            () -> {
              try {
                f.complete(work.call());
              } catch (Exception e) {
                f.completeExceptionally(e);
              }
            },
            "background");
    t.setDaemon(true);
    t.start();
    return f;
  }
}
