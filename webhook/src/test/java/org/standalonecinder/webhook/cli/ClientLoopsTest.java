package org.standalonecinder.webhook.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.storage.StorageClassBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMixedDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import io.fabric8.mockwebserver.ServerRequest;
import io.fabric8.mockwebserver.ServerResponse;
import io.fabric8.mockwebserver.http.Dispatcher;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.standalonecinder.webhook.cli.WebhookApp.Certificates;

/**
 * The attack: a clone request whose source the webhook must look up, and an answer from the API
 * server that takes the client seconds to turn into objects (here a claim with megabytes of fields;
 * in a cluster a cold deserializer under load, a large object, a pause). fabric8 turns a response
 * into objects on the event loop that read it, so were its loops the server's, every other review
 * and the kubelet's liveness probe would wait behind it. They must not: the probe answers within a
 * fraction of the time the lookup's answer takes to read, all along.
 */
class ClientLoopsTest {

  private static final String OURS = "openstack.org/standalone-cinder";
  private static final String BIG = "/api/v1/namespaces/apps/persistentvolumeclaims/big";

  @TempDir Path dir;
  private KubernetesMockServer server;
  private KubernetesClient client;
  private WebhookApp app;
  private final AtomicInteger lookups = new AtomicInteger();

  @AfterEach
  void stop() {
    if (app != null) {
      app.close();
    }
    if (client != null) {
      client.close();
    }
    if (server != null) {
      server.destroy();
    }
  }

  @Test
  void aLookupSlowToReadHoldsNeitherTheProbeNorOtherReviews() throws Exception {
    start(aClaimSlowToRead(1_000_000));
    // As the API server, with the client certificate that lets the webhook look at claims.
    HttpClient http = WebhookAppTest.asTheApiServer(dir.resolve("ca.crt"));
    assertThat(get(http, "/healthz")).isEqualTo(200);

    CompletableFuture<HttpResponse<String>> clone =
        http.sendAsync(
            post(
                "/validate",
                WebhookAppTest.claimReview(
                    "u1",
                    "apps",
                    "alice",
                    Map.of("k8s.io/CloneRequest", "apps/big"),
                    "1Gi",
                    false)),
            HttpResponse.BodyHandlers.ofString());
    Thread reader = theThreadReading(Duration.ofSeconds(30));
    // While that thread turns the answer into objects (seconds), the probe and a review that
    // needs no lookup are answered.
    assertThat(get(http, "/healthz")).isEqualTo(200);
    HttpResponse<String> other =
        http.send(
            post(
                "/validate",
                WebhookAppTest.claimReview("u2", "apps", "alice", Map.of(), "1Gi", false)),
            HttpResponse.BodyHandlers.ofString());
    assertThat(other.statusCode()).isEqualTo(200);
    assertThat(other.body()).contains("\"allowed\":true");
    assertThat(reading(reader))
        .as("the lookup's answer still being read (%s) when both were answered", reader.getName())
        .isTrue();

    assertThat(clone.get(60, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
    assertThat(lookups.get()).as("the webhook looked the source up").isPositive();
  }

  /** The thread that turns the API server's answer into objects, once it has begun. */
  private static Thread theThreadReading(Duration within) throws InterruptedException {
    long until = System.nanoTime() + within.toNanos();
    while (System.nanoTime() < until) {
      for (Thread t : Thread.getAllStackTraces().keySet()) {
        if (reading(t)) {
          return t;
        }
      }
      Thread.sleep(2);
    }
    throw new AssertionError("no thread read the lookup's answer within " + within);
  }

  /**
   * In the middle of reading the padding: fabric8's unmarshal, down in Jackson's setter of fields
   * the model does not know (the webhook's other reads, e.g. of its configurations, have none).
   */
  private static boolean reading(Thread t) {
    StackTraceElement[] stack = t.getStackTrace();
    return Arrays.stream(stack)
            .anyMatch(
                f ->
                    f.getClassName().equals(KubernetesSerialization.class.getName())
                        && f.getMethodName().equals("unmarshal"))
        && Arrays.stream(stack).anyMatch(f -> f.getClassName().endsWith(".SettableAnyProperty"));
  }

  private void start(String big) throws Exception {
    Map<ServerRequest, Queue<ServerResponse>> responses = new HashMap<>();
    Dispatcher crud = new KubernetesMixedDispatcher(responses);
    Dispatcher slow =
        new Dispatcher() {
          @Override
          public MockResponse dispatch(RecordedRequest request) {
            if ("GET".equals(request.getMethod()) && BIG.equals(request.getPath())) {
              lookups.incrementAndGet();
              return new MockResponse().setResponseCode(200).setBody(big);
            }
            return crud.dispatch(request);
          }
        };
    server = new KubernetesMockServer(new Context(), new MockWebServer(), responses, slow, false);
    server.init();
    client = server.createClient();
    client
        .resource(
            new StorageClassBuilder()
                .withNewMetadata()
                .withName("clone")
                .endMetadata()
                .withProvisioner(OURS)
                .addToParameters("smartclone", "true")
                .build())
        .create();
    app = WebhookAppTest.start(client.getConfiguration(), dir, Certificates.LOCAL, null);
  }

  /** A bound claim of ours carrying {@code n} nested fields the model does not know. */
  static String aClaimSlowToRead(int n) {
    StringBuilder s =
        new StringBuilder(
            "{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolumeClaim\",\"metadata\":{\"name\":\"big\","
                + "\"namespace\":\"apps\",\"annotations\":{\"volume.kubernetes.io/storage-provisioner\":\""
                + OURS
                + "\",\"cinderVolumeId\":\"vol-big\"}},\"spec\":{\"storageClassName\":\"clone\","
                + "\"volumeMode\":\"Filesystem\",\"resources\":{\"requests\":{\"storage\":\"1Gi\"}},"
                + "\"padding\":[");
    for (int i = 0; i < n; i++) {
      s.append(i == 0 ? "" : ",").append("[[1,2],{\"k\":[3]}]");
    }
    return s.append("]},\"status\":{\"phase\":\"Bound\",\"capacity\":{\"storage\":\"1Gi\"}}}")
        .toString();
  }

  private HttpRequest post(String path, String body) {
    return HttpRequest.newBuilder(URI.create("https://127.0.0.1:" + app.port() + path))
        .version(HttpClient.Version.HTTP_1_1)
        .header("Content-Type", "application/json")
        .timeout(Duration.ofSeconds(30))
        .POST(HttpRequest.BodyPublishers.ofString(body))
        .build();
  }

  private int get(HttpClient http, String path) throws Exception {
    return http.send(
            HttpRequest.newBuilder(URI.create("https://127.0.0.1:" + app.port() + path))
                .version(HttpClient.Version.HTTP_1_1)
                .timeout(Duration.ofSeconds(30))
                .build(),
            HttpResponse.BodyHandlers.ofString())
        .statusCode();
  }
}
