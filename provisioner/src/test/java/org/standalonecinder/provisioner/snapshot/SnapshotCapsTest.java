package org.standalonecinder.provisioner.snapshot;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.standalonecinder.provisioner.controller.Cluster;

/**
 * The caps on what is kept, in the loop, written as the attack: a tenant asks for more snapshots of
 * a claim, or of its namespace, than the admin allows (here 2 a claim, 3 a namespace). The oldest
 * are made; the others get no content, no Cinder call, and an event that says which cap, and the
 * first of them is made once the oldest is deleted.
 */
class SnapshotCapsTest extends SnapshotLoopTest {

  @Override
  SnapshotController.Timing timing() {
    return Cluster.QUICK.withBackups(new SnapshotLimits(8, 4, 2, 3));
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "three snapshots of one claim: two made | a0:db-a a1:db-a a2:db-a | 2 | per-claim",
        "four snapshots of two claims: three made | a0:db-a a1:db-a b0:db-b b1:db-b | 3"
            + " | per-namespace",
      })
  void snapshotsPastACapAreNotMadeAndSaySo(String name, String row, int made, String cap) {
    snapshotClass("cinder", DRIVER, "Delete", Map.of());
    List<String> contents = new ArrayList<>();
    List<String> names = new ArrayList<>();
    for (String s : row.split(" ")) {
      String[] nameAndClaim = s.split(":");
      if (client.persistentVolumeClaims().inNamespace("apps").withName(nameAndClaim[1]).get()
          == null) {
        boundClaim(nameAndClaim[1]);
      }
      GenericKubernetesResource snap = volumeSnapshot(nameAndClaim[0], nameAndClaim[1], "cinder");
      names.add(nameAndClaim[0]);
      contents.add(SnapshotApi.contentName(snap.getMetadata().getUid()));
    }
    for (int i = 0; i < made; i++) {
      String content = contents.get(i);
      Cluster.await("content " + content, () -> contentNow(content) != null, WAIT);
    }
    String refused = names.get(made);
    Cluster.await(
        "the refusal told",
        () -> eventsAbout(refused).stream().anyMatch(e -> e.contains("is not made")),
        WAIT);
    assertThat(String.join("\n", eventsAbout(refused)))
        .contains("--max-snapshots-" + cap)
        .contains("once older VolumeSnapshots are deleted");
    for (int i = made; i < contents.size(); i++) {
      assertThat(contentNow(contents.get(i))).as("content of " + names.get(i)).isNull();
    }

    // The oldest deleted: the first refused moves under the cap, and is made now, not at the
    // resync (30 s here).
    client
        .genericKubernetesResources(SnapshotApi.SNAPSHOTS)
        .inNamespace("apps")
        .withName(names.get(0))
        .delete();
    String next = contents.get(made);
    Cluster.await("content " + next, () -> contentNow(next) != null, WAIT);
  }
}
