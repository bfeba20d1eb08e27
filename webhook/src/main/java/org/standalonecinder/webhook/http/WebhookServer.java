package org.standalonecinder.webhook.http;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.http.Http2Settings;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.http.HttpVersion;
import io.vertx.core.net.JdkSSLEngineOptions;
import io.vertx.core.net.KeyCertOptions;
import io.vertx.core.net.OpenSSLEngineOptions;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.handler.BodyHandler;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.standalonecinder.certs.CertificateSource;
import org.standalonecinder.webhook.admission.AdmissionController;

/**
 * The admission webhook's HTTPS server: {@code POST /mutate} and {@code /validate}, {@code
 * /healthz}, {@code /metrics} when given, and {@code /readyz} (ready with a valid certificate and
 * whatever else the caller needs, e.g. synced caches). TLS 1.2 and 1.3 only, HTTP/2 through ALPN
 * and HTTP/1.1, forward-secret AEAD cipher suites only (those the API server itself defaults to). A
 * new certificate from the source is served from the next handshake on (see {@link
 * RotatingKeyManager}): open connections keep theirs, and no request fails.
 */
public final class WebhookServer {

  /** Which TLS implementation serves the connections. */
  public enum TlsEngine {
    /** BoringSSL when its native library loads on this platform, otherwise the JDK's. */
    AUTO,
    /** BoringSSL (netty-tcnative): about three times the JDK's handshakes and records per core. */
    OPENSSL,
    /** The JDK's own TLS, for platforms without the native library or a JDK-only crypto policy. */
    JDK;

    /** The engine this choice means here; OPENSSL where it cannot load is an error with why. */
    public TlsEngine resolve() {
      boolean loads = OpenSSLEngineOptions.isAvailable();
      return switch (this) {
        case AUTO -> loads ? OPENSSL : JDK;
        case OPENSSL -> {
          if (!loads) {
            throw new IllegalStateException(
                "the OpenSSL TLS engine cannot load here ("
                    + io.netty.handler.ssl.OpenSsl.unavailabilityCause()
                    + "); use --tls-engine jdk or auto");
          }
          yield OPENSSL;
        }
        case JDK -> JDK;
      };
    }
  }

  /**
   * TLS 1.3's suites, then TLS 1.2's ECDHE with AES-GCM or ChaCha20-Poly1305: no CBC, no RSA key
   * exchange, whatever the certificate's key (cert-manager may issue RSA).
   */
  public static final List<String> CIPHER_SUITES =
      List.of(
          "TLS_AES_128_GCM_SHA256",
          "TLS_AES_256_GCM_SHA384",
          "TLS_CHACHA20_POLY1305_SHA256",
          "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
          "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
          "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
          "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
          "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
          "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256");

  /** The API server sends at most 3 MiB objects; more is refused with 413. */
  public static final long MAX_BODY = 3L * 1024 * 1024;

  /** Concurrent requests on one HTTP/2 connection. */
  public static final int MAX_STREAMS = 256;

  /**
   * How long clients may hold the server. See {@link ClientDeadlines}.
   *
   * @param idle a connection with nothing in flight is closed after this; longer than the API
   *     server keeps an unused connection (90 s), so that it is always the one to close it
   * @param headers an HTTP/1.1 request's headers must be complete this long after its first byte
   * @param request a request not answered this long after its headers is cut off
   */
  public record ClientLimits(Duration idle, Duration headers, Duration request) {
    /**
     * 120 s idle, 10 s for headers (an API server sends them in one write), 30 s a request (the API
     * server's longest wait for a webhook).
     */
    public static final ClientLimits DEFAULT =
        new ClientLimits(Duration.ofSeconds(120), Duration.ofSeconds(10), Duration.ofSeconds(30));

    /** How long client-go's transport keeps a connection it does not use (Go's default). */
    public static final Duration API_SERVER_IDLE = Duration.ofSeconds(90);
  }

  /**
   * How many connections clients may hold open (see {@link ConnectionLimit}).
   *
   * @param connections open connections in all, the exempt aside
   * @param perClient of those, from one client address
   */
  public record ConnectionLimits(int connections, int perClient) {
    /**
     * 1,024 in all, 64 a client: about 40 MiB of TLS state at most, and far above what API servers
     * open (each keeps one HTTP/2 connection, more only past 256 reviews in flight).
     */
    public static final ConnectionLimits DEFAULT = new ConnectionLimits(1024, 64);

    public ConnectionLimits {
      if (connections < 1 || perClient < 1 || perClient > connections) {
        throw new IllegalArgumentException(
            "connection limits must be at least 1, the limit per client at most the limit in all: "
                + connections
                + " in all, "
                + perClient
                + " a client");
      }
    }
  }

  private static final Logger LOG = LoggerFactory.getLogger(WebhookServer.class);

  private final Vertx vertx;
  private final CertificateSource certificates;
  private final AdmissionController controller;
  private final BooleanSupplier ready;
  private final Supplier<String> metrics;
  private final TlsEngine engine;
  private final ClientLimits limits;
  private LoadGate.Limits gateLimits = LoadGate.Limits.DEFAULT;
  private volatile LoadGate gate;
  private ConnectionLimits connectionLimits = ConnectionLimits.DEFAULT;
  private final Shedding shedding = new Shedding();
  private Callers callers;
  private HttpServer server;

  public WebhookServer(
      Vertx vertx,
      CertificateSource certificates,
      AdmissionController controller,
      BooleanSupplier ready) {
    this(vertx, certificates, controller, ready, null);
  }

  /**
   * @param metrics the Prometheus text exposition for {@code GET /metrics}, or null for none
   */
  public WebhookServer(
      Vertx vertx,
      CertificateSource certificates,
      AdmissionController controller,
      BooleanSupplier ready,
      Supplier<String> metrics) {
    this(vertx, certificates, controller, ready, metrics, TlsEngine.AUTO);
  }

  /**
   * @param metrics the Prometheus text exposition for {@code GET /metrics}, or null for none
   * @param engine the TLS implementation; {@link TlsEngine#resolve()} says which one runs
   */
  public WebhookServer(
      Vertx vertx,
      CertificateSource certificates,
      AdmissionController controller,
      BooleanSupplier ready,
      Supplier<String> metrics,
      TlsEngine engine) {
    this(vertx, certificates, controller, ready, metrics, engine, ClientLimits.DEFAULT);
  }

  /**
   * @param limits how long slow and idle clients may hold the server
   */
  public WebhookServer(
      Vertx vertx,
      CertificateSource certificates,
      AdmissionController controller,
      BooleanSupplier ready,
      Supplier<String> metrics,
      TlsEngine engine,
      ClientLimits limits) {
    this.limits = limits;
    this.vertx = vertx;
    this.certificates = certificates;
    this.controller = controller;
    this.ready = ready;
    this.metrics = metrics;
    this.engine = engine.resolve();
  }

  /**
   * How many reviews may be in flight at once (tests make them small, to reach them with a few
   * requests); {@link LoadGate.Limits#DEFAULT} unless set before {@link #listen}.
   */
  /** What the gate holds now, for tests that wait for it (null before {@link #listen}). */
  LoadGate gate() {
    return gate;
  }

  WebhookServer gateLimits(LoadGate.Limits limits) {
    this.gateLimits = limits;
    return this;
  }

  /**
   * How many connections may be open at once: in all (the verified API server aside) and from one
   * client address; {@link ConnectionLimits#DEFAULT} unless set before {@link #listen}.
   */
  public WebhookServer connectionLimits(ConnectionLimits limits) {
    this.connectionLimits = limits;
    return this;
  }

  /** What the server turned away under load, and the connections it holds. */
  public Shedding shedding() {
    return shedding;
  }

  /**
   * Who may send reviews: the API server, by the client certificate it presents (its
   * AdmissionConfiguration's {@code kubeConfigFile}).
   *
   * @param cas the CAs that issue the API server's client certificate
   * @param names names its certificate carries (common name or DNS name), one of which must match;
   *     empty for any certificate of those CAs
   */
  public record Callers(List<java.security.cert.X509Certificate> cas, Set<String> names) {
    public Callers {
      if (cas.isEmpty()) {
        throw new IllegalArgumentException("no CA certificate to check callers with");
      }
      cas = List.copyOf(cas);
      names = Set.copyOf(names);
    }

    /**
     * Whom every review then comes from, as a clone token records it: the names the client
     * certificate must carry, and its CA.
     */
    public String describe() {
      return "client certificate "
          + new java.util.TreeSet<>(names)
          + " of "
          + cas.get(0).getSubjectX500Principal().getName();
    }

    /** The CA certificates of a PEM file. */
    public static Callers of(java.nio.file.Path caFile, Set<String> names)
        throws java.io.IOException, java.security.cert.CertificateException {
      List<java.security.cert.X509Certificate> cas = new java.util.ArrayList<>();
      try (var in = java.nio.file.Files.newInputStream(caFile)) {
        for (var c :
            java.security.cert.CertificateFactory.getInstance("X.509").generateCertificates(in)) {
          cas.add((java.security.cert.X509Certificate) c);
        }
      }
      if (cas.isEmpty()) {
        throw new java.security.cert.CertificateException(caFile + " holds no PEM certificate");
      }
      return new Callers(cas, names);
    }
  }

  /** Takes reviews only from these callers; unless set before {@link #listen}, from anyone. */
  public WebhookServer requireCallers(Callers callers) {
    this.callers = callers;
    return this;
  }

  /** The engine that serves: never {@link TlsEngine#AUTO}. */
  public TlsEngine engine() {
    return engine;
  }

  public Future<HttpServer> listen(String host, int port) {
    Router router = Router.router(vertx);
    ClientDeadlines deadlines = new ClientDeadlines(vertx, limits);
    router.route().handler(deadlines);
    router.get("/healthz").handler(ctx -> ctx.response().end("ok\n"));
    router
        .get("/readyz")
        .handler(
            ctx -> {
              if (certificates.healthy() && ready.getAsBoolean()) {
                ctx.response().end("ok\n");
              } else {
                ctx.response().setStatusCode(503).end("not ready\n");
              }
            });
    if (metrics != null) {
      router
          .get("/metrics")
          .handler(
              ctx ->
                  vertx
                      .executeBlocking(metrics::get, false)
                      .onSuccess(
                          text ->
                              ctx.response()
                                  .putHeader("Content-Type", "text/plain; version=0.0.4")
                                  .end(text))
                      .onFailure(ctx::fail));
    }
    BodyHandler body = BodyHandler.create(false).setBodyLimit(MAX_BODY);
    // Admitted (or refused at once) on the headers, before a byte of the body is buffered.
    gate = new LoadGate(gateLimits, limits.request(), shedding);
    CallerCheck callerCheck =
        callers == null ? null : new CallerCheck(callers.cas(), callers.names());
    ConnectionLimit connectionLimit =
        new ConnectionLimit(
            connectionLimits, c -> callerCheck != null && callerCheck.isCaller(c), shedding);
    for (String path : List.of("/mutate", "/validate")) {
      var route = router.post(path);
      if (callerCheck != null) {
        // Before the gate: a caller that is not the API server holds no share of it.
        route.handler(callerCheck);
      }
      route
          .handler(gate)
          .handler(body)
          .handler(new AdmissionHandler(vertx, controller, path.equals("/mutate")));
    }
    // A client that goes away mid-request (a flood cut off, a review the API server gave up on)
    // leaves nobody to answer: Vert.x Web would log it as an unhandled ERROR with a stack trace,
    // once per connection of a flood.
    router
        .route()
        .failureHandler(
            ctx -> {
              if (ctx.failure() instanceof io.vertx.core.http.HttpClosedException) {
                LOG.debug(
                    "a client went away in the middle of a request to {}", ctx.request().path());
                return;
              }
              ctx.next();
            });
    // Vert.x answers these with an empty body; every refusal says why.
    router.errorHandler(
        413, ctx -> refuse(ctx, 413, "the body is larger than " + MAX_BODY + " bytes"));
    router.errorHandler(
        404, ctx -> refuse(ctx, 404, "no such path: POST /mutate or /validate, GET /healthz"));
    router.errorHandler(
        405,
        ctx ->
            refuse(
                ctx, 405, ctx.request().method() + " is not allowed on " + ctx.request().path()));

    RotatingKeyManager keyManager = new RotatingKeyManager(certificates.current());
    HttpServerOptions options =
        new HttpServerOptions()
            .setSsl(true)
            .setUseAlpn(true)
            .setAlpnVersions(List.of(HttpVersion.HTTP_2, HttpVersion.HTTP_1_1))
            .setEnabledSecureTransportProtocols(Set.of("TLSv1.2", "TLSv1.3"))
            .setSslEngineOptions(
                engine == TlsEngine.OPENSSL
                    ? new OpenSSLEngineOptions()
                    : new JdkSSLEngineOptions())
            // Vert.x allows 100 streams per HTTP/2 connection; a burst of reviews may need more.
            .setInitialSettings(new Http2Settings().setMaxConcurrentStreams(MAX_STREAMS))
            .setKeyCertOptions(KeyCertOptions.wrap(keyManager));
    if (callers != null) {
      // Asked for, not required: the kubelet's probes present none. CallerCheck decides.
      io.vertx.core.net.PemTrustOptions trust = new io.vertx.core.net.PemTrustOptions();
      for (var ca : callers.cas()) {
        trust.addCertValue(io.vertx.core.buffer.Buffer.buffer(CallerCheck.pem(ca)));
      }
      options.setClientAuth(io.vertx.core.http.ClientAuth.REQUEST).setTrustOptions(trust);
    }
    CIPHER_SUITES.forEach(options::addEnabledCipherSuite);
    certificates.onChange(
        next -> {
          keyManager.update(next);
          LOG.info("serving the new certificate to new connections");
        });
    return vertx
        .createHttpServer(options)
        .connectionHandler(
            connection -> {
              Runnable leave = connectionLimit.admit(connection);
              if (leave == null) {
                connection.close();
              } else {
                deadlines.connected(connection, leave);
              }
            })
        .requestHandler(router)
        .listen(port, host)
        .onSuccess(s -> server = s);
  }

  private static void refuse(io.vertx.ext.web.RoutingContext ctx, int status, String reason) {
    if (!ctx.response().ended()) {
      ctx.response()
          .setStatusCode(status)
          .putHeader("Content-Type", "text/plain")
          .end(reason + "\n");
    }
  }

  /**
   * Whether the calling thread may block: not on an event loop. The policy's lookups ask this (see
   * {@link org.standalonecinder.webhook.admission.WouldBlock}).
   */
  public static boolean mayBlock() {
    return !io.vertx.core.Context.isOnEventLoopThread();
  }

  public int port() {
    return server.actualPort();
  }

  public Future<Void> close() {
    return server == null ? Future.succeededFuture() : server.close();
  }
}
