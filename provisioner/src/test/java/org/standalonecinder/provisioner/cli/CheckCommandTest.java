package org.standalonecinder.provisioner.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.standalonecinder.provisioner.cinder.openstack.MockCloud;
import picocli.CommandLine;

/** The diagnostic's exit code and the line it prints, for each thing that can be wrong. */
class CheckCommandTest {

  private final MockCloud cloud = new MockCloud();

  @AfterEach
  void stop() throws Exception {
    cloud.close();
  }

  private Map<String, String> noauth() {
    Map<String, String> env = new HashMap<>();
    env.put("OS_CINDER_ENDPOINT", cloud.url("/volume/v3"));
    env.put("OS_PROJECT_ID", MockCloud.PROJECT);
    return env;
  }

  private Map<String, String> keystone() {
    Map<String, String> env = new HashMap<>();
    env.put("OS_AUTH_URL", cloud.url("/identity/v3"));
    env.put("OS_USERNAME", "provisioner");
    env.put("OS_PASSWORD", "pw");
    env.put("OS_PROJECT_NAME", "k8s");
    return env;
  }

  static Arguments row(
      String name, Consumer<MockCloud> setup, boolean keystone, int exit, String... lines) {
    return Arguments.of(name, setup, keystone, exit, lines);
  }

  static Stream<Arguments> cases() {
    Consumer<MockCloud> healthy = c -> c.cinderAlways(CheckCommandTest::healthy);
    return Stream.of(
        row(
            "noauth, all well",
            healthy,
            false,
            0,
            "configuration   ok    NOAUTH",
            "api versions    ok    server 3.0 .. 3.70, using 3.70 (exports through the attachments API (create + complete))",
            "project         ok",
            "snapshots       ok    1 snapshot(s) visible; a volume in use is snapshotted as it is"
                + " (3.66 and later), crash-consistent",
            "backups         ok    2 backup(s) visible; a volume is made from a backup (3.47 and"
                + " later)",
            "pools           ok    1 pool(s)",
            "protocol iSCSI"),
        row(
            "an older Cinder: snapshots of volumes in use with force",
            healthy.andThen(c -> c.maxVersion("3.50")),
            false,
            0,
            "a volume in use is snapshotted with force (below 3.66)"),
        row(
            "a Cinder below 3.47: restores from backups would fail",
            healthy.andThen(c -> c.maxVersion("3.46")),
            false,
            0,
            "a volume cannot be made from a backup below 3.47"),
        row(
            "backups forbidden by the cloud's policy: a warning",
            c ->
                c.cinderAlways(
                    r ->
                        r.getPath().contains("/backups")
                            ? MockCloud.status(403, "{\"forbidden\":{\"message\":\"Policy\"}}")
                            : healthy(r)),
            false,
            0,
            "backups         WARN",
            "backups of its claims would fail",
            "pools           ok"),
        row(
            "snapshots forbidden by the cloud's policy: a warning",
            c ->
                c.cinderAlways(
                    r ->
                        r.getPath().contains("/snapshots")
                            ? MockCloud.status(403, "{\"forbidden\":{\"message\":\"Policy\"}}")
                            : healthy(r)),
            false,
            0,
            "snapshots       WARN",
            "snapshots of its claims would fail",
            "pools           ok"),
        row(
            "keystone, all well",
            healthy,
            true,
            0,
            "configuration   ok    V3_PASSWORD",
            "endpoint        ok    http://",
            "/volume/v3/" + MockCloud.PROJECT),
        row(
            "credentials refused",
            c -> c.keystoneAlways(r -> MockCloud.status(401, "{\"error\":{\"message\":\"no\"}}")),
            true,
            CheckCommand.REFUSED,
            "authentication  FAIL  Keystone authentication as user 'provisioner'"),
        row(
            "no volumev3 in the catalog",
            c -> {
              ArrayNode only = MockCloud.JSON.createArrayNode();
              for (JsonNode svc : c.catalog()) {
                if (svc.path("type").asText().equals("identity")) {
                  only.add(svc);
                }
              }
              c.catalog(only);
            },
            true,
            CheckCommand.MISMATCH,
            "authentication  FAIL  the Keystone catalog has no volumev3 or block-storage endpoint"),
        row(
            "pools are admin-only",
            c ->
                c.cinderAlways(
                    r ->
                        r.getPath().contains("get_pools")
                            ? MockCloud.status(403, "{\"forbidden\":{\"message\":\"Policy\"}}")
                            : healthy(r)),
            false,
            0,
            "pools           WARN"),
        row(
            "Cinder answers 500",
            c -> c.cinderAlways(r -> MockCloud.status(500, "{}")),
            false,
            CheckCommand.UNREACHABLE,
            "project         FAIL"));
  }

  /** A healthy Cinder's answers, as the lab recorded them. */
  static okhttp3.mockwebserver.MockResponse healthy(okhttp3.mockwebserver.RecordedRequest r) {
    if (r.getPath().contains("get_pools")) {
      return MockCloud.recorded("get-pools-detail.json");
    }
    if (r.getPath().contains("/backups")) {
      return MockCloud.recorded("list-backups.json");
    }
    return r.getPath().contains("/snapshots")
        ? MockCloud.recorded("list-snapshots.json")
        : MockCloud.recorded("list-volumes-metadata.json");
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("cases")
  void check(String name, Consumer<MockCloud> setup, boolean keystone, int exit, String[] lines) {
    setup.accept(cloud);
    CheckCommand cmd = new CheckCommand();
    cmd.cloud.env = keystone ? keystone() : noauth();
    StringWriter out = new StringWriter();
    int code = new CommandLine(cmd).setOut(new PrintWriter(out, true)).execute();
    assertThat(out.toString()).contains(lines);
    assertThat(code).as(out.toString()).isEqualTo(exit);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("offline")
  void offline(String name, Map<String, String> env, int exit, String line) {
    CheckCommand cmd = new CheckCommand();
    cmd.cloud.env = env;
    StringWriter out = new StringWriter();
    int code = new CommandLine(cmd).setOut(new PrintWriter(out, true)).execute();
    assertThat(out.toString()).contains(line);
    assertThat(code).isEqualTo(exit);
  }

  /**
   * Where the cloud.conf comes from: the flag, else CLOUD_CONFIG, as {@code run} reads it — so
   * {@code cinder check} in the provisioner's container (CLOUD_CONFIG set by the manifests) needs
   * no flag.
   */
  @ParameterizedTest(name = "{0}")
  @MethodSource("sources")
  void theCloudConfigComesFromTheFlagElseCloudConfig(
      String name, String flag, String variable, int exit, String line, @TempDir Path dir)
      throws Exception {
    cloud.cinderAlways(CheckCommandTest::healthy);
    Path good = dir.resolve("cloud.conf");
    Files.writeString(
        good,
        "[Global]\ncinder-endpoint = "
            + cloud.url("/volume/v3")
            + "\ntenant-id = "
            + MockCloud.PROJECT
            + "\n");
    java.util.function.UnaryOperator<String> at =
        v -> v == null ? null : v.replace("GOOD", good.toString()).replace("DIR", dir.toString());
    CheckCommand cmd = new CheckCommand();
    Map<String, String> env = new HashMap<>();
    if (variable != null) {
      env.put("CLOUD_CONFIG", at.apply(variable));
    }
    cmd.cloud.env = env;
    StringWriter out = new StringWriter();
    String[] args = flag == null ? new String[0] : new String[] {"--cloud-config", at.apply(flag)};
    int code = new CommandLine(cmd).setOut(new PrintWriter(out, true)).execute(args);
    assertThat(out.toString()).contains(at.apply(line));
    assertThat(code).as(out.toString()).isEqualTo(exit);
  }

  static Stream<Arguments> sources() {
    return Stream.of(
        Arguments.of(
            "CLOUD_CONFIG alone, as in the container",
            null,
            "GOOD",
            0,
            "(from GOOD [Global] cinder-endpoint)"),
        Arguments.of(
            "the flag wins over CLOUD_CONFIG",
            "GOOD",
            "DIR/missing.conf",
            0,
            "(from GOOD [Global] cinder-endpoint)"),
        Arguments.of(
            "a blank CLOUD_CONFIG counts as unset",
            null,
            "  ",
            CheckCommand.BAD_CONFIG,
            "no cloud configured"),
        Arguments.of(
            "CLOUD_CONFIG names a file that is not there",
            null,
            "DIR/missing.conf",
            CheckCommand.BAD_CONFIG,
            "DIR/missing.conf"));
  }

  static Stream<Arguments> offline() {
    return Stream.of(
        Arguments.of(
            "no configuration",
            Map.of(),
            CheckCommand.BAD_CONFIG,
            "configuration   FAIL  no cloud configured"),
        Arguments.of(
            "tenant name in noauth",
            Map.of("OS_CINDER_ENDPOINT", "http://127.0.0.1:9/v3", "OS_PROJECT_ID", "admin"),
            CheckCommand.BAD_CONFIG,
            "every call would get 404"),
        Arguments.of(
            "nothing listens",
            Map.of("OS_CINDER_ENDPOINT", "http://127.0.0.1:9/v3", "OS_PROJECT_ID", "abc"),
            CheckCommand.UNREACHABLE,
            "api versions    FAIL"));
  }
}
