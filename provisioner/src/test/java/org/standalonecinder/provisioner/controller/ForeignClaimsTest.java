package org.standalonecinder.provisioner.controller;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.TypedLocalObjectReference;
import io.fabric8.kubernetes.api.model.TypedObjectReference;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.standalonecinder.api.ClaimAnnotations;
import org.standalonecinder.provisioner.cinder.FakeCinderClient;
import org.standalonecinder.provisioner.provision.Fixtures;
import org.standalonecinder.provisioner.provision.ProvisionerSettings;

/**
 * Claims of other provisioners (KubeVirt's CDI marks its own clones with {@code
 * k8s.io/CloneRequest} and {@code k8s.io/CloneOf}) are left alone whatever clone annotation or data
 * source they carry: no Cinder call, no PV, no event, no annotation, no finalizer on a source of
 * ours.
 */
class ForeignClaimsTest {

  private static final String OTHER = "example.com/other";

  private io.fabric8.kubernetes.client.server.mock.KubernetesMockServer server;
  private KubernetesClient client;
  private final FakeCinderClient cinder = new FakeCinderClient();
  private ClaimController controller;

  @AfterEach
  void stop() {
    if (controller != null) {
      controller.close();
      client.close();
      Cluster.destroy(server);
    }
  }

  static Stream<Arguments> claims() {
    return Stream.of(
        row(
            "a clone request of a claim of ours",
            c -> annotate(c, ClaimAnnotations.CLONE_REQUEST, "apps/src")),
        row(
            "a clone request by name only",
            c -> annotate(c, ClaimAnnotations.CLONE_REQUEST, "src")),
        row(
            "a malformed clone request",
            c -> annotate(c, ClaimAnnotations.CLONE_REQUEST, "a/src/x")),
        row(
            "a cross-namespace clone request with a token",
            c -> {
              annotate(c, ClaimAnnotations.CLONE_REQUEST, "team-b/shared");
              annotate(c, ClaimAnnotations.CLONE_TOKEN, "x.y");
            }),
        row(
            "CloneOf set by its own controller",
            c -> annotate(c, ClaimAnnotations.CLONE_OF, "apps/src")),
        row(
            "a native data source naming our claim",
            c -> {
              c.getSpec()
                  .setDataSource(
                      new TypedLocalObjectReference(null, "PersistentVolumeClaim", "src"));
              c.getSpec()
                  .setDataSourceRef(
                      new TypedObjectReference(null, "PersistentVolumeClaim", "src", null));
            }),
        row(
            "a snapshot data source",
            c ->
                c.getSpec()
                    .setDataSourceRef(
                        new TypedObjectReference(
                            "snapshot.storage.k8s.io", "VolumeSnapshot", "s1", null))),
        row(
            "a populator data source",
            c ->
                c.getSpec()
                    .setDataSourceRef(
                        new TypedObjectReference(
                            "cdi.kubevirt.io", "VolumeImportSource", "img", null))),
        row(
            "ReadWriteMany Filesystem",
            c -> c.getSpec().setAccessModes(java.util.List.of("ReadWriteMany"))),
        row(
            "a clone request, in their class though the annotation names us",
            c -> {
              annotate(c, ClaimAnnotations.CLONE_REQUEST, "apps/src");
              annotate(c, ClaimAnnotations.STORAGE_PROVISIONER, ProvisionerSettings.DEFAULT_NAME);
            }));
  }

  private static Arguments row(String name, Consumer<PersistentVolumeClaim> shape) {
    return Arguments.of(name, shape);
  }

  private static void annotate(PersistentVolumeClaim c, String key, String value) {
    c.getMetadata().getAnnotations().put(key, value);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("claims")
  void isIgnored(String name, Consumer<PersistentVolumeClaim> shape) {
    server = Cluster.newApiServer();
    client = server.createClient();
    controller =
        Cluster.controller(
            client,
            cinder,
            Fixtures.settings(),
            new io.micrometer.core.instrument.simple.SimpleMeterRegistry());
    Processed processed = Processed.by(controller);
    controller.start();
    Cluster.await("informers synced", controller::synced, Duration.ofSeconds(10));
    Cluster.createClass(client, "cinder", Map.of("smartclone", "true"));
    Cluster.createClass(client, "cdi", OTHER, Map.of(), "Delete", "Immediate");
    PersistentVolumeClaim src = Cluster.createClaim(client, "src", "cinder");
    Cluster.bind(client, src);
    processed.await(
        Processed.claimKey("apps", "src"),
        c -> c != null && ((PersistentVolumeClaim) c).getSpec().getVolumeName() != null);
    cinder.clearLog();

    PersistentVolumeClaim c = Fixtures.claimOf(null, "foreign", "1Gi", "Filesystem");
    c.getMetadata()
        .setAnnotations(new HashMap<>(Map.of(ClaimAnnotations.STORAGE_PROVISIONER, OTHER)));
    c.getSpec().setStorageClassName("cdi");
    shape.accept(c);
    Map<String, String> asCreated = Map.copyOf(c.getMetadata().getAnnotations());
    PersistentVolumeClaim created =
        client.persistentVolumeClaims().inNamespace("apps").resource(c).create();
    processed.claim("apps", "foreign");

    assertThat(Cluster.claimCalls(cinder)).as("no Cinder call").isEmpty();
    assertThat(Cluster.pvOf(client, created)).isNull();
    assertThat(
            client.events().v1().events().inAnyNamespace().list().getItems().stream()
                .filter(e -> e.getRegarding().getName().equals("foreign")))
        .isEmpty();
    PersistentVolumeClaim after =
        client.persistentVolumeClaims().inNamespace("apps").withName("foreign").get();
    assertThat(after.getMetadata().getAnnotations()).isEqualTo(asCreated);
    assertThat(after.getMetadata().getFinalizers()).isNullOrEmpty();
    assertThat(
            client
                .persistentVolumeClaims()
                .inNamespace("apps")
                .withName("src")
                .get()
                .getMetadata()
                .getFinalizers())
        .as("our claim is not protected for their clone")
        .isNullOrEmpty();
  }
}
