package org.standalonecinder.webhook.cli;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.vertx.VertxHttpClientFactory;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.vertx.core.Vertx;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.standalonecinder.api.CloneToken;
import org.standalonecinder.certs.CaBundleInjector;
import org.standalonecinder.certs.CertificateAuthority;
import org.standalonecinder.certs.CertificateSource;
import org.standalonecinder.certs.DynamicCertificateSource;
import org.standalonecinder.certs.FileCertificateSource;
import org.standalonecinder.certs.RenewalPolicy;
import org.standalonecinder.certs.SecretCaStore;
import org.standalonecinder.certs.SecretCertificateSource;
import org.standalonecinder.certs.ServiceNames;
import org.standalonecinder.webhook.http.Shedding;
import org.standalonecinder.webhook.http.WebhookServer;
import org.standalonecinder.webhook.policy.CloneCheck;
import org.standalonecinder.webhook.policy.CloneTokenKeyStore;
import org.standalonecinder.webhook.policy.ClusterView;
import org.standalonecinder.webhook.policy.KubernetesClusterView;
import org.standalonecinder.webhook.policy.OffLoopOnly;
import org.standalonecinder.webhook.policy.PolicyChain;
import org.standalonecinder.webhook.policy.ReloadingPolicy;
import org.standalonecinder.webhook.policy.ResolverCloneCheck;

/**
 * The running webhook, wired: one Vert.x serves HTTPS and carries the Kubernetes client; the
 * certificate source and the policy file are re-checked periodically on a worker. {@link #close()}
 * stops it in reverse order of start.
 */
public final class WebhookApp implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(WebhookApp.class);

  /** How often the resolver's health is asked, for readiness. */
  static final Duration RESOLVER_PROBE = Duration.ofSeconds(2);

  /** Webhook entries whose names end so are ours (caBundle injection touches no other). */
  public static final String ENTRY_SUFFIX = ".webhook.standalone-cinder.io";

  /** Where the serving certificate comes from. */
  public enum Certificates {
    /** A CA in a Secret, shared by every replica; the caBundle is injected by us. */
    SECRET,
    /** Files mounted by cert-manager (tls.crt, tls.key, ca.crt); cert-manager injects. */
    FILES,
    /** An in-memory CA for 127.0.0.1/localhost, its certificate written to a file. */
    LOCAL
  }

  /**
   * What {@link #start} needs beyond the cluster.
   *
   * @param caOut where {@link Certificates#LOCAL} writes its CA certificate
   * @param tlsDir the folder {@link Certificates#FILES} reads
   * @param policyFile the admin policy, or null for the defaults
   * @param resolver the provisioner's resolver sidecar, or null for no Cinder check
   * @param resolverTokenFile where the resolver keeps its token
   * @param resolverDeadline for one check, shorter than the API server's webhook timeout
   * @param tlsEngine the TLS implementation; null means {@link WebhookServer.TlsEngine#AUTO}
   * @param callers who may send reviews (the API server's client certificate); null for anyone
   * @param connections how many connections clients may hold; null for the defaults
   */
  public record Options(
      String host,
      int port,
      Certificates certificates,
      Path caOut,
      Path tlsDir,
      String namespace,
      String service,
      String webhookConfiguration,
      String caSecret,
      Path policyFile,
      String provisionerName,
      String provisionerUser,
      Duration refresh,
      URI resolver,
      Path resolverTokenFile,
      Duration resolverDeadline,
      List<String> extraNames,
      Duration caValidity,
      WebhookServer.TlsEngine tlsEngine,
      WebhookServer.Callers callers,
      WebhookServer.ConnectionLimits connections,
      WebhookServer.ClientLimits clientLimits) {

    /** How long a CA made for the Secret lives unless said otherwise; rotated at 2/3. */
    public static final Duration CA_VALIDITY = Duration.ofDays(365);

    /** Null extra names: the Service's names only; a null CA validity: {@link #CA_VALIDITY}. */
    public Options {
      extraNames = extraNames == null ? List.of() : List.copyOf(extraNames);
      caValidity = caValidity == null ? CA_VALIDITY : caValidity;
      tlsEngine = tlsEngine == null ? WebhookServer.TlsEngine.AUTO : tlsEngine;
      clientLimits = clientLimits == null ? WebhookServer.ClientLimits.DEFAULT : clientLimits;
      connections = connections == null ? WebhookServer.ConnectionLimits.DEFAULT : connections;
    }

    /** The extra names that are IP addresses (the rest are DNS names). */
    List<String> extraIps() {
      return extraNames.stream().filter(Options::isIp).toList();
    }

    List<String> extraDnsNames() {
      return extraNames.stream().filter(n -> !isIp(n)).toList();
    }

    static boolean isIp(String name) {
      return name.matches("[0-9.]+") || name.contains(":");
    }
  }

  private final Vertx vertx;
  private final KubernetesClient client;
  private final CertificateSource certificates;
  private final WebhookServer server;
  private final ReloadingPolicy policy;
  private final long timer;

  private WebhookApp(
      Vertx vertx,
      KubernetesClient client,
      CertificateSource certificates,
      WebhookServer server,
      ReloadingPolicy policy,
      long timer) {
    this.vertx = vertx;
    this.client = client;
    this.certificates = certificates;
    this.server = server;
    this.policy = policy;
    this.timer = timer;
  }

  /**
   * Starts everything; returns once the server listens.
   *
   * @throws IllegalArgumentException for a policy file that does not parse (the message says why)
   */
  public static WebhookApp start(Config kube, Options o)
      throws InterruptedException, ExecutionException, IOException {
    Vertx vertx = Vertx.vertx();
    KubernetesClient client = null;
    try {
      // The API server gives a webhook 10 s by default and a review may need three lookups:
      // each must fail fast, so the user reads our reason rather than the API server's timeout.
      Config fast =
          new ConfigBuilder(kube)
              .withConnectionTimeout(2_000)
              .withRequestTimeout(2_000)
              .withRequestRetryBackoffLimit(0)
              .build();
      // Loops of its own (the factory makes a Vertx, closed with the client): fabric8 turns each
      // response into objects on the loop that read it, and a user's large claim must not hold
      // up the loops that answer other reviews.
      client =
          new KubernetesClientBuilder()
              .withConfig(fast)
              .withHttpClientFactory(new VertxHttpClientFactory())
              .build();
      PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
      new JvmMemoryMetrics().bindTo(registry);
      new ProcessorMetrics().bindTo(registry);
      // Reviews are decided on the event loop until a lookup is needed (see WouldBlock).
      ClusterView cluster =
          OffLoopOnly.clusterView(new KubernetesClusterView(client), WebhookServer::mayBlock);
      ResolverCloneCheck resolver =
          o.resolver() == null
              ? null
              : new ResolverCloneCheck(o.resolver(), o.resolverTokenFile(), o.resolverDeadline());
      CloneCheck check =
          resolver == null
              ? CloneCheck.NONE
              : OffLoopOnly.cloneCheck(resolver, WebhookServer::mayBlock);
      // Readiness does not follow the resolver: a replica whose provisioner is down still judges
      // every claim that is no clone, and denies clones with the reason (clone-check-unavailable).
      // Were it unready, a crash-looping provisioner would stop every claim write of the cluster.
      // The probe only says when the resolver comes and goes, in the log.
      AtomicBoolean resolverUp = new AtomicBoolean(resolver == null || resolver.reachable());
      if (o.resolver() == null) {
        LOG.warn("no resolver: clones are checked against Cinder only when they are provisioned");
      }
      // What the probe last saw, for an alert: clones are denied while it reads 0.
      io.micrometer.core.instrument.Gauge.builder(
              "standalone_cinder_webhook_resolver_up", resolverUp, up -> up.get() ? 1 : 0)
          .description("1 while the provisioner's clone check answers (or none is configured)")
          .register(registry);
      KubernetesClient api = client;
      StartupCalls startup = StartupCalls.standard();
      CloneToken.Keys tokenKeys = startup.run("the clone token key", () -> tokenKeys(api, o));
      ReloadingPolicy policy =
          new ReloadingPolicy(
              o.policyFile(),
              config ->
                  PolicyChain.build(
                      config,
                      o.provisionerName(),
                      o.provisionerUser(),
                      cluster,
                      check,
                      tokenKeys,
                      Clock.systemUTC(),
                      registry,
                      o.callers() == null ? null : o.callers().describe()),
              registry);
      CertificateSource certificates = startup.run("the webhook's CA", () -> certificates(api, o));
      // Read at each scrape, so a rotation shows at once; an alert fires well before it is 0.
      io.micrometer.core.instrument.Gauge.builder(
              "standalone_cinder_webhook_certificate_expiry_seconds",
              certificates,
              c ->
                  c.current() == null
                      ? Double.NaN
                      : (c.current().certificate().getNotAfter().getTime()
                              - System.currentTimeMillis())
                          / 1000.0)
          .description("seconds until the serving certificate expires")
          .register(registry);
      WebhookServer server =
          new WebhookServer(
              vertx,
              certificates,
              policy,
              () -> true,
              registry::scrape,
              o.tlsEngine(),
              o.clientLimits());
      if (o.callers() != null) {
        server.requireCallers(o.callers());
      }
      server.connectionLimits(o.connections());
      shedding(server.shedding(), registry);
      server.listen(o.host(), o.port()).toCompletionStage().toCompletableFuture().get();
      long timer =
          vertx.setPeriodic(
              o.refresh().toMillis(),
              id ->
                  vertx
                      .executeBlocking(
                          () -> {
                            certificates.refresh();
                            policy.reload();
                            return null;
                          },
                          false)
                      .onFailure(e -> LOG.warn("periodic refresh failed: {}", e.toString())));
      if (resolver != null) {
        vertx.setPeriodic(
            RESOLVER_PROBE.toMillis(),
            id ->
                vertx
                    .executeBlocking(resolver::reachable, false)
                    .onSuccess(
                        up -> {
                          if (resolverUp.getAndSet(up) != up) {
                            LOG.warn("resolver {}: ready is now {}", o.resolver(), up);
                          }
                        }));
      }
      LOG.info(
          "webhook listening on https://{}:{} ({} certificates, TLS by {}, policy {}, reviews from"
              + " {})",
          o.host(),
          server.port(),
          o.certificates(),
          server.engine(),
          o.policyFile() == null ? "defaults" : o.policyFile(),
          o.callers() == null
              ? "anyone who reaches the port"
              : "client certificates of "
                  + o.callers().cas().stream()
                      .map(c -> c.getSubjectX500Principal().getName())
                      .toList()
                  + (o.callers().names().isEmpty() ? "" : " named " + o.callers().names()));
      return new WebhookApp(vertx, client, certificates, server, policy, timer);
    } catch (RuntimeException | IOException | InterruptedException | ExecutionException e) {
      if (client != null) {
        client.close();
      }
      vertx.close();
      throw e;
    }
  }

  /**
   * {@code standalone_cinder_webhook_shed_total{reason}}: connections and reviews turned away under
   * load (reasons: {@link Shedding.Reason#label()}); {@code standalone_cinder_webhook_connections}:
   * those open that count against the limits.
   */
  private static void shedding(Shedding shedding, io.micrometer.core.instrument.MeterRegistry r) {
    for (Shedding.Reason reason : Shedding.Reason.values()) {
      io.micrometer.core.instrument.FunctionCounter.builder(
              "standalone_cinder_webhook_shed", shedding, s -> s.count(reason))
          .description("connections and reviews turned away to stay within memory, by reason")
          .tag("reason", reason.label())
          .register(r);
    }
    io.micrometer.core.instrument.Gauge.builder(
            "standalone_cinder_webhook_connections", shedding, Shedding::openConnections)
        .description("open client connections that count against --max-connections")
        .register(r);
  }

  /**
   * The clone token key from the cluster's Secret. A local webhook whose cluster cannot give one
   * signs with a key of its own, which no provisioner will accept: said in the log.
   */
  private static CloneToken.Keys tokenKeys(KubernetesClient client, Options o) {
    try {
      return CloneTokenKeyStore.loadOrCreate(client, o.namespace());
    } catch (RuntimeException e) {
      if (o.certificates() != Certificates.LOCAL) {
        throw e;
      }
      LOG.warn(
          "no clone token key from the cluster ({}); cross-namespace clones get tokens that no"
              + " provisioner accepts",
          e.getMessage());
      byte[] key = new byte[32];
      new java.security.SecureRandom().nextBytes(key);
      return CloneToken.Keys.of(key, null);
    }
  }

  private static CertificateSource certificates(KubernetesClient client, Options o)
      throws IOException {
    Clock clock = Clock.systemUTC();
    return switch (o.certificates()) {
      case LOCAL -> {
        CertificateAuthority ca =
            CertificateAuthority.generate(
                "standalone-cinder-webhook-local", Duration.ofDays(30), clock);
        Files.writeString(o.caOut(), ca.certificatePem());
        yield new DynamicCertificateSource(
            ca,
            List.of("localhost"),
            List.of("127.0.0.1"),
            Duration.ofDays(7),
            RenewalPolicy.TWO_THIRDS,
            clock);
      }
      case FILES ->
          new FileCertificateSource(
              o.tlsDir().resolve("tls.crt"),
              o.tlsDir().resolve("tls.key"),
              o.tlsDir().resolve("ca.crt"),
              clock);
      case SECRET -> {
        CaBundleInjector injector =
            new CaBundleInjector(
                client, o.webhookConfiguration(), name -> name.endsWith(ENTRY_SUFFIX));
        yield new SecretCertificateSource(
            new SecretCaStore(
                client,
                o.namespace(),
                o.caSecret(),
                o.service() + "-ca",
                o.caValidity(),
                RenewalPolicy.TWO_THIRDS,
                clock),
            ServiceNames.of(o.service(), o.namespace(), o.extraDnsNames()),
            o.extraIps(),
            Duration.ofDays(30),
            RenewalPolicy.TWO_THIRDS,
            bundle -> {
              int n = injector.inject(bundle);
              if (n > 0) {
                LOG.info("CA bundle written into {} webhook entries", n);
              }
            },
            clock);
      }
    };
  }

  public int port() {
    return server.port();
  }

  /** The policy in force (for tests and diagnostics). */
  public ReloadingPolicy policy() {
    return policy;
  }

  @Override
  public void close() {
    vertx.cancelTimer(timer);
    try {
      server.close().toCompletionStage().toCompletableFuture().get();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (ExecutionException e) {
      LOG.warn("closing the server: {}", e.getCause().toString());
    }
    certificates.close();
    client.close();
    vertx.close();
  }
}
