package org.standalonecinder.provisioner.controller;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.extended.leaderelection.LeaderCallbacks;
import io.fabric8.kubernetes.client.extended.leaderelection.LeaderElectionConfigBuilder;
import io.fabric8.kubernetes.client.extended.leaderelection.resourcelock.LeaseLock;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One leader among the provisioner's replicas, on a {@code coordination.k8s.io} Lease in the
 * provisioner's namespace (fabric8's elector). A replica that stops leading does not compete again:
 * the app stops acting at once and the process exits, as Kubernetes' own controllers do, so that a
 * replica never acts on a stale belief that it leads.
 */
public final class LeaderElection implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(LeaderElection.class);

  /**
   * How the Lease is held.
   *
   * @param namespace the Lease's namespace (the provisioner's)
   * @param name the Lease's name, one per provisioner deployment
   * @param identity this replica (its pod name)
   * @param leaseDuration how long a standby waits after the last renewal before it takes over
   * @param renewDeadline how long the leader keeps trying to renew before it gives up leading;
   *     shorter than the lease, so it stops before anyone else may start
   * @param retryPeriod how often leader and standbys try
   */
  public record Settings(
      String namespace,
      String name,
      String identity,
      Duration leaseDuration,
      Duration renewDeadline,
      Duration retryPeriod) {

    public Settings {
      check(leaseDuration, renewDeadline, retryPeriod);
    }

    /**
     * @throws IllegalArgumentException unless lease duration > renew deadline > retry period > 0
     */
    public static void check(Duration leaseDuration, Duration renewDeadline, Duration retryPeriod) {
      if (!(leaseDuration.compareTo(renewDeadline) > 0
          && renewDeadline.compareTo(retryPeriod) > 0
          && !retryPeriod.isNegative()
          && !retryPeriod.isZero())) {
        throw new IllegalArgumentException(
            "leader election needs lease duration > renew deadline > retry period > 0, was "
                + leaseDuration.toSeconds()
                + " s, "
                + renewDeadline.toSeconds()
                + " s, "
                + retryPeriod.toSeconds()
                + " s");
      }
    }
  }

  private final CompletableFuture<?> running;

  private LeaderElection(CompletableFuture<?> running) {
    this.running = running;
  }

  /**
   * Starts competing; {@code onStart} runs when this replica leads, {@code onStop} when it stops
   * leading (the Lease lost, or {@link #close}).
   */
  public static LeaderElection start(
      KubernetesClient client, Settings s, Runnable onStart, Runnable onStop) {
    var config =
        new LeaderElectionConfigBuilder()
            .withName(s.name())
            .withLock(new LeaseLock(s.namespace(), s.name(), s.identity()))
            .withLeaseDuration(s.leaseDuration())
            .withRenewDeadline(s.renewDeadline())
            .withRetryPeriod(s.retryPeriod())
            // A replica that shuts down hands the Lease over at once instead of letting it lapse.
            .withReleaseOnCancel(true)
            .withLeaderCallbacks(
                new LeaderCallbacks(
                    onStart, onStop, leader -> LOG.info("leader of {}: {}", s.name(), leader)))
            .build();
    LOG.info(
        "competing for Lease {}/{} as {} (lease {} s, renew deadline {} s, retry {} s)",
        s.namespace(),
        s.name(),
        s.identity(),
        s.leaseDuration().toSeconds(),
        s.renewDeadline().toSeconds(),
        s.retryPeriod().toSeconds());
    return new LeaderElection(client.leaderElector().withConfig(config).build().start());
  }

  /** Stops competing and releases the Lease if held. */
  @Override
  public void close() {
    running.cancel(true);
  }
}
