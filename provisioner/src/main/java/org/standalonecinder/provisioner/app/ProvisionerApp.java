package org.standalonecinder.provisioner.app;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.vertx.VertxHttpClientFactory;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.vertx.core.Vertx;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.standalonecinder.provisioner.cinder.CinderClient;
import org.standalonecinder.provisioner.cinder.CinderMetrics;
import org.standalonecinder.provisioner.clone.ResolverServer;
import org.standalonecinder.provisioner.controller.ClaimController;
import org.standalonecinder.provisioner.controller.Deadline;
import org.standalonecinder.provisioner.controller.Engine;
import org.standalonecinder.provisioner.controller.EventRecorder;
import org.standalonecinder.provisioner.controller.HealthServer;
import org.standalonecinder.provisioner.controller.LeaderElection;
import org.standalonecinder.provisioner.controller.RetryPolicy;
import org.standalonecinder.provisioner.mapping.RbdForm;
import org.standalonecinder.provisioner.mapping.VolumeMappers;
import org.standalonecinder.provisioner.provision.CopyLimits;
import org.standalonecinder.provisioner.provision.KubernetesSecretStore;
import org.standalonecinder.provisioner.provision.ProvisionerSettings;
import org.standalonecinder.provisioner.provision.VolumeProvisioner;
import org.standalonecinder.provisioner.snapshot.SnapshotController;
import org.standalonecinder.provisioner.snapshot.SnapshotLimits;

/**
 * The running provisioner, wired: one Vert.x serves both the Kubernetes client and the health
 * endpoints; the controller's blocking work runs on its own worker threads, never on the event
 * loop. {@link #close()} stops it in reverse order of start.
 */
public final class ProvisionerApp implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(ProvisionerApp.class);

  private final Vertx vertx;
  private final KubernetesClient client;
  private final CinderClient cinder;
  private final ClaimController controller;
  private final Engine engine;
  private final HealthServer health;
  private final LeaderElection election;
  private final java.util.concurrent.atomic.AtomicBoolean closing;
  private final PoolMetrics pools;
  private final ResolverServer resolver;

  private ProvisionerApp(
      Vertx vertx,
      KubernetesClient client,
      CinderClient cinder,
      ClaimController controller,
      Engine engine,
      HealthServer health,
      LeaderElection election,
      java.util.concurrent.atomic.AtomicBoolean closing,
      PoolMetrics pools,
      ResolverServer resolver) {
    this.vertx = vertx;
    this.client = client;
    this.cinder = cinder;
    this.controller = controller;
    this.engine = engine;
    this.health = health;
    this.election = election;
    this.closing = closing;
    this.pools = pools;
    this.resolver = resolver;
  }

  /**
   * What {@link #start} needs beyond the cloud and the cluster.
   *
   * @param election the Lease timings, or null to act without an election (one replica)
   * @param onLostLeadership what to do once this replica stopped leading (it has stopped acting
   *     already); the command exits the process
   * @param poolStats how often the pools' capacity metrics are refreshed
   * @param resolver where to answer the webhook's clone checks, or null for none
   * @param copies how many copies Cinder may be making for claims at once
   * @param backups how many backups Cinder may be taking for VolumeSnapshots at once
   */
  public record Options(
      ProvisionerSettings settings,
      String instance,
      int workers,
      Duration resync,
      RetryPolicy retry,
      String healthAddress,
      int healthPort,
      Election election,
      Runnable onLostLeadership,
      Duration poolStats,
      Resolver resolver,
      CopyLimits copies,
      SnapshotLimits backups) {

    /** Without an election. */
    public Options(
        ProvisionerSettings settings,
        String instance,
        int workers,
        Duration resync,
        RetryPolicy retry,
        String healthAddress,
        int healthPort) {
      this(
          settings,
          instance,
          workers,
          resync,
          retry,
          healthAddress,
          healthPort,
          null,
          null,
          DEFAULT_POOL_STATS,
          null,
          CopyLimits.DEFAULT,
          SnapshotLimits.DEFAULT);
    }

    /** How often the pools' capacity is refreshed unless told otherwise. */
    public static final Duration DEFAULT_POOL_STATS = Duration.ofMinutes(1);
  }

  /**
   * The clone check the webhook next to this replica calls ({@link ResolverServer}): served by
   * every replica, leader or standby, because each webhook asks the provisioner of its own pod.
   *
   * @param host a loopback address: the check trusts whoever holds the token
   * @param port its port (0: any free one)
   * @param token the token the webhook sends, shared through a file
   */
  public record Resolver(String host, int port, String token) {

    @Override
    public String toString() {
      // The token stays out of logs.
      return "Resolver[" + host + ":" + port + "]";
    }
  }

  /**
   * The Lease timings of the leader election.
   *
   * @param leaseName the Lease in the provisioner's namespace
   * @param leaseDuration a standby takes over this long after the leader's last renewal
   * @param renewDeadline the leader stops leading when it could not renew for this long
   * @param retryPeriod how often replicas try
   */
  public record Election(
      String leaseName, Duration leaseDuration, Duration renewDeadline, Duration retryPeriod) {

    public static final String DEFAULT_LEASE = "standalone-cinder-provisioner";

    public Election {
      // Checked here so that the command reports it with the other settings.
      LeaderElection.Settings.check(leaseDuration, renewDeadline, retryPeriod);
    }
  }

  /**
   * A client with event loops of its own. fabric8 turns each response into objects on the loop that
   * read it: sharing the servers' loops, one large object (any user's claim) or a slow first
   * deserializer kept /healthz from answering (5 s blocked in CI, behind Jackson's deserializer
   * cache lock). The client's Vertx is closed with the client.
   */
  public static KubernetesClient kubernetesClient(Config kube) {
    return new KubernetesClientBuilder()
        .withConfig(kube)
        .withHttpClientFactory(new VertxHttpClientFactory())
        .build();
  }

  /**
   * Starts everything; returns once the health server listens (readiness follows the caches).
   *
   * @param cinder the Cinder client; the app closes it
   */
  public static ProvisionerApp start(Config kube, CinderClient cinder, Options o)
      throws InterruptedException, ExecutionException {
    Vertx vertx = Vertx.vertx();
    PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    new JvmMemoryMetrics().bindTo(registry);
    KubernetesClient client = kubernetesClient(kube);
    ProvisionerSettings settings = o.settings();
    if (settings.rbd().form() == null) {
      settings = settings.withRbd(settings.rbd().withForm(rbdFormFor(client)));
    }
    CinderClient metered = CinderMetrics.wrap(cinder, registry);
    PoolMetrics pools = new PoolMetrics(metered, registry);
    Wiring.Parts parts = parts(client, metered, settings, o, registry);
    ClaimController controller = parts.controller();
    // The snapshot loop reads the claim loop's caches: it starts after it, and stops before.
    Engine engine = new Engine(List.of(controller, parts.snapshots()));
    io.micrometer.core.instrument.Gauge.builder(
            "standalone_cinder_leader", controller, c -> c.active() ? 1 : 0)
        .description("1 while this replica acts (leads, or runs without an election)")
        .register(registry);
    HealthServer health =
        new HealthServer(vertx, controller::synced, registry::scrape)
            .liveness(engine::healthy, engine::workersAlive);
    health
        .listen(o.healthAddress(), o.healthPort())
        .toCompletionStage()
        .toCompletableFuture()
        .get();
    LOG.info(
        "health on http://{}:{}/healthz, /readyz and /metrics", o.healthAddress(), health.port());
    pools.start(o.poolStats());
    ResolverServer resolver;
    try {
      resolver = resolver(vertx, parts, o);
    } catch (ExecutionException | RuntimeException e) {
      health.close();
      pools.close();
      client.close();
      vertx.close();
      throw e;
    }
    java.util.concurrent.atomic.AtomicBoolean closing =
        new java.util.concurrent.atomic.AtomicBoolean();
    LeaderElection election = elect(client, engine, settings, o, closing);
    return new ProvisionerApp(
        vertx, client, cinder, controller, engine, health, election, closing, pools, resolver);
  }

  /** The loops and what they need, on the metered Cinder. */
  private static Wiring.Parts parts(
      KubernetesClient client,
      CinderClient metered,
      ProvisionerSettings settings,
      Options o,
      PrometheusMeterRegistry registry) {
    return Wiring.build(
        client,
        metered,
        new VolumeProvisioner(
                metered,
                new KubernetesSecretStore(client),
                VolumeMappers.standard(),
                settings,
                VolumeProvisioner.defaultBackoff())
            .withCopyLimits(o.copies())
            .withBackgroundThreads(VolumeProvisioner.BACKGROUND_THREADS),
        settings,
        new EventRecorder(client, settings.provisionerName(), o.instance(), Clock.systemUTC()),
        o.retry(),
        o.workers(),
        o.resync(),
        registry,
        SnapshotController.Timing.DEFAULT.withBackups(o.backups()));
  }

  /** The webhook's clone check, listening; null when it is not asked for. */
  private static ResolverServer resolver(Vertx vertx, Wiring.Parts parts, Options o)
      throws InterruptedException, ExecutionException {
    if (o.resolver() == null) {
      return null;
    }
    ResolverServer resolver =
        new ResolverServer(vertx, parts.clones(), parts.cluster(), o.resolver().token());
    resolver
        .listen(o.resolver().host(), o.resolver().port())
        .toCompletionStage()
        .toCompletableFuture()
        .get();
    LOG.info(
        "clone check on http://{}:{}{}", o.resolver().host(), resolver.port(), ResolverServer.PATH);
    return resolver;
  }

  /**
   * Starts the loops: at once without an election, else paused until this replica leads (and paused
   * again when it stops leading). Returns the election, or null.
   */
  private static LeaderElection elect(
      KubernetesClient client,
      Engine engine,
      ProvisionerSettings settings,
      Options o,
      java.util.concurrent.atomic.AtomicBoolean closing) {
    if (o.election() == null) {
      engine.start();
      return null;
    }
    engine.pause();
    engine.start();
    Runnable lost = o.onLostLeadership() == null ? () -> {} : o.onLostLeadership();
    return LeaderElection.start(
        client,
        new LeaderElection.Settings(
            settings.secretNamespace(),
            o.election().leaseName(),
            o.instance(),
            o.election().leaseDuration(),
            o.election().renewDeadline(),
            o.election().retryPeriod()),
        // One loop's trouble resuming never costs another, nor the Lease.
        engine::resume,
        () -> {
          engine.pause();
          // Releasing the Lease at close() ends leading too; that is no loss.
          if (!closing.get()) {
            LOG.error("lost the Lease: this replica stopped acting");
            engine.abandon();
            lost.run();
          }
        });
  }

  /**
   * The RBD PV form the cluster's version needs: in-tree {@code rbd} up to 1.30, ceph-csi after.
   * Null when the version cannot be read; RBD exports are then refused with the reason.
   */
  static RbdForm rbdFormFor(KubernetesClient client) {
    try {
      var v = client.getKubernetesVersion();
      int minor = Integer.parseInt(v.getMinor().replaceAll("[^0-9].*$", ""));
      RbdForm form = "1".equals(v.getMajor()) ? RbdForm.forKubernetesMinor(minor) : RbdForm.CSI;
      LOG.info(
          "Kubernetes {}.{}: RBD volumes become {} PVs (set --rbd-form to choose)",
          v.getMajor(),
          v.getMinor(),
          form.spelling());
      return form;
    } catch (RuntimeException e) {
      LOG.warn(
          "cannot read the Kubernetes version ({}); RBD volumes need --rbd-form or the class"
              + " parameter rbdForm",
          e.getMessage());
      return null;
    }
  }

  public int healthPort() {
    return health.port();
  }

  /** The clone check's port; -1 when it is not served. */
  public int resolverPort() {
    return resolver == null ? -1 : resolver.port();
  }

  public boolean ready() {
    return controller.synced();
  }

  /** Whether this replica acts: it leads, or runs without an election. */
  public boolean leading() {
    return controller.active();
  }

  @Override
  public void close() {
    LOG.info("stopping: finishing the items in progress");
    closing.set(true);
    if (resolver != null) {
      resolver.close();
    }
    pools.close();
    int left = engine.close(Deadline.after(Engine.STOP_GRACE));
    if (election != null && left == 0) {
      // After the workers: the next leader starts only once nothing here acts any more.
      election.close();
    } else if (election != null) {
      LOG.warn(
          "{} worker(s) or step(s) still run after the stop: the Lease is left to lapse, not"
              + " released, so that no replica leads while they may act",
          left);
    }
    cinder.close();
    client.close();
    health.close();
    vertx.close();
  }
}
