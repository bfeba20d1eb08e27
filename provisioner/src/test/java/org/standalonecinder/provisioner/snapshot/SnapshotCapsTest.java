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
 * a claim, or of its namespace, than the admin allows (here 2 a claim, 3 a namespace). The first
 * are made; the others get no content, no Cinder call, and an event that says which cap.
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
    // Which are made is whichever are looked at first (two workers): only how many is fixed.
    Cluster.await(
        made + " contents made",
        () -> contents.stream().filter(c -> contentNow(c) != null).count() == made,
        WAIT);
    List<String> refused =
        names.stream().filter(n -> contentNow(contents.get(names.indexOf(n))) == null).toList();
    for (String r : refused) {
      Cluster.await(
          "the refusal of " + r + " told",
          () -> eventsAbout(r).stream().anyMatch(e -> e.contains("is not made")),
          WAIT);
      assertThat(String.join("\n", eventsAbout(r)))
          .contains("--max-snapshots-" + cap)
          .contains("after one of them is deleted");
    }
    assertThat(refused).hasSize(names.size() - made);
    assertThat(cinder.log().stream().filter(l -> l.startsWith("createSnapshot")).count())
        .as("Cinder snapshots asked for")
        .isLessThanOrEqualTo(made);
  }
}
