package org.standalonecinder.provisioner.cli;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.LoggerContext;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.slf4j.MDC;
import org.standalonecinder.api.settings.LogConfigurator;
import org.standalonecinder.api.settings.LogSettings;

/**
 * The logging both programs set up ({@code LogConfigurator}): {@code LOG_FORMAT=json} writes one
 * JSON object per line with the item's claim, PV and volume; the default text line carries them
 * too.
 */
class LogFormatTest {

  private static String log(String format) throws Exception {
    return log(format, "pvc-1");
  }

  private static String log(String format, String pv) throws Exception {
    LoggerContext ctx = new LoggerContext();
    ctx.setMDCAdapter(MDC.getMDCAdapter());
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    PrintStream old = System.err;
    System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
    try {
      LogConfigurator.configure(
          ctx, format == null ? java.util.Map.of() : java.util.Map.of("LOG_FORMAT", format));
      MDC.put("claim", "apps/data");
      MDC.put("volume", "vol-1");
      ctx.getLogger("org.standalonecinder.provisioner.controller.ClaimController")
          .info("deleted volume {} (Cinder volume {})", pv, "vol-1");
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

  /**
   * The attack: a value a client wrote, logged, holds line breaks and what looks like an entry of
   * its own. Each format keeps the message on its one line.
   */
  @org.junit.jupiter.params.ParameterizedTest(name = "{0}")
  @org.junit.jupiter.params.provider.CsvSource({"text, text", "json, json"})
  void aValueWithLineBreaksStaysOnItsLine(String name, String format) throws Exception {
    String forged = "x\n00:00:00.000 ERROR [main] forged - an entry\r\nand\u2028more";
    String out = log(format, forged);
    assertThat(out.split("\r?\n|\r", -1)).as("lines in: " + out).containsExactly(out.strip(), "");
    if (format.equals("text")) {
      assertThat(out).contains("x\\n00:00:00.000 ERROR [main] forged - an entry\\n\\nand\\nmore");
    }
  }

  /**
   * Every LOG_FORMAT the start-up check accepts is an appender of the configuration; what it
   * refuses would have fallen back to text (never to no appender at all).
   */
  @org.junit.jupiter.params.ParameterizedTest(name = "{0}")
  @org.junit.jupiter.params.provider.CsvSource({
    "text, text, text",
    "json, json, json",
    "a misspelling (refused at start), jsn, text",
    "unset, '', text"
  })
  void theAcceptedFormatsAreTheConfigurationsAppenders(
      String name, String format, String appender) {
    LoggerContext ctx = new LoggerContext();
    LogConfigurator.configure(ctx, java.util.Map.of("LOG_FORMAT", format));
    var root = ctx.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
    assertThat(root.getAppender(appender)).isNotNull();
    if (LogSettings.FORMATS.contains(format)) {
      assertThat(appender).isEqualTo(format);
    }
    ctx.stop();
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
