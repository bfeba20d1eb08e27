package org.standalonecinder.provisioner.provision;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.PersistentVolumeBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolumeSpec;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.api.model.SecretReference;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import java.util.Map;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.standalonecinder.provisioner.controller.Cluster;

/** The Secret store on the API: it never overwrites a Secret it did not make. */
class KubernetesSecretStoreTest {

  static final String NS = "standalone-cinder";

  private final KubernetesMockServer server = Cluster.newApiServer();
  private final KubernetesClient client = server.createClient();
  private final KubernetesSecretStore store = new KubernetesSecretStore(client);

  @AfterEach
  void stop() {
    client.close();
    Cluster.destroy(server);
  }

  static Secret secret(String name, Map<String, String> labels, String value) {
    return new SecretBuilder()
        .withNewMetadata()
        .withName(name)
        .withNamespace(NS)
        .withLabels(labels)
        .endMetadata()
        .withStringData(Map.of("key", value))
        .build();
  }

  @Test
  void ourSecretIsCreatedThenReplaced() {
    store.put(secret("cephx-rbd-cinder", Names.sharedSecretLabels(), "one"));
    store.put(secret("cephx-rbd-cinder", Names.sharedSecretLabels(), "two"));
    assertThat(store.get(NS, "cephx-rbd-cinder").orElseThrow().getStringData())
        .containsEntry("key", "two");
    assertThat(store.list(NS, Names.sharedSecretLabels())).hasSize(1);
  }

  @Test
  void aSecretWeDidNotMakeIsNeverOverwritten() {
    client
        .secrets()
        .inNamespace(NS)
        .resource(secret("cephx-rbd-cinder", Map.of(), "admin's"))
        .create();
    assertThatThrownBy(
            () -> store.put(secret("cephx-rbd-cinder", Names.sharedSecretLabels(), "ours")))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("exists and was not made by standalone-cinder");
    assertThat(store.get(NS, "cephx-rbd-cinder").orElseThrow().getStringData())
        .containsEntry("key", "admin's");
  }

  static Stream<Arguments> references() {
    SecretReference ref = new SecretReference("shared", NS);
    return Stream.of(
        Arguments.of(
            "in-tree rbd",
            (Consumer<PersistentVolumeSpec>)
                s ->
                    s.setRbd(
                        new io.fabric8.kubernetes.api.model.RBDPersistentVolumeSourceBuilder()
                            .withImage("i")
                            .withMonitors("m:6789")
                            .withSecretRef(ref)
                            .build()),
            true),
        Arguments.of(
            "ceph-csi node stage",
            (Consumer<PersistentVolumeSpec>)
                s ->
                    s.setCsi(
                        new io.fabric8.kubernetes.api.model.CSIPersistentVolumeSourceBuilder()
                            .withDriver("rbd.csi.ceph.com")
                            .withVolumeHandle("i")
                            .withNodeStageSecretRef(ref)
                            .build()),
            true),
        Arguments.of(
            "iscsi",
            (Consumer<PersistentVolumeSpec>)
                s ->
                    s.setIscsi(
                        new io.fabric8.kubernetes.api.model.ISCSIPersistentVolumeSourceBuilder()
                            .withIqn("iqn.x")
                            .withTargetPortal("p")
                            .withLun(0)
                            .withSecretRef(ref)
                            .build()),
            true),
        Arguments.of(
            "the same name in another namespace",
            (Consumer<PersistentVolumeSpec>)
                s ->
                    s.setRbd(
                        new io.fabric8.kubernetes.api.model.RBDPersistentVolumeSourceBuilder()
                            .withImage("i")
                            .withMonitors("m:6789")
                            .withSecretRef(new SecretReference("shared", "apps"))
                            .build()),
            false),
        Arguments.of(
            "fc, no Secret",
            (Consumer<PersistentVolumeSpec>)
                s ->
                    s.setFc(
                        new io.fabric8.kubernetes.api.model.FCVolumeSourceBuilder()
                            .withTargetWWNs("500a0981891b8dc5")
                            .withLun(1)
                            .build()),
            false));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("references")
  void aPvRefersToASecretInEverySourceWeWrite(
      String name, Consumer<PersistentVolumeSpec> source, boolean refers) {
    var pv =
        new PersistentVolumeBuilder()
            .withNewMetadata()
            .withName("pv-a")
            .endMetadata()
            .withNewSpec()
            .endSpec()
            .build();
    source.accept(pv.getSpec());
    client.persistentVolumes().resource(pv).create();
    assertThat(store.referenced(NS, "shared", null)).isEqualTo(refers);
    assertThat(store.referenced(NS, "shared", "pv-a")).as("except the PV being deleted").isFalse();
  }
}
