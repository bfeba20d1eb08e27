package org.standalonecinder.provisioner.snapshot;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.standalonecinder.provisioner.controller.Cluster;
import org.standalonecinder.provisioner.controller.ScriptedApiServer;

/**
 * The snapshot API's informers: none runs after the cache is closed, whenever the close comes, and
 * none stops for good when a watch ends in an error fabric8 does not expect.
 */
class SnapshotCacheTest {

  private static final String BASE = "/apis/" + SnapshotApi.API_VERSION + "/";
  private static final String CONTENTS = BASE + "volumesnapshotcontents";
  private static final String SNAPSHOTS = BASE + "volumesnapshots";

  private static void start(SnapshotCache cache) {
    cache.startIfServed(key -> {}, key -> {});
  }

  static Stream<Arguments> closes() {
    return Stream.of(
        Arguments.of("closed before the API is looked for", false),
        Arguments.of("closed while the contents are first listed", true));
  }

  /**
   * A close that meets the start (the provisioner stopping while it looks for the snapshot API)
   * leaves nothing running: an informer started after it ran on, unowned, or on a closed client
   * ("listSyncAndWatch failed …, will stop" in the e2e log).
   */
  @ParameterizedTest(name = "{0}")
  @MethodSource("closes")
  void noInformerRunsAfterClose(String name, boolean duringTheStart) throws Exception {
    try (var api = new ScriptedApiServer();
        KubernetesClient client = api.client()) {
      SnapshotCache cache = new SnapshotCache(client, Duration.ofMinutes(5));
      CompletableFuture<Void> starting;
      if (duringTheStart) {
        var listed = api.holdLists(CONTENTS);
        starting = CompletableFuture.runAsync(() -> start(cache));
        assertThat(listed.await(10, TimeUnit.SECONDS)).as("the contents listed").isTrue();
        cache.close();
        api.release(CONTENTS);
      } else {
        cache.close();
        starting = CompletableFuture.runAsync(() -> start(cache));
      }
      starting.get(10, TimeUnit.SECONDS);
      Thread.sleep(1_500);
      assertThat(cache.started()).as("started").isFalse();
      assertThat(cache.running()).as("informers running").isZero();
      assertThat(api.watchesOf(CONTENTS)).as("watches of the contents").isZero();
      assertThat(api.listsOf(SNAPSHOTS)).as("lists of the snapshots").isZero();
      assertThat(api.listsOf(CONTENTS))
          .as("lists of the contents")
          .isEqualTo(duringTheStart ? 1 : 0);
    }
  }

  static Stream<Arguments> watchesThatEndInGarbage() {
    return Stream.of(
        Arguments.of(
            "the contents' watch",
            CONTENTS,
            "{\"apiVersion\":\"snapshot.storage.k8s.io/v1\",\"kind\":\"VolumeSnapshotContent\","
                + "\"metadata\":{\"name\":\"late\",\"resourceVersion\":\"2\"},\"spec\":{}}",
            (Predicate<SnapshotCache>) c -> c.content("late") != null),
        Arguments.of(
            "the snapshots' watch",
            SNAPSHOTS,
            "{\"apiVersion\":\"snapshot.storage.k8s.io/v1\",\"kind\":\"VolumeSnapshot\","
                + "\"metadata\":{\"name\":\"late\",\"namespace\":\"apps\",\"resourceVersion\":\"2\"},"
                + "\"spec\":{\"source\":{\"persistentVolumeClaimName\":\"data\"}}}",
            (Predicate<SnapshotCache>) c -> c.snapshot("apps", "late") != null));
  }

  /** As the claims' ({@code ClusterCacheTest}): listed and watched again, never frozen. */
  @ParameterizedTest(name = "{0}")
  @MethodSource("watchesThatEndInGarbage")
  void aWatchThatEndsInGarbageIsListedAndWatchedAgain(
      String name, String path, String laterObject, Predicate<SnapshotCache> seen)
      throws Exception {
    try (var api = new ScriptedApiServer().firstWatchSends(path, "this is no watch event");
        KubernetesClient client = api.client()) {
      SnapshotCache cache = new SnapshotCache(client, Duration.ofMinutes(5));
      try {
        start(cache);
        Cluster.await("synced", cache::synced, Duration.ofSeconds(10));
        api.awaitSeenAfterTheFirstWatch(path, laterObject, () -> seen.test(cache));
      } finally {
        cache.close();
      }
    }
  }

  /**
   * The attack: a tenant's snapshots naming classes that do not exist, or names that are API paths.
   * A class the cache lacks is asked of the API server only while the snapshot is new (a class
   * applied with it may come later), and a name that can name no class goes into no request.
   */
  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "a class the cache lacks, named by a new snapshot: asked | e2e-class | 0 | true",
        "a class the cache lacks, named by a snapshot 3 minutes old: not asked | e2e-class | 180"
            + " | false",
        "a name that is a path: not asked | ../../../api/v1/namespaces/kube-system/secrets/x | 0"
            + " | false",
        "a name of 100,000 characters: not asked | 100000 | 0 | false",
      })
  void aClassTheCacheLacksIsAskedForOnlyWhileItsSnapshotIsNew(
      String row, String className, int ageSeconds, boolean asked) throws Exception {
    String named =
        className.matches("[0-9]+") ? "a".repeat(Integer.parseInt(className)) : className;
    try (var api = new ScriptedApiServer();
        KubernetesClient client = api.client()) {
      SnapshotCache cache = new SnapshotCache(client, Duration.ofMinutes(5));
      VolumeSnapshot s =
          new VolumeSnapshot(
              "apps",
              "snap",
              "u-1",
              "1",
              false,
              named,
              "data",
              null,
              null,
              java.time.Instant.now().minusSeconds(ageSeconds).toString());
      try {
        cache.classOf(s);
      } catch (RuntimeException answerNotAClass) {
        // The scripted server answers every GET with a list: only whether it was asked matters.
      }
      assertThat(api.seen().stream().anyMatch(r -> r.contains("volumesnapshotclasses")))
          .as("the API server asked; requests: " + api.seen())
          .isEqualTo(asked);
    }
  }
}
