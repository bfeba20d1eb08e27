package org.standalonecinder.bench;

import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.PersistentVolumeStatusBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.storage.StorageClassBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.fabric8.kubernetes.client.server.mock.KubernetesCrudDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.BooleanSupplier;
import org.standalonecinder.api.ClaimAnnotations;
import org.standalonecinder.provisioner.cinder.Attachment;
import org.standalonecinder.provisioner.cinder.Backoff;
import org.standalonecinder.provisioner.cinder.CinderClient;
import org.standalonecinder.provisioner.cinder.Volume;
import org.standalonecinder.provisioner.cinder.VolumeSpec;
import org.standalonecinder.provisioner.controller.ClaimController;
import org.standalonecinder.provisioner.controller.Cluster;
import org.standalonecinder.provisioner.controller.EventRecorder;
import org.standalonecinder.provisioner.controller.RetryPolicy;
import org.standalonecinder.provisioner.mapping.VolumeMappers;
import org.standalonecinder.provisioner.provision.Fixtures;
import org.standalonecinder.provisioner.provision.KubernetesSecretStore;
import org.standalonecinder.provisioner.provision.Names;
import org.standalonecinder.provisioner.provision.ProvisionerSettings;
import org.standalonecinder.provisioner.provision.VolumeProvisioner;

/**
 * The provisioner's throughput and latency on fabric8's mock API server: claims created as fast as
 * one client can, each claim's time from its create call to its PV's arrival at a watch. Against an
 * instant Cinder (the tests' fake) the figures bound the controller and the API; against the real
 * local Cinder they are compared with Cinder's own create and attach of one volume.
 */
final class ProvisionerBench {

  static final String CLASS = "bench";
  static final String CLONES = "bench-clones";
  static final String SOURCE = "source";

  private ProvisionerBench() {}

  /** claims/s and claim→PV latencies (ms) of one run. */
  record Run(double claimsPerSecond, List<Double> latenciesMs) {}

  /**
   * Where one run's claims and PVs go: a fresh fabric8 mock, or the real API server
   * (dev/kube-local, with etcd and the controller manager's binder), where the run has a namespace,
   * a class and a provisioner name of its own and removes what it made when closed.
   */
  interface Target extends AutoCloseable {
    KubernetesClient client();

    String namespace();

    String className();

    String provisionerName();

    /**
     * Where the provisioner keeps its CHAP Secrets: on the real API server the run's own namespace
     * (a fresh control plane has no {@code standalone-cinder}, and the Secrets go with the run).
     */
    default String secretNamespace() {
      return "standalone-cinder";
    }

    @Override
    void close();
  }

  /** A fresh mock API server. */
  static Target mock() {
    KubernetesMockServer server = apiServer();
    return new Target() {
      @Override
      public KubernetesClient client() {
        return server.createClient();
      }

      @Override
      public String namespace() {
        return "bench";
      }

      @Override
      public String className() {
        return CLASS;
      }

      @Override
      public String provisionerName() {
        return ProvisionerSettings.DEFAULT_NAME;
      }

      @Override
      public void close() {
        destroy(server);
      }
    };
  }

  /** The real API server of {@code kubeconfig}; what the run makes is removed when it closes. */
  static Target real(java.nio.file.Path kubeconfig) {
    String run = "bench-" + Long.toString(System.currentTimeMillis(), 36);
    io.fabric8.kubernetes.client.Config config;
    try {
      config =
          io.fabric8.kubernetes.client.Config.fromKubeconfig(
              java.nio.file.Files.readString(kubeconfig));
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
    KubernetesClient admin =
        new io.fabric8.kubernetes.client.KubernetesClientBuilder().withConfig(config).build();
    admin
        .namespaces()
        .resource(
            new io.fabric8.kubernetes.api.model.NamespaceBuilder()
                .withNewMetadata()
                .withName(run)
                .endMetadata()
                .build())
        .create();
    return new Target() {
      @Override
      public KubernetesClient client() {
        return new io.fabric8.kubernetes.client.KubernetesClientBuilder()
            .withConfig(config)
            .build();
      }

      @Override
      public String namespace() {
        return run;
      }

      @Override
      public String className() {
        return run;
      }

      @Override
      public String provisionerName() {
        return run + ".standalonecinder.org";
      }

      @Override
      public String secretNamespace() {
        return run;
      }

      @Override
      public void close() {
        // The claims go with the namespace; the PVs (the provisioner's and the baseline's) carry
        // the run's class.
        admin.namespaces().withName(run).delete();
        admin.persistentVolumes().list().getItems().stream()
            .filter(pv -> run.equals(pv.getSpec().getStorageClassName()))
            .forEach(pv -> admin.persistentVolumes().resource(pv).withGracePeriod(0).delete());
        admin.storage().v1().storageClasses().withName(run).delete();
        admin.close();
      }
    };
  }

  static KubernetesMockServer apiServer() {
    KubernetesMockServer server =
        new KubernetesMockServer(
            new Context(),
            new MockWebServer(),
            new HashMap<>(),
            new KubernetesCrudDispatcher(),
            false);
    server.init();
    return server;
  }

  /** fabric8's mock sometimes takes longer than its own 10 s to close; the figures are taken. */
  static void destroy(KubernetesMockServer server) {
    try {
      server.destroy();
    } catch (IllegalStateException slowToClose) {
      // nothing of the next round depends on it: each round has its own server
    }
  }

  static ProvisionerSettings settings(String cluster) {
    return settings(ProvisionerSettings.DEFAULT_NAME, cluster);
  }

  static ProvisionerSettings settings(String provisionerName, String cluster) {
    return settings(provisionerName, cluster, "standalone-cinder");
  }

  static ProvisionerSettings settings(
      String provisionerName, String cluster, String secretNamespace) {
    return new ProvisionerSettings(
        provisionerName,
        cluster,
        cluster,
        "iqn.2026-11.org.standalonecinder:" + cluster,
        cluster,
        "127.0.0.1",
        secretNamespace,
        false);
  }

  static ClaimController controller(
      KubernetesClient client, CinderClient cinder, ProvisionerSettings s, int workers) {
    return controller(client, cinder, s, workers, new SimpleMeterRegistry());
  }

  static ClaimController controller(
      KubernetesClient client,
      CinderClient cinder,
      ProvisionerSettings s,
      int workers,
      io.micrometer.core.instrument.MeterRegistry registry) {
    return org.standalonecinder.provisioner.app.Wiring.build(
            client,
            cinder,
            new VolumeProvisioner(
                    cinder,
                    new KubernetesSecretStore(client),
                    VolumeMappers.standard(),
                    s,
                    Backoff.DEFAULT.withDeadline(Duration.ofMinutes(2)))
                .withBackgroundThreads(VolumeProvisioner.BACKGROUND_THREADS),
            s,
            new EventRecorder(client, s.provisionerName(), "bench", Clock.systemUTC()),
            new RetryPolicy(Duration.ofMillis(100), Duration.ofSeconds(5), 20),
            workers,
            Duration.ofMinutes(30),
            registry)
        .controller();
  }

  static void createClass(KubernetesClient client) {
    createClass(client, CLASS, ProvisionerSettings.DEFAULT_NAME);
  }

  static void createClass(KubernetesClient client, String name, String provisioner) {
    createClass(client, name, provisioner, Map.of());
  }

  static void createClass(
      KubernetesClient client, String name, String provisioner, Map<String, String> parameters) {
    client
        .storage()
        .v1()
        .storageClasses()
        .resource(
            new StorageClassBuilder()
                .withNewMetadata()
                .withName(name)
                .endMetadata()
                .withProvisioner(provisioner)
                .withParameters(parameters)
                .withReclaimPolicy("Delete")
                .build())
        .create();
  }

  static PersistentVolumeClaim claim(String name) {
    return claim(name, "bench", CLASS, ProvisionerSettings.DEFAULT_NAME);
  }

  /**
   * A claim as the API server has it once the binder saw its class (the mock has no binder, and the
   * real one would add the same annotation a moment later).
   */
  static PersistentVolumeClaim claim(
      String name, String namespace, String className, String provisioner) {
    PersistentVolumeClaim c = Fixtures.claimOf(null, name, "1Gi", "Filesystem");
    c.getMetadata().setNamespace(namespace);
    c.getMetadata().setAnnotations(Map.of(ClaimAnnotations.STORAGE_PROVISIONER, provisioner));
    c.getSpec().setStorageClassName(className);
    return c;
  }

  /**
   * The clones' source, provisioned and bound as Kubernetes' binder would bind it (the mock has no
   * binder): a clone's source must be a bound claim of this provisioner.
   */
  static void boundSource(KubernetesClient client, String namespace) {
    PersistentVolumeClaim made =
        client
            .persistentVolumeClaims()
            .inNamespace(namespace)
            .resource(claim(SOURCE, namespace, CLASS, ProvisionerSettings.DEFAULT_NAME))
            .create();
    String pvName = Names.pvName(made.getMetadata().getUid());
    await(
        "the source's PV",
        () -> client.persistentVolumes().withName(pvName).get() != null,
        Duration.ofMinutes(2));
    var merge =
        io.fabric8.kubernetes.client.dsl.base.PatchContext.of(
            io.fabric8.kubernetes.client.dsl.base.PatchType.JSON_MERGE);
    var source = client.persistentVolumeClaims().inNamespace(namespace).withName(SOURCE);
    source.patch(merge, "{\"spec\":{\"volumeName\":\"" + pvName + "\"}}");
    Cluster.claimBound(client, namespace, SOURCE, "1Gi");
    PersistentVolume pv = client.persistentVolumes().withName(pvName).get();
    pv.setStatus(new PersistentVolumeStatusBuilder().withPhase("Bound").build());
    client.persistentVolumes().resource(pv).updateStatus();
  }

  /** Waits for a condition, or fails naming it. */
  static void await(String what, BooleanSupplier condition, Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("timed out after " + timeout.toSeconds() + " s: " + what);
      }
      try {
        Thread.sleep(5);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException(e);
      }
    }
  }

  /**
   * The baseline: what the API server alone does for the provisioner's one indispensable write per
   * claim, a PV create, from as many threads as the provisioner has workers.
   */
  static double apiPvCreatesPerSecond(Target target, int n, int threads) throws Exception {
    try (KubernetesClient client = target.client()) {
      ExecutorService pool = Executors.newFixedThreadPool(threads);
      long t0 = System.nanoTime();
      List<Future<?>> done = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        String name = target.namespace() + "-pv-" + i;
        done.add(
            pool.submit(
                () ->
                    client
                        .persistentVolumes()
                        .resource(
                            new PersistentVolumeBuilder()
                                .withNewMetadata()
                                .withName(name)
                                .endMetadata()
                                .withNewSpec()
                                .withStorageClassName(target.className())
                                .withCapacity(Map.of("storage", new Quantity("1Gi")))
                                .withAccessModes("ReadWriteOnce")
                                .withNewIscsi()
                                .withTargetPortal("127.0.0.1:3260")
                                .withIqn("iqn.2010-10.org.openstack:" + name)
                                .withLun(1)
                                .endIscsi()
                                .endSpec()
                                .build())
                        .create()));
      }
      for (Future<?> f : done) {
        f.get();
      }
      double secs = (System.nanoTime() - t0) / 1e9;
      pool.shutdown();
      return n / secs;
    }
  }

  /** {@code n} claims at once through a provisioner of {@code workers} workers. */
  static Run burst(CinderClient cinder, int n, int workers) {
    try (Target target = mock()) {
      return burst(target, cinder, n, workers);
    }
  }

  static Run burst(Target target, CinderClient cinder, int n, int workers) {
    return burst(
        target, cinder, n, workers, "bench-" + System.nanoTime(), new SimpleMeterRegistry());
  }

  /** As above, as cluster {@code cluster}, its metrics in {@code registry}. */
  static Run burst(
      Target target,
      CinderClient cinder,
      int n,
      int workers,
      String cluster,
      io.micrometer.core.instrument.MeterRegistry registry) {
    Map<String, Long> asked = new ConcurrentHashMap<>();
    Map<String, Long> arrived = new ConcurrentHashMap<>();
    try (KubernetesClient client = target.client();
        KubernetesClient watcher = target.client()) {
      ClaimController c =
          controller(
              client,
              cinder,
              settings(target.provisionerName(), cluster, target.secretNamespace()),
              workers,
              registry);
      c.start();
      await("caches synced", c::synced, Duration.ofSeconds(30));
      createClass(client, target.className(), target.provisionerName());
      SharedIndexInformer<PersistentVolume> pvs =
          watcher
              .persistentVolumes()
              .inform(
                  new ResourceEventHandler<>() {
                    @Override
                    public void onAdd(PersistentVolume pv) {
                      arrived.putIfAbsent(pv.getMetadata().getName(), System.nanoTime());
                    }

                    @Override
                    public void onUpdate(PersistentVolume o, PersistentVolume pv) {}

                    @Override
                    public void onDelete(PersistentVolume pv, boolean unknown) {}
                  });
      long t0 = System.nanoTime();
      for (int i = 0; i < n; i++) {
        long before = System.nanoTime();
        PersistentVolumeClaim made =
            client
                .persistentVolumeClaims()
                .inNamespace(target.namespace())
                .resource(
                    claim(
                        "c" + i, target.namespace(), target.className(), target.provisionerName()))
                .create();
        asked.put(Names.pvName(made.getMetadata().getUid()), before);
      }
      await("every PV", () -> arrived.keySet().containsAll(asked.keySet()), Duration.ofMinutes(10));
      long last = asked.keySet().stream().mapToLong(arrived::get).max().orElse(t0);
      List<Double> lat = new ArrayList<>();
      asked.forEach((pv, t) -> lat.add((arrived.get(pv) - t) / 1e6));
      pvs.close();
      c.close();
      return new Run(n / ((last - t0) / 1e9), lat);
    }
  }

  /**
   * Cinder's own time for what a claim needs of it, one volume at a time: create, wait until
   * available, attach to the cluster's connector (create + complete); then cleaned up, untimed.
   */
  static List<Double> cinderCreateAndAttachMs(CinderClient cinder, int k) {
    ProvisionerSettings s = settings("bench-base");
    List<Double> out = new ArrayList<>();
    for (int i = 0; i < k; i++) {
      long t0 = System.nanoTime();
      Volume v = cinder.createVolume(VolumeSpec.blank("bench-baseline-" + System.nanoTime(), 1));
      cinder.awaitVolumeStatus(v.id(), java.util.Set.of("available"), Backoff.DEFAULT);
      Attachment a = cinder.createAttachment(v.id(), s.connector());
      cinder.completeAttachment(a.id());
      out.add((System.nanoTime() - t0) / 1e6);
      cinder.deleteAttachment(a.id());
      cinder.awaitVolumeStatus(v.id(), java.util.Set.of("available"), Backoff.DEFAULT);
      cinder.deleteVolume(v.id());
      cinder.awaitVolumeDeleted(v.id(), Backoff.DEFAULT);
    }
    return out;
  }

  /** One claim at a time through the provisioner, each released (and its volume deleted) after. */
  static List<Double> sequentialClaimsMs(CinderClient cinder, int k) {
    return sequentialMs(cinder, k, false);
  }

  /**
   * As {@link #sequentialClaimsMs}, each claim a clone ({@code k8s.io/CloneRequest}, a class with
   * smartclone) of one bound source in its namespace: the provisioner's own part of a clone (the
   * request read, the source resolved and checked, protected while Cinder copies it, the claim
   * marked {@code k8s.io/CloneOf}) beside a plain claim's.
   */
  static List<Double> sequentialClonesMs(CinderClient cinder, int k) {
    return sequentialMs(cinder, k, true);
  }

  private static List<Double> sequentialMs(CinderClient cinder, int k, boolean clones) {
    KubernetesMockServer server = apiServer();
    List<Double> out = new ArrayList<>();
    try (KubernetesClient client = server.createClient()) {
      ClaimController c = controller(client, cinder, settings("bench-" + System.nanoTime()), 2);
      c.start();
      await("caches synced", c::synced, Duration.ofSeconds(30));
      createClass(client);
      if (clones) {
        createClass(client, CLONES, ProvisionerSettings.DEFAULT_NAME, Map.of("smartclone", "true"));
        boundSource(client, "bench");
      }
      for (int i = 0; i < k; i++) {
        PersistentVolumeClaim claim = claim("s" + i);
        if (clones) {
          claim.getSpec().setStorageClassName(CLONES);
          claim
              .getMetadata()
              .setAnnotations(
                  Map.of(
                      ClaimAnnotations.STORAGE_PROVISIONER,
                      ProvisionerSettings.DEFAULT_NAME,
                      ClaimAnnotations.CLONE_REQUEST,
                      SOURCE));
        }
        long t0 = System.nanoTime();
        PersistentVolumeClaim made =
            client.persistentVolumeClaims().inNamespace("bench").resource(claim).create();
        String pvName = Names.pvName(made.getMetadata().getUid());
        await(
            "PV of claim " + i,
            () -> client.persistentVolumes().withName(pvName).get() != null,
            Duration.ofMinutes(2));
        out.add((System.nanoTime() - t0) / 1e6);
        PersistentVolume pv = client.persistentVolumes().withName(pvName).get();
        client.persistentVolumeClaims().inNamespace("bench").withName("s" + i).delete();
        pv.setStatus(new PersistentVolumeStatusBuilder().withPhase("Released").build());
        client.persistentVolumes().resource(pv).updateStatus();
        await(
            "PV " + pvName + " torn down",
            () -> client.persistentVolumes().withName(pvName).get() == null,
            Duration.ofMinutes(2));
      }
      c.close();
      return out;
    } finally {
      destroy(server);
    }
  }
}
