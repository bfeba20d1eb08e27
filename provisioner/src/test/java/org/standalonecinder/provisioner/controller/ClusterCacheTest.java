package org.standalonecinder.provisioner.controller;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaimBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The caches hand every object to the loop again at each resync, claims (trimmed) and PVs alike.
 */
class ClusterCacheTest {

  private static <T> ResourceEventHandler<T> counting(AtomicInteger updates) {
    return new ResourceEventHandler<>() {
      @Override
      public void onAdd(T obj) {}

      @Override
      public void onUpdate(T oldObj, T newObj) {
        updates.incrementAndGet();
      }

      @Override
      public void onDelete(T obj, boolean deletedFinalStateUnknown) {}
    };
  }

  @Test
  void everyClaimAndVolumeComesAgainAtEachResync() throws Exception {
    var server = Cluster.newApiServer();
    KubernetesClient client = server.createClient();
    ClusterCache cache = new ClusterCache(client, Duration.ofSeconds(1));
    try {
      client
          .persistentVolumeClaims()
          .inNamespace("apps")
          .resource(
              new PersistentVolumeClaimBuilder()
                  .withNewMetadata()
                  .withName("data")
                  .withNamespace("apps")
                  .endMetadata()
                  .build())
          .create();
      client
          .persistentVolumes()
          .resource(
              new PersistentVolumeBuilder()
                  .withNewMetadata()
                  .withName("pv-1")
                  .endMetadata()
                  .build())
          .create();
      AtomicInteger claims = new AtomicInteger();
      AtomicInteger volumes = new AtomicInteger();
      cache.start(
          ClusterCacheTest.<PersistentVolumeClaim>counting(claims),
          ClusterCacheTest.<PersistentVolume>counting(volumes));
      Cluster.await("synced", cache::synced, Duration.ofSeconds(10));
      Thread.sleep(3_500);
      assertThat(volumes.get()).as("resyncs of the PV").isGreaterThanOrEqualTo(2);
      assertThat(claims.get()).as("resyncs of the claim").isGreaterThanOrEqualTo(2);
    } finally {
      cache.close();
      client.close();
      Cluster.destroy(server);
    }
  }
}
