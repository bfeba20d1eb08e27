package org.standalonecinder.provisioner.plugin;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.standalonecinder.api.ClaimAnnotations;
import org.standalonecinder.provisioner.cinder.FakeCinderClient;
import org.standalonecinder.provisioner.controller.ClaimController;
import org.standalonecinder.provisioner.controller.Cluster;
import org.standalonecinder.provisioner.provision.Fixtures;
import org.standalonecinder.provisioner.provision.Names;
import org.standalonecinder.provisioner.provision.ProvisionerSettings;

/**
 * Nothing waits for Cinder on a worker: with twice as many slow Cinder operations under way as the
 * claim loop has workers (two, {@link Cluster#controller}), another namespace's claim is
 * provisioned meanwhile, and each operation ends when Cinder's does. Copies are {@code
 * CloningTest}'s.
 */
class SlowCinderTest {

  private io.fabric8.kubernetes.client.server.mock.KubernetesMockServer server;
  private KubernetesClient client;
  private final FakeCinderClient cinder = new FakeCinderClient();
  private final ProvisionerSettings settings = Fixtures.settings();
  private ClaimController controller;

  @BeforeEach
  void start() {
    server = Cluster.newApiServer();
    client = server.createClient();
    controller =
        Cluster.controller(
            client,
            cinder,
            settings,
            new io.micrometer.core.instrument.simple.SimpleMeterRegistry());
    controller.start();
    await("informers synced", controller::synced);
    Cluster.createClass(client, "cinder", Map.of());
  }

  @AfterEach
  void stop() {
    controller.close();
    client.close();
    Cluster.destroy(server);
  }

  private static void await(String what, BooleanSupplier condition) {
    Cluster.await(what, condition, Duration.ofSeconds(10));
  }

  private PersistentVolume pvOf(PersistentVolumeClaim c) {
    return client.persistentVolumes().withName(Names.pvName(c.getMetadata().getUid())).get();
  }

  private static String volumeOf(PersistentVolume pv) {
    return pv.getMetadata().getAnnotations().get(ClaimAnnotations.VOLUME_ID);
  }

  /** A claim of class {@code cinder} in {@code namespace}, as Kubernetes has it. */
  private PersistentVolumeClaim claimIn(String namespace, String name) {
    return claimIn(namespace, name, "cinder");
  }

  private PersistentVolumeClaim claimIn(String namespace, String name, String className) {
    PersistentVolumeClaim c = Fixtures.claimOf(null, name, "1Gi", "Block");
    c.getMetadata()
        .setAnnotations(
            Map.of(ClaimAnnotations.STORAGE_PROVISIONER, ProvisionerSettings.DEFAULT_NAME));
    c.getSpec().setStorageClassName(className);
    return client.persistentVolumeClaims().inNamespace(namespace).resource(c).create();
  }

  /** A claim's PV once the provisioner has made it. */
  private PersistentVolume provisioned(PersistentVolumeClaim c) {
    await("the PV of " + c.getMetadata().getName(), () -> pvOf(c) != null);
    return pvOf(c);
  }

  /**
   * Cinder takes minutes to delete a large volume (LVM zeroes it). PVs released together, twice as
   * many as there are workers, each stay until Cinder has deleted their volume, which is asked once
   * and never waited for: another namespace's claim is provisioned meanwhile.
   */
  @Test
  void releasedPvsWhoseVolumesCinderIsSlowToDeleteHoldNoWorker() {
    List<PersistentVolume> released = new ArrayList<>();
    for (int i = 0; i < 2 * 2; i++) {
      released.add(provisioned(claimIn("apps", "old-" + i)));
    }
    await(
        "every volume handed to its PV",
        () ->
            released.stream()
                .allMatch(
                    pv ->
                        Names.STATE_PROVISIONED.equals(
                            cinder.volumes().get(volumeOf(pv)).metadata().get(Names.META_STATE))));
    cinder.slowDeletes();
    released.forEach(pv -> Cluster.release(client, pv));
    await(
        "Cinder deleting every volume",
        () ->
            released.stream()
                .allMatch(pv -> cinder.volumes().get(volumeOf(pv)).status().equals("deleting")));

    PersistentVolume other = provisioned(claimIn("other", "data"));
    assertThat(other).isNotNull();
    assertThat(released)
        .as("each PV kept while its volume is being deleted")
        .allMatch(
            pv -> client.persistentVolumes().withName(pv.getMetadata().getName()).get() != null);

    released.forEach(pv -> cinder.finishDeleting(volumeOf(pv)));
    await(
        "every released PV gone",
        () ->
            released.stream()
                .allMatch(
                    pv ->
                        client.persistentVolumes().withName(pv.getMetadata().getName()).get()
                            == null));
    assertThat(cinder.log()).noneMatch(l -> l.startsWith("awaitVolumeDeleted"));
    released.forEach(
        pv ->
            assertThat(cinder.log().stream().filter(l -> l.equals("deleteVolume " + volumeOf(pv))))
                .hasSize(1));
    assertThat(
            client.secrets().inNamespace(settings.secretNamespace()).list().getItems().stream()
                .map(s -> s.getMetadata().getName()))
        .as("only the other claim's CHAP Secret left")
        .hasSize(1);
  }

  /**
   * Cinder takes its time to grow a volume on some backends. Expansions asked together, twice as
   * many as there are workers, each end when Cinder's does (the PV and the claim grown, the extend
   * asked once), and hold no worker meanwhile: another namespace's claim is provisioned.
   */
  @Test
  void expansionsCinderIsSlowToFinishHoldNoWorker() {
    client
        .storage()
        .v1()
        .storageClasses()
        .resource(
            new io.fabric8.kubernetes.api.model.storage.StorageClassBuilder()
                .withNewMetadata()
                .withName("growing")
                .endMetadata()
                .withProvisioner(ProvisionerSettings.DEFAULT_NAME)
                .withReclaimPolicy("Delete")
                .withVolumeBindingMode("Immediate")
                .withAllowVolumeExpansion(true)
                .build())
        .create();
    List<PersistentVolume> grown = new ArrayList<>();
    for (int i = 0; i < 2 * 2; i++) {
      grown.add(Cluster.bind(client, claimIn("apps", "big-" + i, "growing")));
    }
    cinder.slowExtends();
    for (int i = 0; i < 2 * 2; i++) {
      client
          .persistentVolumeClaims()
          .inNamespace("apps")
          .withName("big-" + i)
          .edit(
              c -> {
                c.getSpec()
                    .getResources()
                    .getRequests()
                    .put("storage", new io.fabric8.kubernetes.api.model.Quantity("2Gi"));
                return c;
              });
    }
    await(
        "Cinder extending every volume",
        () ->
            grown.stream()
                .allMatch(pv -> cinder.volumes().get(volumeOf(pv)).status().equals("extending")));

    provisioned(claimIn("other", "data"));
    assertThat(grown)
        .as("not grown before Cinder has")
        .allMatch(pv -> Cluster.capacityOf(client, pv.getMetadata().getName()).equals(GIB_1));

    grown.forEach(pv -> cinder.finishExtending(volumeOf(pv)));
    await(
        "every PV grown",
        () ->
            grown.stream()
                .allMatch(
                    pv -> Cluster.capacityOf(client, pv.getMetadata().getName()).equals(GIB_2)));
    await(
        "every claim grown",
        () ->
            grown.stream()
                .allMatch(
                    pv ->
                        GIB_2.equals(
                            client
                                .persistentVolumeClaims()
                                .inNamespace("apps")
                                .withName(pv.getSpec().getClaimRef().getName())
                                .get()
                                .getStatus()
                                .getCapacity()
                                .get("storage"))));
    grown.forEach(
        pv ->
            assertThat(cinder.log().stream().filter(l -> l.equals("extendVolume " + volumeOf(pv))))
                .hasSize(1));
  }

  /**
   * Cinder takes seconds to export a volume while it copies for others (4 s a claim on the lab's
   * Cinder). One namespace's exports, twice as many as the workers, are held in Cinder: they hold
   * no worker, take at most their share of the export threads (one of two), and another namespace's
   * claim is provisioned meanwhile; each held claim is made the moment Cinder answers.
   */
  @Test
  void exportsCinderIsSlowToAnswerHoldNoWorkerNorAnotherNamespacesExport() throws Exception {
    controller.close();
    var open = new java.util.concurrent.CountDownLatch(1);
    var held = new java.util.concurrent.atomic.AtomicInteger();
    var slow =
        org.standalonecinder.provisioner.cinder.CinderDecorator.wrap(
            cinder,
            (operation, args, call) -> {
              if (operation.equals("createAttachment")
                  && "apps"
                      .equals(
                          cinder
                              .volumes()
                              .get((String) args[0])
                              .metadata()
                              .get(Names.META_PVC_NAMESPACE))) {
                held.incrementAndGet();
                try {
                  open.await(30, java.util.concurrent.TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                  Thread.currentThread().interrupt();
                }
                held.decrementAndGet();
              }
              return call.proceed();
            });
    controller =
        Cluster.controller(
            client, slow, settings, new io.micrometer.core.instrument.simple.SimpleMeterRegistry());
    controller.start();
    await("informers synced", controller::synced);
    List<PersistentVolumeClaim> apps = new ArrayList<>();
    for (int i = 0; i < 2 * 2; i++) {
      apps.add(claimIn("apps", "slow-" + i));
    }
    await("an export of apps held in Cinder", () -> held.get() == 1);

    provisioned(claimIn("other", "data"));
    assertThat(held.get()).as("apps' exports in Cinder at once: its share").isEqualTo(1);
    assertThat(apps).as("none made before Cinder answers").allMatch(c -> pvOf(c) == null);

    open.countDown();
    // Within the wait's 10 s: woken by each export's end, not by the timed look 30 s after it
    // began.
    apps.forEach(this::provisioned);
  }

  private static final io.fabric8.kubernetes.api.model.Quantity GIB_1 =
      new io.fabric8.kubernetes.api.model.Quantity("1Gi");
  private static final io.fabric8.kubernetes.api.model.Quantity GIB_2 =
      new io.fabric8.kubernetes.api.model.Quantity("2Gi");
}
