package org.standalonecinder.provisioner.plugin;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Clock;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.standalonecinder.api.ClaimAnnotations;
import org.standalonecinder.provisioner.cinder.Backoff;
import org.standalonecinder.provisioner.cinder.CinderClient;
import org.standalonecinder.provisioner.cinder.openstack.LocalCinder;
import org.standalonecinder.provisioner.cinder.openstack.LocalCinder.Mode;
import org.standalonecinder.provisioner.cinder.openstack.OpenStackCinderClient;
import org.standalonecinder.provisioner.controller.ClaimController;
import org.standalonecinder.provisioner.controller.Cluster;
import org.standalonecinder.provisioner.controller.EventRecorder;
import org.standalonecinder.provisioner.controller.RetryPolicy;
import org.standalonecinder.provisioner.mapping.RbdForm;
import org.standalonecinder.provisioner.mapping.RbdMapper;
import org.standalonecinder.provisioner.mapping.VolumeMappers;
import org.standalonecinder.provisioner.provision.Fixtures;
import org.standalonecinder.provisioner.provision.KubernetesSecretStore;
import org.standalonecinder.provisioner.provision.Names;
import org.standalonecinder.provisioner.provision.ProvisionerSettings;
import org.standalonecinder.provisioner.provision.VolumeProvisioner;

/**
 * The provisioner against the real Ceph-backed local Cinder (volume type {@code lab-rbd}, upstream
 * RBDDriver on a one-node Ceph) and fabric8's mock API server: PVs of both forms whose monitors,
 * pool, image and user are Ceph's own, read and written through librbd with nothing but the PV and
 * the Secret the provisioner wrote; a clone holds its source's bytes; the release removes the
 * images from Ceph and the shared Secret with the last PV that uses it.
 */
class RbdProvisionerIT {

  static final String NS = "standalone-cinder";
  static final String RBD_TYPE = "lab-rbd";

  private io.fabric8.kubernetes.client.server.mock.KubernetesMockServer server;
  private KubernetesClient client;
  private CinderClient cinder;
  private ClaimController controller;
  private String key;

  @BeforeEach
  void start() throws Exception {
    RbdProbe.lab();
    key = RbdProbe.labKey();
    server = Cluster.newApiServer();
    client = server.createClient();
    cinder = OpenStackCinderClient.create(LocalCinder.config(Mode.NOAUTH));
    ProvisionerSettings settings =
        Cluster.settings("it-rbd-" + UUID.randomUUID())
            .withRbd(
                new ProvisionerSettings.RbdDefaults(RbdForm.RBD, "cephx", "lab-ceph", null, null));
    controller =
        org.standalonecinder.provisioner.app.Wiring.build(
                client,
                cinder,
                new VolumeProvisioner(
                    cinder,
                    new KubernetesSecretStore(client),
                    VolumeMappers.standard(),
                    settings,
                    Backoff.DEFAULT.withDeadline(Duration.ofSeconds(60))),
                settings,
                new EventRecorder(client, "standalone-cinder", "it", Clock.systemUTC()),
                new RetryPolicy(Duration.ofMillis(200), Duration.ofSeconds(2), 10),
                2,
                Duration.ofSeconds(30),
                new io.micrometer.core.instrument.simple.SimpleMeterRegistry())
            .controller();
    controller.start();
    Cluster.await("synced", controller::synced, Duration.ofSeconds(10));
    // The admin's one step: the key of the user Cinder names, as `ceph auth get-key` prints it.
    client
        .secrets()
        .inNamespace(NS)
        .resource(
            new SecretBuilder()
                .withNewMetadata()
                .withName("cephx")
                .withNamespace(NS)
                .addToLabels("standalone-cinder.io/cephx", "true")
                .endMetadata()
                .withStringData(Map.of("key", key))
                .build())
        .create();
  }

  @AfterEach
  void stop() {
    if (controller != null) {
      controller.close();
    }
    if (cinder != null) {
      cinder.close();
    }
    if (client != null) {
      client.close();
      Cluster.destroy(server);
    }
  }

  private PersistentVolume awaitPv(PersistentVolumeClaim c) {
    String name = Names.pvName(c.getMetadata().getUid());
    Cluster.await(
        "PV of " + c.getMetadata().getName(),
        () -> client.persistentVolumes().withName(name).get() != null,
        Duration.ofSeconds(90));
    return client.persistentVolumes().withName(name).get();
  }

  private Secret secret(String namespace, String name) {
    return client.secrets().inNamespace(namespace).withName(name).get();
  }

  /** A node with only the in-tree PV and the Secret it names. */
  private RbdProbe inTreeNode(PersistentVolume pv) {
    var rbd = pv.getSpec().getRbd();
    Secret s = secret(rbd.getSecretRef().getNamespace(), rbd.getSecretRef().getName());
    assertThat(s.getType()).isEqualTo(RbdMapper.RBD_SECRET_TYPE);
    return new RbdProbe(
        rbd.getMonitors(),
        rbd.getPool(),
        rbd.getImage(),
        rbd.getUser(),
        RbdProbe.value(s, RbdMapper.KEY));
  }

  private void release(String claim, PersistentVolume pv) {
    client.persistentVolumeClaims().inNamespace("apps").withName(claim).delete();
    Cluster.release(client, pv);
    Cluster.await(
        "PV " + pv.getMetadata().getName() + " deleted",
        () -> client.persistentVolumes().withName(pv.getMetadata().getName()).get() == null,
        Duration.ofSeconds(90));
  }

  @Test
  void anRbdClaimAndItsCloneAreCephsImagesAndTheirReleaseRemovesImagesAndSecret() throws Exception {
    Cluster.createClass(
        client, "ceph", Map.of("type", RBD_TYPE, "fsType", "ext4", "smartclone", "true"));
    PersistentVolumeClaim src = Cluster.createClaim(client, "src", "ceph");
    PersistentVolume srcPv = awaitPv(src);
    String srcVolume = srcPv.getMetadata().getAnnotations().get(ClaimAnnotations.VOLUME_ID);

    var rbd = srcPv.getSpec().getRbd();
    assertThat(rbd.getMonitors()).isEqualTo(RbdProbe.labMonitors()).isNotEmpty();
    assertThat(rbd.getPool()).isEqualTo("volumes");
    assertThat(rbd.getImage()).isEqualTo("volume-" + srcVolume);
    assertThat(rbd.getUser()).isEqualTo(RbdProbe.lab().get("CEPH_CLIENT_ID"));
    assertThat(rbd.getFsType()).isEqualTo("ext4");
    assertThat(rbd.getSecretRef().getNamespace()).isEqualTo(NS);
    assertThat(RbdProbe.images("volumes")).contains("volume-" + srcVolume);

    // Bytes written with the PV's parameters and the provisioner's Secret read back identical.
    RbdProbe srcNode = inTreeNode(srcPv);
    RbdProbe.Result rw =
        srcNode.io(
            "write -P 0x5a 0 1M",
            "write -P 0xc3 1048576 4k",
            "read -P 0x5a 0 1M",
            "read -P 0xc3 1048576 4k",
            "read -P 0 1052672 4k");
    assertThat(rw.ok()).as(rw.output()).isTrue();
    RbdProbe.Result wrong =
        srcNode.withKey("AQBa1Fxm7c3kHBAAyZ3J0c2VjcmV0LWtleS1mb3ItdGVzdA==").io("read 0 4k");
    assertThat(wrong.ok()).as("a wrong cephx key is refused: " + wrong.output()).isFalse();

    // A clone: Cinder's RBD clone of the source's image, with the source's bytes.
    Cluster.bind(client, src);
    PersistentVolumeClaim wanted = Fixtures.claimOf(null, "copy", "1Gi", "Filesystem");
    wanted.getSpec().setStorageClassName("ceph");
    Map<String, String> ann = new HashMap<>();
    ann.put(ClaimAnnotations.STORAGE_PROVISIONER, ProvisionerSettings.DEFAULT_NAME);
    ann.put(ClaimAnnotations.CLONE_REQUEST, "apps/src");
    wanted.getMetadata().setAnnotations(ann);
    PersistentVolumeClaim copy =
        client.persistentVolumeClaims().inNamespace("apps").resource(wanted).create();
    PersistentVolume copyPv = awaitPv(copy);
    String copyVolume = copyPv.getMetadata().getAnnotations().get(ClaimAnnotations.VOLUME_ID);
    assertThat(cinder.getVolume(copyVolume))
        .get()
        .extracting(v -> v.sourceVolumeId())
        .isEqualTo(srcVolume);
    assertThat(copyPv.getSpec().getRbd().getSecretRef())
        .as("one Secret for both")
        .isEqualTo(rbd.getSecretRef());
    RbdProbe.Result read =
        inTreeNode(copyPv)
            .io("read -P 0x5a 0 1M", "read -P 0xc3 1048576 4k", "read -P 0 1052672 4k");
    assertThat(read.ok()).as(read.output()).isTrue();

    // Releases: each image goes from Ceph; the Secret stays while a PV uses it.
    Cluster.bind(client, copy);
    release("copy", copyPv);
    assertThat(RbdProbe.images("volumes"))
        .doesNotContain("volume-" + copyVolume)
        .contains("volume-" + srcVolume);
    assertThat(secret(NS, rbd.getSecretRef().getName())).as("the source still uses it").isNotNull();
    RbdProbe.Result still = srcNode.io("read -P 0x5a 0 1M");
    assertThat(still.ok()).as("the source is intact: " + still.output()).isTrue();

    release("src", client.persistentVolumes().withName(srcPv.getMetadata().getName()).get());
    assertThat(RbdProbe.images("volumes")).doesNotContain("volume-" + srcVolume);
    assertThat(cinder.getVolume(srcVolume)).isEmpty();
    assertThat(secret(NS, rbd.getSecretRef().getName())).as("no PV uses it").isNull();
    assertThat(secret(NS, "cephx")).as("the admin's Secret stays").isNotNull();
    assertThat(client.secrets().inNamespace("apps").list().getItems())
        .as("nothing is copied into the user's namespace")
        .isEmpty();
  }

  @Test
  void aCephCsiClassGetsAStaticCsiPvWhoseSecretAndAttributesReachTheImage() throws Exception {
    Cluster.createClass(
        client,
        "ceph-csi",
        Map.of("type", RBD_TYPE, "rbdForm", "csi", "cephClusterID", "lab-ceph"));
    PersistentVolumeClaim c = Cluster.createClaim(client, "data", "ceph-csi");
    PersistentVolume pv = awaitPv(c);
    String volume = pv.getMetadata().getAnnotations().get(ClaimAnnotations.VOLUME_ID);
    var csi = pv.getSpec().getCsi();
    assertThat(pv.getSpec().getRbd()).isNull();
    assertThat(csi.getDriver()).isEqualTo("rbd.csi.ceph.com");
    assertThat(csi.getVolumeHandle()).isEqualTo("volume-" + volume);
    assertThat(csi.getVolumeAttributes())
        .containsEntry("clusterID", "lab-ceph")
        .containsEntry("pool", "volumes")
        .containsEntry("staticVolume", "true");
    Secret s =
        secret(csi.getNodeStageSecretRef().getNamespace(), csi.getNodeStageSecretRef().getName());
    // ceph-csi's nodes take the monitors from their own config for the clusterID: here, Ceph's.
    RbdProbe node =
        new RbdProbe(
            RbdProbe.labMonitors(),
            csi.getVolumeAttributes().get("pool"),
            csi.getVolumeHandle(),
            RbdProbe.value(s, RbdMapper.CSI_USER_ID),
            RbdProbe.value(s, RbdMapper.CSI_USER_KEY));
    RbdProbe.Result rw = node.io("write -P 0x3c 0 64k", "read -P 0x3c 0 64k");
    assertThat(rw.ok()).as(rw.output()).isTrue();

    release("data", pv);
    assertThat(RbdProbe.images("volumes")).doesNotContain("volume-" + volume);
    assertThat(secret(NS, csi.getNodeStageSecretRef().getName())).isNull();
    assertThat(List.of(secret(NS, "cephx"))).doesNotContainNull();
  }

  /**
   * ReadWriteMany on Ceph: a multiattach type's image has no exclusive-lock (Cinder takes it off),
   * the ceph-csi form gives a ReadWriteMany block PV whose image two clients write and read at
   * once, and the in-tree form is refused with the volume undone.
   */
  @Test
  void aReadWriteManyCephClaimNeedsCephCsiAndGetsAnImageWithoutExclusiveLock() throws Exception {
    String type = RbdProbe.lab().get("CINDER_RBD_MULTIATTACH_TYPE");
    assertThat(type).as("dev/cinder-local/start.sh makes an RBD multiattach type").isNotNull();
    Cluster.createClass(
        client, "shared-csi", Map.of("type", type, "rbdForm", "csi", "cephClusterID", "lab-ceph"));
    Cluster.createClass(client, "shared-rbd", Map.of("type", type, "rbdForm", "rbd"));
    PersistentVolumeClaim c = rwxBlock("shared", "shared-csi");
    PersistentVolumeClaim refused = rwxBlock("refused", "shared-rbd");
    PersistentVolume pv = awaitPv(c);
    String volume = pv.getMetadata().getAnnotations().get(ClaimAnnotations.VOLUME_ID);
    assertThat(pv.getSpec().getAccessModes()).containsExactly("ReadWriteMany");
    assertThat(pv.getSpec().getCsi().getReadOnly()).isFalse();
    assertThat(RbdProbe.features("volumes", "volume-" + volume))
        .contains("layering")
        .doesNotContain("exclusive-lock", "object-map", "fast-diff");
    var csi = pv.getSpec().getCsi();
    Secret s =
        secret(csi.getNodeStageSecretRef().getNamespace(), csi.getNodeStageSecretRef().getName());
    RbdProbe node =
        new RbdProbe(
            RbdProbe.labMonitors(),
            "volumes",
            csi.getVolumeHandle(),
            RbdProbe.value(s, RbdMapper.CSI_USER_ID),
            RbdProbe.value(s, RbdMapper.CSI_USER_KEY));
    // Two clients with the image open at once, each reading what the other wrote.
    var a =
        Cluster.background(
            () -> node.io("write -P 0xa1 0 64k", "sleep 4000", "read -P 0xb2 64k 64k"));
    // b starts once a's write is there to see (a then holds the image open for 4 s more).
    Cluster.await(
        "client a's write, seen by client b",
        () -> {
          try {
            return node.io("read -P 0xa1 0 64k").ok();
          } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
          }
        },
        java.time.Duration.ofSeconds(3));
    RbdProbe.Result b = node.io("write -P 0xb2 64k 64k", "read -P 0xa1 0 64k");
    assertThat(b.ok()).as("client b: " + b.output()).isTrue();
    RbdProbe.Result aSaw = a.get(60, java.util.concurrent.TimeUnit.SECONDS);
    assertThat(aSaw.ok()).as("client a: " + aSaw.output()).isTrue();

    Cluster.await(
        "the in-tree refusal",
        () ->
            client.events().v1().events().inAnyNamespace().list().getItems().stream()
                .anyMatch(
                    e ->
                        e.getRegarding().getName().equals("refused")
                            && e.getNote()
                                .contains("ReadWriteMany on Ceph needs the csi form of RBD")),
        java.time.Duration.ofSeconds(60));
    assertThat(
            client.persistentVolumes().withName(Names.pvName(refused.getMetadata().getUid())).get())
        .isNull();
    release("shared", pv);
    assertThat(RbdProbe.images("volumes")).doesNotContain("volume-" + volume);
  }

  private PersistentVolumeClaim rwxBlock(String name, String className) {
    PersistentVolumeClaim c =
        org.standalonecinder.provisioner.provision.Fixtures.claimOf(
            null, name, "1Gi", "Block", "ReadWriteMany");
    c.getMetadata()
        .setAnnotations(
            Map.of(
                ClaimAnnotations.STORAGE_PROVISIONER,
                org.standalonecinder.provisioner.provision.ProvisionerSettings.DEFAULT_NAME));
    c.getSpec().setStorageClassName(className);
    return client.persistentVolumeClaims().inNamespace("apps").resource(c).create();
  }
}
