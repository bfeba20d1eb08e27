package org.standalonecinder.provisioner.cinder;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;

/** The small value types: parsing and rules, one row a case. */
class CinderTypesTest {

  static Stream<Arguments> capacities() {
    return Stream.of(
        Arguments.of("integer", 100, new Capacity.Gib(100)),
        Arguments.of("decimal", 76.07, new Capacity.Gib(76.07)),
        Arguments.of("numeric string", "20.5", new Capacity.Gib(20.5)),
        Arguments.of("infinite", "infinite", new Capacity.Infinite()),
        Arguments.of("Infinite, any case", "Infinite", new Capacity.Infinite()),
        Arguments.of("unknown", "unknown", new Capacity.Unknown()),
        Arguments.of("missing", null, new Capacity.Unknown()),
        Arguments.of("garbage", "lots", new Capacity.Unknown()));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("capacities")
  void capacity(String name, Object raw, Capacity expected) {
    assertThat(Capacity.parse(raw)).isEqualTo(expected);
  }

  @ParameterizedTest(name = "{0} -> {1}.{2}")
  @CsvSource({"3.70, 3, 70", "v3.27, 3, 27", "3.0, 3, 0", "' 3.44 ', 3, 44"})
  void microversionParses(String text, int major, int minor) {
    assertThat(Microversion.parse(text)).isEqualTo(new Microversion(major, minor));
  }

  @ParameterizedTest(name = "''{0}''")
  @CsvSource({"latest", "3", "3.x", "''", "3.27.1"})
  void microversionRejects(String text) {
    assertThatThrownBy(() -> Microversion.parse(text))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("not a microversion");
  }

  @Test
  void microversionOrder() {
    assertThat(new Microversion(3, 70).atLeast(Microversion.ATTACHMENTS)).isTrue();
    assertThat(new Microversion(3, 9).atLeast(new Microversion(3, 27))).isFalse();
    assertThat(new Microversion(3, 27)).hasToString("3.27");
  }

  @ParameterizedTest(name = "os.arch {0} -> platform {1}")
  @CsvSource({
    "amd64, x86_64",
    "x86_64, x86_64",
    "x86, i686",
    "aarch64, aarch64",
    "arm64, aarch64",
    "ppc64le, ppc64le",
    "s390x, s390x",
    "riscv64, riscv64"
  })
  void connectorPlatformIsTheHostsMachineName(String osArch, String platform) {
    assertThat(Connector.platform(osArch)).isEqualTo(platform);
  }

  @Test
  void connectorSendsThisJvmsPlatform() {
    Object sent = new Connector("iqn.x:y", "h", "10.0.0.1", false).toApi().get("platform");
    assertThat(sent).isEqualTo(Connector.platform(System.getProperty("os.arch")));
    assertThat(sent).as("the JVM's own name for x86_64 never reaches Cinder").isNotEqualTo("amd64");
  }

  @Test
  void backoffRejectsNonsense() {
    assertThatThrownBy(() -> new Backoff(Duration.ZERO, 2, Duration.ofSeconds(1), Duration.ZERO))
        .hasMessageContaining("initial must be positive");
    assertThatThrownBy(
            () -> new Backoff(Duration.ofSeconds(1), 0.5, Duration.ofSeconds(1), Duration.ZERO))
        .hasMessageContaining("multiplier");
    assertThatThrownBy(
            () -> new Backoff(Duration.ofSeconds(2), 2, Duration.ofSeconds(1), Duration.ZERO))
        .hasMessageContaining("max must be at least initial");
  }

  @Test
  void volumeSpecRules() {
    assertThatThrownBy(() -> VolumeSpec.blank("v", 0)).hasMessageContaining("at least 1");
    assertThatThrownBy(
            () -> new VolumeSpec("v", 1, null, null, null, Map.of(), "vol", "snap", null))
        .hasMessageContaining("one source");
    assertThatThrownBy(() -> new VolumeSpec("v", 1, null, null, null, Map.of(), null, "s", "b"))
        .hasMessageContaining("one source");
    assertThat(VolumeSpec.blank("v", 1).cloneOf("a").fromSnapshot("b").sourceVolumeId()).isNull();
    assertThat(VolumeSpec.blank("v", 1).fromSnapshot("b").fromBackup("c").snapshotId()).isNull();
  }

  @Test
  void aConnectorNeedsAnInitiator() {
    assertThatThrownBy(() -> new Connector(" ", "node", "10.0.0.1", false))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("initiator");
  }

  @Test
  void connectionInfoMasksEveryCredential() {
    ConnectionInfo ci =
        new ConnectionInfo(
            "iscsi",
            Map.of(
                "auth_password", "chap-secret",
                "discovery_auth_password", "disc-secret",
                "auth_username", "user",
                "target_lun", 1));
    assertThat(ci.toString())
        .doesNotContain("chap-secret", "disc-secret")
        .contains("auth_username=user", "target_lun=1");
    assertThat(ci.string("auth_password")).isEqualTo("chap-secret");
  }

  @Test
  void retryableIsDecidedByTheErrorType() {
    assertThat(new CinderException.Unavailable("x", 503, null, null).retryable()).isTrue();
    assertThat(new CinderException.Conflict("x", null).retryable()).isTrue();
    assertThat(new CinderException.BadRequest("x", 400, null).retryable()).isFalse();
    assertThat(new CinderException.QuotaExceeded("x", null).retryable()).isTrue();
    assertThat(new CinderException.UnexpectedState("x", "creating", true).retryable()).isTrue();
    assertThat(new CinderException.UnexpectedState("x", "error", false).retryable()).isFalse();
    assertThat(new CinderException.NotFound("gone", "req-1").getMessage())
        .isEqualTo("gone (request req-1)");
  }
}
