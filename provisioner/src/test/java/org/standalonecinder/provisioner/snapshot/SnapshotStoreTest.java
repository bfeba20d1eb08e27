package org.standalonecinder.provisioner.snapshot;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.standalonecinder.api.ClaimRef;

/**
 * What the VolumeSnapshot informer keeps of a tenant's snapshot: the four names the loop reads,
 * bounded, and nothing else it wrote. One row a way to make a snapshot large.
 */
class SnapshotStoreTest {

  private static GenericKubernetesResource snapshot(String fat) {
    Map<String, Object> source = new HashMap<>(Map.of("persistentVolumeClaimName", "data"));
    Map<String, Object> spec = new HashMap<>(Map.of("volumeSnapshotClassName", "cinder"));
    Map<String, Object> status =
        new HashMap<>(Map.of("boundVolumeSnapshotContentName", "snapcontent-1"));
    String big = "a".repeat(1_000_000);
    switch (fat) {
      case "source name" -> source.put("persistentVolumeClaimName", big);
      case "class name" -> spec.put("volumeSnapshotClassName", big);
      case "spec fields" ->
          IntStream.range(0, 20_000).forEach(i -> spec.put("field" + i, List.of("x", i)));
      case "status error" -> status.put("error", Map.of("message", big));
      case "labels" -> {}
      default -> throw new IllegalArgumentException(fat);
    }
    spec.put("source", source);
    GenericKubernetesResource r = new GenericKubernetesResource();
    r.setApiVersion("snapshot.storage.k8s.io/v1");
    r.setKind("VolumeSnapshot");
    Map<String, String> labels = new HashMap<>();
    if (fat.equals("labels")) {
      IntStream.range(0, 20_000).forEach(i -> labels.put("example.com/l" + i, "v"));
    }
    r.setMetadata(
        new ObjectMetaBuilder()
            .withName("snap")
            .withNamespace("apps")
            .withUid("u-1")
            .withResourceVersion("3")
            .withLabels(labels)
            .build());
    r.setAdditionalProperties(new HashMap<>(Map.of("spec", spec, "status", status)));
    return r;
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "a source claim name of 1 MB, kept quoted | source name | claim",
        "a class name of 1 MB, kept quoted | class name | class",
        "20,000 fields in the spec, gone | spec fields | none",
        "an error of 1 MB in the status, gone | status error | none",
        "20,000 labels, gone | labels | none",
      })
  void aFatSnapshotIsKeptSmall(String name, String fat, String quoted) {
    GenericKubernetesResource kept = SnapshotStore.trim(snapshot(fat));
    assertThat(Serialization.asJson(kept).length()).as("bytes kept").isLessThan(1024);
    VolumeSnapshot s = VolumeSnapshot.of(kept);
    assertThat(s.key()).isEqualTo("apps/snap");
    assertThat(s.uid()).isEqualTo("u-1");
    assertThat(s.boundContentName()).isEqualTo("snapcontent-1");
    assertThat(s.className())
        .isEqualTo(quoted.equals("class") ? ClaimRef.quote("a".repeat(1_000_000)) : "cinder");
    assertThat(s.claimName())
        .isEqualTo(quoted.equals("claim") ? ClaimRef.quote("a".repeat(1_000_000)) : "data");
  }
}
