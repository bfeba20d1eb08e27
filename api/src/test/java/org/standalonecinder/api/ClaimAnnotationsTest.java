package org.standalonecinder.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class ClaimAnnotationsTest {

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "Kubernetes 1.20-1.22: beta only | | ours | ours",
        "Kubernetes 1.23+: both | ours | ours | ours",
        "the current one wins | ours | theirs | ours",
        "current only | ours | | ours",
        "neither | | | "
      })
  void provisionerFromEitherAnnotation(String name, String current, String beta, String expected) {
    Map<String, String> a = new HashMap<>();
    if (current != null) {
      a.put(ClaimAnnotations.STORAGE_PROVISIONER, current);
    }
    if (beta != null) {
      a.put(ClaimAnnotations.STORAGE_PROVISIONER_BETA, beta);
    }
    assertThat(ClaimAnnotations.provisioner(a)).isEqualTo(expected);
  }
}
