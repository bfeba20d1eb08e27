package org.standalonecinder.webhook.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.standalonecinder.webhook.admission.Decision;
import org.standalonecinder.webhook.admission.ReviewRequest;

class AdmissionMetricsTest {

  private static ReviewRequest ofKind(String kind) {
    return new ReviewRequest(
        "u", new ReviewRequest.Kind("", "v1", kind), "n", "ns", "CREATE", null, null, null);
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      nullValues = "null",
      value = {
        "a claim has its own series, PersistentVolumeClaim, PersistentVolumeClaim",
        "a StorageClass has its own series, StorageClass, StorageClass",
        "a StatefulSet has its own series, StatefulSet, StatefulSet",
        "a kind no rule judges is other, Pod, other",
        "a kind the sender made up is other, Zz9-made-up, other",
        "no kind is other, null, other",
      })
  void theKindLabelIsAKindTheRulesJudgeOrOther(String name, String kind, String label) {
    assertThat(AdmissionMetrics.kindLabel(ofKind(kind))).isEqualTo(label);
  }

  /**
   * The attack: anyone who reaches the port sends reviews, each naming a kind of its own. Were each
   * kind a series, the heap would fill (about 700 were enough for a 64 MiB heap); the series stay
   * those of the three kinds judged and {@code other}.
   */
  @Test
  void reviewsNamingThousandsOfKindsAddNoSeries() {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    AdmissionMetrics metrics =
        new AdmissionMetrics((r, m) -> Decision.allow(List.of(), null, List.of()), registry, "x");
    for (int i = 0; i < 5_000; i++) {
      metrics.review(ofKind("Kind" + i + "x".repeat(200)), i % 2 == 0);
    }
    metrics.review(ofKind("PersistentVolumeClaim"), true);
    assertThat(
            registry.getMeters().stream()
                .map(m -> m.getId().getTag("kind"))
                .collect(Collectors.toSet()))
        .containsExactlyInAnyOrder("other", "PersistentVolumeClaim");
    // A timer and a counter for each kind and endpoint that was seen.
    assertThat(registry.getMeters()).hasSizeLessThanOrEqualTo(6);
  }
}
