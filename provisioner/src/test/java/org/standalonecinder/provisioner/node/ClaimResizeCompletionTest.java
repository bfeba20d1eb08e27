package org.standalonecinder.provisioner.node;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaimBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaimCondition;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.standalonecinder.api.ClaimAnnotations;
import org.standalonecinder.provisioner.controller.Cluster;
import org.standalonecinder.provisioner.expansion.Resize;
import org.standalonecinder.provisioner.node.ClaimResizeCompletion.Outcome;

class ClaimResizeCompletionTest {

  private static final long GIB = 1L << 30;

  private KubernetesMockServer server;
  private KubernetesClient client;
  private ClaimResizeCompletion completion;

  @BeforeEach
  void cluster() {
    server = Cluster.newApiServer();
    client = server.createClient();
    completion = new ClaimResizeCompletion(client, "node-1", Clock.systemUTC());
  }

  @AfterEach
  void stop() {
    client.close();
    Cluster.destroy(server);
  }

  /** A claim that waits for its filesystem: PV 3Gi, status 1Gi, FileSystemResizePending. */
  private static PersistentVolumeClaim waiting() {
    return new PersistentVolumeClaimBuilder()
        .withNewMetadata()
        .withNamespace("team")
        .withName("data")
        .endMetadata()
        .withNewSpec()
        .withVolumeName("pvc-1")
        .withNewResources()
        .addToRequests("storage", new Quantity("3Gi"))
        .endResources()
        .endSpec()
        .withNewStatus()
        .withPhase("Bound")
        .addToCapacity("storage", new Quantity("1Gi"))
        .addNewCondition()
        .withType(Resize.FS_PENDING)
        .withStatus("True")
        .endCondition()
        .addNewCondition()
        .withType("SomeoneElses")
        .withStatus("True")
        .endCondition()
        .endStatus()
        .build();
  }

  private static PersistentVolume grownPv() {
    return new PersistentVolumeBuilder()
        .withNewMetadata()
        .withName("pvc-1")
        .addToAnnotations(ClaimAnnotations.VOLUME_ID, "vol-1")
        .endMetadata()
        .withNewSpec()
        .addToCapacity("storage", new Quantity("3Gi"))
        .withNewClaimRef()
        .withNamespace("team")
        .withName("data")
        .endClaimRef()
        .endSpec()
        .build();
  }

  record Row(
      UnaryOperator<PersistentVolume> pv,
      UnaryOperator<PersistentVolumeClaim> claim,
      long device,
      Outcome outcome,
      String status,
      List<String> conditions) {}

  static Stream<Arguments> rows() {
    UnaryOperator<PersistentVolume> samePv = p -> p;
    UnaryOperator<PersistentVolumeClaim> sameClaim = c -> c;
    List<String> untouched = List.of(Resize.FS_PENDING, "SomeoneElses");
    return Stream.of(
        Arguments.of(
            "waits, device as big as the PV: finished, another's condition kept",
            new Row(samePv, sameClaim, 3 * GIB, Outcome.COMPLETED, "3Gi", List.of("SomeoneElses"))),
        Arguments.of(
            "waits, device not yet rescanned to the PV's size: not yet",
            new Row(samePv, sameClaim, GIB, Outcome.NOT_YET, "1Gi", untouched)),
        Arguments.of(
            "the provisioner has not said it waits yet: not yet",
            new Row(
                samePv,
                c -> {
                  c.getStatus().getConditions().removeIf(x -> x.getType().startsWith("File"));
                  return c;
                },
                3 * GIB,
                Outcome.NOT_YET,
                "1Gi",
                List.of("SomeoneElses"))),
        Arguments.of(
            "Cinder grew the volume, the PV and the claim not yet: not yet",
            new Row(
                p -> {
                  p.getSpec().setCapacity(Map.of("storage", new Quantity("1Gi")));
                  return p;
                },
                c -> {
                  c.getStatus().setConditions(List.of());
                  return c;
                },
                3 * GIB,
                Outcome.NOT_YET,
                "1Gi",
                List.of())),
        Arguments.of(
            "finished before (status has the PV's size): nothing to do",
            new Row(
                samePv,
                c -> {
                  c.getStatus().setConditions(List.of());
                  c.getStatus().setCapacity(Map.of("storage", new Quantity("3Gi")));
                  return c;
                },
                3 * GIB,
                Outcome.ALREADY,
                "3Gi",
                List.of())),
        Arguments.of(
            "a PV of no Cinder volume (another provisioner's): not touched",
            new Row(
                p -> {
                  p.getMetadata().setAnnotations(Map.of());
                  return p;
                },
                sameClaim,
                3 * GIB,
                Outcome.NOT_OURS,
                "1Gi",
                untouched)),
        Arguments.of(
            "the claim of that name is another one (recreated): not touched",
            new Row(
                p -> {
                  p.getSpec().getClaimRef().setUid("uid-of-the-claim-before");
                  return p;
                },
                sameClaim,
                3 * GIB,
                Outcome.NOT_OURS,
                "1Gi",
                untouched)));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("rows")
  void finishesOnlyAWaitingClaimWhoseDeviceHoldsItsPv(String name, Row row) {
    PersistentVolumeClaim c = row.claim().apply(waiting());
    var status = c.getStatus();
    String uid = client.persistentVolumeClaims().resource(c).create().getMetadata().getUid();
    PersistentVolume pv = grownPv();
    pv.getSpec().getClaimRef().setUid(uid);
    client.persistentVolumes().resource(row.pv().apply(pv)).create();
    client
        .persistentVolumeClaims()
        .inNamespace("team")
        .withName("data")
        .editStatus(
            x -> {
              x.setStatus(status);
              return x;
            });

    ClaimResizeCompletion.Result r = completion.complete("pvc-1", row.device());

    assertThat(r.outcome()).as(r.said()).isEqualTo(row.outcome());
    PersistentVolumeClaim after =
        client.persistentVolumeClaims().inNamespace("team").withName("data").get();
    assertThat(after.getStatus().getCapacity().get("storage"))
        .isEqualTo(new Quantity(row.status()));
    assertThat(after.getStatus().getConditions())
        .extracting(PersistentVolumeClaimCondition::getType)
        .containsExactlyElementsOf(row.conditions());
    assertThat(
            client.v1().events().inNamespace("team").list().getItems().stream()
                .map(e -> e.getReason())
                .toList())
        .isEqualTo(
            row.outcome() == Outcome.COMPLETED ? List.of("FileSystemResizeSuccessful") : List.of());
  }

  @org.junit.jupiter.api.Test
  void aPvThatIsGoneIsNotOurs() {
    assertThat(completion.complete("pvc-gone", 3 * GIB).outcome()).isEqualTo(Outcome.NOT_OURS);
  }
}
