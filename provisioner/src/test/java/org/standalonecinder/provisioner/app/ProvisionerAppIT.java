package org.standalonecinder.provisioner.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.standalonecinder.provisioner.controller.Cluster.await;

import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.standalonecinder.provisioner.cinder.openstack.LocalCinder;
import org.standalonecinder.provisioner.cinder.openstack.LocalCinder.Mode;
import org.standalonecinder.provisioner.cinder.openstack.OpenStackCinderClient;
import org.standalonecinder.provisioner.clone.ResolverServer;
import org.standalonecinder.provisioner.controller.Cluster;
import org.standalonecinder.provisioner.controller.RetryPolicy;
import org.standalonecinder.provisioner.provision.Names;
import org.standalonecinder.provisioner.provision.ProvisionerSettings;

/**
 * The provisioner as {@code run} wires it (Vert.x Kubernetes client, health server) against the
 * mock API server and the real Cinder: ready only once synced, provisions, stops cleanly.
 */
class ProvisionerAppIT {

  static KubernetesMockServer server;
  static KubernetesClient client;

  // The mock API server of Cluster, not the JUnit extension's: the extension fails the class when
  // the server's close outlasts its 10 s (seen once in CI, on a loaded machine); Cluster.destroy
  // says so and goes on.
  @BeforeAll
  static void apiServer() {
    server = Cluster.newApiServer();
    client = server.createClient();
  }

  @AfterAll
  static void closeApiServer() {
    client.close();
    Cluster.destroy(server);
  }

  private static int status(int port, String path) throws Exception {
    // Whether it answers, not how fast: a JVM just started on a loaded machine took longer than
    // 5 s for its first answer (a CI imitation with the image build and eight ITs beside it).
    return HttpClient.newHttpClient()
        .send(
            HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(30))
                .build(),
            HttpResponse.BodyHandlers.ofString())
        .statusCode();
  }

  @Test
  void runsProvisionsAndStops() throws Exception {
    String cluster = "app-" + UUID.randomUUID();
    ProvisionerSettings settings = Cluster.settings("app-" + UUID.randomUUID());
    ProvisionerApp app =
        ProvisionerApp.start(
            client.getConfiguration(),
            OpenStackCinderClient.create(LocalCinder.config(Mode.NOAUTH)),
            new ProvisionerApp.Options(
                settings,
                "app-0",
                2,
                Duration.ofSeconds(60),
                RetryPolicy.DEFAULT,
                "127.0.0.1",
                0,
                null,
                null,
                ProvisionerApp.Options.DEFAULT_POOL_STATS,
                new ProvisionerApp.Resolver("127.0.0.1", 0, TOKEN),
                org.standalonecinder.provisioner.provision.CopyLimits.DEFAULT,
                org.standalonecinder.provisioner.snapshot.SnapshotLimits.DEFAULT));
    int port = app.healthPort();
    int resolver = app.resolverPort();
    try {
      assertThat(status(port, "/healthz")).isEqualTo(200);
      // The webhook's clone check is served next to the controller, with its token.
      assertThat(status(resolver, "/healthz")).isEqualTo(200);
      assertThat(check(resolver, "Bearer not-the-token").statusCode()).isEqualTo(401);
      HttpResponse<String> answer = check(resolver, "Bearer " + TOKEN);
      assertThat(answer.statusCode()).isEqualTo(200);
      assertThat(answer.body())
          .contains("\"allowed\":false", "StorageClass no-such-class does not exist");
      await("ready", app::ready, Duration.ofSeconds(10));
      assertThat(status(port, "/readyz")).isEqualTo(200);

      Cluster.createClass(client, "cinder", Map.of());
      PersistentVolumeClaim created =
          Cluster.createClaim(
              client, "app", "cinder", ProvisionerSettings.DEFAULT_NAME, "Block", Map.of());
      String pv = Names.pvName(created.getMetadata().getUid());
      await(
          "PV",
          () -> client.persistentVolumes().withName(pv).get() != null,
          Duration.ofSeconds(60));

      // Counted once the attempt is over, a moment after the PV appears.
      await(
          "the attempt counted",
          () ->
              metrics(port)
                  .contains(
                      "standalone_cinder_provisions_total{kind=\"blank\",result=\"succeeded\"} 1.0"),
          Duration.ofSeconds(10));
      assertThat(metrics(port))
          .contains("standalone_cinder_provision_seconds_count{kind=\"blank\"} 1");

      // Every documented series is there; the Cinder calls and the real pools' capacity too.
      String m = metrics(port);
      assertThat(m)
          .contains(
              "standalone_cinder_leader 1.0",
              "standalone_cinder_queue_depth ",
              "standalone_cinder_pools_up 1.0",
              "standalone_cinder_cinder_request_seconds_count{operation=\"createVolume\",outcome=\"ok\"} 1",
              "standalone_cinder_cinder_request_seconds_bucket{operation=\"createVolume\",outcome=\"ok\",le=")
          .containsPattern(
              "standalone_cinder_pool_capacity_gib\\{backend=\"file\",kind=\"total\",pool=\"[^\"]+@file#file\",protocol=\"iSCSI\"} [1-9][0-9.E]*")
          .containsPattern(
              "standalone_cinder_pool_capacity_gib\\{backend=\"file\",kind=\"free\",pool=\"[^\"]+@file#file\",protocol=\"iSCSI\"} -?[0-9][0-9.E]*")
          .containsPattern(
              "standalone_cinder_pool_max_over_subscription_ratio\\{pool=\"[^\"]+@file#file\"} [0-9.]+");
      // Every provisioner metric the chart's dashboard and alerts ask for is one this serves
      // (the webhook's: WebhookAppTest).
      java.util.Set<String> served =
          java.util.regex.Pattern.compile("(?m)^(standalone_cinder_[a-z0-9_]+)[{ ]")
              .matcher(m)
              .results()
              .map(r -> r.group(1))
              .collect(java.util.stream.Collectors.toSet());
      java.util.Set<String> asked = new java.util.TreeSet<>();
      for (String f :
          List.of(
              "../charts/standalone-cinder/files/dashboard.json",
              "../charts/standalone-cinder/templates/monitoring.yaml")) {
        java.util.regex.Pattern.compile("standalone_cinder_[a-z0-9_]+")
            .matcher(java.nio.file.Files.readString(java.nio.file.Path.of(f)))
            .results()
            .map(r -> r.group())
            .filter(n -> !n.startsWith("standalone_cinder_webhook_"))
            .forEach(asked::add);
      }
      assertThat(asked).isNotEmpty();
      assertThat(served).containsAll(asked);

      // Leave nothing in the shared Cinder: the orphan path deletes a claim's volume.
      client.persistentVolumeClaims().inNamespace("apps").withName("app").delete();
      Cluster.release(client, client.persistentVolumes().withName(pv).get());
      await(
          "PV deleted",
          () -> client.persistentVolumes().withName(pv).get() == null,
          Duration.ofSeconds(60));
    } finally {
      app.close();
    }
    assertThatThrownBy(() -> status(port, "/healthz")).isInstanceOf(java.io.IOException.class);
    assertThatThrownBy(() -> status(resolver, "/healthz")).isInstanceOf(java.io.IOException.class);
  }

  private static final String TOKEN = "a-token-of-at-least-16-characters";

  /** A clone check of a claim whose class does not exist. */
  private static HttpResponse<String> check(int port, String authorization) throws Exception {
    return HttpClient.newHttpClient()
        .send(
            HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + ResolverServer.PATH))
                .header("Authorization", authorization)
                .POST(
                    HttpRequest.BodyPublishers.ofString(
                        "{\"source\": \"apps/src\", \"claim\": {\"metadata\": {\"name\": \"c\","
                            + " \"namespace\": \"apps\"}, \"spec\": {\"storageClassName\":"
                            + " \"no-such-class\"}}}"))
                .timeout(Duration.ofSeconds(30))
                .build(),
            HttpResponse.BodyHandlers.ofString());
  }

  private static String metrics(int port) {
    try {
      return java.net.http.HttpClient.newHttpClient()
          .send(
              java.net.http.HttpRequest.newBuilder(
                      java.net.URI.create("http://127.0.0.1:" + port + "/metrics"))
                  .build(),
              java.net.http.HttpResponse.BodyHandlers.ofString())
          .body();
    } catch (Exception e) {
      throw new AssertionError(e);
    }
  }
}
