package org.standalonecinder.provisioner.controller;

import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import okhttp3.mockwebserver.Dispatcher;
import okhttp3.mockwebserver.MockResponse;
import okhttp3.mockwebserver.MockWebServer;
import okhttp3.mockwebserver.RecordedRequest;
import okhttp3.mockwebserver.SocketPolicy;

/**
 * An API server that answers lists and watches as a test scripts them, for what fabric8's mock
 * cannot stage: a watch that ends in an event nobody can read, a list that is slow on purpose. A
 * path lists nothing unless told; a watch stays open, answering nothing, unless told.
 */
public final class ScriptedApiServer implements AutoCloseable {

  private final MockWebServer server = new MockWebServer();
  private final Map<String, List<String>> items = new ConcurrentHashMap<>();
  private final Map<String, String> firstWatchSays = new ConcurrentHashMap<>();
  private final Map<String, AtomicInteger> watches = new ConcurrentHashMap<>();
  private final Map<String, AtomicInteger> lists = new ConcurrentHashMap<>();
  private final Map<String, CountDownLatch[]> held = new ConcurrentHashMap<>();
  private final List<String> seen = new CopyOnWriteArrayList<>();

  public ScriptedApiServer() throws IOException {
    server.setDispatcher(
        new Dispatcher() {
          @Override
          public MockResponse dispatch(RecordedRequest request) throws InterruptedException {
            return answer(request);
          }
        });
    server.start();
  }

  /** A client of this server, watching over plain HTTP (what the script's watches answer). */
  public KubernetesClient client() {
    return new KubernetesClientBuilder()
        .withConfig(
            new ConfigBuilder()
                .withMasterUrl(server.url("/").toString())
                .withOnlyHttpWatches(true)
                .withRequestRetryBackoffLimit(0)
                .build())
        .build();
  }

  /** From now on, lists of {@code path} hold this object (JSON) too. */
  public ScriptedApiServer lists(String path, String objectJson) {
    items.computeIfAbsent(path, p -> new CopyOnWriteArrayList<>()).add(objectJson);
    return this;
  }

  /** The first watch of {@code path} sends this line, a moment after it opened, and ends. */
  public ScriptedApiServer firstWatchSends(String path, String line) {
    firstWatchSays.put(path, line);
    return this;
  }

  /**
   * Lists of {@code path} wait until {@link #release} is called; returns the latch counted down
   * when the first of them arrives.
   */
  public CountDownLatch holdLists(String path) {
    CountDownLatch arrived = new CountDownLatch(1);
    held.put(path, new CountDownLatch[] {arrived, new CountDownLatch(1)});
    return arrived;
  }

  /** Lets the held lists of {@code path} be answered. */
  public void release(String path) {
    held.get(path)[1].countDown();
  }

  /**
   * Once the first watch of {@code path} was asked for (the one {@link #firstWatchSends} breaks),
   * lists {@code laterObject} there too and waits until {@code seen} says the reader has it.
   */
  public void awaitSeenAfterTheFirstWatch(
      String path, String laterObject, java.util.function.BooleanSupplier seen) {
    Cluster.await("the first watch", () -> watchesOf(path) >= 1, java.time.Duration.ofSeconds(10));
    lists(path, laterObject);
    try {
      Cluster.await(
          "the object made after the first watch, seen", seen, java.time.Duration.ofSeconds(15));
    } catch (AssertionError e) {
      throw new AssertionError(e.getMessage() + "; the requests: " + seen(), e);
    }
  }

  /** How many watches of {@code path} were asked for. */
  public int watchesOf(String path) {
    return count(watches, path);
  }

  /** How many lists of {@code path} were asked for. */
  public int listsOf(String path) {
    return count(lists, path);
  }

  /** Every request line so far, for a failing assertion's message. */
  public List<String> seen() {
    return List.copyOf(seen);
  }

  private static int count(Map<String, AtomicInteger> counts, String path) {
    AtomicInteger n = counts.get(path);
    return n == null ? 0 : n.get();
  }

  private MockResponse answer(RecordedRequest request) throws InterruptedException {
    seen.add(request.getMethod() + " " + request.getPath());
    String path = request.getRequestUrl().encodedPath();
    if ("true".equals(request.getRequestUrl().queryParameter("watch"))) {
      int n = watches.computeIfAbsent(path, p -> new AtomicInteger()).incrementAndGet();
      String line = firstWatchSays.get(path);
      if (n == 1 && line != null) {
        // After the start has completed: a failure before it is the start's own.
        return new MockResponse()
            .setHeader("Content-Type", "application/json")
            .setBodyDelay(300, TimeUnit.MILLISECONDS)
            .setBody(line + "\n");
      }
      return new MockResponse().setSocketPolicy(SocketPolicy.NO_RESPONSE);
    }
    lists.computeIfAbsent(path, p -> new AtomicInteger()).incrementAndGet();
    CountDownLatch[] hold = held.get(path);
    if (hold != null) {
      hold[0].countDown();
      hold[1].await(30, TimeUnit.SECONDS);
    }
    String body =
        "{\"kind\":\"List\",\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":\"1\"},"
            + "\"items\":["
            + String.join(",", items.getOrDefault(path, List.of()))
            + "]}";
    return new MockResponse().setHeader("Content-Type", "application/json").setBody(body);
  }

  @Override
  public void close() throws IOException {
    held.values().forEach(h -> h[1].countDown());
    server.shutdown();
  }
}
