package org.standalonecinder.provisioner.controller;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaimBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The caches hand every object to the loop again at each resync, claims (trimmed) and PVs alike;
 * claims are found by the project's finalizers through an index.
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

  private static final String OURS = ClusterCache.OUR_FINALIZERS + "clone-in-progress-uid-1";

  static Stream<Arguments> finalizers() {
    return Stream.of(
        Arguments.of(
            "the finalizer, beside Kubernetes' own: found",
            List.of("kubernetes.io/pvc-protection", OURS),
            List.of(),
            true),
        Arguments.of(
            "another clone's finalizer: not found",
            List.of(ClusterCache.OUR_FINALIZERS + "clone-in-progress-uid-2"),
            List.of(),
            false),
        Arguments.of(
            "only Kubernetes' finalizer: not found",
            List.of("kubernetes.io/pvc-protection"),
            List.of(),
            false),
        Arguments.of(
            "the finalizer past 40 others of ours (the cache keeps 32 and a mark): not indexed",
            java.util.stream.Stream.concat(
                    java.util.stream.IntStream.range(0, 40)
                        .mapToObj(i -> ClusterCache.OUR_FINALIZERS + "clone-in-progress-x" + i),
                    Stream.of(OURS))
                .toList(),
            List.of(),
            false),
        Arguments.of(
            "the finalizer taken off after the cache had it: no longer found",
            List.of(OURS),
            List.of("kubernetes.io/pvc-protection"),
            false));
  }

  /**
   * The claims that carry one of the project's finalizers are found through an index that follows
   * every change of a claim, not by a scan of every claim of the cluster.
   */
  @ParameterizedTest(name = "{0}")
  @MethodSource("finalizers")
  void claimsAreFoundByOurFinalizerThroughAnIndex(
      String name, List<String> finalizers, List<String> laterFinalizers, boolean found)
      throws Exception {
    var server = Cluster.newApiServer();
    KubernetesClient client = server.createClient();
    ClusterCache cache = new ClusterCache(client, Duration.ofMinutes(5));
    try {
      for (String other : new String[] {"web", "db"}) {
        client
            .persistentVolumeClaims()
            .inNamespace("apps")
            .resource(claim(other, List.of("kubernetes.io/pvc-protection")))
            .create();
      }
      PersistentVolumeClaim made =
          client
              .persistentVolumeClaims()
              .inNamespace("apps")
              .resource(claim("data", finalizers))
              .create();
      AtomicInteger ignored = new AtomicInteger();
      cache.start(
          ClusterCacheTest.<PersistentVolumeClaim>counting(ignored),
          ClusterCacheTest.<PersistentVolume>counting(ignored));
      Cluster.await("synced", cache::synced, Duration.ofSeconds(10));
      if (!laterFinalizers.isEmpty()) {
        Cluster.await(
            "the claim indexed",
            () -> cache.claimsWithFinalizer(OURS).size() == 1,
            Duration.ofSeconds(10));
        made.getMetadata().setFinalizers(laterFinalizers);
        String version =
            client
                .persistentVolumeClaims()
                .inNamespace("apps")
                .resource(made)
                .update()
                .getMetadata()
                .getResourceVersion();
        // By its version: the cache keeps only the project's finalizers of a claim.
        Cluster.await(
            "the change seen",
            () -> version.equals(cache.claim("apps", "data").getMetadata().getResourceVersion()),
            Duration.ofSeconds(10));
      }
      assertThat(cache.claimsWithFinalizer(OURS))
          .extracting(c -> c.getMetadata().getName())
          .isEqualTo(found ? List.of("data") : List.of());
    } finally {
      cache.close();
      client.close();
      Cluster.destroy(server);
    }
  }

  static Stream<Arguments> watchesThatEndInGarbage() {
    return Stream.of(
        Arguments.of(
            "the claims' watch",
            "/api/v1/persistentvolumeclaims",
            "{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolumeClaim\","
                + "\"metadata\":{\"name\":\"late\",\"namespace\":\"apps\",\"resourceVersion\":\"2\"}}",
            (Predicate<ClusterCache>) c -> c.claim("apps", "late") != null),
        Arguments.of(
            "the PVs' watch",
            "/api/v1/persistentvolumes",
            "{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolume\","
                + "\"metadata\":{\"name\":\"late\",\"resourceVersion\":\"2\"}}",
            (Predicate<ClusterCache>) c -> c.volume("late") != null),
        Arguments.of(
            "the classes' watch",
            "/apis/storage.k8s.io/v1/storageclasses",
            "{\"apiVersion\":\"storage.k8s.io/v1\",\"kind\":\"StorageClass\","
                + "\"metadata\":{\"name\":\"late\",\"resourceVersion\":\"2\"},"
                + "\"provisioner\":\"x\"}",
            (Predicate<ClusterCache>) c -> c.storageClass("late") != null));
  }

  /**
   * A watch that ends in an event nobody can read (fabric8's default then stops the informer for
   * good: the cache froze, no later claim was ever provisioned, /healthz said ok) is listed and
   * watched again: what the cluster holds afterwards reaches the cache.
   */
  @ParameterizedTest(name = "{0}")
  @MethodSource("watchesThatEndInGarbage")
  void aWatchThatEndsInGarbageIsListedAndWatchedAgain(
      String name, String path, String laterObject, Predicate<ClusterCache> seen) throws Exception {
    try (var api = new ScriptedApiServer().firstWatchSends(path, "this is no watch event");
        KubernetesClient client = api.client()) {
      ClusterCache cache = new ClusterCache(client, Duration.ofMinutes(5));
      try {
        AtomicInteger ignored = new AtomicInteger();
        cache.start(
            ClusterCacheTest.<PersistentVolumeClaim>counting(ignored),
            ClusterCacheTest.<PersistentVolume>counting(ignored));
        Cluster.await("synced", cache::synced, Duration.ofSeconds(10));
        api.awaitSeenAfterTheFirstWatch(path, laterObject, () -> seen.test(cache));
        assertThat(api.listsOf(path)).as("lists of " + path).isGreaterThanOrEqualTo(2);
      } finally {
        cache.close();
      }
    }
  }

  private static PersistentVolumeClaim claim(String name, List<String> finalizers) {
    return new PersistentVolumeClaimBuilder()
        .withNewMetadata()
        .withName(name)
        .withNamespace("apps")
        .withFinalizers(finalizers)
        .endMetadata()
        .build();
  }
}
