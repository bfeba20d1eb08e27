package org.standalonecinder.bench;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import org.standalonecinder.provisioner.cinder.CinderClient;
import org.standalonecinder.provisioner.cinder.FakeCinderClient;
import org.standalonecinder.provisioner.cinder.openstack.OpenStackCinderClient;
import org.standalonecinder.provisioner.cinder.openstack.config.CloudConfig;
import org.standalonecinder.provisioner.cinder.openstack.config.CloudConfigLoader;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * The benchmark: one table, every figure beside a baseline measured in the same run, medians of
 * repeated rounds. {@code dev/bench.sh} runs it (docs/benchmarks.md).
 */
@Command(
    name = "standalone-cinder-bench",
    mixinStandardHelpOptions = true,
    description = "Measure the provisioner against baselines of the same run; print one table.")
public final class Bench implements Callable<Integer> {

  @Option(names = "--claims", defaultValue = "1000", description = "claims per burst")
  int claims;

  @Option(names = "--workers", defaultValue = "4", description = "the provisioner's workers")
  int workers;

  @Option(names = "--rounds", defaultValue = "3", description = "rounds; medians are reported")
  int rounds;

  @Option(
      names = "--cinder-env",
      description = "dev/cinder-local's env file: also measure against the real Cinder")
  Path cinderEnv;

  @Option(
      names = "--webhook-jar",
      defaultValue = "webhook/target/standalone-cinder-webhook.jar",
      description = "the webhook to measure; none: skip its rows (they need wrk, nginx, openssl)")
  Path webhookJar;

  @Option(
      names = "--webhook-jvm-options",
      defaultValue = "images/jvm/webhook.options",
      description =
          "the JVM options the image runs the webhook with; the minimal Vert.x server gets the"
              + " same (default ${DEFAULT-VALUE})")
  Path webhookJvmOptions;

  @Option(names = "--seconds", defaultValue = "10", description = "each wrk run")
  int seconds;

  @Option(names = "--connections", defaultValue = "50", description = "wrk's connections")
  int connections;

  @Option(
      names = "--flood",
      defaultValue = "1000",
      description = "connections of 3 MiB bodies flooding the webhook; 0: skip those rows")
  int flood;

  @Option(names = "--skip-provisioner", description = "only the webhook's rows")
  boolean skipProvisioner;

  @Option(
      names = "--profile",
      description =
          "record the webhook's CPU with Java Flight Recorder during its load runs, keep the"
              + " recordings here and print where its samples fall")
  Path profile;

  @Option(
      names = "--kube-env",
      description =
          "dev/kube-local's env file: also measure the burst against the real API server (etcd,"
              + " the controller manager's binder)")
  Path kubeEnv;

  @Option(
      names = "--real-claims",
      defaultValue = "20",
      description = "claims (and baseline volumes) against the real Cinder")
  int realClaims;

  @Option(
      names = "--cinder-burst",
      defaultValue = "100",
      description = "claims at once on the real Cinder (0: no such row)")
  int cinderBurst;

  @Option(
      names = "--cinder-rounds",
      defaultValue = "1",
      description = "rounds of the real-Cinder burst; medians are reported")
  int cinderRounds;

  // The mock server logs every request through java.util.logging: kept quiet, and referenced so
  // that the setting is not collected with the logger.
  private static final java.util.logging.Logger MOCK_LOG =
      java.util.logging.Logger.getLogger("io.fabric8.mockwebserver");

  public static void main(String[] args) {
    MOCK_LOG.setLevel(java.util.logging.Level.WARNING);
    int code;
    try {
      code = new CommandLine(new Bench()).execute(args);
    } catch (Throwable t) {
      // The servers' threads would keep the JVM alive after a failure.
      t.printStackTrace();
      code = 1;
    }
    System.exit(code);
  }

  /** The local Cinder's noauth API, from its env file, as a cloud.conf would name it. */
  static CloudConfig noauth(Path envFile) throws Exception {
    java.util.Properties env = env(envFile);
    Path conf = Files.createTempFile("bench-cloud", ".conf");
    Files.writeString(
        conf,
        "[Global]\ncinder-endpoint = "
            + env.getProperty("CINDER_ENDPOINT")
            + "\ntenant-id = "
            + env.getProperty("CINDER_PROJECT_ID")
            + "\nusername = standalone-cinder-bench\n");
    return CloudConfigLoader.load(conf, java.util.Map.of());
  }

  @Override
  public Integer call() throws Exception {
    Table table = new Table();
    if (webhookJar != null && Files.isRegularFile(webhookJar)) {
      WebhookBench.run(
          table,
          webhookJar,
          WebhookBench.jvmOptions(webhookJvmOptions),
          seconds,
          connections,
          rounds,
          flood,
          profile);
    } else {
      System.err.println("no webhook jar at " + webhookJar + ": its rows are left out");
    }
    if (skipProvisioner) {
      table.render().forEach(System.out::println);
      return 0;
    }
    // A first, untimed round warms the JIT: the figures are of a running provisioner.
    ProvisionerBench.burst(new FakeCinderClient(), Math.min(claims, 200), workers);
    burstRows(table, "instant Cinder", "mock API server", "≥ 200/s", ProvisionerBench::mock);
    if (kubeEnv != null) {
      if (!Files.isRegularFile(kubeEnv)) {
        System.err.println("no such env file: " + kubeEnv + " (start dev/kube-local first)");
        return 2;
      }
      Path kubeconfig = Path.of(env(kubeEnv).getProperty("KUBE_LOCAL_KUBECONFIG"));
      burstRows(
          table,
          "real API server (etcd)",
          "the API server",
          "",
          () -> ProvisionerBench.real(kubeconfig));
    }
    // Unloaded: one claim at a time, so the latency is the provisioner's, not the queue's.
    List<Double> one = ProvisionerBench.sequentialClaimsMs(new FakeCinderClient(), 100);
    table.add(
        "provisioner, one claim at a time (100), instant Cinder: claim → PV p50",
        Table.ms(Stats.percentile(one, 50)),
        "",
        Double.NaN,
        "≤ 50 ms");
    table.add("  claim → PV p99", Table.ms(Stats.percentile(one, 99)), "", Double.NaN, "");
    // The provisioner's part of a clone; the webhook's admission of it (the resolver's answer)
    // is not in this row.
    List<Double> clones = ProvisionerBench.sequentialClonesMs(new FakeCinderClient(), 100);
    against(
        table,
        "provisioner, one clone at a time (100), instant Cinder: clone → PV median",
        clones,
        "a plain claim, above: ",
        one,
        "",
        99);

    if (cinderEnv != null) {
      if (!Files.isRegularFile(cinderEnv)) {
        System.err.println("no such env file: " + cinderEnv + " (start dev/cinder-local first)");
        return 2;
      }
      try (CinderClient cinder = OpenStackCinderClient.create(noauth(cinderEnv))) {
        List<Double> base = new java.util.ArrayList<>();
        List<Double> ours = new java.util.ArrayList<>();
        // In two interleaved halves: a Cinder that slows down over the run (its database, the
        // loop files) weighs on both sides alike.
        int first = realClaims / 2;
        for (int half : new int[] {first, realClaims - first}) {
          base.addAll(ProvisionerBench.cinderCreateAndAttachMs(cinder, half));
          ours.addAll(ProvisionerBench.sequentialClaimsMs(cinder, half));
        }
        against(
            table,
            "provisioner, real local Cinder: claim → PV, median of " + realClaims,
            ours,
            "Cinder's own create + available + attach: ",
            base,
            "≤ 1.05×",
            90);
        if (cinderBurst > 0) {
          cinderBurstRows(table, cinder);
        }
      }
    }
    table.render().forEach(System.out::println);
    return 0;
  }

  /**
   * The burst on the real Cinder: {@code --cinder-burst} claims at once through the provisioner
   * (the mock API server: the figure is Cinder's and the provisioner's), against Cinder's own rate
   * for the same calls made all at once, in the same round; and the time its workers held a key.
   */
  private void cinderBurstRows(Table table, CinderClient cinder) throws Exception {
    List<Double> ratios = new ArrayList<>();
    List<Double> ours = new ArrayList<>();
    List<Double> own = new ArrayList<>();
    List<Double> p99 = new ArrayList<>();
    List<Double> within = new ArrayList<>();
    for (int r = 0; r < cinderRounds; r++) {
      CinderBurst.Round round = CinderBurst.round(cinder, cinderBurst, workers);
      ours.add(round.claimsPerSecond());
      own.add(round.cinderPerSecond());
      ratios.add(round.claimsPerSecond() / round.cinderPerSecond());
      p99.add(round.keyP99Ms());
      within.add(round.keysWithin50Ms());
      System.err.printf(
          Locale.ROOT,
          "real Cinder burst, round %d: %.2f claims/s, Cinder alone %.2f/s, key p99 ≤ %.0f ms,"
              + " %.1f %% of keys ≤ 50 ms%n",
          r + 1,
          round.claimsPerSecond(),
          round.cinderPerSecond(),
          round.keyP99Ms(),
          100 * round.keysWithin50Ms());
    }
    table.add(
        "provisioner, "
            + cinderBurst
            + " claims at once, real local Cinder, "
            + workers
            + " workers: claims/s",
        Table.perSecond(Stats.median(ours)),
        "Cinder's own, all at once: " + Table.perSecond(Stats.median(own)),
        Stats.median(ratios),
        "≥ 0.8×");
    table.add(
        "  a worker's hold on a key, p99 (histogram bucket)",
        Table.ms(Stats.median(p99)),
        String.format(Locale.ROOT, "%.1f %% of keys ≤ 50 ms", 100 * Stats.median(within)),
        Double.NaN,
        "≤ 50 ms");
  }

  /**
   * Two rows: the median of {@code ours} against {@code base}'s, then the {@code tail} percentile.
   */
  private static void against(
      Table table,
      String figure,
      List<Double> ours,
      String baseline,
      List<Double> base,
      String target,
      int tail) {
    double o = Stats.median(ours);
    double b = Stats.median(base);
    table.add(figure, Table.ms(o), baseline + Table.ms(b), o / b, target);
    double ot = Stats.percentile(ours, tail);
    double bt = Stats.percentile(base, tail);
    table.add("  p" + tail, Table.ms(ot), baseline + Table.ms(bt), ot / bt, "");
  }

  /**
   * The burst's rows: each round makes as many PVs alone first (the baseline), then the claims
   * through the provisioner with an instant Cinder, each on a fresh target (its own mock, or its
   * own namespace, class and provisioner name on the real API server, removed after it).
   */
  private void burstRows(
      Table table,
      String where,
      String alone,
      String target,
      java.util.function.Supplier<ProvisionerBench.Target> fresh)
      throws Exception {
    List<Double> rates = new ArrayList<>();
    List<Double> floors = new ArrayList<>();
    List<Double> p50 = new ArrayList<>();
    List<Double> p99 = new ArrayList<>();
    for (int r = 0; r < rounds; r++) {
      try (ProvisionerBench.Target t = fresh.get()) {
        floors.add(ProvisionerBench.apiPvCreatesPerSecond(t, claims, workers));
      }
      try (ProvisionerBench.Target t = fresh.get()) {
        ProvisionerBench.Run run =
            ProvisionerBench.burst(t, new FakeCinderClient(), claims, workers);
        rates.add(run.claimsPerSecond());
        p50.add(Stats.percentile(run.latenciesMs(), 50));
        p99.add(Stats.percentile(run.latenciesMs(), 99));
      }
      System.err.printf(
          Locale.ROOT,
          "%s, round %d: %.0f claims/s, alone %.0f PV creates/s, p50 %.1f ms, p99 %.1f ms%n",
          where,
          r + 1,
          rates.get(r),
          floors.get(r),
          p50.get(r),
          p99.get(r));
    }
    double rate = Stats.median(rates);
    double floor = Stats.median(floors);
    table.add(
        "provisioner, " + claims + " claims at once, " + where + ": claims/s",
        Table.perSecond(rate),
        alone + " alone: " + Table.perSecond(floor) + " PV creates",
        rate / floor,
        target);
    table.add(
        "  claim → PV p50",
        Table.ms(Stats.median(p50)),
        "",
        Double.NaN,
        target.isEmpty() ? "" : "≤ 50 ms");
    table.add("  claim → PV p99", Table.ms(Stats.median(p99)), "", Double.NaN, "");
  }

  /** A dev/ env file (KEY=value lines). */
  private static java.util.Properties env(Path envFile) throws java.io.IOException {
    java.util.Properties env = new java.util.Properties();
    try (var in = Files.newBufferedReader(envFile)) {
      env.load(in);
    }
    return env;
  }
}
