package org.standalonecinder.provisioner.expansion;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.CSIPersistentVolumeSourceBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaimCondition;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.RBDPersistentVolumeSourceBuilder;
import io.fabric8.kubernetes.api.model.storage.StorageClassBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.standalonecinder.provisioner.cinder.CinderException;
import org.standalonecinder.provisioner.cinder.FakeCinderClient;
import org.standalonecinder.provisioner.cinder.Microversion;
import org.standalonecinder.provisioner.controller.ClaimController;
import org.standalonecinder.provisioner.controller.Cluster;
import org.standalonecinder.provisioner.provision.Fixtures;
import org.standalonecinder.provisioner.provision.ProvisionerSettings;

/**
 * A bound claim whose request grows from 1 Gi to 2 Gi, through the controller on fabric8's mock API
 * server and the fake Cinder: what Cinder is asked, what the PV and the claim's status become, and
 * what the claim is told.
 */
class ExpansionTest {

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
    Cluster.await("informers synced", controller::synced, Duration.ofSeconds(10));
  }

  @AfterEach
  void stop() {
    controller.close();
    client.close();
    Cluster.destroy(server);
  }

  /**
   * What the test expects once the claim asked for 2 Gi: whether Cinder was asked to extend, the
   * PV's and the claim's capacity, the claim's one condition, and the event that says why.
   */
  record Expect(
      boolean extended,
      String pvCapacity,
      String statusCapacity,
      String condition,
      String event,
      String says) {}

  static Arguments row(
      String name, boolean allowed, String mode, Consumer<FakeCinderClient> before, Expect expect) {
    return row(name, allowed, mode, "iscsi", before, expect);
  }

  /** A row whose PV has this source: iscsi (what the fake Cinder exports), rbd or csi. */
  static Arguments row(
      String name,
      boolean allowed,
      String mode,
      String source,
      Consumer<FakeCinderClient> before,
      Expect expect) {
    return Arguments.of(name, allowed, mode, source, before, expect);
  }

  static Stream<Arguments> expansions() {
    Consumer<FakeCinderClient> nothing = c -> {};
    return Stream.of(
        row(
            "filesystem: volume and PV grown, the node's part pending and said how",
            true,
            "Filesystem",
            nothing,
            new Expect(
                true,
                "2Gi",
                "1Gi",
                Resize.FS_PENDING,
                "FileSystemResizeRequired",
                "standalone-cinder grow-filesystems --pv ")),
        row(
            "raw block: volume and PV grown, the claim's capacity follows",
            true,
            "Block",
            nothing,
            new Expect(true, "2Gi", "2Gi", null, "VolumeResizeSuccessful", "rescans")),
        row(
            "class without allowVolumeExpansion: refused, nothing grown",
            false,
            "Filesystem",
            nothing,
            new Expect(false, "1Gi", "1Gi", null, Resize.FAILED, "allowVolumeExpansion")),
        row(
            "Cinder older than 3.42: refused while attached, nothing grown",
            true,
            "Block",
            c -> c.microversion(new Microversion(3, 41)),
            new Expect(false, "1Gi", "1Gi", null, Resize.FAILED, "3.42 is needed")),
        row(
            "backend refuses: told in Cinder's words, nothing grown",
            true,
            "Block",
            c ->
                c.failNext(
                    "extendVolume",
                    () ->
                        new CinderException.BadRequest(
                            "Invalid volume: the backend cannot extend", 400, "req-x")),
            new Expect(true, "1Gi", "1Gi", null, Resize.FAILED, "backend cannot extend")),
        row(
            "an earlier attempt grew the volume and died: finished without a second extend",
            true,
            "Block",
            c -> c.extendVolume("vol-1", 2),
            new Expect(false, "2Gi", "2Gi", null, "VolumeResizeSuccessful", "rescans")),
        row(
            "in-tree rbd PV: refused, nothing grown (Kubernetes' expand controller takes it too)",
            true,
            "Filesystem",
            "rbd",
            nothing,
            new Expect(false, "1Gi", "1Gi", null, Resize.FAILED, "controller-manager")),
        row(
            "ceph-csi PV: refused, nothing grown",
            true,
            "Filesystem",
            "csi",
            nothing,
            new Expect(false, "1Gi", "1Gi", null, Resize.FAILED, "ceph-csi PVs")));
  }

  /**
   * The attack from a node: a claim's status (a node may write its Pods' claims' status) says more
   * than any number of GiB an int holds. The look says whether the claim wants growing, and never
   * throws: it once did for every look at such a claim, for good.
   */
  @ParameterizedTest(name = "{0}")
  @org.junit.jupiter.params.provider.CsvSource(
      delimiter = '|',
      value = {
        "a status of 2^31 GiB from a node: nothing wanted | 1Gi | 1Gi | 2147483648Gi | false",
        "a status of 8 EiB: nothing wanted | 1Gi | 1Gi | 8Ei | false",
        "a request past any int of GiB: wanted, refused by the bound | 9Ei | 1Gi | 1Gi | true",
        "a status behind its PV: wanted | 2Gi | 2Gi | 1Gi | true",
        "request, PV and status alike: nothing wanted | 1Gi | 1Gi | 1Gi | false",
        "a status of 1e300000000 (300 million digits): nothing wanted | 1Gi | 1Gi | 1e300000000"
            + " | false",
        "a request of 1e300000000: wanted, refused by the bound | 1e300000000 | 1Gi | 1Gi | true",
      })
  @org.junit.jupiter.api.Timeout(20)
  void whetherAClaimWantsGrowingIsToldForAnySize(
      String name, String request, String pvCapacity, String status, boolean wanted) {
    var claim =
        new io.fabric8.kubernetes.api.model.PersistentVolumeClaimBuilder()
            .withNewSpec()
            .withNewResources()
            .addToRequests("storage", new Quantity(request))
            .endResources()
            .endSpec()
            .withNewStatus()
            .withPhase("Bound")
            .addToCapacity("storage", new Quantity(status))
            .endStatus()
            .build();
    var pv =
        new io.fabric8.kubernetes.api.model.PersistentVolumeBuilder()
            .withNewSpec()
            .addToCapacity("storage", new Quantity(pvCapacity))
            .endSpec()
            .build();
    assertThat(ClaimExpansion.wanted(claim, pv)).isEqualTo(wanted);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("expansions")
  void aClaimAskingForMoreGetsIt(
      String name,
      boolean allowed,
      String mode,
      String source,
      Consumer<FakeCinderClient> before,
      Expect expect) {
    PersistentVolume pv = withSource(boundClaim(allowed, mode, Map.of()), source);
    before.accept(cinder);
    cinder.clearLog();
    ask("2Gi");

    Cluster.await(
        "the claim told " + expect.event(),
        () -> events().stream().anyMatch(e -> e.startsWith(expect.event() + ": ")),
        Duration.ofSeconds(30));
    String said =
        events().stream().filter(e -> e.startsWith(expect.event() + ": ")).findFirst().get();
    assertThat(said).contains(expect.says());
    assertThat(cinder.log().contains("extendVolume vol-1")).isEqualTo(expect.extended());
    assertThat(cinder.volumes().get("vol-1").sizeGib())
        .isEqualTo(expect.pvCapacity().equals("2Gi") ? 2 : 1);
    assertThat(Cluster.capacityOf(client, pv.getMetadata().getName()))
        .isEqualTo(new Quantity(expect.pvCapacity()));
    PersistentVolumeClaim now = claimResource().get();
    assertThat(now.getStatus().getCapacity().get("storage"))
        .isEqualTo(new Quantity(expect.statusCapacity()));
    List<String> conditions =
        now.getStatus().getConditions() == null
            ? List.of()
            : now.getStatus().getConditions().stream()
                .map(PersistentVolumeClaimCondition::getType)
                .toList();
    assertThat(conditions)
        .isEqualTo(expect.condition() == null ? List.of() : List.of(expect.condition()));
  }

  /**
   * The bound on a volume's size holds for growing too, and is checked before Cinder is asked: a
   * tenant's resize must not take the project's quota (nor a size past what a long holds).
   */
  @ParameterizedTest(name = "{0}")
  @org.junit.jupiter.params.provider.CsvSource(
      delimiter = '|',
      value = {
        "past the class's maxSizeGiB | 1 | 2Gi | growing to 2Gi is refused: StorageClass cinder"
            + " allows at most 1 GiB a volume (parameter maxSizeGiB); the volume stays at 1 GiB",
        "past the provisioner's 64 TiB | | 65537Gi | growing to 65537Gi is refused: the largest"
            + " volume is 65536 GiB",
        "past what a number of GiB can hold | | 1000000000000Ei | growing to 1000000000000Ei is"
            + " refused: the largest volume is 65536 GiB",
      })
  void growingPastTheBoundIsRefusedBeforeCinderIsAsked(
      String name, String maxSizeGib, String request, String says) {
    boundClaim(true, "Block", maxSizeGib == null ? Map.of() : Map.of("maxSizeGiB", maxSizeGib));
    cinder.clearLog();
    ask(request);
    Cluster.await(
        "the claim told why",
        () -> events().stream().anyMatch(e -> e.startsWith(Resize.FAILED + ": ")),
        Duration.ofSeconds(10));
    assertThat(events()).anyMatch(e -> e.contains(says));
    assertThat(cinder.log()).as("nothing asked of Cinder").isEmpty();
    assertThat(cinder.volumes().get("vol-1").sizeGib()).isEqualTo(1);
  }

  /** A claim of 1Gi of a class with these parameters, bound to its volume, in use. */
  private PersistentVolume boundClaim(boolean allowed, String mode, Map<String, String> params) {
    client
        .storage()
        .v1()
        .storageClasses()
        .resource(
            new StorageClassBuilder()
                .withNewMetadata()
                .withName("cinder")
                .endMetadata()
                .withProvisioner(ProvisionerSettings.DEFAULT_NAME)
                .withParameters(params)
                .withReclaimPolicy("Delete")
                .withVolumeBindingMode("Immediate")
                .withAllowVolumeExpansion(allowed)
                .build())
        .create();
    PersistentVolumeClaim c =
        Cluster.createClaim(
            client, "data", "cinder", ProvisionerSettings.DEFAULT_NAME, mode, Map.of());
    PersistentVolume pv = Cluster.bind(client, c);
    Cluster.await(
        "the volume in use",
        () -> cinder.volumes().get("vol-1").status().equals("in-use"),
        Duration.ofSeconds(10));
    return pv;
  }

  /** The PV as the provisioner makes it from a Ceph volume: in-tree rbd or ceph-csi. */
  private PersistentVolume withSource(PersistentVolume pv, String source) {
    if (source.equals("iscsi")) {
      return pv;
    }
    PersistentVolume changed =
        client
            .persistentVolumes()
            .withName(pv.getMetadata().getName())
            .edit(
                p -> {
                  p.getSpec().setIscsi(null);
                  if (source.equals("rbd")) {
                    p.getSpec()
                        .setRbd(
                            new RBDPersistentVolumeSourceBuilder()
                                .withMonitors("10.0.0.1:6789")
                                .withPool("volumes")
                                .withImage("volume-vol-1")
                                .build());
                  } else {
                    p.getSpec()
                        .setCsi(
                            new CSIPersistentVolumeSourceBuilder()
                                .withDriver("rbd.csi.ceph.com")
                                .withVolumeHandle("vol-1")
                                .build());
                  }
                  return p;
                });
    // A real API server keeps a PV's source as it was made; only this test changes one, so the
    // controller's cache must have the change before the claim asks (a CI run under load once
    // grew a PV its cache still saw as iSCSI; a fixed sleep of 1 s was not enough).
    Cluster.awaitCached(controller, changed);
    return changed;
  }

  /**
   * The user's edit of the request, tried again on a conflict as kubectl's would be: the
   * provisioner may write the claim between the edit's read and its write.
   */
  private void ask(String size) {
    for (int attempt = 1; ; attempt++) {
      try {
        claimResource()
            .edit(
                x -> {
                  x.getSpec().getResources().getRequests().put("storage", new Quantity(size));
                  return x;
                });
        return;
      } catch (io.fabric8.kubernetes.client.KubernetesClientException e) {
        if (e.getCode() != 409 || attempt == 5) {
          throw e;
        }
      }
    }
  }

  private io.fabric8.kubernetes.client.dsl.Resource<PersistentVolumeClaim> claimResource() {
    return client.persistentVolumeClaims().inNamespace("apps").withName("data");
  }

  private List<String> events() {
    return client.events().v1().events().inAnyNamespace().list().getItems().stream()
        .filter(e -> e.getRegarding().getName().equals("data"))
        .map(e -> e.getReason() + ": " + e.getNote())
        .toList();
  }
}
