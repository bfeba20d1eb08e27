package org.standalonecinder.provisioner.app;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Clock;
import java.time.Duration;
import org.standalonecinder.provisioner.cinder.CinderClient;
import org.standalonecinder.provisioner.clone.CloneResolver;
import org.standalonecinder.provisioner.clone.ClusterReader;
import org.standalonecinder.provisioner.clone.KubernetesClusterReader;
import org.standalonecinder.provisioner.controller.ClaimController;
import org.standalonecinder.provisioner.controller.ClusterCache;
import org.standalonecinder.provisioner.controller.EventRecorder;
import org.standalonecinder.provisioner.controller.FairPool;
import org.standalonecinder.provisioner.controller.RetryPolicy;
import org.standalonecinder.provisioner.expansion.ClaimExpansion;
import org.standalonecinder.provisioner.plugin.CinderProvisioner;
import org.standalonecinder.provisioner.provision.ProvisionerSettings;
import org.standalonecinder.provisioner.provision.VolumeProvisioner;
import org.standalonecinder.provisioner.snapshot.RestoreResolver;
import org.standalonecinder.provisioner.snapshot.SnapshotController;

/** How the claim loop and the Cinder plug-in are put together: the one place that builds them. */
public final class Wiring {

  private Wiring() {}

  /**
   * What the provisioner process is made of, each built once: the claim loop with the Cinder
   * plug-in, and the clone resolver with its view of the cluster, which the loop's plug-in and the
   * webhook's clone check (the resolver server) share.
   *
   * @param controller the claim loop, not started
   * @param snapshots the snapshot loop, not started (it reads the claim loop's caches)
   * @param clones resolves clone sources in Cinder
   * @param cluster the resolver's view of the cluster
   */
  public record Parts(
      ClaimController controller,
      SnapshotController snapshots,
      CloneResolver clones,
      ClusterReader cluster) {}

  /** The provisioner's parts, the snapshot loop with its default timings. */
  public static Parts build(
      KubernetesClient client,
      CinderClient cinder,
      VolumeProvisioner volumes,
      ProvisionerSettings settings,
      EventRecorder events,
      RetryPolicy retry,
      int workers,
      Duration resync,
      MeterRegistry registry) {
    return build(
        client,
        cinder,
        volumes,
        settings,
        events,
        retry,
        workers,
        resync,
        registry,
        SnapshotController.Timing.DEFAULT);
  }

  /**
   * The provisioner's parts.
   *
   * @param cinder the Cinder that clone sources are resolved in (the one {@code volumes} uses)
   * @param volumes makes and removes the volumes
   * @param retry the loop's retry policy
   * @param workers how many keys are worked on at once
   * @param resync how often every key and the housekeeping come again
   * @param registry where the metrics go
   * @param snapshotTiming how the snapshot loop waits for Cinder
   */
  public static Parts build(
      KubernetesClient client,
      CinderClient cinder,
      VolumeProvisioner volumes,
      ProvisionerSettings settings,
      EventRecorder events,
      RetryPolicy retry,
      int workers,
      Duration resync,
      MeterRegistry registry,
      SnapshotController.Timing snapshotTiming) {
    ClusterCache cache = new ClusterCache(client, resync);
    ClusterReader cluster = new KubernetesClusterReader(client, settings.secretNamespace());
    CloneResolver clones =
        new CloneResolver(cluster, cinder, settings.provisionerName(), settings.topology());
    ClaimExpansion expansion =
        new ClaimExpansion(
            client, cache, settings.identity(), volumes.expander(), events, Clock.systemUTC());
    ClaimController controller =
        new ClaimController(
            client,
            cache,
            new CinderProvisioner(
                client,
                cache,
                volumes,
                clones,
                new RestoreResolver(client, cinder, settings.provisionerName()),
                expansion,
                settings),
            events,
            retry,
            workers,
            resync,
            registry,
            volumes.pool());
    SnapshotController snapshots =
        new SnapshotController(
            client,
            cache,
            cinder,
            settings,
            events,
            retry,
            Math.max(1, Math.min(workers, 4)),
            resync,
            snapshotTiming,
            Clock.systemUTC(),
            registry,
            FairPool.ofThreads(SnapshotController.STEP_THREADS, "snapshots-cinder"));
    return new Parts(controller, snapshots, clones, cluster);
  }
}
