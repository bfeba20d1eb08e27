package org.standalonecinder.provisioner.cinder.openstack.config;

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

  static Stream<Arguments> successfulExchanges() {
    return Stream.of(
        Arguments.of(
            "v3 password",
            "username = u\npassword = " + PASSWORD + "\ntenant-name = k8s\n",
            PASSWORD),
        Arguments.of(
            "application credential",
            "application-credential-id = ac\napplication-credential-secret = " + AC_SECRET + "\n",
            AC_SECRET));
  }

  /**
   * The same look at a session that works: Keystone issues a token, Cinder answers a volume lookup,
   * an export with CHAP credentials and a version document, all at TRACE. Neither the credential
   * sent, nor the token received, nor the CHAP secret Cinder returns may show.
   */
  @ParameterizedTest(name = "{0}")
  @MethodSource("successfulExchanges")
  void aWorkingSessionShowsNoSecretEither(String name, String credentials, String secret)
      throws Exception {
    String token = "tok-LEAK-CANARY-3";
    String chapSecret = "uSneynYSsqaRN9UD"; // the recorded export's auth_password
    List<String> seen = new ArrayList<>();
    try (var cloud = new org.standalonecinder.provisioner.cinder.openstack.MockCloud()) {
      cloud.keystoneAlways(r -> cloud.token(token));
      cloud.thenCinder(
          org.standalonecinder.provisioner.cinder.openstack.MockCloud.recorded(
              "get-volume-available.json"));
      cloud.thenCinder(
          org.standalonecinder.provisioner.cinder.openstack.MockCloud.recorded(
              "initialize-connection.json"));
      Path f =
          Files.writeString(
              dir.resolve("cloud.conf"),
              "[Global]\nauth-url = " + cloud.url("/identity/v3") + "\n" + credentials);
      CloudConfig c = CloudConfigLoader.load(f, Map.of());
      seen.add(c.toString());
      seen.addAll(c.describe());
      try (var client =
          org.standalonecinder.provisioner.cinder.openstack.OpenStackCinderClient.create(c)) {
        assertThat(client.apiVersions().used()).hasToString("3.70");
        assertThat(client.getVolume("381e4427-2dc0-440f-b118-8ece52e2932a")).isPresent();
        var info =
            client.initializeConnection(
                "381e4427-2dc0-440f-b118-8ece52e2932a",
                new org.standalonecinder.provisioner.cinder.Connector(
                    "iqn.2026-11.org.standalonecinder:n", "n", "10.0.0.1", false));
        seen.add(info.toString());
      }
      assertThat(cloud.keystoneRequestCount()).as("a real exchange took place").isPositive();
    }
    logs.list.forEach(ev -> seen.add(ev.getFormattedMessage()));
    assertThat(logs.list).as("TRACE logging was on and said something").isNotEmpty();
    for (String s : seen) {
      assertThat(s).doesNotContain(secret).doesNotContain(token).doesNotContain(chapSecret);
    }
  }

  private static String stackTrace(Throwable t) {
    StringWriter w = new StringWriter();
    t.printStackTrace(new PrintWriter(w));
    return w.toString();
  }
}
