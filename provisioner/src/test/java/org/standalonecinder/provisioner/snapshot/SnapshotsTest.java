package org.standalonecinder.provisioner.snapshot;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.PersistentVolume;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.standalonecinder.api.ClaimAnnotations;
import org.standalonecinder.provisioner.cinder.Snapshot;
import org.standalonecinder.provisioner.cinder.SnapshotSpec;
import org.standalonecinder.provisioner.controller.Cluster;
import org.standalonecinder.provisioner.provision.Names;

/**
 * Dynamic and pre-provisioned snapshots, their deletion under each policy, and the restart sweep,
 * as the snapshot loop serves them beside the claim loop.
 */
class SnapshotsTest extends SnapshotLoopTest {

  private String volumeOf(PersistentVolume pv) {
    return pv.getMetadata().getAnnotations().get(ClaimAnnotations.VOLUME_ID);
  }

  /** A dynamic snapshot of one of our claims, through to ready; its content's name. */
  private String readySnapshot(String name, String policy) {
    PersistentVolume pv = boundClaim("db-" + name);
    snapshotClass("cinder-" + name, DRIVER, policy, Map.of());
    GenericKubernetesResource s = volumeSnapshot(name, "db-" + name, "cinder-" + name);
    String content = SnapshotApi.contentName(s.getMetadata().getUid());
    Cluster.await("content " + content, () -> contentNow(content) != null, WAIT);
    controllerBinds(content);
    Cluster.await("a Cinder snapshot", () -> !cinderSnapshots().isEmpty(), WAIT);
    cinder.setSnapshotStatus(cinderSnapshots().get(0).id(), "available");
    Cluster.await(
        "ready",
        () -> contentNow(content).status() != null && contentNow(content).status().readyToUse(),
        WAIT);
    assertThat(cinderSnapshots().get(0).volumeId()).isEqualTo(volumeOf(pv));
    return content;
  }

  /**
   * Names as long as Kubernetes allows (253 characters) make descriptions and metadata values past
   * the 255 characters Cinder keeps: the claim is still provisioned and its snapshot taken, the
   * text cut, not the request refused.
   */
  @Test
  void theLongestNamesStillGetAVolumeAndASnapshot() {
    String claim = "c".repeat(253);
    String snapshot = "s".repeat(253);
    boundClaim(claim);
    snapshotClass("cinder-long", DRIVER, "Delete", Map.of());
    GenericKubernetesResource s = volumeSnapshot(snapshot, claim, "cinder-long");
    String content = SnapshotApi.contentName(s.getMetadata().getUid());
    Cluster.await("content " + content, () -> contentNow(content) != null, WAIT);
    controllerBinds(content);
    Cluster.await("a Cinder snapshot", () -> !cinderSnapshots().isEmpty(), WAIT);

    assertThat(cinderSnapshots().get(0).metadata().get(SnapshotApi.META_SNAPSHOT))
        .hasSize(255)
        .startsWith("apps/sss")
        .endsWith("...");
  }

  @Test
  void aSnapshotOfOurClaimGetsAContentTheSnapshotControllerBindsAndACinderSnapshot() {
    String name = readySnapshot("daily", "Delete");
    Content c = contentNow(name);
    assertThat(c.driver()).isEqualTo(DRIVER);
    assertThat(c.deletionPolicy()).isEqualTo("Delete");
    assertThat(c.snapshotNamespace() + "/" + c.snapshotName()).isEqualTo("apps/daily");
    assertThat(c.snapshotUid()).isEqualTo(name.substring("snapcontent-".length()));
    Snapshot s = cinderSnapshots().get(0);
    assertThat(c.status().snapshotHandle()).isEqualTo(s.id());
    assertThat(c.status().error()).isNull();
    assertThat(s.name()).isEqualTo(name);
    assertThat(s.metadata())
        .containsEntry(Names.META_CLUSTER, settings.clusterId())
        .containsEntry(SnapshotApi.META_CONTENT, name)
        .containsEntry(SnapshotApi.META_SNAPSHOT, "apps/daily")
        .containsEntry(SnapshotApi.META_POLICY, "Delete");
    GenericKubernetesResource raw =
        client.genericKubernetesResources(SnapshotApi.CONTENTS).withName(name).get();
    @SuppressWarnings("unchecked")
    Map<String, Object> status = (Map<String, Object>) raw.getAdditionalProperties().get("status");
    assertThat(((Number) status.get("restoreSize")).longValue()).isEqualTo(GIB);
    assertThat(((Number) status.get("creationTime")).longValue())
        .isEqualTo(s.createdAt().getEpochSecond() * 1_000_000_000L);
    // Cinder has answered: nothing is in flight, the snapshot-controller may delete it.
    Cluster.await("being-created gone", () -> !contentNow(name).beingCreated(), WAIT);
    assertThat(cinder.log().stream().filter(l -> l.startsWith("createSnapshot"))).hasSize(1);
    Cluster.await("counted", () -> counted("take", "succeeded") == 1, WAIT);
  }

  @Test
  void aSnapshotAppliedBeforeItsClaimGetsItsContentOnceTheClaimIsBoundNotAtTheNextResync()
      throws Exception {
    snapshotClass("cinder", DRIVER, "Delete", Map.of());
    GenericKubernetesResource s = volumeSnapshot("early", "db", "cinder");
    // Its retries (three, 50 to 200 ms apart) run out while there is no claim.
    Thread.sleep(1_000);
    boundClaim("db");
    String content = SnapshotApi.contentName(s.getMetadata().getUid());
    Cluster.await("content " + content, () -> contentNow(content) != null, WAIT);
  }

  static Stream<Arguments> busyVolumes() {
    return Stream.of(
        Arguments.of("a snapshot of a volume being backed up", "snapshot", "backing-up"),
        Arguments.of("a snapshot of a volume being extended", "snapshot", "extending"),
        Arguments.of("a backup of a volume being backed up", "backup", "backing-up"),
        Arguments.of("a backup of a volume being attached", "backup", "attaching"));
  }

  /**
   * Cinder refuses to snapshot or back up a volume it is busy with (400 "Invalid volume"); a large
   * backup keeps it busy for an hour. The content waits on the pace, told, asking Cinder nothing it
   * would refuse, and is taken once the volume is free.
   */
  @ParameterizedTest(name = "{0}")
  @MethodSource("busyVolumes")
  void aSnapshotOfABusyVolumeWaitsForItAndIsTakenOnceWithNoRefusal(
      String row, String type, String status) {
    String volume = volumeOf(boundClaim("db"));
    cinder.setStatus(volume, status);
    snapshotClass("cinder", DRIVER, "Delete", Map.of("type", type));
    GenericKubernetesResource s = volumeSnapshot("daily", "db", "cinder");
    String content = SnapshotApi.contentName(s.getMetadata().getUid());
    Cluster.await("content " + content, () -> contentNow(content) != null, WAIT);
    controllerBinds(content);
    Cluster.await(
        "the volume looked at again",
        () -> cinder.log().stream().filter(l -> l.equals("getVolume " + volume)).count() >= 4,
        WAIT);
    String create = type.equals("backup") ? "createBackup" : "createSnapshot";
    assertThat(cinder.log()).noneMatch(l -> l.startsWith(create));
    assertThat(eventsAbout(content))
        .noneMatch(e -> e.startsWith(SnapshotController.CREATION_FAILED));

    cinder.setStatus(volume, "in-use");
    Cluster.await("taken", () -> cinder.log().stream().anyMatch(l -> l.startsWith(create)), WAIT);
    assertThat(cinder.log().stream().filter(l -> l.startsWith(create))).hasSize(1);
  }

  @Test
  void aSnapshotOfAVolumeInErrorIsAFailureThatSaysWhy() {
    String volume = volumeOf(boundClaim("db"));
    cinder.setStatus(volume, "error_extending");
    snapshotClass("cinder", DRIVER, "Delete", Map.of());
    GenericKubernetesResource s = volumeSnapshot("daily", "db", "cinder");
    String content = SnapshotApi.contentName(s.getMetadata().getUid());
    Cluster.await("content " + content, () -> contentNow(content) != null, WAIT);
    controllerBinds(content);
    Cluster.await(
        "told",
        () ->
            eventsAbout(content).stream()
                .anyMatch(
                    e ->
                        e.startsWith(SnapshotController.CREATION_FAILED)
                            && e.contains("volume " + volume + " is error_extending")
                            && e.contains("only of an available or in-use volume")),
        WAIT);
    assertThat(cinder.log()).noneMatch(l -> l.startsWith("createSnapshot"));
  }

  static Stream<Arguments> notOurs() {
    return Stream.of(
        Arguments.of(
            "a class of another driver: left to that driver, not a word",
            "other.example.com/csi",
            false,
            ""),
        Arguments.of(
            "our class, another provisioner's claim: refused on the snapshot",
            DRIVER,
            true,
            "did not make for it"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("notOurs")
  void aSnapshotOfAVolumeThatIsNotOursGetsNoContent(
      String name, String driver, boolean told, String says) throws Exception {
    foreignClaim("theirs");
    snapshotClass("theirs", driver, "Delete", Map.of());
    java.util.Set<SnapshotKey> worked = java.util.concurrent.ConcurrentHashMap.newKeySet();
    parts.snapshots().onProcessed(worked::add);
    GenericKubernetesResource s = volumeSnapshot("theirs", "theirs", "theirs");
    if (told) {
      Cluster.await("told", () -> !eventsAbout("theirs").isEmpty(), WAIT);
      assertThat(String.join("\n", eventsAbout("theirs"))).contains(says);
    } else {
      // Worked on, and what it would have told is written by then.
      Cluster.await(
          "the snapshot worked on",
          () -> worked.contains(new SnapshotKey.Of("apps", "theirs")),
          WAIT);
      assertThat(eventsAbout("theirs")).isEmpty();
    }
    assertThat(contentNow(SnapshotApi.contentName(s.getMetadata().getUid()))).isNull();
    assertThat(cinderSnapshots()).isEmpty();
  }

  @Test
  void aContentNamingAVolumeOfAnotherClusterIsRefusedOnceAndNothingIsTaken() throws Exception {
    cinder.seed(
        new org.standalonecinder.provisioner.cinder.Volume(
            "vol-elsewhere",
            "pvc-x",
            "available",
            1,
            "nova",
            "lab",
            Map.of(Names.META_CLUSTER, "cluster-b"),
            null,
            null,
            false,
            java.util.List.of()));
    content("snapcontent-admin", Map.of("volumeHandle", "vol-elsewhere"), "Delete", "x");
    Cluster.await(
        "an error",
        () ->
            contentNow("snapcontent-admin").status() != null
                && contentNow("snapcontent-admin").status().error() != null,
        WAIT);
    assertThat(contentNow("snapcontent-admin").status().error())
        .contains("not made by this cluster's provisioner");
    Cluster.await("counted", () -> counted("take", "refused") >= 1, WAIT);
    // Told once, not again at every change its own status write makes.
    Thread.sleep(1_000);
    assertThat(counted("take", "refused")).isLessThanOrEqualTo(2);
    assertThat(cinderSnapshots()).isEmpty();
  }

  @Test
  void aSnapshotWhoseAnswerWasLostIsFoundByNameNotTakenAgain() {
    PersistentVolume pv = boundClaim("db");
    snapshotClass("cinder", DRIVER, "Delete", Map.of());
    // Cinder takes the snapshot and the answer is lost (a timeout): the retry must find it.
    cinder.failNext(
        "createSnapshot",
        () -> {
          String content = onlyContent();
          cinder.createSnapshot(
              new SnapshotSpec(
                  content,
                  volumeOf(pv),
                  null,
                  Map.of(
                      Names.META_CLUSTER,
                      settings.clusterId(),
                      SnapshotApi.META_CONTENT,
                      content)));
          return new org.standalonecinder.provisioner.cinder.CinderException.Unavailable(
              "read timed out", 0, null, null);
        });
    GenericKubernetesResource s = volumeSnapshot("daily", "db", "cinder");
    String content = SnapshotApi.contentName(s.getMetadata().getUid());
    Cluster.await("recorded", () -> recorded(content), WAIT);
    assertThat(cinderSnapshots()).hasSize(1);
    // Until Cinder answers for good, the content says a snapshot is in flight.
    assertThat(contentNow(content).beingCreated()).isTrue();
  }

  /**
   * The attack on the loop: Cinder refuses every snapshot (a tenant filled the project's quota),
   * each refusal under a request id of its own. The content's error is written once, without the
   * id, so its own write does not bring it straight back: the refusals are counted and backed off
   * from, not repeated as fast as the API server answers (and, off the workers, unseen).
   */
  @Test
  void aRefusalWithANewRequestIdEachTimeIsWrittenOnceAndBackedOffFrom() throws Exception {
    boundClaim("db");
    snapshotClass("cinder", DRIVER, "Delete", Map.of());
    java.util.concurrent.atomic.AtomicInteger asked =
        new java.util.concurrent.atomic.AtomicInteger();
    for (int i = 0; i < 500; i++) {
      cinder.failNext(
          "createSnapshot",
          () ->
              new org.standalonecinder.provisioner.cinder.CinderException.QuotaExceeded(
                  "SnapshotLimitExceeded: Maximum number of snapshots allowed (10) exceeded",
                  "req-" + asked.incrementAndGet()));
    }
    GenericKubernetesResource s = volumeSnapshot("daily", "db", "cinder");
    String content = SnapshotApi.contentName(s.getMetadata().getUid());
    Cluster.await(
        "the refusal written",
        () ->
            contentNow(content) != null
                && contentNow(content).status() != null
                && contentNow(content).status().error() != null,
        WAIT);
    Thread.sleep(2_000);
    assertThat(contentNow(content).status().error())
        .contains("SnapshotLimitExceeded")
        .doesNotContain("req-");
    assertThat(asked.get()).as("Cinder asked within 2 s").isLessThanOrEqualTo(6);
    assertThat(counted("take", "failed")).as("each refusal counted").isEqualTo(asked.get());
  }

  @Test
  void deletedUnderDeleteTheCinderSnapshotGoesThenTheContent() {
    String content = readySnapshot("daily", "Delete");
    controllerDeletes(content);
    Cluster.await("content gone", () -> contentNow(content) == null, WAIT);
    assertThat(cinderSnapshots()).isEmpty();
    // Counted just after the finalizer goes.
    Cluster.await("counted", () -> counted("delete", "succeeded") == 1, WAIT);
  }

  /**
   * Cinder accepts the delete and its backend then keeps the snapshot (on RBD, a volume restored
   * from it depends on it): the content keeps its finalizer, the failure is told with why, and the
   * delete is asked again after the loop's backoff, not at every look.
   */
  @Test
  void aSnapshotCinderKeepsAfterItsDeleteIsToldAndTheContentStays() {
    String content = readySnapshot("daily", "Delete");
    String id = cinderSnapshots().get(0).id();
    cinder.slowDeletes();
    controllerDeletes(content);
    Cluster.await(
        "Cinder deleting it", () -> cinder.snapshots().get(id).status().equals("deleting"), WAIT);
    cinder.refuseDeleting(id);
    Cluster.await(
        "told",
        () ->
            eventsAbout(content).stream()
                .anyMatch(
                    e ->
                        e.startsWith(SnapshotController.DELETE_FAILED + ": ")
                            && e.contains("Cinder did not delete Cinder snapshot " + id)
                            && e.contains("is available after its deletion was asked")),
        WAIT);
    assertThat(contentNow(content)).as("kept while Cinder keeps its snapshot").isNotNull();
    Cluster.await(
        "asked again after the backoff",
        () -> cinder.log().stream().filter(l -> l.equals("deleteSnapshot " + id)).count() >= 2,
        WAIT);
    cinder.finishDeleting(id);
    Cluster.await("content gone", () -> contentNow(content) == null, WAIT);
  }

  @Test
  void deletedUnderRetainTheCinderSnapshotStaysMarkedRetainedAndTheSweepKeepsIt() {
    String content = readySnapshot("daily", "Retain");
    controllerDeletes(content);
    Cluster.await("content gone", () -> contentNow(content) == null, WAIT);
    assertThat(cinderSnapshots()).hasSize(1);
    assertThat(cinderSnapshots().get(0).metadata())
        .containsEntry(SnapshotApi.META_POLICY, "Retain");
    parts.snapshots().sweep();
    assertThat(cinderSnapshots()).hasSize(1);
  }

  @Test
  void aPreProvisionedContentIsReadFromCinderAndItsDeletionUnderRetainKeepsIt() {
    seedVolume("vol-old", 3);
    Snapshot old = cinder.createSnapshot(new SnapshotSpec("nightly", "vol-old", null, Map.of()));
    cinder.setSnapshotStatus(old.id(), "available");
    content("imported", Map.of("snapshotHandle", old.id()), "Retain", "restored");
    Cluster.await(
        "ready",
        () ->
            contentNow("imported").status() != null && contentNow("imported").status().readyToUse(),
        WAIT);
    assertThat(contentNow("imported").status().snapshotHandle()).isEqualTo(old.id());
    // Never bound (no VolumeSnapshot took it): deleted, it goes, and the admin's snapshot stays.
    client.genericKubernetesResources(SnapshotApi.CONTENTS).withName("imported").delete();
    Cluster.await("content gone", () -> contentNow("imported") == null, WAIT);
    assertThat(cinder.snapshots()).containsKey(old.id());
  }

  /**
   * The attack through a content an admin (or anyone who may make contents) makes for a Cinder
   * snapshot another cluster took, with {@code deletionPolicy: Delete}: deleting the content must
   * not delete that cluster's snapshot from under its VolumeSnapshot. A snapshot made outside
   * Kubernetes (no cluster named) is the admin's to give, and goes.
   */
  @ParameterizedTest(name = "{0}")
  @org.junit.jupiter.params.provider.CsvSource(
      delimiter = '|',
      value = {
        "another cluster's snapshot: kept, the content stays and says why | other-cluster | true",
        "a snapshot made outside Kubernetes: deleted with its content | | false",
      })
  void aPreProvisionedContentUnderDeleteDeletesNoOtherClustersSnapshot(
      String name, String owner, boolean kept) {
    seedVolume("vol-old", 3);
    Snapshot old =
        cinder.createSnapshot(
            new SnapshotSpec(
                "theirs",
                "vol-old",
                null,
                owner == null ? Map.of() : Map.of(Names.META_CLUSTER, owner)));
    cinder.setSnapshotStatus(old.id(), "available");
    content("imported", Map.of("snapshotHandle", old.id()), "Delete", "restored");
    Cluster.await(
        "ready",
        () ->
            contentNow("imported").status() != null && contentNow("imported").status().readyToUse(),
        WAIT);
    controllerDeletes("imported");
    if (kept) {
      Cluster.await(
          "told",
          () ->
              eventsAbout("imported").stream()
                  .anyMatch(
                      e ->
                          e.startsWith(SnapshotController.DELETE_FAILED + ": ")
                              && e.contains("which cluster other-cluster made")),
          WAIT);
      assertThat(cinder.snapshots()).containsKey(old.id());
      assertThat(cinder.log()).doesNotContain("deleteSnapshot " + old.id());
      assertThat(contentNow("imported")).as("kept until an admin retains it").isNotNull();
    } else {
      Cluster.await("content gone", () -> contentNow("imported") == null, WAIT);
      assertThat(cinder.snapshots()).doesNotContainKey(old.id());
    }
  }

  @Test
  void aPreProvisionedContentNamingNoCinderSnapshotSaysSo() {
    content("imported", Map.of("snapshotHandle", "no-such"), "Retain", "restored");
    Cluster.await(
        "an error",
        () ->
            contentNow("imported").status() != null
                && contentNow("imported").status().error() != null,
        WAIT);
    assertThat(contentNow("imported").status().error())
        .contains("Cinder has no snapshot or backup no-such");
  }

  static Stream<Arguments> leftovers() {
    return Stream.of(
        Arguments.of("ours, Delete, content gone: deleted", "cluster-a", "Delete", "gone", false),
        Arguments.of("ours, Retain, content gone: kept", "cluster-a", "Retain", "gone", true),
        Arguments.of("another cluster's: kept", "cluster-b", "Delete", "gone", true),
        Arguments.of("ours, content still there: kept", "cluster-a", "Delete", "there", true));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("leftovers")
  void theSweepDeletesOnlyWhatItsOwnContentsLeftUnderDelete(
      String name, String cluster, String policy, String content, boolean kept) {
    seedVolume("vol-1", 1);
    if (content.equals("there")) {
      content("snapcontent-live", Map.of("snapshotHandle", "elsewhere"), "Retain", "s");
    }
    Snapshot s =
        cinder.createSnapshot(
            new SnapshotSpec(
                "snapcontent-live",
                "vol-1",
                null,
                Map.of(
                    Names.META_CLUSTER, cluster,
                    SnapshotApi.META_CONTENT, "snapcontent-live",
                    SnapshotApi.META_POLICY, policy)));
    cinder.setSnapshotStatus(s.id(), "available");
    parts.snapshots().sweep();
    assertThat(cinder.snapshots().containsKey(s.id())).isEqualTo(kept);
  }

  @Test
  void aCloudThatKeepsBackupsFromThisUserStillHasItsSnapshotsSwept() {
    seedVolume("vol-1", 1);
    Snapshot s =
        cinder.createSnapshot(
            new SnapshotSpec(
                "snapcontent-gone",
                "vol-1",
                null,
                Map.of(
                    Names.META_CLUSTER, settings.clusterId(),
                    SnapshotApi.META_CONTENT, "snapcontent-gone",
                    SnapshotApi.META_POLICY, "Delete")));
    cinder.setSnapshotStatus(s.id(), "available");
    cinder.failNext(
        "findBackups",
        () ->
            new org.standalonecinder.provisioner.cinder.CinderException.Forbidden(
                "Policy doesn't allow backup:get_all to be performed.", "req-f"));
    parts.snapshots().sweep();
    assertThat(cinder.snapshots()).doesNotContainKey(s.id());
  }
}
