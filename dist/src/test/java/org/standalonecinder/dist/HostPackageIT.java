package org.standalonecinder.dist;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The host package as an admin uses it: {@code dpkg -i} of the .deb that {@code mvn package} made,
 * into a root that holds only what the package depends on (no JDK, no Java at all), and its {@code
 * standalone-cinder} command run there with chroot: {@code --version}, {@code cinder connector},
 * and {@code cinder check} against the real local Cinder; the tarball's command unpacked in the
 * same root; {@code dpkg -r} leaves nothing of it.
 */
class HostPackageIT {

  private static final Path DIST = Path.of(System.getProperty("dist.dir", "target"));

  @TempDir static Path work;

  /** Each step's output by the step's name, as clean-root.sh prints them. */
  private static final Map<String, String> STEPS = new LinkedHashMap<>();

  private static Path one(String glob) throws IOException {
    try (Stream<Path> files = Files.list(DIST)) {
      List<Path> found =
          files
              .filter(
                  f -> f.getFileSystem().getPathMatcher("glob:" + glob).matches(f.getFileName()))
              .toList();
      assertThat(found).as("%s in %s (mvn package makes it)", glob, DIST).hasSize(1);
      return found.get(0);
    }
  }

  /** A noauth cloud.conf for the local Cinder (dev/cinder-local's env file). */
  private static Path cloudConf() throws IOException {
    Path env =
        Path.of(System.getProperty("cinder.local.env", "/tmp/cinder-local/cinder-local.env"));
    Map<String, String> vars = new LinkedHashMap<>();
    for (String line : Files.readAllLines(env)) {
      int eq = line.indexOf('=');
      if (eq > 0 && !line.startsWith("#")) {
        vars.put(line.substring(0, eq).trim(), line.substring(eq + 1).trim());
      }
    }
    Path conf = work.resolve("cloud.conf");
    Files.writeString(
        conf,
        "[Global]\ncinder-endpoint = "
            + vars.get("CINDER_ENDPOINT")
            + "\ntenant-id = "
            + vars.get("CINDER_PROJECT_ID")
            + "\n");
    return conf;
  }

  @BeforeAll
  static void installIntoACleanRoot() throws Exception {
    assertThat(System.getProperty("user.name"))
        .as("the test makes a root and chroots into it: run as root (CI does)")
        .isEqualTo("root");
    Process p =
        new ProcessBuilder(
                "bash",
                "src/test/sh/clean-root.sh",
                one("standalone-cinder_*.deb").toString(),
                one("standalone-cinder-*.tar.gz").toString(),
                work.resolve("root").toString(),
                cloudConf().toString())
            .redirectErrorStream(true)
            .start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(300, TimeUnit.SECONDS)).isTrue();
    System.out.println(out);
    assertThat(p.exitValue()).as(out).isZero();
    String step = null;
    StringBuilder text = new StringBuilder();
    for (String line : out.split("\n", -1)) {
      if (line.startsWith("=== ") && !line.startsWith("=== exit ")) {
        if (step != null) {
          STEPS.put(step, text.toString());
        }
        step = line.substring(4);
        text.setLength(0);
      } else {
        text.append(line).append('\n');
      }
    }
    assertThat(STEPS).containsKey("after removal");
  }

  private static String step(String name) {
    String out = STEPS.get(name);
    assertThat(out).as("step %s ran", name).isNotNull();
    assertThat(out).as(name).doesNotContain("=== exit ");
    return out;
  }

  @Test
  void theRootHasNoJavaOfItsOwn() {
    assertThat(step("java in the root").strip()).isEqualTo("0");
  }

  @Test
  void dpkgInstallsItWithItsDependenciesMet() {
    step("dpkg -i");
    assertThat(step("dpkg -s"))
        .contains("Status: install ok installed")
        .contains("Depends: libc6")
        .doesNotContain("openjdk");
  }

  @Test
  void theCommandRunsFromItsOwnRuntime() throws Exception {
    assertThat(step("--version").strip()).startsWith("standalone-cinder ");
    JsonNode connector = new ObjectMapper().readTree(step("cinder connector"));
    assertThat(connector.path("initiator").asText())
        .isEqualTo("iqn.2026-11.org.example:clean-root");
    assertThat(connector.path("os_type").asText()).isEqualTo("linux2");
  }

  @Test
  void cinderCheckReachesTheRealCinder() {
    assertThat(step("cinder check"))
        .contains("configuration   ok")
        .contains("api versions    ok")
        .contains("pools           ok");
  }

  @Test
  void theTarballsCommandRunsWhereverItIsUnpacked() {
    assertThat(step("tarball --version").strip()).startsWith("standalone-cinder ");
  }

  @Test
  void dpkgRemovesAllOfIt() {
    step("dpkg -r");
    assertThat(step("after removal"))
        .contains("No such file or directory")
        .doesNotContain("standalone-cinder\n");
  }
}
