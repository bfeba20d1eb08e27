package org.standalonecinder.demo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * What a wait on the node says when it runs out: what the node was doing then, and never what a
 * script it runs was given (a script may carry a CHAP secret).
 */
class LocalNodeTest {

  @TempDir Path share;

  static Stream<Arguments> states() {
    String login =
        "set -e\niscsiadm -m node -T iqn.x -o update -n node.session.auth.password -v s3cret\n";
    return Stream.of(
        Arguments.of(
            "another script runs, ours waits behind it",
            List.of("1-a"),
            login,
            List.of("2-ours"),
            List.of(
                "node n1: running another (iscsiadm, for ", "; ours queued behind 0; 1 queued")),
        Arguments.of(
            "ours runs",
            List.of("2-ours"),
            "ls /data/synced\n",
            List.of(),
            List.of("running ours (ls, for ", "; 0 queued")),
        Arguments.of(
            "two ahead of ours",
            List.of(),
            null,
            List.of("1-a", "1-b", "2-ours"),
            List.of("running no script", "; ours queued behind 2; 3 queued")));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("states")
  void aWaitThatRunsOutSaysWhatTheNodeWasDoing(
      String name, List<String> running, String script, List<String> queued, List<String> said)
      throws Exception {
    Files.createDirectories(share.resolve("run"));
    Files.createDirectories(share.resolve("req"));
    for (String id : running) {
      Files.writeString(share.resolve("run").resolve(id + ".sh"), script);
    }
    for (String id : queued) {
      Files.writeString(share.resolve("req").resolve(id + ".sh"), "true\n");
    }
    String doing = new LocalNode(share, "n1", false).doing("2-ours");
    assertThat(doing).contains(said).doesNotContain("s3cret").contains("host load ");
  }

  @Test
  void aScriptNoNodeAnswersTimesOutSayingSo() throws Exception {
    Files.createDirectories(share.resolve("run"));
    Files.createDirectories(share.resolve("req"));
    Files.createDirectories(share.resolve("out"));
    assertThatThrownBy(() -> new LocalNode(share, "n1", false).run("ls /x", Duration.ofMillis(300)))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining(
            "waiting for the node's answer to ls /x; node n1: running no script; ours queued behind 0; 1 queued");
  }
}
