package org.standalonecinder.demo;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class KubectlTest {

  /** kubectl's own wait must end before the process is killed, or its message is lost. */
  @ParameterizedTest(name = "{0}: {1} s")
  @CsvSource({
    "'get pods', 60",
    "'delete pvc a --timeout=10s', 60",
    "'delete pvc a --timeout=120s', 150",
    "'wait --for=delete pod/a --timeout=2m', 150",
    "'delete ns a --timeout=1m30s', 120",
    "'delete ns a --timeout=', 60",
  })
  void theProcessOutlivesKubectlsOwnTimeout(String command, long seconds) {
    assertThat(Kubectl.deadlineSeconds(command.split(" "))).isEqualTo(seconds);
  }
}
