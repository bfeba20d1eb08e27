package org.standalonecinder.provisioner.node;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.PersistentVolumeBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaimBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.standalonecinder.api.ClaimAnnotations;
import org.standalonecinder.provisioner.controller.Cluster;
import org.standalonecinder.provisioner.expansion.Resize;
import org.standalonecinder.provisioner.host.Host;

/**
 * Passes as the node component runs them: a node with one claim's filesystem mounted for two Pods
 * (its device {@code 8:16}), grown by Cinder while the passes go on.
 */
class NodeGrowthTest {

  private static final long GIB = 1L << 30;
  private static final String DIR = "/var/lib/kubelet/pods/%s/volumes/kubernetes.io~iscsi/pvc-1";

  @TempDir Path root;
  private KubernetesMockServer server;
  private KubernetesClient client;
  private List<String> ran;
  private List<KubeletMounts.Mount> rawDevices = List.of();
  private final List<String> said = new ArrayList<>();

  /** The filesystem's size: what the device had when resize2fs last ran. */
  private final Map<String, Long> filesystem = new HashMap<>();

  private NodeGrowth growth;

  @BeforeEach
  void node() throws IOException {
    server = Cluster.newApiServer();
    try (KubernetesClient first = server.createClient()) {
      // A refused request fails at once instead of being tried again for half a minute.
      client =
          new KubernetesClientBuilder()
              .withConfig(
                  new ConfigBuilder(first.getConfiguration())
                      .withRequestRetryBackoffLimit(0)
                      .build())
              .build();
    }
    Path sdb = Files.createDirectories(root.resolve("sys/dev/block/8:16/device"));
    Files.writeString(sdb.resolve("rescan"), "");
    device(1);
    filesystem.put("/dev/sdb", GIB);
    RecordingHost host =
        new RecordingHost(
            c -> {
              filesystem.put(c.argv().get(1), deviceBytes());
              return new Host.Result(0, "");
            });
    ran = host.ran;
    String mounts =
        String.join(
            "\n",
            "600 29 8:16 / " + DIR.formatted("pod-a") + " rw - ext4 /dev/sdb rw",
            "601 29 8:16 / " + DIR.formatted("pod-b") + " rw - ext4 /dev/sdb rw");
    growth =
        new NodeGrowth(
            () -> mounts,
            () -> rawDevices,
            new FilesystemGrower(host, root, mountPoint -> filesystem.get("/dev/sdb")),
            new ClaimResizeCompletion(client, "node-1", Clock.systemUTC()),
            said::add,
            false);
  }

  @AfterEach
  void stop() {
    client.close();
    Cluster.destroy(server);
  }

  private void device(int gib) throws IOException {
    Files.writeString(root.resolve("sys/dev/block/8:16/size"), String.valueOf(gib * GIB / 512));
  }

  private long deviceBytes() {
    try {
      return Long.parseLong(Files.readString(root.resolve("sys/dev/block/8:16/size")).strip())
          * 512;
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  /** The claim bound to pvc-1, and the PV at {@code gib}; waiting for its filesystem or not. */
  private void claim(int pvGib, boolean waiting) {
    PersistentVolumeClaim c =
        client
            .persistentVolumeClaims()
            .resource(
                new PersistentVolumeClaimBuilder()
                    .withNewMetadata()
                    .withNamespace("team")
                    .withName("data")
                    .endMetadata()
                    .withNewSpec()
                    .withVolumeName("pvc-1")
                    .endSpec()
                    .build())
            .createOr(x -> x.update());
    client
        .persistentVolumeClaims()
        .inNamespace("team")
        .withName("data")
        .editStatus(
            x -> {
              x.setStatus(
                  new io.fabric8.kubernetes.api.model.PersistentVolumeClaimStatusBuilder()
                      .withPhase("Bound")
                      .addToCapacity("storage", new Quantity("1Gi"))
                      .build());
              if (waiting) {
                x.getStatus()
                    .getConditions()
                    .add(
                        new io.fabric8.kubernetes.api.model.PersistentVolumeClaimConditionBuilder()
                            .withType(Resize.FS_PENDING)
                            .withStatus("True")
                            .build());
              }
              return x;
            });
    client
        .persistentVolumes()
        .resource(
            new PersistentVolumeBuilder()
                .withNewMetadata()
                .withName("pvc-1")
                .addToAnnotations(ClaimAnnotations.VOLUME_ID, "vol-1")
                .endMetadata()
                .withNewSpec()
                .addToCapacity("storage", new Quantity(pvGib + "Gi"))
                .withNewClaimRef()
                .withNamespace("team")
                .withName("data")
                .withUid(c.getMetadata().getUid())
                .endClaimRef()
                .endSpec()
                .build())
        .createOr(x -> x.update());
  }

  /** A PV of that name, with the Cinder volume's annotation or without (an admin's own). */
  private void pv(String name, boolean cinders) {
    PersistentVolumeBuilder pv =
        new PersistentVolumeBuilder().withNewMetadata().withName(name).endMetadata();
    if (cinders) {
      pv.editMetadata().addToAnnotations(ClaimAnnotations.VOLUME_ID, "vol-" + name).endMetadata();
    }
    client.persistentVolumes().resource(pv.build()).createOr(x -> x.update());
  }

  private Quantity status() {
    return client
        .persistentVolumeClaims()
        .inNamespace("team")
        .withName("data")
        .get()
        .getStatus()
        .getCapacity()
        .get("storage");
  }

  @Test
  void aQuietNodeAsksTheApiServerNothingAfterItsFirstPass() throws IOException {
    claim(1, false);

    growth.pass(List.of());
    int afterFirst = server.getRequestCount();
    growth.pass(List.of());
    growth.pass(List.of());

    assertThat(server.getRequestCount()).isEqualTo(afterFirst);
    assertThat(ran)
        .as("one device for two Pods, grown on the first pass only: it did not change since")
        .containsExactly("resize2fs /dev/sdb");
    assertThat(Files.readString(root.resolve("sys/dev/block/8:16/device/rescan")))
        .as("but rescanned")
        .isEqualTo("1");
    assertThat(said)
        .as("what it watches, said once")
        .containsExactly(
            "pvc-1 (/dev/sdb, ext4, mounted for 2 Pods): fills its device already (device 1.00"
                + " GiB, SCSI rescan)");
  }

  @Test
  void aDeviceThatGrewBeforeItsClaimSaidSoIsFinishedOnceTheClaimWaits() throws IOException {
    claim(1, false);
    growth.pass(List.of());

    // Cinder extended the volume; the node sees it before the provisioner marks the claim.
    device(3);
    growth.pass(List.of());
    assertThat(filesystem.get("/dev/sdb")).isEqualTo(3 * GIB);
    assertThat(status()).isEqualTo(new Quantity("1Gi"));

    claim(3, true);
    growth.pass(List.of());

    assertThat(status()).isEqualTo(new Quantity("3Gi"));
    assertThat(said)
        .anyMatch(s -> s.startsWith("pvc-1 (/dev/sdb, ext4, mounted for 2 Pods): grown:"))
        .anyMatch(s -> s.equals("team/data: grown to 3Gi"));
  }

  @Test
  void aClaimThatGrewBeforeARestartIsFinishedByTheFirstPass() throws IOException {
    device(3);
    filesystem.put("/dev/sdb", 3 * GIB);
    claim(3, true);

    growth.pass(List.of());

    assertThat(status()).isEqualTo(new Quantity("3Gi"));
  }

  @Test
  void aRawBlockVolumeIsRescannedEachPassAndItsGrowthSaid() throws IOException {
    Path sdc = Files.createDirectories(root.resolve("sys/dev/block/8:32/device"));
    Files.writeString(sdc.resolve("rescan"), "");
    Files.writeString(sdc.resolveSibling("size"), String.valueOf(GIB / 512));
    rawDevices =
        List.of(
            new KubeletMounts.Mount(
                "pvc-raw",
                "iscsi",
                "pod-c",
                "/var/lib/kubelet/pods/pod-c/volumeDevices/x",
                "/dev/sdc",
                "8:32",
                ""));
    claim(1, false);
    pv("pvc-raw", true);
    growth.pass(List.of());
    int requests = server.getRequestCount();

    Files.writeString(sdc.resolveSibling("size"), String.valueOf(3 * GIB / 512));
    Files.writeString(sdc.resolve("rescan"), "");
    growth.pass(List.of());

    assertThat(Files.readString(sdc.resolve("rescan"))).isEqualTo("1");
    assertThat(said)
        .contains("pvc-raw (/dev/sdc, raw block for 1 Pod): device 1.00 GiB")
        .endsWith("pvc-raw (/dev/sdc, raw block for 1 Pod): device 1.00 GiB -> 3.00 GiB");
    assertThat(ran).as("no tool for a raw device").containsExactly("resize2fs /dev/sdb");
    assertThat(server.getRequestCount()).as("its claim is the provisioner's").isEqualTo(requests);
  }

  @Test
  void anAdminsOwnPvIsNeitherRescannedNorGrownNorAskedAboutAgain() throws IOException {
    claim(1, false);
    // The same mount, but the PV is not a Cinder volume's: e.g. a filesystem its admin made
    // smaller than the LUN on purpose.
    pv("pvc-1", false);
    device(3);

    growth.pass(List.of());
    int requests = server.getRequestCount();
    growth.pass(List.of());

    assertThat(ran).isEmpty();
    assertThat(Files.readString(root.resolve("sys/dev/block/8:16/device/rescan"))).isEmpty();
    assertThat(said).containsExactly("pvc-1 (/dev/sdb): not a Cinder volume's PV; left alone");
    assertThat(server.getRequestCount()).as("looked up once").isEqualTo(requests);
  }

  @Test
  void aPvThatCannotBeLookedUpIsLeftForTheNextPass() {
    claim(1, false);
    // The API server gone (or the node's credentials refused): the PV is not known to be Cinder's.
    Cluster.destroy(server);

    NodeGrowth.Pass pass = growth.pass(List.of());

    assertThat(pass.failed()).isEqualTo(1);
    assertThat(ran).isEmpty();
    assertThat(said).singleElement().asString().startsWith("pvc-1: not looked up (tried again)");
  }

  @Test
  void aPvAskedForThatIsNotMountedHereIsSaid() {
    claim(1, false);

    NodeGrowth.Pass pass = growth.pass(List.of("pvc-1", "pvc-elsewhere"));

    assertThat(pass.notMounted()).containsExactly("pvc-elsewhere");
    assertThat(pass.failed()).isZero();
  }
}
