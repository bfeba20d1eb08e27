package org.standalonecinder.provisioner.app;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Clock;
import java.time.Duration;
import org.standalonecinder.provisioner.cinder.CinderClient;
import org.standalonecinder.provisioner.clone.CloneResolver;
import org.standalonecinder.provisioner.clone.KubernetesClusterReader;
import org.standalonecinder.provisioner.controller.ClaimController;
import org.standalonecinder.provisioner.controller.ClusterCache;
import org.standalonecinder.provisioner.controller.EventRecorder;
import org.standalonecinder.provisioner.controller.RetryPolicy;
import org.standalonecinder.provisioner.plugin.CinderProvisioner;
import org.standalonecinder.provisioner.plugin.ClaimExpansion;
import org.standalonecinder.provisioner.provision.ProvisionerSettings;
import org.standalonecinder.provisioner.provision.VolumeProvisioner;

/** How the claim loop and the Cinder plug-in are put together: the one place that builds them. */
public final class Wiring {

  private Wiring() {}

  /**
   * The claim loop with the Cinder plug-in, not started.
   *
   * @param cinder the Cinder that clone sources are resolved in (the one {@code volumes} uses)
   * @param volumes makes and removes the volumes
   * @param retry the loop's retry policy
   * @param workers how many keys are worked on at once
   * @param resync how often every key and the housekeeping come again
   * @param registry where the metrics go
   */
  public static ClaimController controller(
      KubernetesClient client,
      CinderClient cinder,
      VolumeProvisioner volumes,
      ProvisionerSettings settings,
      EventRecorder events,
      RetryPolicy retry,
      int workers,
      Duration resync,
      MeterRegistry registry) {
    ClusterCache cache = new ClusterCache(client, resync);
    CloneResolver clones =
        new CloneResolver(
            new KubernetesClusterReader(client, settings.secretNamespace()),
            cinder,
            settings.provisionerName(),
            settings.topology());
    ClaimExpansion expansion =
        new ClaimExpansion(
            client, cache, settings.identity(), volumes.expander(), events, Clock.systemUTC());
    return new ClaimController(
        client,
        cache,
        new CinderProvisioner(client, cache, volumes, clones, expansion, settings),
        events,
        retry,
        workers,
        resync,
        registry);
  }
}
