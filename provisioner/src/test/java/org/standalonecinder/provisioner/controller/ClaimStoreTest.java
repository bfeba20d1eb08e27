package org.standalonecinder.provisioner.controller;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.LabelSelectorBuilder;
import io.fabric8.kubernetes.api.model.ManagedFieldsEntryBuilder;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaimBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaimCondition;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaimStatus;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.TypedLocalObjectReference;
import io.fabric8.kubernetes.api.model.TypedObjectReference;
import io.fabric8.kubernetes.api.model.VolumeResourceRequirementsBuilder;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.stream.IntStream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * What the claim informer keeps of a claim: what the loop reads, each value bounded; nothing a
 * claim's owner wrote beside that. One row an annotation.
 */
class ClaimStoreTest {

  private static PersistentVolumeClaim claim(String key, String value) {
    Map<String, String> annotations = new HashMap<>();
    annotations.put(key, value);
    annotations.put("kubectl.kubernetes.io/last-applied-configuration", "x".repeat(200_000));
    return new PersistentVolumeClaimBuilder()
        .withNewMetadata()
        .withName("data")
        .withNamespace("apps")
        .withUid("u-1")
        .withResourceVersion("7")
        .withAnnotations(annotations)
        .addToLabels("team", "y".repeat(63))
        .addToFinalizers("kubernetes.io/pvc-protection", "standalone-cinder.io/clone-in-progress-u")
        .withManagedFields(new ManagedFieldsEntryBuilder().withManager("kubectl").build())
        .endMetadata()
        .withNewSpec()
        .withStorageClassName("cinder")
        .endSpec()
        .build();
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "the provisioner Kubernetes chose, kept | volume.kubernetes.io/storage-provisioner"
            + " | openstack.org/standalone-cinder | 1 | openstack.org/standalone-cinder",
        "a clone request, kept | k8s.io/CloneRequest | team-b/db | 1 | team-b/db",
        "a clone request of 200,000 characters, kept as its start and length"
            + " | k8s.io/CloneRequest | 200000 | 1 | ... (200000 characters)",
        "a token of 8 KiB, kept whole | standalone-cinder.io/clone-token | 8192 | 1 | 8192",
        "a token past 8 KiB, kept as its start and length"
            + " | standalone-cinder.io/clone-token | 8193 | 1 | ... (8193 characters)",
        "an annotation the provisioner never reads, gone | example.com/notes | 200000 | 0 |",
      })
  void keptOfAClaim(String name, String key, String value, int kept, String keptValue) {
    String v = value.matches("[0-9]+") ? "a".repeat(Integer.parseInt(value)) : value;
    PersistentVolumeClaim c = ClaimStore.trim(claim(key, v));
    assertThat(c.getMetadata().getAnnotations()).hasSize(kept);
    if (kept == 1) {
      String stored = c.getMetadata().getAnnotations().get(key);
      if (keptValue.matches("[0-9]+")) {
        assertThat(stored).isEqualTo(v);
      } else {
        assertThat(stored).endsWith(keptValue);
      }
      assertThat(stored.length()).isLessThanOrEqualTo(8192);
    }
    assertThat(c.getMetadata().getLabels()).isNullOrEmpty();
    assertThat(c.getMetadata().getManagedFields()).isNullOrEmpty();
    assertThat(c.getMetadata().getName()).isEqualTo("data");
    assertThat(c.getMetadata().getNamespace()).isEqualTo("apps");
    assertThat(c.getMetadata().getUid()).isEqualTo("u-1");
    assertThat(c.getMetadata().getResourceVersion()).isEqualTo("7");
    assertThat(c.getMetadata().getFinalizers())
        .containsExactly("standalone-cinder.io/clone-in-progress-u");
    assertThat(c.getSpec().getStorageClassName()).isEqualTo("cinder");
  }

  /** What a tenant may write on a claim of any class, each past what the API server bounds. */
  enum Fat {
    DATA_SOURCE_NAME(
        c ->
            c.getSpec().setDataSource(new TypedLocalObjectReference(null, "PVC", huge(1_400_000)))),
    DATA_SOURCE_REF(
        c ->
            c.getSpec()
                .setDataSourceRef(
                    new TypedObjectReference("g", "K", huge(1_400_000), huge(1_400_000)))),
    CLASS_AND_VOLUME_NAME(
        c -> {
          c.getSpec().setStorageClassName(huge(1_000_000));
          c.getSpec().setVolumeName(huge(1_000_000));
        }),
    SELECTOR_OF_20000_LABELS(
        c ->
            c.getSpec()
                .setSelector(
                    new LabelSelectorBuilder().withMatchLabels(entries(20_000, "v")).build())),
    RESOURCES_20000(
        c -> {
          Map<String, Quantity> r = new HashMap<>(c.getSpec().getResources().getRequests());
          entries(20_000, "1").forEach((k, v) -> r.put(k, new Quantity(v)));
          c.getSpec().getResources().setRequests(r);
          c.getSpec().getResources().setLimits(r);
        }),
    FINALIZERS_LIKE_OURS_20000(
        c ->
            c.getMetadata()
                .setFinalizers(
                    IntStream.range(0, 20_000)
                        .mapToObj(i -> "standalone-cinder.io/clone-in-progress-" + i)
                        .toList())),
    OWNERS_20000(
        c ->
            c.getMetadata()
                .setOwnerReferences(
                    IntStream.range(0, 20_000)
                        .mapToObj(
                            i ->
                                new OwnerReferenceBuilder()
                                    .withName("o" + i)
                                    .withUid("u" + i)
                                    .withKind("K")
                                    .withApiVersion("v1")
                                    .build())
                        .toList())),
    CONDITIONS_1000_AND_A_LONG_MESSAGE(
        c -> {
          List<PersistentVolumeClaimCondition> conditions = new ArrayList<>();
          for (int i = 0; i < 1000; i++) {
            conditions.add(
                new PersistentVolumeClaimCondition(null, null, huge(1000), null, "True", "J" + i));
          }
          conditions.add(
              new PersistentVolumeClaimCondition(
                  null, null, huge(1_000_000), "r", "True", "FileSystemResizePending"));
          c.setStatus(new PersistentVolumeClaimStatus());
          c.getStatus().setConditions(conditions);
        }),
    ACCESS_MODES_50000(
        c ->
            c.getSpec()
                .setAccessModes(
                    IntStream.range(0, 50_000).mapToObj(i -> "ReadWriteOnce").toList())),
    A_REQUEST_OF_100000_DIGITS(
        c ->
            c.getSpec()
                .getResources()
                .setRequests(Map.of("storage", new Quantity("9".repeat(100_000)))));

    final Consumer<PersistentVolumeClaim> write;

    Fat(Consumer<PersistentVolumeClaim> write) {
      this.write = write;
    }
  }

  @ParameterizedTest(name = "{0}")
  @EnumSource(Fat.class)
  void aFatClaimIsKeptSmall(Fat fat) {
    PersistentVolumeClaim c = claim("k8s.io/CloneRequest", "team-b/db");
    c.getSpec().setAccessModes(List.of("ReadWriteOnce"));
    c.getSpec()
        .setResources(
            new VolumeResourceRequirementsBuilder()
                .addToRequests("storage", new Quantity("1Gi"))
                .build());
    fat.write.accept(c);
    PersistentVolumeClaim kept = ClaimStore.trim(c);
    int bytes = Serialization.asJson(kept).length();
    assertThat(bytes).as("bytes kept of the claim").isLessThan(32 * 1024);
    assertThat(kept.getMetadata().getOwnerReferences()).isNullOrEmpty();
    assertThat(kept.getMetadata().getAnnotations())
        .containsEntry("k8s.io/CloneRequest", "team-b/db");
    assertThat(kept.getSpec().getAccessModes()).containsExactly("ReadWriteOnce");
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "32 finalizers of ours, all kept, no mark | 32 | 32 | false",
        "33 finalizers of ours, 32 kept and the mark | 33 | 33 | true",
        "20,000 finalizers of ours, 32 kept and the mark | 20000 | 33 | true",
      })
  void finalizersOfOursPastTheFirstAreMarked(String name, int ours, int kept, boolean marked) {
    PersistentVolumeClaim c = claim("k8s.io/CloneRequest", "team-b/db");
    List<String> f = new ArrayList<>(List.of("kubernetes.io/pvc-protection"));
    IntStream.range(0, ours).forEach(i -> f.add("standalone-cinder.io/clone-in-progress-" + i));
    c.getMetadata().setFinalizers(f);
    List<String> stored = ClaimStore.trim(c).getMetadata().getFinalizers();
    assertThat(stored).hasSize(kept).startsWith("standalone-cinder.io/clone-in-progress-0");
    assertThat(stored.contains(ClusterCache.MORE_OF_OURS)).isEqualTo(marked);
    assertThat(
            ClusterCache.mayHaveFinalizer(
                ClaimStore.trim(c), "standalone-cinder.io/clone-in-progress-" + (ours - 1)))
        .as("the last of ours may be there")
        .isTrue();
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "the class, kept | storageClassName | cinder",
        "the volume mode, kept | volumeMode | Block",
        "the bound PV, kept | volumeName | pvc-1",
        "the data source, kept | dataSource | snap-1",
        "the data source ref, kept | dataSourceRef | snap-2",
        "the request, kept | request | 3Gi",
        "the limit, kept | limit | 4Gi",
        "the phase, kept | phase | Bound",
        "the capacity, kept | capacity | 5Gi",
        "a resize under way, kept | Resizing | True",
      })
  void whatTheLoopReadsIsKept(String name, String field, String value) {
    PersistentVolumeClaim c =
        new PersistentVolumeClaimBuilder()
            .withNewMetadata()
            .withName("data")
            .withNamespace("apps")
            .endMetadata()
            .withNewSpec()
            .withStorageClassName("cinder")
            .withVolumeMode("Block")
            .withVolumeName("pvc-1")
            .withNewDataSource(null, "VolumeSnapshot", "snap-1")
            .withNewDataSourceRef("snapshot.storage.k8s.io", "VolumeSnapshot", "snap-2", null)
            .withNewResources()
            .addToRequests("storage", new Quantity("3Gi"))
            .addToLimits("storage", new Quantity("4Gi"))
            .endResources()
            .endSpec()
            .withNewStatus()
            .withPhase("Bound")
            .addToCapacity("storage", new Quantity("5Gi"))
            .addToConditions(
                new PersistentVolumeClaimCondition(null, null, "m", "r", "True", "Resizing"))
            .endStatus()
            .build();
    PersistentVolumeClaim k = ClaimStore.trim(c);
    String got =
        switch (field) {
          case "storageClassName" -> k.getSpec().getStorageClassName();
          case "volumeMode" -> k.getSpec().getVolumeMode();
          case "volumeName" -> k.getSpec().getVolumeName();
          case "dataSource" -> k.getSpec().getDataSource().getName();
          case "dataSourceRef" -> k.getSpec().getDataSourceRef().getName();
          case "request" -> k.getSpec().getResources().getRequests().get("storage").toString();
          case "limit" -> k.getSpec().getResources().getLimits().get("storage").toString();
          case "phase" -> k.getStatus().getPhase();
          case "capacity" -> k.getStatus().getCapacity().get("storage").toString();
          default -> k.getStatus().getConditions().get(0).getStatus();
        };
    assertThat(got).isEqualTo(value);
  }

  private static String huge(int n) {
    return "a".repeat(n);
  }

  private static Map<String, String> entries(int n, String value) {
    Map<String, String> m = new HashMap<>();
    IntStream.range(0, n).forEach(i -> m.put("example.com/k-" + i, value));
    return m;
  }
}
