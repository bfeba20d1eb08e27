package org.standalonecinder.provisioner.snapshot;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.standalonecinder.api.ClaimAnnotations;
import org.standalonecinder.provisioner.cinder.Backup;
import org.standalonecinder.provisioner.cinder.BackupSpec;
import org.standalonecinder.provisioner.cinder.CinderException;
import org.standalonecinder.provisioner.cinder.Volume;
import org.standalonecinder.provisioner.controller.Cluster;
import org.standalonecinder.provisioner.provision.Fixtures;
import org.standalonecinder.provisioner.provision.Names;
import org.standalonecinder.provisioner.provision.ProvisionerSettings;

/**
 * VolumeSnapshots whose class says {@code type: backup}: Cinder backups taken, followed, deleted,
 * swept and restored, through the snapshot loop and the claim loop.
 */
class BackupsTest extends SnapshotLoopTest {

  private List<Backup> backups() {
    return List.copyOf(cinder.backups().values());
  }

  private static String volumeOf(PersistentVolume pv) {
    return pv.getMetadata().getAnnotations().get(ClaimAnnotations.VOLUME_ID);
  }

  /** The VolumeSnapshot {@code snap} of a new claim through a backup class; its content. */
  private String backupBeingMade(String claim, String policy) {
    boundClaim(claim);
    snapshotClass("backups", DRIVER, policy, Map.of("type", "backup"));
    GenericKubernetesResource s = volumeSnapshot("snap", claim, "backups");
    String content = SnapshotApi.contentName(s.getMetadata().getUid());
    Cluster.await("content " + content, () -> contentNow(content) != null, WAIT);
    controllerBinds(content);
    Cluster.await("a Cinder backup", () -> !backups().isEmpty(), WAIT);
    return content;
  }

  /** The same, made by Cinder's backup service and ready. */
  private String readyBackup(String claim, String policy) {
    String content = backupBeingMade(claim, policy);
    cinder.setBackupStatus(backups().get(0).id(), "available", null);
    Cluster.await("ready", () -> ready(content), WAIT);
    return content;
  }

  private boolean ready(String content) {
    Content c = contentNow(content);
    return c.status() != null && c.status().readyToUse();
  }

  @Test
  void aSnapshotThroughABackupClassIsACinderBackupAndNoSnapshot() {
    String content = backupBeingMade("db", "Delete");
    PersistentVolume pv = Cluster.pvOf(client, pvc("db"));
    Backup b = backups().get(0);
    assertThat(b.volumeId()).isEqualTo(volumeOf(pv));
    assertThat(cinder.volumes().get(volumeOf(pv)).status()).isEqualTo("backing-up");
    assertThat(contentNow(content).beingCreated()).isTrue();
    cinder.setBackupStatus(b.id(), "available", null);
    Cluster.await("ready", () -> ready(content), WAIT);
    assertThat(cinderSnapshots()).isEmpty();
    assertThat(contentNow(content).status().snapshotHandle()).isEqualTo(b.id());
    assertThat(b.name()).isEqualTo(content);
    assertThat(b.metadata())
        .containsEntry(Names.META_CLUSTER, settings.clusterId())
        .containsEntry(SnapshotApi.META_CONTENT, content)
        .containsEntry(SnapshotApi.META_SNAPSHOT, "apps/snap")
        .containsEntry(SnapshotApi.META_POLICY, "Delete");
    Cluster.await("being-created gone", () -> !contentNow(content).beingCreated(), WAIT);
    assertThat(cinder.volumes().get(volumeOf(pv)).status()).isNotEqualTo("backing-up");
    assertThat(cinder.log().stream().filter(l -> l.startsWith("createBackup"))).hasSize(1);
    Cluster.await("counted", () -> counted("backup", "succeeded") == 1, WAIT);
    // Followed as a backup, as its class says (by a poll or, when it was ready by then, by the
    // lookup that found it): never asked for as a snapshot first (a 404 a poll).
    assertThat(cinder.log()).doesNotContain("getSnapshot " + b.id());
    assertThat(counted("take", "succeeded")).isZero();
  }

  private PersistentVolumeClaim pvc(String name) {
    return client.persistentVolumeClaims().inNamespace("apps").withName(name).get();
  }

  static Stream<Arguments> policies() {
    return Stream.of(
        Arguments.of("Delete: the backup goes, then the content", "Delete", false),
        Arguments.of("Retain: the backup stays, marked, and the sweep keeps it", "Retain", true));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("policies")
  void deletedTheBackupGoesOrStaysAsThePolicySays(String name, String policy, boolean kept) {
    String content = readyBackup("db", policy);
    String id = backups().get(0).id();
    controllerDeletes(content);
    Cluster.await("content gone", () -> contentNow(content) == null, WAIT);
    parts.snapshots().sweep();
    assertThat(cinder.backups().containsKey(id)).isEqualTo(kept);
    if (kept) {
      assertThat(cinder.backups().get(id).metadata())
          .containsEntry(SnapshotApi.META_POLICY, "Retain")
          .containsEntry(SnapshotApi.META_CONTENT, content);
    }
    // Counted just after the finalizer goes.
    Cluster.await("counted", () -> counted("delete", "succeeded") == 1, WAIT);
  }

  /** A bound claim "db" of our class in namespace web (another namespace than the others'). */
  private void boundClaimInWeb() {
    PersistentVolumeClaim web = Fixtures.claimOf(null, "db", "1Gi", "Filesystem");
    web.getMetadata()
        .setAnnotations(
            Map.of(ClaimAnnotations.STORAGE_PROVISIONER, ProvisionerSettings.DEFAULT_NAME));
    web.getSpec().setStorageClassName("cinder");
    Cluster.bind(client, client.persistentVolumeClaims().inNamespace("web").resource(web).create());
  }

  private boolean handled(String content) {
    Content c = contentNow(content);
    return c != null && c.status() != null && c.status().snapshotHandle() != null;
  }

  /**
   * A namespace's burst of backups past {@code --max-backups-per-namespace} (4 by default): the
   * fifth waits, told on its content, and Cinder is asked nothing for it; another namespace's
   * backup is taken meanwhile; the fifth is asked once one of the four has ended, once.
   */
  @Test
  void backupsPastTheNamespacesBoundWaitWithoutAskingCinderWhileAnotherNamespacesAreTaken() {
    snapshotClass("backups", DRIVER, "Delete", Map.of("type", "backup"));
    List<String> contents = new java.util.ArrayList<>();
    for (int i = 0; i < 5; i++) {
      // A claim each: Cinder backs up one volume at a time.
      boundClaim("db-" + i);
      String content =
          SnapshotApi.contentName(
              volumeSnapshot("nightly-" + i, "db-" + i, "backups").getMetadata().getUid());
      Cluster.await("content " + content, () -> contentNow(content) != null, WAIT);
      controllerBinds(content);
      contents.add(content);
    }
    Cluster.await(
        "four backups taken", () -> contents.stream().filter(this::handled).count() == 4, WAIT);
    String waiting = contents.stream().filter(c -> !handled(c)).findFirst().orElseThrow();
    Cluster.await(
        "the fifth told why it waits",
        () ->
            eventsAbout(waiting).stream()
                .anyMatch(
                    e ->
                        e.contains(
                            "waits to ask Cinder for its backup: 4 backups are in flight in"
                                + " namespace apps (at most 4 at once,"
                                + " --max-backups-per-namespace)")),
        WAIT);

    boundClaimInWeb();
    String other =
        SnapshotApi.contentName(
            volumeSnapshot("web", "nightly", "db", "backups").getMetadata().getUid());
    Cluster.await("content " + other, () -> contentNow(other) != null, WAIT);
    controllerBinds(other);
    Cluster.await("the other namespace's backup taken", () -> handled(other), WAIT);
    assertThat(handled(waiting)).as("the fifth still waits").isFalse();
    assertThat(cinder.log().stream().filter(l -> l.startsWith("createBackup"))).hasSize(5);

    String first = contents.stream().filter(this::handled).findFirst().orElseThrow();
    cinder.setBackupStatus(contentNow(first).status().snapshotHandle(), "available", null);
    Cluster.await("the fifth taken once one ended", () -> handled(waiting), WAIT);
    assertThat(cinder.log().stream().filter(l -> l.startsWith("createBackup"))).hasSize(6);
  }

  /**
   * Cinder takes minutes to delete a large backup. Twice as many as the loop has workers, deleted
   * together, hold no worker while it does: another namespace's snapshot is taken and ready
   * meanwhile. Each content keeps its finalizer until Cinder has deleted its backup, which is asked
   * once.
   */
  @Test
  void largeBackupsDeletedTogetherHoldNoWorkerWhileCinderDeletesThem() {
    cinder.slowDeletes();
    boundClaim("db");
    snapshotClass("backups", DRIVER, "Delete", Map.of("type", "backup"));
    List<String> contents = new java.util.ArrayList<>();
    for (int i = 0; i < 4; i++) {
      String content =
          SnapshotApi.contentName(
              volumeSnapshot("big-" + i, "db", "backups").getMetadata().getUid());
      Cluster.await("content " + content, () -> contentNow(content) != null, WAIT);
      controllerBinds(content);
      Cluster.await("recorded", () -> recorded(content), WAIT);
      cinder.setBackupStatus(contentNow(content).status().snapshotHandle(), "available", null);
      Cluster.await("ready", () -> ready(content), WAIT);
      contents.add(content);
    }
    contents.forEach(this::controllerDeletes);
    Cluster.await(
        "Cinder deleting every backup",
        () -> backups().stream().allMatch(b -> b.status().equals("deleting")),
        WAIT);

    boundClaimInWeb();
    snapshotClass("snapshots", DRIVER, "Delete", Map.of());
    String other =
        SnapshotApi.contentName(
            volumeSnapshot("web", "snap", "db", "snapshots").getMetadata().getUid());
    Cluster.await("content " + other, () -> contentNow(other) != null, WAIT);
    controllerBinds(other);
    Cluster.await("recorded", () -> recorded(other), WAIT);
    cinder.setSnapshotStatus(contentNow(other).status().snapshotHandle(), "available");
    Cluster.await("the other namespace's snapshot ready", () -> ready(other), WAIT);
    assertThat(backups()).hasSize(4).allMatch(b -> b.status().equals("deleting"));
    assertThat(contents).allMatch(c -> contentNow(c) != null);

    backups().forEach(b -> cinder.finishDeleting(b.id()));
    Cluster.await(
        "every content released",
        () -> contents.stream().allMatch(c -> contentNow(c) == null),
        WAIT);
    assertThat(cinder.log().stream().filter(l -> l.startsWith("deleteBackup"))).hasSize(4);
    assertThat(cinder.log()).noneMatch(l -> l.startsWith("awaitBackupDeleted"));
    Cluster.await("counted", () -> counted("delete", "succeeded") == 4, WAIT);
  }

  @Test
  void aBackupCinderFailsIsToldWithCindersReason() {
    String content = backupBeingMade("db", "Delete");
    String id = backups().get(0).id();
    cinder.setBackupStatus(id, "error", "No space left on device");
    Cluster.await(
        "an error",
        () -> contentNow(content).status() != null && contentNow(content).status().error() != null,
        WAIT);
    assertThat(contentNow(content).status().error())
        .isEqualTo("Cinder backup " + id + " is in status error: No space left on device");
    Cluster.await("in flight no more", () -> !contentNow(content).beingCreated(), WAIT);
  }

  @Test
  void aClassAskingForAKindCinderDoesNotHaveIsRefusedAndNothingIsMade() throws Exception {
    boundClaim("db");
    snapshotClass("tapes", DRIVER, "Delete", Map.of("type", "tape"));
    GenericKubernetesResource s = volumeSnapshot("snap", "db", "tapes");
    String content = SnapshotApi.contentName(s.getMetadata().getUid());
    Cluster.await(
        "an error",
        () ->
            contentNow(content) != null
                && contentNow(content).status() != null
                && contentNow(content).status().error() != null,
        WAIT);
    assertThat(contentNow(content).status().error())
        .isEqualTo(
            "VolumeSnapshotClass tapes: parameter type is \"tape\"; it must be \"snapshot\" (the"
                + " default) or \"backup\"");
    Cluster.await("counted", () -> counted("take", "refused") >= 1, WAIT);
    assertThat(backups()).isEmpty();
    assertThat(cinderSnapshots()).isEmpty();
  }

  @Test
  void aBackupWhoseAnswerWasLostIsFoundByNameNotMadeAgain() {
    PersistentVolume pv = boundClaim("db");
    snapshotClass("backups", DRIVER, "Delete", Map.of("type", "backup"));
    cinder.failNext(
        "createBackup",
        () -> {
          String content = onlyContent();
          cinder.createBackup(
              new BackupSpec(
                  content,
                  volumeOf(pv),
                  null,
                  Map.of(
                      Names.META_CLUSTER,
                      settings.clusterId(),
                      SnapshotApi.META_CONTENT,
                      content)));
          return new CinderException.Unavailable("read timed out", 0, null, null);
        });
    GenericKubernetesResource s = volumeSnapshot("snap", "db", "backups");
    String content = SnapshotApi.contentName(s.getMetadata().getUid());
    Cluster.await("recorded", () -> recorded(content), WAIT);
    assertThat(backups()).hasSize(1);
    assertThat(contentNow(content).status().snapshotHandle()).isEqualTo(backups().get(0).id());
  }

  /**
   * What a backup is for: the source claim and its volume are gone, and the backup still fills a
   * new claim, larger, which carries its own identity (Cinder's restore gave it its source's).
   */
  @Test
  void aClaimIsRestoredFromABackupAfterItsSourceVolumeIsGone() {
    String content = readyBackup("db", "Delete");
    Backup b = backups().get(0);
    controllerReady("snap", content);
    PersistentVolume source = Cluster.pvOf(client, pvc("db"));
    client.persistentVolumeClaims().inNamespace("apps").withName("db").delete();
    Cluster.release(client, source);
    Cluster.await("source volume gone", () -> !cinder.volumes().containsKey(b.volumeId()), WAIT);
    PersistentVolume pv = Cluster.bind(client, restore("copy", "2Gi", "Filesystem"));
    Volume v = cinder.volumes().get(volumeOf(pv));
    assertThat(v.sizeGib()).isEqualTo(2);
    assertThat(v.metadata())
        .containsEntry("src_backup_id", b.id())
        .containsEntry(Names.META_RESTORED_FROM, b.id())
        .containsEntry(Names.META_PVC_UID, pvc("copy").getMetadata().getUid())
        .containsEntry(Names.META_PVC_NAME, "copy");
    assertThat(v.snapshotId()).isNull();
    assertThat(pv.getMetadata().getAnnotations())
        .containsEntry(Names.ANN_RESTORED_FROM, "apps/snap");
    assertThat(eventsAbout("copy"))
        .anyMatch(
            e -> e.contains("restored from VolumeSnapshot apps/snap (Cinder backup " + b.id()));
    assertThat(cinder.backups()).containsKey(b.id());
  }

  @Test
  void anImportedBackupIsReadAndRestored() {
    seedVolume("vol-old", 3);
    Backup old = cinder.createBackup(new BackupSpec("nightly", "vol-old", null, Map.of()));
    cinder.setBackupStatus(old.id(), "available", null);
    cinder.deleteVolume("vol-old");
    content("imported", Map.of("snapshotHandle", old.id()), "Retain", "snap");
    Cluster.await("ready", () -> contentNow("imported") != null && ready("imported"), WAIT);
    assertThat(contentNow("imported").status().snapshotHandle()).isEqualTo(old.id());
    ourClass();
    volumeSnapshotOfContent("snap", "imported");
    controllerReady("snap", "imported");
    PersistentVolume pv = Cluster.bind(client, restore("copy", "3Gi", "Filesystem"));
    assertThat(cinder.volumes().get(volumeOf(pv)).metadata())
        .containsEntry("src_backup_id", old.id());
  }

  /**
   * A VolumeSnapshot of a pre-provisioned content, and what the snapshot-controller does when it
   * binds them: the content names the snapshot's uid.
   */
  private void volumeSnapshotOfContent(String name, String content) {
    GenericKubernetesResource s = new GenericKubernetesResource();
    s.setApiVersion(SnapshotApi.API_VERSION);
    s.setKind("VolumeSnapshot");
    s.setMetadata(
        new io.fabric8.kubernetes.api.model.ObjectMetaBuilder()
            .withName(name)
            .withNamespace("apps")
            .build());
    s.setAdditionalProperty("spec", Map.of("source", Map.of("volumeSnapshotContentName", content)));
    String uid =
        client
            .genericKubernetesResources(SnapshotApi.SNAPSHOTS)
            .inNamespace("apps")
            .resource(s)
            .create()
            .getMetadata()
            .getUid();
    client
        .genericKubernetesResources(SnapshotApi.CONTENTS)
        .withName(content)
        .patch(
            io.fabric8.kubernetes.client.dsl.base.PatchContext.of(
                io.fabric8.kubernetes.client.dsl.base.PatchType.JSON_MERGE),
            "{\"spec\":{\"volumeSnapshotRef\":{\"uid\":\"" + uid + "\"}}}");
  }

  static Stream<Arguments> leftovers() {
    return Stream.of(
        Arguments.of("ours, Delete, content gone: deleted", "cluster-a", "Delete", false),
        Arguments.of("ours, Retain, content gone: kept", "cluster-a", "Retain", true),
        Arguments.of("another cluster's: kept", "cluster-b", "Delete", true));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("leftovers")
  void theSweepDeletesOnlyTheBackupsItsOwnContentsLeftUnderDelete(
      String name, String cluster, String policy, boolean kept) {
    seedVolume("vol-1", 1);
    Backup b =
        cinder.createBackup(
            new BackupSpec(
                "snapcontent-gone",
                "vol-1",
                null,
                Map.of(
                    Names.META_CLUSTER, cluster,
                    SnapshotApi.META_CONTENT, "snapcontent-gone",
                    SnapshotApi.META_POLICY, policy)));
    cinder.setBackupStatus(b.id(), "available", null);
    parts.snapshots().sweep();
    assertThat(cinder.backups().containsKey(b.id())).isEqualTo(kept);
  }
}
