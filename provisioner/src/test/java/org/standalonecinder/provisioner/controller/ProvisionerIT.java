package org.standalonecinder.provisioner.controller;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.standalonecinder.provisioner.cinder.Backoff;
import org.standalonecinder.provisioner.cinder.CinderClient;
import org.standalonecinder.provisioner.cinder.openstack.LocalCinder;
import org.standalonecinder.provisioner.cinder.openstack.LocalCinder.Mode;
import org.standalonecinder.provisioner.cinder.openstack.OpenStackCinderClient;
import org.standalonecinder.provisioner.diagnostics.IscsiProbe;
import org.standalonecinder.provisioner.mapping.IscsiMapper;
import org.standalonecinder.provisioner.mapping.VolumeMappers;
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
  private ProvisionController controller;

  private void start(Mode mode) {
    server = Cluster.newApiServer();
    client = server.createClient();
    cinder = OpenStackCinderClient.create(LocalCinder.config(mode));
    ProvisionerSettings settings = Cluster.settings("it-" + mode + "-" + UUID.randomUUID());
    controller =
        new ProvisionController(
            client,
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
            Duration.ofSeconds(30));
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
    String volumeId = pv.getMetadata().getAnnotations().get(Names.ANN_VOLUME_ID);
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
}
