package org.standalonecinder.provisioner.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.standalonecinder.provisioner.controller.Cluster.await;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesCrudDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import io.fabric8.mockwebserver.http.Dispatcher;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashMap;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.standalonecinder.provisioner.cinder.FakeCinderClient;
import org.standalonecinder.provisioner.clone.ResolverServer;
import org.standalonecinder.provisioner.controller.Cluster;
import org.standalonecinder.provisioner.controller.RetryPolicy;

/**
 * The attack on the provisioner's side: a clone check (the webhook asks it for each clone request a
 * user writes) whose lookup is answered by something that takes the client seconds to turn into
 * objects. fabric8 reads a response into objects on the event loop that read it; were that loop the
 * clone check's or the health server's, the webhook's next checks and the kubelet's probes would
 * wait behind it. While a thread is still reading that answer, both servers have answered.
 */
class ClientLoopsTest {

  private static final String TOKEN = "a-token-of-at-least-16-characters";
  private static final String SLOW = "/apis/storage.k8s.io/v1/storageclasses/slow";

  private KubernetesMockServer server;
  private KubernetesClient client;
  private ProvisionerApp app;
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
      Cluster.destroy(server);
    }
  }

  @Test
  void aLookupSlowToReadHoldsNeitherTheProbesNorOtherChecks() throws Exception {
    String big = aClassSlowToRead(1_000_000);
    Dispatcher crud = new KubernetesCrudDispatcher();
    server =
        new KubernetesMockServer(
            new Context(),
            new MockWebServer(),
            new HashMap<>(),
            new Dispatcher() {
              @Override
              public MockResponse dispatch(RecordedRequest request) {
                if ("GET".equals(request.getMethod()) && SLOW.equals(request.getPath())) {
                  lookups.incrementAndGet();
                  return new MockResponse().setResponseCode(200).setBody(big);
                }
                return crud.dispatch(request);
              }
            },
            false);
    server.init();
    client = server.createClient();
    app =
        ProvisionerApp.start(
            client.getConfiguration(),
            new FakeCinderClient(),
            new ProvisionerApp.Options(
                Cluster.settings("loops-" + UUID.randomUUID()),
                "loops-0",
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
    await("ready", app::ready, Duration.ofSeconds(30));
    HttpClient http = HttpClient.newHttpClient();

    CompletableFuture<HttpResponse<String>> slow =
        http.sendAsync(check(app.resolverPort(), "slow"), HttpResponse.BodyHandlers.ofString());
    Thread reader = theThreadReading(Duration.ofSeconds(30));
    assertThat(status(http, app.healthPort(), "/healthz")).isEqualTo(200);
    assertThat(status(http, app.healthPort(), "/readyz")).isEqualTo(200);
    assertThat(status(http, app.resolverPort(), "/healthz")).isEqualTo(200);
    HttpResponse<String> other =
        http.send(check(app.resolverPort(), "no-such-class"), HttpResponse.BodyHandlers.ofString());
    assertThat(other.body()).contains("StorageClass no-such-class does not exist");
    assertThat(reading(reader))
        .as("the lookup's answer still being read (%s) when all were answered", reader.getName())
        .isTrue();

    assertThat(slow.get(60, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
    assertThat(lookups.get()).as("the provisioner looked the class up").isPositive();
  }

  /** A StorageClass of ours carrying {@code n} nested fields the model does not know. */
  static String aClassSlowToRead(int n) {
    StringBuilder s =
        new StringBuilder(
            "{\"apiVersion\":\"storage.k8s.io/v1\",\"kind\":\"StorageClass\",\"metadata\":{\"name\":"
                + "\"slow\"},\"provisioner\":\"openstack.org/standalone-cinder\",\"padding\":[");
    for (int i = 0; i < n; i++) {
      s.append(i == 0 ? "" : ",").append("[[1,2],{\"k\":[3]}]");
    }
    return s.append("]}").toString();
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
   * the model does not know (the informers' reads have none).
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

  private static HttpRequest check(int port, String className) {
    return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + ResolverServer.PATH))
        .header("Authorization", "Bearer " + TOKEN)
        .POST(
            HttpRequest.BodyPublishers.ofString(
                "{\"source\": \"apps/src\", \"claim\": {\"metadata\": {\"name\": \"c\","
                    + " \"namespace\": \"apps\"}, \"spec\": {\"storageClassName\": \""
                    + className
                    + "\"}}}"))
        .timeout(Duration.ofSeconds(60))
        .build();
  }

  private static int status(HttpClient http, int port, String path) throws Exception {
    return http.send(
            HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(60))
                .build(),
            HttpResponse.BodyHandlers.ofString())
        .statusCode();
  }
}
