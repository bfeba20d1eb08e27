package org.standalonecinder.provisioner.controller;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ManagedFieldsEntryBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaimBuilder;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

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
        .addToFinalizers("kubernetes.io/pvc-protection")
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
    assertThat(c.getMetadata().getFinalizers()).containsExactly("kubernetes.io/pvc-protection");
    assertThat(c.getSpec().getStorageClassName()).isEqualTo("cinder");
  }
}
