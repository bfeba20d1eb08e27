package org.standalonecinder.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.OutputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.standalonecinder.demo.Claims;
import org.standalonecinder.demo.LocalInstall;

/**
 * The running webhook (the installation's process, with the real API server behind its lookups)
 * under hostile input: {@code fuzz.cases} requests from {@link HostileReviews} (20,000 in CI,
 * 100,000 and more in the full run), sent 32 at a time over HTTP/2 and HTTP/1.1, while {@code
 * fuzz.slow} clients trickle headers a byte every two seconds. Every answer must be an
 * AdmissionReview with the uid echoed or a 4xx with a reason; no 5xx, no hang, no internal error;
 * the verdict of a review must not change when its fields come in another order; every slow client
 * is cut off; the process lives and its memory stays under the Pod's limit.
 */
@ExtendWith(Installed.class)
@Order(6)
class WebhookFuzzE2EIT {

  static final int CASES = Integer.getInteger("fuzz.cases", 20_000);
  static final int SLOW = Integer.getInteger("fuzz.slow", 100);
  static final long SEED = Long.getLong("fuzz.seed", System.currentTimeMillis());
  static final int IN_FLIGHT = 32;

  /** The Pod's memory limit (manifests/base); the process runs with MaxRAM of the same. */
  static final long LIMIT_BYTES = 256L * 1024 * 1024;

  /** A slow client must be gone well before this: the installation's headers deadline and 20 s. */
  static final Duration SLOW_CUT_BY = LocalInstall.WEBHOOK_HEADERS_DEADLINE.plusSeconds(20);

  /**
   * The API server drops a connection it has not used for 90 s (client-go's transport); the webhook
   * must keep it that long, through the whole hostile run, and never close it first.
   */
  static final Duration API_SERVER_IDLE =
      org.standalonecinder.webhook.http.WebhookServer.ClientLimits.API_SERVER_IDLE;

  private final Map<String, LongAdder> outcomes = new ConcurrentHashMap<>();
  private final List<String> failures = Collections.synchronizedList(new ArrayList<>());
  private final List<Long> latencies = Collections.synchronizedList(new ArrayList<>());

  @Test
  void everyHostileRequestGetsAnAnswerAndNothingBreaks(LocalInstall it) throws Exception {
    SSLContext tls = trustingTheWebhook(it);
    long pid = it.processes.pid("webhook");
    AtomicLong maxRss = new AtomicLong(rss(pid));
    Thread sampler = sampleMemory(pid, maxRss);
    // A review from the API server first: its connection then idles through the run.
    it.kubectl.ok(
        Claims.yaml(it.namespace("e2e-fuzz"), "before", "e2e-fuzz-no-such-class", ""),
        "create",
        "-f",
        "-");
    ApiServerConnections apiServer = ApiServerConnections.now(LocalInstall.WEBHOOK_PORT);
    SlowClients slow = new SlowClients(tls, SLOW);
    slow.start();

    HttpClient h2 = client(tls, HttpClient.Version.HTTP_2);
    HttpClient h1 = client(tls, HttpClient.Version.HTTP_1_1);
    HostileReviews cases = new HostileReviews(SEED);
    Semaphore window = new Semaphore(IN_FLIGHT);
    LongAdder orderChecks = new LongAdder();
    long started = System.nanoTime();
    List<CompletableFuture<?>> pending = new ArrayList<>();
    for (int n = 0; n < CASES; n++) {
      HostileReviews.Case c = cases.next(n);
      HostileReviews.Case reordered =
          c.tree() != null && n % 4 == 0
              ? new HostileReviews.Case(
                  n,
                  c.method(),
                  c.path(),
                  c.contentType(),
                  HostileReviews.bytes(cases.shuffled(c.tree())),
                  c.uid(),
                  c.damage(),
                  c.what() + " (fields reordered)",
                  null)
              : null;
      HttpClient client = n % 5 == 0 ? h1 : h2;
      window.acquire();
      CompletableFuture<?> done =
          send(client, c)
              .thenCompose(
                  first ->
                      reordered == null
                          ? CompletableFuture.completedFuture(null)
                          : send(client, reordered)
                              .thenAccept(
                                  second -> {
                                    orderChecks.increment();
                                    if (!verdict(first).equals(verdict(second))) {
                                      fail(
                                          c,
                                          "the verdict changed with the fields' order: "
                                              + verdict(first)
                                              + " vs "
                                              + verdict(second));
                                    }
                                  }))
              .whenComplete((v, e) -> window.release());
      pending.add(done);
      if (pending.size() > 4 * IN_FLIGHT) {
        pending.removeIf(CompletableFuture::isDone);
      }
    }
    CompletableFuture.allOf(pending.toArray(CompletableFuture[]::new)).get(5, TimeUnit.MINUTES);
    long fuzzMillis = (System.nanoTime() - started) / 1_000_000;
    SlowClients.Result slowResult = slow.awaitCutOff(SLOW_CUT_BY);
    sampler.interrupt();
    sampler.join();
    boolean alive = ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false);
    int healthz = healthz(h2);
    List<ApiServerConnections.Connection> closed =
        apiServer.awaitClosed(API_SERVER_IDLE.plusSeconds(40));

    String report =
        report(fuzzMillis, orderChecks.sum(), slowResult, maxRss.get(), alive, healthz)
            + "  the API server's connections: "
            + closed
            + "\n";
    System.out.println(report);
    Path out = Path.of("target/reliability/webhook-fuzz.txt");
    Files.createDirectories(out.getParent());
    Files.writeString(out, report);

    assertThat(failures).as("cases that failed (seed " + SEED + ")").isEmpty();
    assertThat(alive).as("the webhook process is alive").isTrue();
    assertThat(healthz).as("/healthz after the run").isEqualTo(200);
    assertThat(slowResult.stillOpen()).as("slow clients never cut off").isZero();
    assertThat(maxRss.get()).as("the webhook's peak RSS").isLessThan(LIMIT_BYTES);
    assertThat(orderChecks.sum()).isPositive();
    assertThat(apiServer.ports()).as("the API server's connections after its review").isNotEmpty();
    // Between the API server's 90 s and the webhook's idle deadline (120 s), counted from each
    // connection's last use: the API server dropped it; had the webhook closed first, it would
    // have gone before 90 s.
    assertThat(closed)
        .as("each closed by the API server once unused for 90 s, not by the webhook before")
        .allSatisfy(
            c ->
                assertThat(c.closedAfterMillis())
                    .isBetween(
                        API_SERVER_IDLE.toMillis() - 5_000, API_SERVER_IDLE.toMillis() + 25_000));
  }

  // ---- one request ----

  /** What an answer says, for the field-order property; the token's signature is per call. */
  record Verdict(
      int status, boolean allowed, int code, String message, String warnings, String patch) {}

  private record Answer(HostileReviews.Case sent, int status, JsonNode review, String text) {}

  /** How often a case answered 429 (too busy) is sent again, as a client that honours it does. */
  static final int BUSY_RETRIES = 20;

  private CompletableFuture<Answer> send(HttpClient client, HostileReviews.Case c) {
    return send(client, c, 0);
  }

  private CompletableFuture<Answer> send(HttpClient client, HostileReviews.Case c, int tries) {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(
                URI.create("https://127.0.0.1:" + LocalInstall.WEBHOOK_PORT + c.path()))
            .timeout(Duration.ofSeconds(20));
    if (c.contentType() != null) {
      b.header("Content-Type", c.contentType());
    }
    b.method(
        c.method(),
        c.body().length == 0 && "GET".equals(c.method())
            ? HttpRequest.BodyPublishers.noBody()
            : HttpRequest.BodyPublishers.ofByteArray(c.body()));
    long t0 = System.nanoTime();
    return client
        .sendAsync(b.build(), HttpResponse.BodyHandlers.ofString())
        .handle(
            (r, e) -> {
              latencies.add((System.nanoTime() - t0) / 1000);
              if (e == null && r.statusCode() == 429 && tries < BUSY_RETRIES) {
                // The webhook bounds what reviews in flight may hold (its LoadGate): 32 cases
                // of up to 3 MiB at once from one client go over it. Sent again after a pause,
                // as Retry-After asks; the rules are what this test is about.
                count("HTTP 429, sent again");
                return CompletableFuture.supplyAsync(
                        () -> null,
                        CompletableFuture.delayedExecutor(
                            100L * (tries + 1), java.util.concurrent.TimeUnit.MILLISECONDS))
                    .thenCompose(x -> send(client, c, tries + 1));
              }
              if (e != null) {
                fail(c, "no answer: " + e);
                return CompletableFuture.completedFuture(new Answer(c, -1, null, null));
              }
              return CompletableFuture.completedFuture(judge(c, r));
            })
        .thenCompose(f -> f);
  }

  private Answer judge(HostileReviews.Case c, HttpResponse<String> r) {
    int status = r.statusCode();
    String body = r.body();
    if (status >= 500) {
      fail(c, "HTTP " + status + ": " + body);
      return new Answer(c, status, null, body);
    }
    if (status >= 400) {
      count("HTTP " + status);
      if (body == null || body.isBlank()) {
        fail(c, "HTTP " + status + " without a reason");
      }
      return new Answer(c, status, null, body);
    }
    JsonNode review;
    try {
      review = HostileReviews.JSON.readTree(body);
    } catch (IOException e) {
      fail(c, "HTTP " + status + " with a body that is not JSON: " + body);
      return new Answer(c, status, null, body);
    }
    JsonNode res = review.path("response");
    if (!"AdmissionReview".equals(review.path("kind").asText())
        || !res.path("uid").isTextual()
        || res.path("uid").asText().isEmpty()
        || !res.path("allowed").isBoolean()) {
      fail(c, "not an AdmissionReview: " + body);
    } else if (c.uid() != null && !c.uid().equals(res.path("uid").asText())) {
      fail(c, "the uid " + c.uid() + " came back as " + res.path("uid").asText());
    } else if (!res.path("allowed").asBoolean()) {
      String message = res.at("/status/message").asText("");
      if (message.isBlank() || !res.at("/status/code").isInt()) {
        fail(c, "a denial without code or message: " + body);
      } else if (message.startsWith("internal error")) {
        // The rules threw: a bug, whatever the input.
        fail(c, "an internal error: " + message);
      } else {
        count("denied " + res.at("/status/code").asInt());
      }
    } else {
      count(res.has("patch") ? "allowed with a patch" : "allowed");
    }
    return new Answer(c, status, review, body);
  }

  private static Verdict verdict(Answer a) {
    if (a.review() == null) {
      // A refusal names the first problem the parser met, which may change with the order of
      // several; that it is refused may not.
      return new Verdict(a.status(), false, 0, "", "", "");
    }
    JsonNode res = a.review().path("response");
    String patch = "";
    if (res.has("patch")) {
      try {
        JsonNode ops =
            HostileReviews.JSON.readTree(Base64.getDecoder().decode(res.path("patch").asText()));
        for (JsonNode op : ops) {
          JsonNode value = op.path("value");
          if (value.isTextual() && value.asText().startsWith("v1.")) {
            ((ObjectNode) op).put("value", "<token>");
          } else if (value.isObject() && value.has("standalone-cinder.io/clone-token")) {
            ((ObjectNode) value).put("standalone-cinder.io/clone-token", "<token>");
          }
        }
        patch = ops.toString();
      } catch (IOException e) {
        patch = "unreadable";
      }
    }
    return new Verdict(
        a.status(),
        res.path("allowed").asBoolean(),
        res.at("/status/code").asInt(),
        res.at("/status/message").asText(""),
        res.path("warnings").toString(),
        patch);
  }

  private void count(String outcome) {
    outcomes.computeIfAbsent(outcome, k -> new LongAdder()).increment();
  }

  private void fail(HostileReviews.Case c, String why) {
    count("FAILED");
    if (failures.size() < 50) {
      failures.add(
          "case "
              + c.number()
              + " ("
              + c.damage()
              + ": "
              + abbreviate(c.what())
              + "): "
              + abbreviate(why));
    }
  }

  /** At most 300 characters, each printable: a case's text may hold anything. */
  private static String abbreviate(String s) {
    StringBuilder b = new StringBuilder();
    for (int i = 0; i < Math.min(s.length(), 300); i++) {
      char c = s.charAt(i);
      b.append(
          Character.isSurrogate(c) || Character.isISOControl(c)
              ? String.format("\\u%04x", (int) c)
              : String.valueOf(c));
    }
    return s.length() > 300 ? b + "…" : b.toString();
  }

  // ---- slow clients ----

  /**
   * Clients that open a TLS connection and send a request's headers a byte every two seconds: they
   * never finish, so only the server's deadlines can free their connections.
   */
  static final class SlowClients {
    private final SSLContext tls;
    private final int count;
    private final List<SSLSocket> sockets = new ArrayList<>();
    private final List<Long> cutAfterMillis = Collections.synchronizedList(new ArrayList<>());
    private Thread writer;
    private long started;

    record Result(int opened, int cut, int stillOpen, long medianCutMillis, long maxCutMillis) {}

    SlowClients(SSLContext tls, int count) {
      this.tls = tls;
      this.count = count;
    }

    void start() throws IOException {
      started = System.nanoTime();
      for (int i = 0; i < count; i++) {
        // From ten addresses (pods of their own), each within the connections one client may hold:
        // every slow client is kept until a deadline frees it.
        SSLSocket s =
            (SSLSocket)
                tls.getSocketFactory()
                    .createSocket(
                        java.net.InetAddress.getByName("127.0.0.1"),
                        LocalInstall.WEBHOOK_PORT,
                        java.net.InetAddress.getByName("127.0.1." + (1 + i % 10)),
                        0);
        s.startHandshake();
        sockets.add(s);
      }
      byte[] headers =
          ("POST /validate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nX-Pad: "
                  + "a".repeat(4000))
              .getBytes(StandardCharsets.US_ASCII);
      writer =
          new Thread(
              () -> {
                boolean[] gone = new boolean[sockets.size()];
                for (int at = 0;
                    at < headers.length && cutAfterMillis.size() < sockets.size();
                    at++) {
                  for (int i = 0; i < sockets.size(); i++) {
                    if (gone[i]) {
                      continue;
                    }
                    try {
                      OutputStream out = sockets.get(i).getOutputStream();
                      out.write(headers[at]);
                      out.flush();
                    } catch (IOException e) {
                      gone[i] = true;
                      cutAfterMillis.add((System.nanoTime() - started) / 1_000_000);
                    }
                  }
                  try {
                    Thread.sleep(2000);
                  } catch (InterruptedException e) {
                    return;
                  }
                }
              },
              "slow-clients");
      writer.setDaemon(true);
      writer.start();
    }

    Result awaitCutOff(Duration by) throws InterruptedException {
      long deadline = started + by.toNanos();
      while (cutAfterMillis.size() < sockets.size() && System.nanoTime() < deadline) {
        Thread.sleep(500);
      }
      writer.interrupt();
      sockets.forEach(
          s -> {
            try {
              s.close();
            } catch (IOException e) {
              // closed by the server already
            }
          });
      List<Long> cut = new ArrayList<>(cutAfterMillis);
      Collections.sort(cut);
      return new Result(
          sockets.size(),
          cut.size(),
          sockets.size() - cut.size(),
          cut.isEmpty() ? -1 : cut.get(cut.size() / 2),
          cut.isEmpty() ? -1 : cut.get(cut.size() - 1));
    }
  }

  // ---- the process ----

  static Thread sampleMemory(long pid, AtomicLong max) {
    Thread t =
        new Thread(
            () -> {
              while (!Thread.currentThread().isInterrupted()) {
                max.accumulateAndGet(rss(pid), Math::max);
                try {
                  Thread.sleep(100);
                } catch (InterruptedException e) {
                  return;
                }
              }
            },
            "rss-sampler");
    t.setDaemon(true);
    t.start();
    return t;
  }

  /** The resident set of a process, from /proc (Linux), in bytes. */
  static long rss(long pid) {
    try {
      for (String line : Files.readAllLines(Path.of("/proc/" + pid + "/status"))) {
        if (line.startsWith("VmRSS:")) {
          return Long.parseLong(line.replaceAll("\\D", "")) * 1024;
        }
      }
    } catch (IOException e) {
      // gone: the liveness check says so
    }
    return 0;
  }

  static int healthz(HttpClient client) throws Exception {
    return client
        .send(
            HttpRequest.newBuilder(
                    URI.create("https://127.0.0.1:" + LocalInstall.WEBHOOK_PORT + "/healthz"))
                .timeout(Duration.ofSeconds(5))
                .build(),
            HttpResponse.BodyHandlers.discarding())
        .statusCode();
  }

  /**
   * The sum of a metric's samples on the webhook's {@code /metrics} whose line starts with {@code
   * sample} (a name, or a name and its first labels).
   */
  static double metric(HttpClient client, String sample) throws Exception {
    String text =
        client
            .send(
                HttpRequest.newBuilder(
                        URI.create("https://127.0.0.1:" + LocalInstall.WEBHOOK_PORT + "/metrics"))
                    .timeout(Duration.ofSeconds(5))
                    .build(),
                HttpResponse.BodyHandlers.ofString())
            .body();
    return text.lines()
        .filter(l -> l.startsWith(sample))
        .mapToDouble(l -> Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1)))
        .sum();
  }

  /** Trusts what the API server trusts: the caBundle the webhook wrote into its configuration. */
  static SSLContext trustingTheWebhook(LocalInstall it) {
    return CaRotationE2EIT.bundle(it).clientContext();
  }

  static HttpClient client(SSLContext tls, HttpClient.Version version) {
    return HttpClient.newBuilder()
        .sslContext(tls)
        .version(version)
        .connectTimeout(Duration.ofSeconds(5))
        .build();
  }

  private String report(
      long fuzzMillis,
      long orderChecks,
      SlowClients.Result slow,
      long maxRss,
      boolean alive,
      int healthz) {
    List<Long> l = new ArrayList<>(latencies);
    Collections.sort(l);
    StringBuilder b = new StringBuilder();
    b.append("webhook fuzz: seed ").append(SEED).append('\n');
    b.append(
        String.format(
            "  %d cases in %.1f s (%.0f/s), %d in flight; %d field-order pairs%n",
            CASES,
            fuzzMillis / 1000.0,
            CASES * 1000.0 / Math.max(1, fuzzMillis),
            IN_FLIGHT,
            orderChecks));
    b.append(
        String.format(
            "  latency µs: median %d, p99 %d, max %d%n",
            l.get(l.size() / 2), l.get((int) (l.size() * 0.99)), l.get(l.size() - 1)));
    new TreeMap<>(outcomes)
        .forEach((k, v) -> b.append("  ").append(k).append(": ").append(v.sum()).append('\n'));
    b.append(
        String.format(
            "  slow clients: %d opened, %d cut off (median %.1f s, last %.1f s), %d still open%n",
            slow.opened(),
            slow.cut(),
            slow.medianCutMillis() / 1000.0,
            slow.maxCutMillis() / 1000.0,
            slow.stillOpen()));
    b.append(
        String.format(
            "  webhook: peak RSS %d MiB (limit %d MiB), alive %s, /healthz %d%n",
            maxRss >> 20, LIMIT_BYTES >> 20, alive, healthz));
    failures.forEach(f -> b.append("  FAILED ").append(f).append('\n'));
    return b.toString();
  }
}
