package org.standalonecinder.webhook.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class WebhookMainTest {

  @ParameterizedTest(name = "{0}")
  @CsvSource({
    "a misspelt format, LOG_FORMAT, JSON, LOG_FORMAT must be text or json, was \"JSON\"",
    "a misspelt level, LOG_LEVEL, verbose, LOG_LEVEL must be one of"
  })
  void aMistypedLogSettingStopsEveryCommandBeforeItRuns(
      String name, String variable, String value, String message) {
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    PrintStream old = System.err;
    System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
    int exit;
    try {
      exit = WebhookMain.run(Map.of(variable, value), "--version");
    } finally {
      System.setErr(old);
    }
    assertThat(exit).isEqualTo(2);
    assertThat(err.toString(StandardCharsets.UTF_8))
        .startsWith("standalone-cinder-webhook: " + message);
  }

  @Test
  void withGoodLogSettingsTheCommandRuns() {
    assertThat(WebhookMain.run(Map.of("LOG_FORMAT", "json", "LOG_LEVEL", "warn"), "--version"))
        .isZero();
  }
}
