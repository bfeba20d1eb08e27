package org.standalonecinder.provisioner.cli;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.joran.JoranConfigurator;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.slf4j.MDC;

/**
 * The shipped logback.xml: {@code LOG_FORMAT=json} writes one JSON object per line with the item's
 * claim, PV and volume; the default text line carries them too.
 */
class LogFormatTest {

  private static String log(String format) throws Exception {
    LoggerContext ctx = new LoggerContext();
    ctx.setMDCAdapter(MDC.getMDCAdapter());
    if (format != null) {
      ctx.putProperty("LOG_FORMAT", format);
    }
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    PrintStream old = System.err;
    System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
    try {
      JoranConfigurator c = new JoranConfigurator();
      c.setContext(ctx);
      c.doConfigure(Path.of("src/main/resources/logback.xml").toFile());
      MDC.put("claim", "apps/data");
      MDC.put("volume", "vol-1");
      ctx.getLogger("org.standalonecinder.provisioner.controller.ClaimController")
          .info("deleted volume {} (Cinder volume {})", "pvc-1", "vol-1");
    } finally {
      MDC.clear();
      ctx.stop();
      System.setErr(old);
    }
    return err.toString(StandardCharsets.UTF_8);
  }

  @Test
  void jsonIsOneObjectPerLineWithTheItemsIds() throws Exception {
    String out = log("json");
    assertThat(out.lines().toList()).hasSize(1);
    JsonNode line = new ObjectMapper().readTree(out);
    assertThat(line.path("level").asText()).isEqualTo("INFO");
    assertThat(line.path("loggerName").asText()).endsWith("ClaimController");
    assertThat(line.path("formattedMessage").asText())
        .isEqualTo("deleted volume pvc-1 (Cinder volume vol-1)");
    assertThat(line.path("mdc").path("claim").asText()).isEqualTo("apps/data");
    assertThat(line.path("mdc").path("volume").asText()).isEqualTo("vol-1");
    assertThat(line.path("timestamp").asLong()).isPositive();
  }

  @Test
  void textIsTheDefaultAndNamesTheItemToo() throws Exception {
    String out = log(null);
    assertThat(out)
        .contains("INFO  [")
        .contains("claim=apps/data")
        .contains("volume=vol-1")
        .endsWith("deleted volume pvc-1 (Cinder volume vol-1)" + System.lineSeparator());
  }

  /** Every LOG_FORMAT the check accepts is an appender the file has, and no other. */
  @Test
  void theAcceptedFormatsAreTheAppendersOfTheShippedFile() throws Exception {
    String xml = java.nio.file.Files.readString(Path.of("src/main/resources/logback.xml"));
    java.util.Set<String> appenders =
        java.util.regex.Pattern.compile("<appender name=\"([^\"]+)\"")
            .matcher(xml)
            .results()
            .map(m -> m.group(1))
            .collect(java.util.stream.Collectors.toSet());
    assertThat(appenders).isEqualTo(org.standalonecinder.api.settings.LogSettings.FORMATS);
  }

  @org.junit.jupiter.params.ParameterizedTest(name = "{0}")
  @org.junit.jupiter.params.provider.CsvSource({
    "a misspelt format, LOG_FORMAT, jsn, LOG_FORMAT must be text or json",
    "a misspelt level, LOG_LEVEL, INOF, LOG_LEVEL must be one of"
  })
  void aMistypedLogSettingStopsEveryCommandBeforeItRuns(
      String name, String variable, String value, String message) {
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    PrintStream old = System.err;
    System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
    int exit;
    try {
      exit = Main.run(java.util.Map.of(variable, value), "--version");
    } finally {
      System.setErr(old);
    }
    assertThat(exit).isEqualTo(2);
    assertThat(err.toString(StandardCharsets.UTF_8)).startsWith("standalone-cinder: " + message);
  }
}
