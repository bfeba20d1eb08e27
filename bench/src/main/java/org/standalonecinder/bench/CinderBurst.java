package org.standalonecinder.bench;

import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.distribution.CountAtBucket;
import io.micrometer.core.instrument.distribution.HistogramSnapshot;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.standalonecinder.provisioner.cinder.Attachment;
import org.standalonecinder.provisioner.cinder.Backoff;
import org.standalonecinder.provisioner.cinder.CinderClient;
import org.standalonecinder.provisioner.cinder.Volume;
import org.standalonecinder.provisioner.cinder.VolumeSpec;
import org.standalonecinder.provisioner.provision.Names;
import org.standalonecinder.provisioner.provision.ProvisionerSettings;

/**
 * A burst of claims on the real Cinder: how fast the provisioner (its default workers) gets them
 * all to a PV, against Cinder's own rate for the same calls made all at once; and how long its
 * workers held a key meanwhile (the provisioner's own histogram), which says whether any step
 * waited for Cinder on a worker.
 */
final class CinderBurst {

  private CinderBurst() {}

  /**
   * One round's figures.
   *
   * @param claimsPerSecond the provisioner's: claims to PVs
   * @param cinderPerSecond Cinder's own: volumes created, available and attached, all at once
   * @param keyP99Ms the smallest bucket of the key histogram that holds 99 % of the keys
   * @param keysWithin50Ms the share of keys held 50 ms or less
   */
  record Round(
      double claimsPerSecond, double cinderPerSecond, double keyP99Ms, double keysWithin50Ms) {}

  /** The provisioner's burst, then Cinder's own; each cleaned up after. */
  static Round round(CinderClient cinder, int n, int workers) throws Exception {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    String cluster = "bench-burst-" + Long.toString(System.nanoTime(), 36);
    ProvisionerBench.Run run;
    HistogramSnapshot h;
    try (ProvisionerBench.Target target = ProvisionerBench.mock()) {
      run = ProvisionerBench.burst(target, cinder, n, workers, cluster, registry);
      // Read at once: a simple registry's histogram keeps a window of about two minutes.
      Timer held = registry.find("standalone_cinder_key_seconds").tag("loop", "claims").timer();
      h = held.takeSnapshot();
    } finally {
      cleanUp(cinder, Map.of(Names.META_CLUSTER, cluster));
    }
    double own = cinderAllAtOnce(cinder, n);
    return new Round(run.claimsPerSecond(), own, p99Ms(h), within(h, 50));
  }

  /**
   * Cinder's own rate for what {@code n} claims need of it, asked all at once (a thread each):
   * create, wait until available, attach to the cluster's connector; volumes per second, from the
   * first call to the last attachment.
   */
  static double cinderAllAtOnce(CinderClient cinder, int n) throws Exception {
    ProvisionerSettings s = ProvisionerBench.settings("bench-base");
    String tag = "bench-own-" + Long.toString(System.nanoTime(), 36);
    ExecutorService pool = Executors.newFixedThreadPool(n);
    try {
      long t0 = System.nanoTime();
      List<Future<?>> done = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        String name = tag + "-" + i;
        done.add(
            pool.submit(
                () -> {
                  Volume v =
                      cinder.createVolume(
                          VolumeSpec.blank(name, 1).withMetadata(Map.of("bench", tag)));
                  cinder.awaitVolumeStatus(
                      v.id(), Set.of("available"), Backoff.DEFAULT.withDeadline(LONG));
                  Attachment a = cinder.createAttachment(v.id(), s.connector());
                  cinder.completeAttachment(a.id());
                  return null;
                }));
      }
      for (Future<?> f : done) {
        f.get();
      }
      return n / ((System.nanoTime() - t0) / 1e9);
    } finally {
      pool.shutdown();
      cleanUp(cinder, Map.of("bench", tag));
    }
  }

  private static final Duration LONG = Duration.ofMinutes(10);

  /** Deletes every volume carrying {@code metadata}, detached first; waits until they are gone. */
  static void cleanUp(CinderClient cinder, Map<String, String> metadata) {
    List<Volume> left = cinder.findVolumes(null, metadata);
    for (Volume v : left) {
      for (Attachment a : cinder.listAttachments(v.id())) {
        cinder.deleteAttachment(a.id());
      }
    }
    for (Volume v : left) {
      cinder.awaitVolumeStatus(v.id(), Set.of("available", "error"), Backoff.DEFAULT);
      cinder.deleteVolume(v.id());
    }
    for (Volume v : left) {
      cinder.awaitVolumeDeleted(v.id(), Backoff.DEFAULT.withDeadline(LONG));
    }
  }

  /** The smallest bucket bound (ms) at or under which 99 % of the recorded keys fall. */
  static double p99Ms(HistogramSnapshot h) {
    double total = h.count();
    for (CountAtBucket b : h.histogramCounts()) {
      if (b.count() >= 0.99 * total) {
        return b.bucket(java.util.concurrent.TimeUnit.MILLISECONDS);
      }
    }
    return Double.POSITIVE_INFINITY;
  }

  /** The share of recorded keys held {@code ms} or less (a bucket bound of the histogram). */
  static double within(HistogramSnapshot h, double ms) {
    for (CountAtBucket b : h.histogramCounts()) {
      if (b.bucket(java.util.concurrent.TimeUnit.MILLISECONDS) == ms) {
        return h.count() == 0 ? 1 : b.count() / h.count();
      }
    }
    return Double.NaN;
  }
}
