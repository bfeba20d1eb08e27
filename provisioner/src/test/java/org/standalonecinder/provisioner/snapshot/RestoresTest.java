package org.standalonecinder.provisioner.snapshot;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import java.util.Map;
import java.util.function.BiConsumer;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.standalonecinder.api.ClaimAnnotations;
import org.standalonecinder.provisioner.cinder.Volume;
import org.standalonecinder.provisioner.controller.Cluster;
import org.standalonecinder.provisioner.provision.Names;
import org.standalonecinder.provisioner.provision.ProvisionerSettings;

/**
 * Claims whose data source is a VolumeSnapshot, and claims a populator fills, through the claim
 * loop; the snapshot-controller's part (the snapshot's status) done by hand.
 */
class RestoresTest extends SnapshotLoopTest {

  /** A ready snapshot of a claim of ours; the snapshot's name is {@code snap}. */
  private String readySnapshotOf(String claim, String mode) {
    String content = snapshotBeingTakenOf(claim, mode);
    becomesReady(content);
    return content;
  }

  /** The same while Cinder is still taking it; its content's name. */
  private String snapshotBeingTakenOf(String claim, String mode) {
    ourClass();
    PersistentVolumeClaim c =
        Cluster.createClaim(
            client, claim, "cinder", ProvisionerSettings.DEFAULT_NAME, mode, Map.of());
    Cluster.bind(client, c);
    snapshotClass("snaps", DRIVER, "Delete", Map.of());
    GenericKubernetesResource s = volumeSnapshot("snap", claim, "snaps");
    String content = SnapshotApi.contentName(s.getMetadata().getUid());
    Cluster.await("content", () -> contentNow(content) != null, WAIT);
    Cluster.await("a Cinder snapshot", () -> !cinderSnapshots().isEmpty(), WAIT);
    return content;
  }

  /** Cinder finishes the snapshot, and the snapshot-controller copies the content's status. */
  private void becomesReady(String content) {
    cinder.setSnapshotStatus(cinderSnapshots().get(0).id(), "available");
    Cluster.await(
        "content ready",
        () -> contentNow(content).status() != null && contentNow(content).status().readyToUse(),
        WAIT);
    controllerReady("snap", content);
  }

  @Test
  void aClaimFromAReadySnapshotGetsAVolumeMadeFromItsCinderSnapshot() {
    readySnapshotOf("db", "Filesystem");
    String snapshotId = cinderSnapshots().get(0).id();
    PersistentVolumeClaim c = restore("copy", "2Gi", "Filesystem");
    PersistentVolume pv = Cluster.bind(client, c);
    assertThat(pv.getMetadata().getAnnotations())
        .containsEntry(Names.ANN_RESTORED_FROM, "apps/snap")
        .doesNotContainKey(Names.ANN_CLONE_OF);
    Volume v =
        cinder.volumes().get(pv.getMetadata().getAnnotations().get(ClaimAnnotations.VOLUME_ID));
    assertThat(v.snapshotId()).isEqualTo(snapshotId);
    assertThat(v.sizeGib()).as("the claim's size, larger than the snapshot's").isEqualTo(2);
    assertThat(v.metadata()).containsEntry(Names.META_RESTORED_FROM, snapshotId);
  }

  /** How a row spoils the restore, and what the claim is told. */
  static Stream<Arguments> refusals() {
    BiConsumer<RestoresTest, String> nothing = (t, content) -> {};
    return Stream.of(
        Arguments.of(
            "a Block claim from a Filesystem snapshot",
            "1Gi",
            "Block",
            nothing,
            "was taken of a Filesystem volume and this claim asks for Block"),
        Arguments.of(
            "a snapshot whose content is another driver's",
            "1Gi",
            "Filesystem",
            (BiConsumer<RestoresTest, String>)
                (t, content) ->
                    t.client
                        .genericKubernetesResources(SnapshotApi.CONTENTS)
                        .withName(content)
                        .patch(
                            PatchContext.of(PatchType.JSON_MERGE),
                            "{\"spec\":{\"driver\":\"other.example.com/csi\"}}"),
            "was taken by driver other.example.com/csi"),
        Arguments.of(
            "a snapshot whose Cinder snapshot went to error",
            "1Gi",
            "Filesystem",
            (BiConsumer<RestoresTest, String>)
                (t, content) ->
                    t.cinder.setSnapshotStatus(t.cinderSnapshots().get(0).id(), "error"),
            "is error, not available"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("refusals")
  void aRestoreThatCannotBeIsRefusedAndNothingIsMade(
      String name, String size, String mode, BiConsumer<RestoresTest, String> spoil, String says)
      throws Exception {
    String content = readySnapshotOf("db", "Filesystem");
    spoil.accept(this, content);
    int volumes = cinder.volumes().size();
    PersistentVolumeClaim c = restore("copy", size, mode);
    Cluster.await("told", () -> eventsAbout("copy").stream().anyMatch(e -> e.contains(says)), WAIT);
    assertThat(cinder.volumes()).hasSize(volumes);
    assertThat(client.persistentVolumes().withName(Names.pvName(c.getMetadata().getUid())).get())
        .isNull();
  }

  /**
   * The attack through the volume mode: a tenant writes a filesystem image byte by byte on a Block
   * claim, snapshots it, and asks for a Filesystem claim of it, for the node's kernel to mount.
   * Through a content that says no mode (as one an admin makes for an existing Cinder snapshot
   * does), the mode the Cinder snapshot recorded holds; a record rewritten by a Cinder user that
   * disagrees with its content restores nothing without the admin's leave.
   */
  @ParameterizedTest(name = "{0}")
  @org.junit.jupiter.params.provider.CsvSource(
      delimiter = '|',
      value = {
        "a content that says no mode, as Filesystem: refused | true | | Filesystem | false"
            + " | was taken of a Block volume and this claim asks for Filesystem",
        "a content that says no mode, as Block: made | true | | Block | false |",
        "a content that says no mode, the admin allowing a change: made | true | | Filesystem"
            + " | true |",
        "the Cinder snapshot's record rewritten to Filesystem, as Filesystem: refused | false"
            + " | Filesystem | Filesystem | false | is of a Block volume by its content, and its"
            + " Cinder snapshot",
        "the record rewritten, the content saying no mode, as Filesystem: made (Cinder's word) |"
            + " true | Filesystem | Filesystem | false |",
      })
  void aRestoreIsMadeOnlyInTheModeItsSnapshotWasTakenOf(
      String name,
      boolean contentSaysNoMode,
      String record,
      String mode,
      boolean allowed,
      String refusal) {
    String content = readySnapshotOf("raw", "Block");
    String snapshotId = cinderSnapshots().get(0).id();
    assertThat(cinderSnapshots().get(0).metadata())
        .containsEntry(SnapshotApi.META_SOURCE_MODE, "Block");
    if (record != null) {
      cinder.updateSnapshotMetadata(snapshotId, Map.of(SnapshotApi.META_SOURCE_MODE, record));
    }
    String annotations =
        (contentSaysNoMode ? "\"" + SnapshotApi.SOURCE_VOLUME_MODE + "\":null" : "")
            + (allowed
                ? (contentSaysNoMode ? "," : "")
                    + "\""
                    + SnapshotApi.ALLOW_MODE_CHANGE
                    + "\":\"true\""
                : "");
    client
        .genericKubernetesResources(SnapshotApi.CONTENTS)
        .withName(content)
        .patch(
            PatchContext.of(PatchType.JSON_MERGE),
            "{\"metadata\":{\"annotations\":{"
                + annotations
                + "}}"
                + (contentSaysNoMode ? ",\"spec\":{\"sourceVolumeMode\":null}" : "")
                + "}");
    Cluster.await(
        "the content as the row has it",
        () -> (contentNow(content).sourceVolumeMode() == null) == contentSaysNoMode,
        WAIT);
    int volumes = cinder.volumes().size();
    PersistentVolumeClaim c = restore("mounted", "1Gi", mode);
    if (refusal != null) {
      Cluster.await(
          "told", () -> eventsAbout("mounted").stream().anyMatch(e -> e.contains(refusal)), WAIT);
      assertThat(cinder.volumes()).hasSize(volumes);
    } else {
      Cluster.bind(client, c);
    }
  }

  @Test
  void aSnapshotBeingTakenIsWaitedForNotRefused() throws Exception {
    String content = snapshotBeingTakenOf("db", "Filesystem");
    int volumes = cinder.volumes().size();
    restore("early", "1Gi", "Filesystem");
    Cluster.await(
        "told",
        () ->
            eventsAbout("early").stream()
                .anyMatch(e -> e.contains("VolumeSnapshot apps/snap is not ready to use yet")),
        WAIT);
    assertThat(cinder.volumes()).as("no volume made from it yet").hasSize(volumes);
    becomesReady(content);
    touch("early");
    Cluster.bind(
        client, client.persistentVolumeClaims().inNamespace("apps").withName("early").get());
  }

  /**
   * Retried with backoff (the test's policy gives up after 3): the claim's next change brings it
   * back.
   */
  private void touch(String claim) {
    client
        .persistentVolumeClaims()
        .inNamespace("apps")
        .withName(claim)
        .patch(PatchContext.of(PatchType.JSON_MERGE), "{\"metadata\":{\"labels\":{\"x\":\"y\"}}}");
  }

  @Test
  void aSnapshotThatDoesNotExistYetIsWaitedForNotRefused() throws Exception {
    ourClass();
    restore("early", "1Gi", "Filesystem");
    Cluster.await(
        "told",
        () -> eventsAbout("early").stream().anyMatch(e -> e.contains("does not exist (yet)")),
        WAIT);
    readySnapshotOf("db", "Filesystem");
    touch("early");
    PersistentVolumeClaim c =
        client.persistentVolumeClaims().inNamespace("apps").withName("early").get();
    Cluster.bind(client, c);
  }

  @Test
  void aClaimAPopulatorFillsIsLeftAloneWithoutAWord() throws Exception {
    ourClass();
    cinder.clearLog();
    PersistentVolumeClaim c =
        claimFrom("seeded", "1Gi", "Filesystem", "hello.example.com", "Hello");
    Thread.sleep(500);
    assertThat(Cluster.claimCalls(cinder)).isEmpty();
    assertThat(eventsAbout("seeded")).isEmpty();
    assertThat(client.persistentVolumes().withName(Names.pvName(c.getMetadata().getUid())).get())
        .isNull();
  }
}
