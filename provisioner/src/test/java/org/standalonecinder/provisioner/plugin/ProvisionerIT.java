package org.standalonecinder.provisioner.plugin;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.TypedLocalObjectReference;
import io.fabric8.kubernetes.api.model.TypedObjectReference;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.standalonecinder.api.ClaimAnnotations;
import org.standalonecinder.provisioner.cinder.Backoff;
import org.standalonecinder.provisioner.cinder.CinderClient;
import org.standalonecinder.provisioner.cinder.openstack.LocalCinder;
import org.standalonecinder.provisioner.cinder.openstack.LocalCinder.Mode;
import org.standalonecinder.provisioner.cinder.openstack.OpenStackCinderClient;
import org.standalonecinder.provisioner.controller.ClaimController;
import org.standalonecinder.provisioner.controller.Cluster;
import org.standalonecinder.provisioner.controller.EventRecorder;
import org.standalonecinder.provisioner.controller.Processed;
import org.standalonecinder.provisioner.controller.RetryPolicy;
import org.standalonecinder.provisioner.diagnostics.IscsiProbe;
import org.standalonecinder.provisioner.expansion.Resize;
import org.standalonecinder.provisioner.mapping.IscsiMapper;
import org.standalonecinder.provisioner.mapping.VolumeMappers;
import org.standalonecinder.provisioner.provision.Fixtures;
import org.standalonecinder.provisioner.provision.KubernetesSecretStore;
import org.standalonecinder.provisioner.provision.Names;
import org.standalonecinder.provisioner.provision.ProvisionerSettings;
import org.standalonecinder.provisioner.provision.VolumeProvisioner;

/**
 * The whole provisioner against the real local Cinder (and fabric8's mock API server): a claim
 * becomes a PV whose iSCSI fields and CHAP Secret let a real initiator log in, write and read; its
 * release deletes the volume, and the target then refuses the login.
 */
class ProvisionerIT {

  private io.fabric8.kubernetes.client.server.mock.KubernetesMockServer server;
  private KubernetesClient client;

  private CinderClient cinder;
  private ClaimController controller;
  private Processed processed;

  private void start(Mode mode) {
    start(mode, null);
  }

  private void start(Mode mode, Gate gate) {
    server = Cluster.newApiServer();
    client = server.createClient();
    cinder = OpenStackCinderClient.create(LocalCinder.config(mode));
    // The provisioner's client may hold clones at a gate; the test's own stays direct.
    CinderClient forProvisioner =
        gate == null ? cinder : gate.around(cinder, v -> v.sourceVolumeId() != null);
    ProvisionerSettings settings = Cluster.settings("it-" + mode + "-" + UUID.randomUUID());
    controller =
        org.standalonecinder.provisioner.app.Wiring.build(
                client,
                forProvisioner,
                new VolumeProvisioner(
                    forProvisioner,
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
    processed = Processed.by(controller);
    controller.start();
    await("synced", controller::synced, Duration.ofSeconds(10));
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

  static void await(String what, BooleanSupplier condition, Duration timeout) {
    Cluster.await(what, condition, timeout);
  }

  @ParameterizedTest(name = "{0}")
  @EnumSource(
      value = Mode.class,
      names = {"NOAUTH", "KEYSTONE"})
  void aClaimBecomesAnIscsiPvANodeCanUseAndItsReleaseDeletesAll(Mode mode) throws Exception {
    start(mode);
    Cluster.createClass(client, "cinder", Map.of("fsType", "ext4"));
    PersistentVolumeClaim c = Cluster.createClaim(client, "data", "cinder");
    String pvName = Names.pvName(c.getMetadata().getUid());
    await(
        "PV",
        () -> client.persistentVolumes().withName(pvName).get() != null,
        Duration.ofSeconds(60));
    PersistentVolume pv = client.persistentVolumes().withName(pvName).get();
    String volumeId = pv.getMetadata().getAnnotations().get(ClaimAnnotations.VOLUME_ID);
    assertThat(cinder.getVolume(volumeId)).get().extracting(v -> v.status()).isEqualTo("in-use");

    var iscsi = pv.getSpec().getIscsi();
    Secret chap =
        client
            .secrets()
            .inNamespace(iscsi.getSecretRef().getNamespace())
            .withName(iscsi.getSecretRef().getName())
            .get();
    assertThat(chap.getType()).isEqualTo(IscsiMapper.CHAP_SECRET_TYPE);
    IscsiProbe.Target node = IscsiProbe.Target.of(iscsi, chap);

    // A node logs in with what the PV says, writes a pattern and reads it back.
    IscsiProbe.Result rw =
        node.io(
            "write -P 0x5a 0 1M",
            "write -P 0xc3 1048576 4k",
            "read -P 0x5a 0 1M",
            "read -P 0xc3 1048576 4k",
            "read -P 0 1052672 4k");
    assertThat(rw.ok()).as(rw.output()).isTrue();
    IscsiProbe.Result wrong = node.withPassword("not-the-secret").io("read 0 4k");
    assertThat(wrong.ok()).as("a wrong CHAP secret is refused").isFalse();

    // The claim goes; Kubernetes' binder (absent from the mock) releases the PV.
    client.persistentVolumeClaims().inNamespace("apps").withName("data").delete();
    Cluster.release(client, pv);
    await(
        "PV deleted",
        () -> client.persistentVolumes().withName(pvName).get() == null,
        Duration.ofSeconds(60));
    assertThat(cinder.getVolume(volumeId)).isEmpty();
    assertThat(client.secrets().inNamespace("standalone-cinder").list().getItems()).isEmpty();
    IscsiProbe.Result after = node.io("read 0 4k");
    assertThat(after.ok()).as("the target is gone: " + after.output()).isFalse();
  }

  /** How a clone is asked for. */
  enum Ask {
    ANNOTATION,
    DATA_SOURCE
  }

  @ParameterizedTest(name = "{0}")
  @EnumSource(Ask.class)
  void aCloneHoldsTheSourcesDataAndTheSourceCannotGoWhileItIsMade(Ask ask) throws Exception {
    Gate gate = new Gate();
    start(Mode.NOAUTH, gate);
    Cluster.createClass(client, "clones", Map.of("fsType", "ext4", "smartclone", "true"));
    PersistentVolumeClaim src = Cluster.createClaim(client, "src", "clones");
    String srcPvName = Names.pvName(src.getMetadata().getUid());
    await(
        "source PV",
        () -> client.persistentVolumes().withName(srcPvName).get() != null,
        Duration.ofSeconds(60));
    PersistentVolume srcPv = Cluster.bind(client, src);
    String srcVolume = srcPv.getMetadata().getAnnotations().get(ClaimAnnotations.VOLUME_ID);
    IscsiProbe.Target srcNode = node(srcPv);
    IscsiProbe.Result wrote = srcNode.io("write -P 0x5a 0 1M", "write -P 0xc3 1048576 4k");
    assertThat(wrote.ok()).as(wrote.output()).isTrue();

    PersistentVolumeClaim wanted = Fixtures.claimOf(null, "copy", "1Gi", "Filesystem");
    wanted.getSpec().setStorageClassName("clones");
    Map<String, String> ann = new java.util.HashMap<>();
    ann.put(ClaimAnnotations.STORAGE_PROVISIONER, ProvisionerSettings.DEFAULT_NAME);
    switch (ask) {
      case ANNOTATION -> ann.put(ClaimAnnotations.CLONE_REQUEST, "apps/src");
      case DATA_SOURCE -> {
        wanted
            .getSpec()
            .setDataSource(new TypedLocalObjectReference(null, "PersistentVolumeClaim", "src"));
        wanted
            .getSpec()
            .setDataSourceRef(new TypedObjectReference(null, "PersistentVolumeClaim", "src", null));
      }
    }
    wanted.getMetadata().setAnnotations(ann);
    PersistentVolumeClaim copy =
        client.persistentVolumeClaims().inNamespace("apps").resource(wanted).create();

    // While Cinder makes the clone, deleting the source waits for the provisioner's finalizer.
    gate.awaitReached();
    assertThat(claim("src").getMetadata().getFinalizers())
        .contains(Names.cloneFinalizer(copy.getMetadata().getUid()));
    client.persistentVolumeClaims().inNamespace("apps").withName("src").delete();
    processed.await(
        Processed.claimKey("apps", "src"),
        c -> c != null && c.getMetadata().getDeletionTimestamp() != null);
    assertThat(claim("src")).as("held while the clone is made").isNotNull();
    assertThat(claim("src").getMetadata().getDeletionTimestamp()).isNotNull();
    gate.open();

    await(
        "CloneOf",
        () ->
            "apps/src"
                .equals(
                    claim("copy").getMetadata().getAnnotations().get(ClaimAnnotations.CLONE_OF)),
        Duration.ofSeconds(60));
    await(
        "the source claim goes once the clone is made",
        () -> claim("src") == null,
        Duration.ofSeconds(10));
    PersistentVolume copyPv = Cluster.bind(client, copy);
    String copyVolume = copyPv.getMetadata().getAnnotations().get(ClaimAnnotations.VOLUME_ID);
    assertThat(cinder.getVolume(copyVolume))
        .get()
        .extracting(v -> v.sourceVolumeId())
        .isEqualTo(srcVolume);

    // A node logs in to the clone with its own PV and CHAP Secret and reads the source's data.
    IscsiProbe.Target copyNode = node(copyPv);
    IscsiProbe.Result read =
        copyNode.io("read -P 0x5a 0 1M", "read -P 0xc3 1048576 4k", "read -P 0 1052672 4k");
    assertThat(read.ok()).as(read.output()).isTrue();

    // Deleting the clone leaves the source's volume and data as they were.
    client.persistentVolumeClaims().inNamespace("apps").withName("copy").delete();
    Cluster.release(client, copyPv);
    await(
        "clone PV deleted",
        () -> client.persistentVolumes().withName(copyPv.getMetadata().getName()).get() == null,
        Duration.ofSeconds(60));
    assertThat(cinder.getVolume(copyVolume)).isEmpty();
    IscsiProbe.Result still = srcNode.io("read -P 0x5a 0 1M");
    assertThat(still.ok()).as("the source is intact: " + still.output()).isTrue();

    Cluster.release(client, client.persistentVolumes().withName(srcPvName).get());
    await(
        "source PV deleted",
        () -> client.persistentVolumes().withName(srcPvName).get() == null,
        Duration.ofSeconds(60));
    assertThat(cinder.getVolume(srcVolume)).isEmpty();
  }

  /**
   * A claim grows from 1 Gi to 2 Gi while its volume stays exported (in-use extend, 3.42+): the
   * bytes written before are still there, the target now takes writes past the old end, the PV says
   * 2 Gi and the claim waits for its filesystem to be grown on the node.
   */
  @ParameterizedTest(name = "{0}")
  @EnumSource(
      value = Mode.class,
      names = {"NOAUTH"})
  void aClaimGrowsWhileAttachedAndKeepsItsBytes(Mode mode) throws Exception {
    start(mode);
    Cluster.createClass(client, "growing", Map.of("fsType", "ext4"));
    client
        .storage()
        .v1()
        .storageClasses()
        .withName("growing")
        .edit(
            sc -> {
              sc.setAllowVolumeExpansion(true);
              return sc;
            });
    PersistentVolumeClaim c = Cluster.createClaim(client, "data", "growing");
    PersistentVolume pv = Cluster.bind(client, c);
    String volumeId = pv.getMetadata().getAnnotations().get(ClaimAnnotations.VOLUME_ID);
    IscsiProbe.Target node = node(pv);
    long oldEnd = 1L << 30;
    IscsiProbe.Result wrote = node.markEnds(oldEnd);
    assertThat(wrote.ok()).as(wrote.output()).isTrue();
    assertThat(node.io("write -P 0x11 " + oldEnd + " 4k").ok())
        .as("nothing past the end before")
        .isFalse();

    // A merge patch, as kubectl patch sends it: the provisioner may still be writing the claim
    // (its last step), and an edit of the version read first met 409 Conflict once in CI.
    client
        .persistentVolumeClaims()
        .inNamespace("apps")
        .withName("data")
        .patch(
            io.fabric8.kubernetes.client.dsl.base.PatchContext.of(
                io.fabric8.kubernetes.client.dsl.base.PatchType.JSON_MERGE),
            "{\"spec\":{\"resources\":{\"requests\":{\"storage\":\"2Gi\"}}}}");
    await(
        "the claim waits for its filesystem",
        () -> Resize.hasCondition(claim("data"), Resize.FS_PENDING),
        Duration.ofSeconds(60));

    assertThat(cinder.getVolume(volumeId))
        .get()
        .satisfies(
            v -> {
              assertThat(v.sizeGib()).isEqualTo(2);
              assertThat(v.status()).isEqualTo("in-use");
            });
    assertThat(Cluster.capacityOf(client, pv.getMetadata().getName()))
        .isEqualTo(new io.fabric8.kubernetes.api.model.Quantity("2Gi"));
    IscsiProbe.Result after = node.grownKeepingEnds(oldEnd);
    assertThat(after.ok()).as(after.output()).isTrue();
  }

  /**
   * A ReadWriteMany block claim on a multiattach type. The cluster has one Cinder attachment, and
   * the target serves two nodes at once: each logs in as the PV says (its one initiator name and
   * CHAP), as kubelets do, and each reads what the other wrote while both are logged in.
   */
  @org.junit.jupiter.api.Test
  void aReadWriteManyClaimIsServedToTwoNodesAtOnce() throws Exception {
    String type = LocalCinder.env().get("CINDER_MULTIATTACH_TYPE");
    assertThat(type).as("dev/cinder-local/start.sh makes a multiattach type").isNotNull();
    start(Mode.NOAUTH);
    Cluster.createClass(client, "shared", Map.of("type", type));
    PersistentVolumeClaim c = Fixtures.claimOf(null, "shared", "1Gi", "Block", "ReadWriteMany");
    c.getMetadata()
        .setAnnotations(
            Map.of(ClaimAnnotations.STORAGE_PROVISIONER, ProvisionerSettings.DEFAULT_NAME));
    c.getSpec().setStorageClassName("shared");
    c = client.persistentVolumeClaims().inNamespace("apps").resource(c).create();
    PersistentVolume pv = Cluster.bind(client, c);
    String volumeId = pv.getMetadata().getAnnotations().get(ClaimAnnotations.VOLUME_ID);
    assertThat(cinder.getVolume(volumeId))
        .get()
        .satisfies(
            v -> {
              assertThat(v.multiattach()).isTrue();
              assertThat(v.volumeType()).isEqualTo(type);
              assertThat(v.status()).isEqualTo("in-use");
              assertThat(v.attachmentIds()).as("one attachment, the cluster's").hasSize(1);
            });
    assertThat(pv.getSpec().getAccessModes()).containsExactly("ReadWriteMany");
    assertThat(pv.getSpec().getVolumeMode()).isEqualTo("Block");
    assertThat(pv.getSpec().getIscsi().getReadOnly()).isFalse();
    assertThat(pv.getSpec().getIscsi().getFsType()).isNull();

    IscsiProbe.Target node = node(pv);
    String iqn = pv.getSpec().getIscsi().getIqn();
    // Node a writes and stays logged in; node b logs in meanwhile, writes, reads a's bytes; a then
    // reads b's.
    var a =
        Cluster.background(() -> node.io("write -P 0xa1 0 1M", "sleep 8000", "read -P 0xb2 1M 1M"));
    await("node a logged in", () -> sessions(iqn) == 1, Duration.ofSeconds(20));
    var b =
        Cluster.background(
            () -> node.io("sleep 1000", "write -P 0xb2 1M 1M", "read -P 0xa1 0 1M", "sleep 2000"));
    await("both nodes logged in at once", () -> sessions(iqn) == 2, Duration.ofSeconds(6));
    IscsiProbe.Result bSaw = b.get(60, java.util.concurrent.TimeUnit.SECONDS);
    assertThat(bSaw.ok()).as("node b: " + bSaw.output()).isTrue();
    IscsiProbe.Result aSaw = a.get(60, java.util.concurrent.TimeUnit.SECONDS);
    assertThat(aSaw.ok()).as("node a: " + aSaw.output()).isTrue();

    client.persistentVolumeClaims().inNamespace("apps").withName("shared").delete();
    Cluster.release(client, pv);
    await(
        "PV deleted",
        () -> client.persistentVolumes().withName(pv.getMetadata().getName()).get() == null,
        Duration.ofSeconds(60));
    assertThat(cinder.getVolume(volumeId)).isEmpty();
  }

  /** The sessions (I_T nexuses) the local tgtd has on a target, as {@code tgtadm} lists them. */
  private static int sessions(String iqn) {
    try {
      Process p =
          new ProcessBuilder("tgtadm", "--lld", "iscsi", "--mode", "target", "--op", "show")
              .redirectErrorStream(true)
              .start();
      String out =
          new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
      p.waitFor();
      int at = out.indexOf(": " + iqn + "\n");
      if (at < 0) {
        return 0;
      }
      int end = out.indexOf("\nTarget ", at);
      String target = end < 0 ? out.substring(at) : out.substring(at, end);
      return (int) target.lines().filter(l -> l.trim().startsWith("I_T nexus: ")).count();
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return 0;
    }
  }

  private PersistentVolumeClaim claim(String name) {
    return client.persistentVolumeClaims().inNamespace("apps").withName(name).get();
  }

  private IscsiProbe.Target node(PersistentVolume pv) {
    var iscsi = pv.getSpec().getIscsi();
    Secret chap =
        client
            .secrets()
            .inNamespace(iscsi.getSecretRef().getNamespace())
            .withName(iscsi.getSecretRef().getName())
            .get();
    return IscsiProbe.Target.of(iscsi, chap);
  }
}
