package org.standalonecinder.demo;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The local installation's processes as their Deployment keeps Pods: one that ends by itself is
 * started again, one stopped or killed on purpose stays down until it is started again.
 */
class LocalProcessesTest {

  private static final String AGAIN = "started again, as its Deployment would";

  @TempDir Path logs;
  private LocalProcesses processes;

  @AfterEach
  void stopAll() {
    if (processes != null) {
      processes.stopAll();
    }
  }

  private long restarts(String name) {
    Path log = logs.resolve(name + ".log");
    try {
      return Files.exists(log)
          ? Files.readAllLines(log).stream().filter(l -> l.contains(AGAIN)).count()
          : 0;
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  /** A program that runs until it is stopped, as a server does. */
  private List<String> server() throws IOException {
    Path source = logs.resolve("Server.java");
    Files.writeString(
        source,
        "public class Server { public static void main(String[] a) throws Exception {"
            + " Thread.sleep(120_000); } }");
    return List.of(source.toString());
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource({
    "ended by itself: started again,  ends,   true",
    "stopped on purpose: stays down,  stop,   false",
    "killed on purpose: stays down,   kill,   false",
  })
  void aProcessComesBackOnlyWhenItEndedByItself(String name, String how, boolean again)
      throws Exception {
    processes = new LocalProcesses(logs);
    processes.start("p", how.equals("ends") ? List.of("-version") : server());
    if (how.equals("stop")) {
      processes.stop("p");
    } else if (how.equals("kill")) {
      processes.kill("p");
    }
    Thread.sleep(LocalProcesses.RESTART_DELAY.plusSeconds(2).toMillis());

    if (again) {
      Waits.await("started again", () -> restarts("p") >= 1, Duration.ofSeconds(20));
      processes.stop("p"); // and then it stays down
      long stopped = restarts("p");
      Thread.sleep(LocalProcesses.RESTART_DELAY.plusSeconds(2).toMillis());
      assertThat(restarts("p")).as("restarts after the stop").isEqualTo(stopped);
    } else {
      assertThat(restarts("p")).isZero();
      assertThat(processes.alive("p")).isFalse();
    }
  }
}
