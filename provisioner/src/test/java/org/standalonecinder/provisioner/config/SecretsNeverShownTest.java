package org.standalonecinder.provisioner.config;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.slf4j.LoggerFactory;

/**
 * Configures every secret with a recognisable value, drives configuration, errors and logging at
 * TRACE, and looks for the values everywhere: toString, describe(), exception messages and every
 * log line of every logger (ours, openstack4j's, OkHttp's).
 */
class SecretsNeverShownTest {

  static final String PASSWORD = "pw-LEAK-CANARY-1";
  static final String AC_SECRET = "ac-LEAK-CANARY-2";

  @TempDir Path dir;

  private final ListAppender<ILoggingEvent> logs = new ListAppender<>();
  private Level before;

  @BeforeEach
  void captureEverything() {
    Logger root = (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
    before = root.getLevel();
    root.setLevel(Level.TRACE);
    logs.start();
    root.addAppender(logs);
  }

  @AfterEach
  void restore() {
    Logger root = (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
    root.detachAppender(logs);
    root.setLevel(before);
  }

  static Stream<Arguments> configs() {
    return Stream.of(
        Arguments.of(
            "v3 password",
            "[Global]\nauth-url = http://127.0.0.1:9/v3\nusername = u\npassword = "
                + PASSWORD
                + "\ntenant-name = k8s\n",
            Map.of()),
        Arguments.of(
            "v3 password from OS_PASSWORD",
            "[Global]\nauth-url = http://127.0.0.1:9/v3\nusername = u\ntenant-name = k8s\n",
            Map.of("OS_PASSWORD", PASSWORD)),
        Arguments.of(
            "application credential",
            "[Global]\nauth-url = http://127.0.0.1:9/v3\napplication-credential-id = ac\n"
                + "application-credential-secret = "
                + AC_SECRET
                + "\n",
            Map.of()),
        Arguments.of(
            "rejected: password with noauth",
            "[Global]\ncinder-endpoint = http://127.0.0.1:9/v3\ntenant-id = 5f\npassword = "
                + PASSWORD
                + "\n",
            Map.of()),
        Arguments.of(
            "rejected: secret with a password",
            "[Global]\nauth-url = http://127.0.0.1:9/v3\napplication-credential-id = ac\n"
                + "application-credential-secret = "
                + AC_SECRET
                + "\npassword = "
                + PASSWORD
                + "\n",
            Map.of()));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("configs")
  void secretsStayHidden(String name, String ini, Map<String, String> env) throws IOException {
    Path f = Files.writeString(dir.resolve("cloud.conf"), ini);
    List<String> seen = new ArrayList<>();
    try {
      CloudConfig c = CloudConfigLoader.load(f, env);
      seen.add(c.toString());
      seen.addAll(c.describe());
      // A call that fails (nothing listens on port 9) logs and throws: neither may leak.
      try (var client =
          org.standalonecinder.provisioner.cinder.openstack.OpenStackCinderClient.create(c)) {
        client.apiVersions();
      } catch (RuntimeException e) {
        seen.add(stackTrace(e));
      }
    } catch (ConfigException e) {
      seen.add(stackTrace(e));
    }
    logs.list.forEach(ev -> seen.add(ev.getFormattedMessage()));
    assertThat(seen).isNotEmpty();
    for (String s : seen) {
      assertThat(s).doesNotContain(PASSWORD).doesNotContain(AC_SECRET);
    }
  }

  private static String stackTrace(Throwable t) {
    StringWriter w = new StringWriter();
    t.printStackTrace(new PrintWriter(w));
    return w.toString();
  }
}
