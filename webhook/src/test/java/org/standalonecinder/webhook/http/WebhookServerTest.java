package org.standalonecinder.webhook.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpVersion;
import io.vertx.core.http.RequestOptions;
import io.vertx.core.net.PemTrustOptions;
import io.vertx.junit5.Checkpoint;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.security.cert.X509Certificate;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import javax.net.ssl.SSLContext;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.standalonecinder.certs.CaBundle;
import org.standalonecinder.certs.CertificateAuthority;
import org.standalonecinder.certs.DynamicCertificateSource;
import org.standalonecinder.certs.RenewalPolicy;
import org.standalonecinder.webhook.admission.AdmissionController;
import org.standalonecinder.webhook.admission.Decision;

/**
 * The webhook server over real TLS: HTTP/2 and 1.1, the review protocol, bad input, rotation,
 * protocols and cipher suites. Runs on BoringSSL; {@link Jdk} runs every test again on the JDK's
 * engine.
 */
@ExtendWith(VertxExtension.class)
class WebhookServerTest {

  /** The same tests on the JDK's TLS engine. */
  static final class Jdk extends WebhookServerTest {
    @Override
    WebhookServer.TlsEngine engine() {
      return WebhookServer.TlsEngine.JDK;
    }
  }

  WebhookServer.TlsEngine engine() {
    return WebhookServer.TlsEngine.OPENSSL;
  }

  private static final ObjectMapper JSON = new ObjectMapper();

  /** The real time, unless a test fixes it. */
  static final class MovableClock extends Clock {
    volatile Instant fixed;

    @Override
    public ZoneId getZone() {
      return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
      return this;
    }

    @Override
    public Instant instant() {
      return fixed != null ? fixed : Instant.now();
    }
  }

  /**
   * Allows, warns with the operation, denies objects named deny-me, patches on /mutate; objects
   * named {@code throw-<what>-on-<loop|worker>} make it throw there (see {@link #thrown}).
   */
  static final AdmissionController CONTROLLER =
      (request, mutating) -> {
        String name = request.name();
        if ("deny-me".equals(name)) {
          return Decision.deny(403, "test-rule", "denied: " + name);
        }
        if (name != null && name.startsWith("throw-")) {
          boolean onLoop = io.vertx.core.Context.isOnEventLoopThread();
          if (name.endsWith("-on-worker") && onLoop) {
            throw org.standalonecinder.webhook.admission.WouldBlock.INSTANCE;
          }
          throw thrown(name.substring("throw-".length(), name.lastIndexOf("-on-")));
        }
        return Decision.allow(
            List.of("seen " + request.operation()),
            mutating
                ? "[{\"op\":\"add\",\"path\":\"/metadata/labels\",\"value\":{\"a\":\"b\"}}]"
                : null,
            List.of());
      };

  private final MovableClock clock = new MovableClock();
  private Vertx vertx;
  private CertificateAuthority ca;
  private DynamicCertificateSource certs;
  private WebhookServer server;
  private SSLContext trust;

  @BeforeEach
  void start(Vertx vertx, VertxTestContext ctx) throws Exception {
    this.vertx = vertx;
    ca = CertificateAuthority.generate("test-ca", Duration.ofDays(30), clock);
    certs =
        new DynamicCertificateSource(
            ca,
            List.of("localhost"),
            List.of("127.0.0.1"),
            Duration.ofHours(3),
            // Due for renewal about a second after issue, so the rotation test needs no time
            // travel (clients check validity against the real clock).
            new RenewalPolicy(1.0 / 10_000),
            clock);
    // The tests make clients freely, and Java 17's cannot be closed: their connections stay open
    // until the server's idle deadline. The limits are tested on a server of their own.
    server =
        new WebhookServer(vertx, certs, CONTROLLER, () -> true, null, engine())
            .connectionLimits(new WebhookServer.ConnectionLimits(100_000, 100_000));
    trust = CaBundle.of(List.of(ca.certificate())).clientContext();
    server.listen("127.0.0.1", 0).onComplete(ctx.succeedingThenComplete());
  }

  @AfterEach
  void stop(VertxTestContext ctx) {
    // The extension closes Vert.x after this.
    server.close().onComplete(ctx.succeedingThenComplete());
  }

  private HttpClient client(HttpClient.Version version) {
    return HttpClient.newBuilder()
        .sslContext(trust)
        .version(version)
        .connectTimeout(Duration.ofSeconds(5))
        .build();
  }

  private HttpResponse<String> post(HttpClient c, String path, String contentType, String body)
      throws Exception {
    return c.send(
        HttpRequest.newBuilder(URI.create("https://localhost:" + server.port() + path))
            .header("Content-Type", contentType)
            .timeout(Duration.ofSeconds(10))
            // Latin-1: every char one byte, so a row can send bytes that are not UTF-8.
            .POST(
                HttpRequest.BodyPublishers.ofByteArray(
                    body.getBytes(java.nio.charset.StandardCharsets.ISO_8859_1)))
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  static String review(String apiVersion, String uid, String name) {
    return "{\"apiVersion\":\""
        + apiVersion
        + "\",\"kind\":\"AdmissionReview\",\"request\":{\"uid\":\""
        + uid
        + "\",\"kind\":{\"group\":\"\",\"version\":\"v1\",\"kind\":\"PersistentVolumeClaim\"},"
        + "\"resource\":{\"group\":\"\",\"version\":\"v1\",\"resource\":\"persistentvolumeclaims\"},"
        + "\"name\":\""
        + name
        + "\",\"namespace\":\"apps\",\"operation\":\"CREATE\","
        + "\"userInfo\":{\"username\":\"alice\"},\"object\":{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolumeClaim\","
        + "\"metadata\":{\"name\":\""
        + name
        + "\",\"namespace\":\"apps\"}},\"dryRun\":false}}";
  }

  @Test
  void answersOverHttp2WithTheUidEchoed() throws Exception {
    HttpResponse<String> r =
        post(
            client(HttpClient.Version.HTTP_2),
            "/validate",
            "application/json",
            review("admission.k8s.io/v1", "u-1", "data"));
    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(r.version()).isEqualTo(HttpClient.Version.HTTP_2);
    JsonNode res = JSON.readTree(r.body());
    assertThat(res.path("apiVersion").asText()).isEqualTo("admission.k8s.io/v1");
    assertThat(res.at("/response/uid").asText()).isEqualTo("u-1");
    assertThat(res.at("/response/allowed").asBoolean()).isTrue();
    assertThat(res.at("/response/warnings/0").asText()).isEqualTo("seen CREATE");
    assertThat(res.at("/response/patch").isMissingNode()).isTrue();
    assertThat(r.sslSession().orElseThrow().getProtocol()).isIn("TLSv1.3", "TLSv1.2");
  }

  @Test
  void answersHttp11AndV1beta1InKind() throws Exception {
    HttpResponse<String> r =
        post(
            client(HttpClient.Version.HTTP_1_1),
            "/mutate",
            "application/json; charset=utf-8",
            review("admission.k8s.io/v1beta1", "u-2", "data"));
    assertThat(r.version()).isEqualTo(HttpClient.Version.HTTP_1_1);
    JsonNode res = JSON.readTree(r.body());
    assertThat(res.path("apiVersion").asText()).isEqualTo("admission.k8s.io/v1beta1");
    assertThat(res.at("/response/uid").asText()).isEqualTo("u-2");
    assertThat(res.at("/response/patchType").asText()).isEqualTo("JSONPatch");
    assertThat(
            new String(
                Base64.getDecoder().decode(res.at("/response/patch").asText()),
                StandardCharsets.UTF_8))
        .contains("\"path\":\"/metadata/labels\"");
  }

  /**
   * Where each review is decided: on the event loop when it needs no lookup, and once more on a
   * worker when a lookup refuses the event loop; the lookup itself only ever runs on the worker.
   */
  @ParameterizedTest(name = "{0}")
  @CsvSource({
    "a review that needs no lookup, plain, eventloop, false",
    "a review that looks something up, needs-lookup, eventloop worker, true",
  })
  void aReviewIsDecidedOnTheEventLoopUnlessItMustLookSomethingUp(
      String name, String claim, String decidedOn, boolean lookedUp) throws Exception {
    List<String> decisions = java.util.Collections.synchronizedList(new ArrayList<>());
    List<String> lookups = java.util.Collections.synchronizedList(new ArrayList<>());
    org.standalonecinder.webhook.policy.ClusterView lookup =
        org.standalonecinder.webhook.policy.OffLoopOnly.clusterView(
            new org.standalonecinder.webhook.policy.ClusterView() {
              @Override
              public java.util.Optional<io.fabric8.kubernetes.api.model.storage.StorageClass>
                  storageClass(String n) {
                lookups.add(Thread.currentThread().getName());
                return java.util.Optional.empty();
              }

              @Override
              public java.util.Optional<io.fabric8.kubernetes.api.model.PersistentVolume> volume(
                  String n) {
                throw new UnsupportedOperationException();
              }

              @Override
              public java.util.Optional<io.fabric8.kubernetes.api.model.PersistentVolumeClaim>
                  claim(String ns, String n) {
                throw new UnsupportedOperationException();
              }

              @Override
              public java.util.Map<String, String> namespaceLabels(String ns) {
                throw new UnsupportedOperationException();
              }

              @Override
              public boolean canCreatePods(
                  io.fabric8.kubernetes.api.model.authentication.UserInfo u, String ns) {
                throw new UnsupportedOperationException();
              }

              @Override
              public org.standalonecinder.api.ReferenceGrants.Page referenceGrants(
                  String ns, String next) {
                throw new UnsupportedOperationException();
              }
            },
            WebhookServer::mayBlock);
    AdmissionController where =
        (request, mutating) -> {
          decisions.add(
              Thread.currentThread().getName().contains("eventloop") ? "eventloop" : "worker");
          if (request.name().equals("needs-lookup")) {
            lookup.storageClass("fast");
          }
          return Decision.allow();
        };
    WebhookServer s = listening(where, WebhookServer.ClientLimits.DEFAULT);
    try {
      HttpResponse<String> r =
          client(HttpClient.Version.HTTP_2)
              .send(
                  HttpRequest.newBuilder(URI.create("https://localhost:" + s.port() + "/validate"))
                      .header("Content-Type", "application/json")
                      .POST(
                          HttpRequest.BodyPublishers.ofString(
                              review("admission.k8s.io/v1", "u-where", claim)))
                      .build(),
                  HttpResponse.BodyHandlers.ofString());
      assertThat(JSON.readTree(r.body()).at("/response/allowed").asBoolean()).isTrue();
      assertThat(decisions).containsExactly(decidedOn.split(" "));
      assertThat(lookups).hasSize(lookedUp ? 1 : 0).allMatch(t -> t.contains("worker"));
    } finally {
      s.close().toCompletionStage().toCompletableFuture().get();
    }
  }

  @Test
  void aDenialCarriesItsCodeAndMessage() throws Exception {
    JsonNode res =
        JSON.readTree(
            post(
                    client(HttpClient.Version.HTTP_2),
                    "/validate",
                    "application/json",
                    review("admission.k8s.io/v1", "u-3", "deny-me"))
                .body());
    assertThat(res.at("/response/allowed").asBoolean()).isFalse();
    assertThat(res.at("/response/status/code").asInt()).isEqualTo(403);
    assertThat(res.at("/response/status/message").asText()).isEqualTo("denied: deny-me");
  }

  static RuntimeException thrown(String what) {
    switch (what) {
      case "overflow" -> throw new StackOverflowError();
      case "assertion" -> throw new AssertionError("a rule's assertion");
      case "linkage" -> throw new NoClassDefFoundError("org/example/Missing");
      default -> {
        return new IllegalStateException(what + " " + "x".repeat(10_000));
      }
    }
  }

  /**
   * Whatever the rules throw, on the event loop or on a worker, the review is answered 200 and
   * denied: never a bare 500, which an entry with {@code failurePolicy: Ignore} would let through.
   * The reason quotes what was thrown, cut short.
   */
  @ParameterizedTest(name = "{0} on the {1}")
  @CsvSource({
    "overflow, loop, java.lang.StackOverflowError",
    "overflow, worker, java.lang.StackOverflowError",
    "assertion, loop, java.lang.AssertionError: a rule's assertion",
    "assertion, worker, java.lang.AssertionError: a rule's assertion",
    "linkage, worker, java.lang.NoClassDefFoundError: org/example/Missing",
    "runtime, loop, java.lang.IllegalStateException: runtime xxx",
  })
  void anythingThrownWhileJudgingIsADenial(String what, String where, String says)
      throws Exception {
    HttpResponse<String> r =
        post(
            client(HttpClient.Version.HTTP_2),
            "/mutate",
            "application/json",
            review("admission.k8s.io/v1", "u-t", "throw-" + what + "-on-" + where));
    assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
    JsonNode res = JSON.readTree(r.body());
    assertThat(res.at("/response/uid").asText()).isEqualTo("u-t");
    assertThat(res.at("/response/allowed").asBoolean()).isFalse();
    assertThat(res.at("/response/status/code").asInt()).isEqualTo(500);
    String message = res.at("/response/status/message").asText();
    assertThat(message).startsWith("internal error: " + says);
    assertThat(message.length()).as(message).isLessThan(200);
  }

  static Stream<Arguments> badInput() {
    return Stream.of(
        Arguments.of(
            "another content type",
            "text/plain",
            review("admission.k8s.io/v1", "u", "x"),
            415,
            "expected Content-Type application/json"),
        Arguments.of("not JSON", "application/json", "{not json", 400, "the body is not JSON"),
        Arguments.of(
            "JSON but no review",
            "application/json",
            "{\"kind\":\"Pod\"}",
            400,
            "not an AdmissionReview"),
        Arguments.of(
            "a list, not an object",
            "application/json",
            "[1,2]",
            400,
            "not an AdmissionReview whose request can be read"),
        Arguments.of(
            "a request that is a string",
            "application/json",
            "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":\"x\"}",
            400,
            "not an AdmissionReview whose request can be read"),
        Arguments.of(
            "a uid that is an object",
            "application/json",
            "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
                + "\"request\":{\"uid\":{\"a\":1}}}",
            400,
            "not an AdmissionReview whose request can be read"),
        Arguments.of(
            "no request",
            "application/json",
            "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\"}",
            400,
            "no request.uid"),
        Arguments.of(
            "unknown version",
            "application/json",
            review("admission.k8s.io/v2", "u", "x"),
            400,
            "not an AdmissionReview"),
        Arguments.of(
            "no uid",
            "application/json",
            review("admission.k8s.io/v1", "", "x"),
            400,
            "no request.uid"),
        Arguments.of(
            "over 3 MiB",
            "application/json",
            "{\"pad\":\"" + "x".repeat(3 * 1024 * 1024) + "\"}",
            413,
            "the body is larger than 3145728 bytes"),
        Arguments.of(
            "a key given twice (read two ways by two parsers)",
            "application/json",
            review("admission.k8s.io/v1", "u", "x")
                .replace(
                    "\"kind\":\"AdmissionReview\",",
                    "\"kind\":\"AdmissionReview\",\"kind\":\"X\","),
            400,
            "Duplicate field 'kind'"),
        Arguments.of(
            "nesting 5000 deep",
            "application/json",
            "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"x\":"
                + "[".repeat(5000)
                + "]".repeat(5000)
                + "}",
            400,
            "Document nesting depth (65) exceeds the maximum allowed (64"),
        Arguments.of(
            "invalid UTF-8",
            "application/json",
            new String(
                new byte[] {'{', '"', (byte) 0xC3, (byte) 0x28, '"', ':', '1', '}'},
                java.nio.charset.StandardCharsets.ISO_8859_1),
            400,
            "the body is not JSON"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("badInput")
  void badInputIsRefusedWithAReason(
      String name, String type, String body, int status, String reason) throws Exception {
    HttpResponse<String> r = post(client(HttpClient.Version.HTTP_1_1), "/validate", type, body);
    assertThat(r.statusCode()).isEqualTo(status);
    assertThat(r.body()).contains(reason);
  }

  /** A server of its own, with these deadlines; the test closes it. */
  private WebhookServer listening(AdmissionController controller, WebhookServer.ClientLimits limits)
      throws Exception {
    WebhookServer s =
        new WebhookServer(vertx, certs, controller, () -> true, null, engine(), limits);
    s.listen("127.0.0.1", 0).toCompletionStage().toCompletableFuture().get();
    return s;
  }

  private javax.net.ssl.SSLSocket tlsTo(int port) throws java.io.IOException {
    return (javax.net.ssl.SSLSocket) trust.getSocketFactory().createSocket("127.0.0.1", port);
  }

  /** The deadlines of the server that {@link #slowAndIdleClientsAreCutOff} runs: all different. */
  static final WebhookServer.ClientLimits STRICT =
      new WebhookServer.ClientLimits(
          Duration.ofMillis(2000), Duration.ofMillis(400), Duration.ofMillis(800));

  /**
   * What a slow client sends at once and then a byte every 100 ms, and between which times the
   * server cuts it off: each window holds one deadline of {@link #STRICT} and no other.
   */
  static Stream<Arguments> slowClients() {
    String headers =
        "POST /validate HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n";
    String review = review("admission.k8s.io/v1", "u", "x");
    return Stream.of(
        // The headers deadline (400 ms), though a byte comes every 100 ms.
        Arguments.of(
            "headers a byte at a time", "", headers + "X-Pad: " + "a".repeat(200), 300, 1500),
        // The request deadline (800 ms from the headers): a body that trickles in.
        Arguments.of(
            "a body a byte at a time",
            headers + "Content-Length: 1000\r\n\r\n",
            "{\"pad\":\"" + "a".repeat(200),
            700,
            1800),
        // The idle deadline (2 s), not the headers': nothing was sent.
        Arguments.of("a connection that says nothing", "", "", 1900, 6000),
        Arguments.of(
            "a kept-alive connection that says nothing after its answer",
            headers + "Content-Length: " + review.length() + "\r\n\r\n" + review,
            "",
            1900,
            6000));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("slowClients")
  void slowAndIdleClientsAreCutOff(
      String name, String atOnce, String trickled, long cutAfterMillis, long cutBeforeMillis)
      throws Exception {
    WebhookServer strict = listening(CONTROLLER, STRICT);
    try (javax.net.ssl.SSLSocket socket = tlsTo(strict.port())) {
      socket.setSoTimeout(8000);
      socket.startHandshake();
      long start = System.nanoTime();
      java.io.OutputStream out = socket.getOutputStream();
      boolean cut = false;
      out.write(atOnce.getBytes(java.nio.charset.StandardCharsets.ISO_8859_1));
      out.flush();
      try {
        for (byte b : trickled.getBytes(java.nio.charset.StandardCharsets.ISO_8859_1)) {
          out.write(b);
          out.flush();
          Thread.sleep(100);
        }
      } catch (java.io.IOException e) {
        cut = true;
      }
      // Whatever answer came, the server then closes: the read ends (or fails) well before the
      // sender would have finished (20 s and more) or the socket's own 8 s timeout.
      try {
        java.io.InputStream in = socket.getInputStream();
        while (in.read() >= 0) {
          // drain
        }
        cut = true;
      } catch (java.net.SocketTimeoutException e) {
        // not cut off: asserted below
      } catch (java.io.IOException e) {
        cut = true;
      }
      long millis = (System.nanoTime() - start) / 1_000_000;
      assertThat(cut).as("cut off").isTrue();
      assertThat(millis).isBetween(cutAfterMillis, cutBeforeMillis);
    } finally {
      strict.close().toCompletionStage().toCompletableFuture().get();
    }
  }

  /**
   * The API server reuses a connection it has not used for up to 90 s: a connection idle past the
   * headers deadline (and anything short of the idle deadline) still takes the next review.
   */
  @Test
  void aKeptAliveConnectionIdlePastTheHeadersDeadlineServesTheNextReview() throws Exception {
    WebhookServer strict = listening(CONTROLLER, STRICT);
    try (javax.net.ssl.SSLSocket socket = tlsTo(strict.port())) {
      socket.setSoTimeout(5000);
      var in =
          new java.io.BufferedReader(
              new java.io.InputStreamReader(
                  socket.getInputStream(), java.nio.charset.StandardCharsets.ISO_8859_1));
      for (String uid : List.of("first", "second")) {
        String review = review("admission.k8s.io/v1", uid, "x");
        socket
            .getOutputStream()
            .write(
                ("POST /validate HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json"
                        + "\r\nContent-Length: "
                        + review.length()
                        + "\r\n\r\n"
                        + review)
                    .getBytes(java.nio.charset.StandardCharsets.ISO_8859_1));
        socket.getOutputStream().flush();
        assertThat(in.readLine()).as("status of " + uid).isEqualTo("HTTP/1.1 200 OK");
        long length = 0;
        for (String h = in.readLine(); !h.isEmpty(); h = in.readLine()) {
          if (h.toLowerCase(java.util.Locale.ROOT).startsWith("content-length:")) {
            length = Long.parseLong(h.substring(15).trim());
          }
        }
        char[] body = new char[(int) length];
        for (int read = 0; read < length; ) {
          read += in.read(body, read, body.length - read);
        }
        assertThat(new String(body)).contains("\"uid\":\"" + uid + "\"");
        // Three times the headers deadline, under the idle deadline.
        Thread.sleep(3 * STRICT.headers().toMillis());
      }
    } finally {
      strict.close().toCompletionStage().toCompletableFuture().get();
    }
  }

  /** A TLS connection from a chosen loopback address, as a second pod would come from its own. */
  private javax.net.ssl.SSLSocket connectFrom(String localAddress, int port) throws Exception {
    javax.net.ssl.SSLSocket s =
        (javax.net.ssl.SSLSocket)
            trust
                .getSocketFactory()
                .createSocket(
                    java.net.InetAddress.getByName("127.0.0.1"),
                    port,
                    java.net.InetAddress.getByName(localAddress),
                    0);
    s.setSoTimeout(5000);
    s.startHandshake();
    return s;
  }

  /** Sends a request's headers declaring {@code length} bytes, and the first {@code send}. */
  private static void start(javax.net.ssl.SSLSocket s, long length, byte[] send) throws Exception {
    java.io.OutputStream out = s.getOutputStream();
    out.write(
        ("POST /validate HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                + "Content-Length: "
                + length
                + "\r\n\r\n")
            .getBytes(StandardCharsets.ISO_8859_1));
    out.write(send);
    out.flush();
  }

  /** The status line and body of the answer on a socket, within its timeout. */
  private static String answer(javax.net.ssl.SSLSocket s) throws Exception {
    java.io.ByteArrayOutputStream got = new java.io.ByteArrayOutputStream();
    byte[] buf = new byte[8192];
    try {
      for (int n; (n = s.getInputStream().read(buf)) >= 0; ) {
        got.write(buf, 0, n);
        String text = got.toString(StandardCharsets.ISO_8859_1);
        if (text.contains("\r\n\r\n")) {
          int head = text.indexOf("\r\n\r\n");
          String lengthHeader = "content-length: ";
          int at = text.toLowerCase().indexOf(lengthHeader);
          if (at >= 0 && at < head) {
            int end = text.indexOf("\r\n", at);
            int len = Integer.parseInt(text.substring(at + lengthHeader.length(), end).trim());
            if (text.length() - head - 4 >= len) {
              break;
            }
          }
        }
      }
    } catch (java.net.SocketException e) {
      // A server that closes after its answer may reset a connection with unread bytes.
    }
    return got.toString(StandardCharsets.ISO_8859_1);
  }

  /**
   * The flood, in miniature (limits of 64 KiB a client, one large body): a client that holds its
   * whole share with bodies it never finishes gets 429 at once for more, a large body waits for no
   * one, a body declared over 3 MiB is refused before a byte of it is read, and another client (the
   * API server) is answered all along. Then the held share is given back when the flooder's
   * connections end.
   */
  @Test
  void aFloodIsAnsweredTooBusyAtOnceWhileOtherClientsAreServed() throws Exception {
    WebhookServer gated =
        new WebhookServer(vertx, certs, CONTROLLER, () -> true, null, engine())
            .gateLimits(new LoadGate.Limits(256 << 10, 64 << 10, 16 << 10, 1));
    gated.listen("127.0.0.1", 0).toCompletionStage().toCompletableFuture().get();
    List<javax.net.ssl.SSLSocket> held = new ArrayList<>();
    byte[] body = review("admission.k8s.io/v1", "api", "data").getBytes(StandardCharsets.UTF_8);
    try {
      // The flooder declares 4 x 16 KiB and sends one byte of each: its whole share, held.
      for (int i = 0; i < 4; i++) {
        javax.net.ssl.SSLSocket s = connectFrom("127.0.0.2", gated.port());
        start(s, 16 << 10, new byte[] {'{'});
        held.add(s);
      }
      awaitGate(
          "the flooder's whole share held", () -> gated.gate().heldBy("127.0.0.2") >= 64 << 10);
      long t0 = System.nanoTime();
      try (javax.net.ssl.SSLSocket more = connectFrom("127.0.0.2", gated.port())) {
        start(more, 1024, new byte[0]);
        String a = answer(more);
        assertThat(a).startsWith("HTTP/1.1 429").contains("Retry-After: 1");
        assertThat(a).contains("too many reviews in flight from 127.0.0.2");
      }
      try (javax.net.ssl.SSLSocket huge = connectFrom("127.0.0.3", gated.port())) {
        start(huge, 64L << 20, new byte[0]);
        assertThat(answer(huge)).startsWith("HTTP/1.1 413").contains("larger than 3145728");
      }
      // A large body from a third client takes the one large place; a second waits for nobody.
      try (javax.net.ssl.SSLSocket big = connectFrom("127.0.0.3", gated.port());
          javax.net.ssl.SSLSocket big2 = connectFrom("127.0.0.4", gated.port())) {
        start(big, 40 << 10, new byte[] {'{'});
        awaitGate("the one large place taken", () -> gated.gate().largeInFlight() >= 1);
        start(big2, 40 << 10, new byte[0]);
        assertThat(answer(big2)).startsWith("HTTP/1.1 429").contains("too many large reviews");
      }
      assertThat((System.nanoTime() - t0) / 1_000_000).as("refusals come at once").isLessThan(3000);
      // The API server, from its own address, is answered while the flood holds its share.
      try (javax.net.ssl.SSLSocket api = connectFrom("127.0.0.1", gated.port())) {
        start(api, body.length, body);
        assertThat(answer(api)).startsWith("HTTP/1.1 200").contains("\"uid\":\"api\"");
      }
    } finally {
      for (javax.net.ssl.SSLSocket s : held) {
        s.close();
      }
    }
    // The flooder's connections are gone: its share is back.
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
    String again;
    do {
      try (javax.net.ssl.SSLSocket s = connectFrom("127.0.0.2", gated.port())) {
        start(s, body.length, body);
        again = answer(s);
      }
    } while (!again.startsWith("HTTP/1.1 200") && System.nanoTime() < deadline);
    assertThat(again).startsWith("HTTP/1.1 200");
    gated.close().toCompletionStage().toCompletableFuture().get();
  }

  /**
   * The starvation attack in miniature (96 KiB in all, 32 KiB a client): three addresses each hold
   * their whole share with bodies they never finish, so together they hold everything. The API
   * server, from a fourth address and without a client certificate the webhook could know it by, is
   * still answered: the address that holds the most yields its newest request (its connection
   * closed), since the API server holds less.
   */
  @Test
  void heldBodiesFromThreeAddressesDoNotLockOutTheApiServer() throws Exception {
    WebhookServer gated =
        new WebhookServer(vertx, certs, CONTROLLER, () -> true, null, engine())
            .gateLimits(new LoadGate.Limits(96 << 10, 32 << 10, 16 << 10, 1));
    gated.listen("127.0.0.1", 0).toCompletionStage().toCompletableFuture().get();
    List<javax.net.ssl.SSLSocket> held = new ArrayList<>();
    byte[] body = review("admission.k8s.io/v1", "api", "data").getBytes(StandardCharsets.UTF_8);
    try {
      for (String address : List.of("127.0.0.2", "127.0.0.3", "127.0.0.4")) {
        for (int i = 0; i < 2; i++) {
          javax.net.ssl.SSLSocket s = connectFrom(address, gated.port());
          start(s, 16 << 10, new byte[] {'{'});
          held.add(s);
        }
        awaitGate(address + "'s share held", () -> gated.gate().heldBy(address) >= 32 << 10);
      }
      for (int i = 0; i < 3; i++) {
        try (javax.net.ssl.SSLSocket api = connectFrom("127.0.0.1", gated.port())) {
          start(api, body.length, body);
          assertThat(answer(api)).startsWith("HTTP/1.1 200").contains("\"uid\":\"api\"");
        }
      }
      assertThat(gated.shedding().count(Shedding.Reason.DISPLACED)).isBetween(1L, 3L);
      assertThat(gated.shedding().count(Shedding.Reason.BYTES)).isZero();
      assertThat(endedByServer(held.get(1))).as("the newest of the first address, closed").isTrue();
    } finally {
      for (javax.net.ssl.SSLSocket s : held) {
        s.close();
      }
      gated.close().toCompletionStage().toCompletableFuture().get();
    }
  }

  /**
   * A client that goes away in the middle of its body (a flood cut off, an API server that gave up)
   * leaves nothing to answer and nothing to log as an error: a flood must not become a flood of
   * stack traces.
   */
  @Test
  void aClientThatLeavesMidBodyIsNoError() throws Exception {
    ch.qos.logback.classic.Logger router =
        (ch.qos.logback.classic.Logger)
            org.slf4j.LoggerFactory.getLogger("io.vertx.ext.web.RoutingContext");
    ch.qos.logback.core.read.ListAppender<ch.qos.logback.classic.spi.ILoggingEvent> seen =
        new ch.qos.logback.core.read.ListAppender<>();
    seen.start();
    router.addAppender(seen);
    // The server's own word that it saw each client go: what the test waits for, not a pause.
    ch.qos.logback.classic.Logger ours =
        (ch.qos.logback.classic.Logger) org.slf4j.LoggerFactory.getLogger(WebhookServer.class);
    ch.qos.logback.classic.Level before = ours.getLevel();
    ours.setLevel(ch.qos.logback.classic.Level.DEBUG);
    java.util.concurrent.CountDownLatch wentAway = new java.util.concurrent.CountDownLatch(3);
    ch.qos.logback.core.AppenderBase<ch.qos.logback.classic.spi.ILoggingEvent> gone =
        new ch.qos.logback.core.AppenderBase<>() {
          @Override
          protected void append(ch.qos.logback.classic.spi.ILoggingEvent e) {
            if (e.getMessage().contains("went away")) {
              wentAway.countDown();
            }
          }
        };
    gone.start();
    ours.addAppender(gone);
    try {
      for (int i = 0; i < 3; i++) {
        try (javax.net.ssl.SSLSocket s = connectFrom("127.0.0.1", server.port())) {
          start(s, 64 << 10, "{\"apiVersion\":".getBytes(StandardCharsets.US_ASCII));
          // The request reaches the router (the gate admitted it) before the client leaves.
          awaitGate("the request admitted", () -> server.gate().heldBy("127.0.0.1") > 0);
        }
      }
      assertThat(wentAway.await(5, TimeUnit.SECONDS)).as("the server saw each client go").isTrue();
      assertThat(seen.list)
          .as("what the router logged")
          .noneMatch(e -> e.getLevel().isGreaterOrEqual(ch.qos.logback.classic.Level.WARN));
    } finally {
      router.detachAppender(seen);
      ours.detachAppender(gone);
      ours.setLevel(before);
    }
  }

  /** A client that trusts the webhook and presents {@code identity} (null: no certificate). */
  private HttpClient presenting(org.standalonecinder.certs.IssuedCertificate identity)
      throws Exception {
    return HttpClient.newBuilder()
        .sslContext(tlsPresenting(identity))
        .version(HttpClient.Version.HTTP_1_1)
        .connectTimeout(Duration.ofSeconds(5))
        .build();
  }

  private SSLContext tlsPresenting(org.standalonecinder.certs.IssuedCertificate identity) {
    return CaBundle.of(List.of(ca.certificate())).clientContext(identity);
  }

  private static void healthz(javax.net.ssl.SSLSocket s) throws java.io.IOException {
    s.getOutputStream()
        .write(
            "GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
  }

  /** Whether the server ends a connection that sent nothing, within the socket's timeout. */
  /** Waits until the server has let in {@code count} connections (its side of the handshake). */
  private static void awaitOpen(WebhookServer server, int count) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
    while (server.shedding().openConnections() < count && System.nanoTime() < deadline) {
      Thread.sleep(5);
    }
    assertThat(server.shedding().openConnections()).as("connections let in").isEqualTo(count);
  }

  private static boolean endedByServer(javax.net.ssl.SSLSocket s) {
    try {
      return s.getInputStream().read() < 0;
    } catch (java.net.SocketTimeoutException e) {
      return false;
    } catch (java.io.IOException e) {
      return true;
    }
  }

  /**
   * A flood of connections, in miniature (6 in all, 4 a client): one pod that opens more than its
   * share has the extra closed right after the handshake, before it can send a byte; a second pod
   * fills what is left, and a third still gets in, the first yielding its newest connection (an
   * address that would then hold as many as the first gets nothing); the connections already open
   * are still answered; and the API server, by its client certificate, connects and is answered
   * from the flooder's own address while every place is taken. Once the flood's connections end,
   * their places are free again. Each refusal is counted by its reason.
   */
  @Test
  void aFloodOfConnectionsIsClosedAtTheLimitWhileTheApiServerStillConnects() throws Exception {
    CertificateAuthority clients =
        CertificateAuthority.generate("api-server-client-ca", Duration.ofDays(1), clock);
    WebhookServer limited =
        new WebhookServer(vertx, certs, CONTROLLER, () -> true, null, engine())
            .connectionLimits(new WebhookServer.ConnectionLimits(6, 4))
            .requireCallers(
                new WebhookServer.Callers(
                    List.of(clients.certificate()), java.util.Set.of("kube-apiserver")));
    limited.listen("127.0.0.1", 0).toCompletionStage().toCompletableFuture().get();
    byte[] body = review("admission.k8s.io/v1", "api", "data").getBytes(StandardCharsets.UTF_8);
    List<javax.net.ssl.SSLSocket> held = new ArrayList<>();
    try {
      // Each connection is let in before the next is opened: the server takes them in on several
      // event loops, and which one is the newest decides which is displaced below.
      for (int i = 0; i < 4; i++) {
        held.add(connectFrom("127.0.0.2", limited.port()));
        awaitOpen(limited, i + 1);
      }
      for (javax.net.ssl.SSLSocket s : held) {
        s.setSoTimeout(300);
        assertThat(endedByServer(s)).as("a connection within the client's share").isFalse();
        s.setSoTimeout(5000);
      }
      try (javax.net.ssl.SSLSocket extra = connectFrom("127.0.0.2", limited.port())) {
        assertThat(endedByServer(extra)).as("the flooder's fifth connection").isTrue();
      }
      held.add(connectFrom("127.0.0.3", limited.port()));
      awaitOpen(limited, 5);
      held.add(connectFrom("127.0.0.3", limited.port()));
      awaitOpen(limited, 6);
      // Every place taken: a newcomer gets one, and the address that holds the most yields its
      // newest connection (as the API server without --client-ca gets in past a flood).
      javax.net.ssl.SSLSocket newcomer = connectFrom("127.0.0.4", limited.port());
      held.add(newcomer);
      newcomer.setSoTimeout(300);
      assertThat(endedByServer(newcomer)).as("a newcomer past the limit in all").isFalse();
      newcomer.setSoTimeout(5000);
      assertThat(endedByServer(held.get(3))).as("the flooder's newest, displaced").isTrue();
      // Nobody yields to an address that would then hold as many as the one that holds the most.
      try (javax.net.ssl.SSLSocket third = connectFrom("127.0.0.3", limited.port())) {
        assertThat(endedByServer(third)).as("a connection past the limit in all").isTrue();
      }
      assertThat(limited.shedding().openConnections()).isEqualTo(6);

      javax.net.ssl.SSLSocket open = held.get(0);
      healthz(open);
      assertThat(answer(open)).as("a connection held by the flooder").startsWith("HTTP/1.1 200");

      javax.net.ssl.SSLSocket api =
          (javax.net.ssl.SSLSocket)
              tlsPresenting(clients.issueClient("kube-apiserver", Duration.ofHours(1), clock))
                  .getSocketFactory()
                  .createSocket(
                      java.net.InetAddress.getByName("127.0.0.1"),
                      limited.port(),
                      java.net.InetAddress.getByName("127.0.0.2"),
                      0);
      try (api) {
        api.setSoTimeout(5000);
        api.startHandshake();
        start(api, body.length, body);
        assertThat(answer(api)).as("the API server").startsWith("HTTP/1.1 200");
      }
      assertThat(limited.shedding().count(Shedding.Reason.CLIENT_CONNECTIONS)).isEqualTo(1);
      assertThat(limited.shedding().count(Shedding.Reason.CONNECTIONS)).isEqualTo(1);
      assertThat(limited.shedding().count(Shedding.Reason.DISPLACED)).isEqualTo(1);
    } finally {
      for (javax.net.ssl.SSLSocket s : held) {
        s.close();
      }
    }
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
    while (limited.shedding().openConnections() > 0 && System.nanoTime() < deadline) {
      Thread.sleep(20);
    }
    try (javax.net.ssl.SSLSocket after = connectFrom("127.0.0.4", limited.port())) {
      healthz(after);
      assertThat(answer(after)).as("once the flood is gone").startsWith("HTTP/1.1 200");
    } finally {
      limited.close().toCompletionStage().toCompletableFuture().get();
    }
  }

  /**
   * With {@code --client-ca}, reviews come from the API server only: a caller without a client
   * certificate (any pod that reaches the port), with one of another CA, or with one of the CA for
   * another name is refused before its review is read, whatever its review claims; the API server's
   * certificate is answered; the kubelet's probes, which present none, still are.
   */
  @Test
  void withCallersRequiredOnlyTheApiServersCertificateGetsAReview() throws Exception {
    CertificateAuthority clients =
        CertificateAuthority.generate("api-server-client-ca", Duration.ofDays(1), clock);
    CertificateAuthority other =
        CertificateAuthority.generate("someone-else", Duration.ofDays(1), clock);
    WebhookServer guarded =
        new WebhookServer(vertx, certs, CONTROLLER, () -> true, null, engine())
            .requireCallers(
                new WebhookServer.Callers(
                    List.of(clients.certificate()), java.util.Set.of("kube-apiserver")));
    guarded.listen("127.0.0.1", 0).toCompletionStage().toCompletableFuture().get();
    String body = review("admission.k8s.io/v1", "u-1", "data");
    record Caller(
        String name,
        org.standalonecinder.certs.IssuedCertificate identity,
        int status,
        String says) {}
    List<Caller> callers =
        List.of(
            new Caller("no certificate", null, 401, "this connection presented none"),
            new Caller(
                "a certificate of another CA",
                other.issueClient("kube-apiserver", Duration.ofHours(1), clock),
                // The server names the CAs it takes, so a client offers none of another CA.
                401,
                "reviews are taken from the API server only"),
            new Caller(
                "the CA's serving certificate of the API server's name",
                clients.issueServing(
                    List.of("kube-apiserver"), List.of(), Duration.ofHours(1), clock),
                401,
                "is not for client authentication"),
            new Caller(
                "the CA's certificate for another name",
                clients.issueClient("mallory", Duration.ofHours(1), clock),
                403,
                "names [mallory], none of [kube-apiserver]"),
            new Caller(
                "the API server",
                clients.issueClient("kube-apiserver", Duration.ofHours(1), clock),
                200,
                "\"uid\":\"u-1\""));
    try {
      for (Caller c : callers) {
        HttpResponse<String> r;
        try {
          r =
              presenting(c.identity())
                  .send(
                      HttpRequest.newBuilder(
                              URI.create("https://localhost:" + guarded.port() + "/validate"))
                          .header("Content-Type", "application/json")
                          .POST(HttpRequest.BodyPublishers.ofString(body))
                          .build(),
                      HttpResponse.BodyHandlers.ofString());
        } catch (java.io.IOException e) {
          // A TLS engine may end the handshake on a certificate of a CA it does not trust.
          assertThat(c.status()).as(c.name() + ": " + e).isEqualTo(401);
          continue;
        }
        assertThat(r.statusCode()).as(c.name()).isEqualTo(c.status());
        assertThat(r.body()).as(c.name()).contains(c.says());
      }
      HttpResponse<String> probe =
          presenting(null)
              .send(
                  HttpRequest.newBuilder(
                          URI.create("https://localhost:" + guarded.port() + "/healthz"))
                      .build(),
                  HttpResponse.BodyHandlers.ofString());
      assertThat(probe.statusCode()).as("the kubelet's probe").isEqualTo(200);
    } finally {
      guarded.close().toCompletionStage().toCompletableFuture().get();
    }
  }

  @Test
  void manyConcurrentRequestsAllSucceed() throws Exception {
    HttpClient c = client(HttpClient.Version.HTTP_2);
    // One answered first: the JDK's client opens a connection per request until its HTTP/2
    // connection is up, and 200 handshakes at once timed out on a loaded CI machine. After it, all
    // 200 are streams of that one connection, as an API server sends them.
    assertThat(
            post(c, "/validate", "application/json", review("admission.k8s.io/v1", "w", "data"))
                .statusCode())
        .isEqualTo(200);
    List<CompletableFuture<HttpResponse<String>>> all = new ArrayList<>();
    for (int i = 0; i < 200; i++) {
      all.add(
          c.sendAsync(
              HttpRequest.newBuilder(URI.create("https://localhost:" + server.port() + "/validate"))
                  .header("Content-Type", "application/json")
                  .POST(
                      HttpRequest.BodyPublishers.ofString(
                          review("admission.k8s.io/v1", "c-" + i, "data")))
                  .build(),
              HttpResponse.BodyHandlers.ofString()));
    }
    for (int i = 0; i < all.size(); i++) {
      HttpResponse<String> r = all.get(i).get(30, TimeUnit.SECONDS);
      assertThat(r.statusCode()).isEqualTo(200);
      assertThat(JSON.readTree(r.body()).at("/response/uid").asText()).isEqualTo("c-" + i);
    }
  }

  @Test
  void aVertxHttp2ClientMultiplexesManyReviewsOnOneConnection(Vertx vertx, VertxTestContext ctx) {
    int n = 100;
    Checkpoint answered = ctx.checkpoint(n);
    java.util.Set<io.vertx.core.http.HttpConnection> connections =
        java.util.concurrent.ConcurrentHashMap.newKeySet();
    io.vertx.core.http.HttpClient c =
        vertx.createHttpClient(
            new HttpClientOptions()
                .setSsl(true)
                .setUseAlpn(true)
                .setProtocolVersion(HttpVersion.HTTP_2)
                .setHttp2MaxPoolSize(1)
                .setTrustOptions(
                    new PemTrustOptions().addCertValue(Buffer.buffer(ca.certificatePem())))
                .setVerifyHost(true));
    for (int i = 0; i < n; i++) {
      String uid = "v-" + i;
      c.request(
              new RequestOptions()
                  .setMethod(HttpMethod.POST)
                  .setHost("localhost")
                  .setPort(server.port())
                  .setURI("/validate")
                  .putHeader("Content-Type", "application/json"))
          .compose(
              req -> {
                connections.add(req.connection());
                return req.send(review("admission.k8s.io/v1", uid, "data"));
              })
          .compose(
              res ->
                  res.body()
                      .map(
                          body -> {
                            ctx.verify(
                                () -> {
                                  assertThat(res.statusCode()).isEqualTo(200);
                                  assertThat(res.version()).isEqualTo(HttpVersion.HTTP_2);
                                  assertThat(connections).as("multiplexed").hasSize(1);
                                  assertThat(
                                          JSON.readTree(body.toString())
                                              .at("/response/uid")
                                              .asText())
                                      .isEqualTo(uid);
                                });
                            return body;
                          }))
          .onComplete(ctx.succeeding(b -> answered.flag()));
    }
  }

  /** Waits until the server's gate says {@code what}: a fact, not a pause. */
  private static void awaitGate(String what, java.util.function.BooleanSupplier fact)
      throws InterruptedException {
    long end = System.nanoTime() + Duration.ofSeconds(10).toNanos();
    while (!fact.getAsBoolean()) {
      if (System.nanoTime() > end) {
        throw new AssertionError("not within 10 s: " + what);
      }
      Thread.sleep(10);
    }
  }

  /** Waits until {@code n} calls of the load have ended, well or not. */
  private static void awaitCalls(AtomicInteger ok, List<String> failures, int n)
      throws InterruptedException {
    long end = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (ok.get() + failures.size() < n) {
      if (System.nanoTime() > end) {
        throw new AssertionError("only " + (ok.get() + failures.size()) + " calls of " + n);
      }
      Thread.sleep(20);
    }
  }

  @Test
  void aCertificateRotationUnderLoadFailsNoRequest() throws Exception {
    X509Certificate before = certs.current().certificate();
    AtomicBoolean running = new AtomicBoolean(true);
    AtomicInteger ok = new AtomicInteger();
    List<String> failures = java.util.Collections.synchronizedList(new ArrayList<>());
    List<Thread> load = new ArrayList<>();
    for (int t = 0; t < 4; t++) {
      int id = t;
      Thread th =
          new Thread(
              () -> {
                int n = 0;
                while (running.get()) {
                  // A fresh client now and then: new connections must get the current certificate.
                  HttpClient c =
                      client(n % 10 == 0 ? HttpClient.Version.HTTP_1_1 : HttpClient.Version.HTTP_2);
                  try {
                    HttpResponse<String> r =
                        post(
                            c,
                            "/validate",
                            "application/json",
                            review("admission.k8s.io/v1", id + "-" + n, "data"));
                    if (r.statusCode() == 200) {
                      ok.incrementAndGet();
                    } else {
                      failures.add("status " + r.statusCode());
                    }
                  } catch (Exception e) {
                    failures.add(e.toString());
                  }
                  n++;
                }
              });
      th.start();
      load.add(th);
    }
    // Counted calls rather than pauses: some before the rotation, and as many after it.
    awaitCalls(ok, failures, 20);
    certs.refresh();
    int atRotation = ok.get() + failures.size();
    awaitCalls(ok, failures, atRotation + 20);
    running.set(false);
    for (Thread th : load) {
      th.join(15_000);
    }
    assertThat(failures).isEmpty();
    assertThat(ok.get()).isGreaterThan(20);
    X509Certificate after = certs.current().certificate();
    assertThat(after.getSerialNumber()).isNotEqualTo(before.getSerialNumber());
    // A client that never met the server (its own TLS context): one that shares a session cache
    // with the load may resume a session from before the rotation, and a resumed handshake sends
    // no certificate at all (seen on a fresh machine).
    HttpResponse<String> fresh =
        HttpClient.newBuilder()
            .sslContext(CaBundle.of(List.of(ca.certificate())).clientContext())
            .build()
            .send(
                HttpRequest.newBuilder(
                        URI.create("https://localhost:" + server.port() + "/validate"))
                    .header("Content-Type", "application/json")
                    .timeout(Duration.ofSeconds(10))
                    .POST(
                        HttpRequest.BodyPublishers.ofString(
                            review("admission.k8s.io/v1", "new", "data")))
                    .build(),
                HttpResponse.BodyHandlers.ofString());
    X509Certificate served =
        (X509Certificate) fresh.sslSession().orElseThrow().getPeerCertificates()[0];
    assertThat(served.getSerialNumber()).isEqualTo(after.getSerialNumber());
  }

  @Test
  void readinessFollowsTheCertificate() throws Exception {
    HttpClient c = client(HttpClient.Version.HTTP_1_1);
    var req =
        HttpRequest.newBuilder(URI.create("https://localhost:" + server.port() + "/readyz"))
            .build();
    assertThat(c.send(req, HttpResponse.BodyHandlers.ofString()).statusCode()).isEqualTo(200);
    clock.fixed = Instant.now().plus(Duration.ofHours(4));
    assertThat(c.send(req, HttpResponse.BodyHandlers.ofString()).statusCode()).isEqualTo(503);
  }

  @Test
  void autoPicksBoringSslWhereItsLibraryIsPackaged() {
    // The jar carries the linux-x86_64 and linux-aarch_64 libraries: CI and the images are either.
    assertThat(WebhookServer.TlsEngine.AUTO.resolve()).isEqualTo(WebhookServer.TlsEngine.OPENSSL);
    assertThat(server.engine()).isEqualTo(engine());
  }

  static Stream<Arguments> handshakes() {
    return Stream.of(
        Arguments.of("TLS 1.3", "TLSv1.3", null, true),
        Arguments.of(
            "TLS 1.2, ECDHE-ECDSA AES-GCM",
            "TLSv1.2",
            "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
            true),
        Arguments.of(
            "TLS 1.2, ECDHE-ECDSA ChaCha20",
            "TLSv1.2",
            "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
            true),
        Arguments.of(
            "TLS 1.2, ECDHE-ECDSA AES-CBC",
            "TLSv1.2",
            "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256",
            false),
        Arguments.of(
            "TLS 1.2, ECDHE-ECDSA AES-CBC-SHA1",
            "TLSv1.2",
            "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA",
            false),
        Arguments.of("TLS 1.1", "TLSv1.1", null, false),
        Arguments.of("TLS 1.0", "TLSv1", null, false));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("handshakes")
  void onlyModernProtocolsAndAeadSuitesAreAccepted(
      String name, String protocol, String suite, boolean accepted) throws Exception {
    javax.net.ssl.SSLSocketFactory factory = trust.getSocketFactory();
    try (javax.net.ssl.SSLSocket socket =
        (javax.net.ssl.SSLSocket) factory.createSocket("127.0.0.1", server.port())) {
      socket.setSoTimeout(5000);
      socket.setEnabledProtocols(new String[] {protocol});
      if (suite != null) {
        socket.setEnabledCipherSuites(new String[] {suite});
      }
      if (accepted) {
        socket.startHandshake();
        assertThat(socket.getSession().getProtocol()).isEqualTo(protocol);
        if (suite != null) {
          assertThat(socket.getSession().getCipherSuite()).isEqualTo(suite);
        }
      } else {
        // The JDK client may refuse to offer an old protocol itself; either way no session.
        org.assertj.core.api.Assertions.assertThatThrownBy(socket::startHandshake)
            .isInstanceOf(java.io.IOException.class);
      }
    }
  }
}
