package org.standalonecinder.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The gate that lets a waiting class run beside the others ({@link RunsAfter}): it holds a class
 * back exactly as long as a class it names is planned and not finished, and refuses to guess when
 * it was told no plan.
 */
class SuiteProgressTest {

  private static final Duration SHORT = Duration.ofMillis(300);

  /** A class of the plan (its name is all that counts). */
  static final class Early {}

  /** Another. */
  static final class Late {}

  static Stream<Arguments> gates() {
    return Stream.of(
        Arguments.of("a class not in the run is not waited for", Set.of(), Set.of(), null),
        Arguments.of(
            "a finished class is not waited for", Set.of(Early.class), Set.of(Early.class), null),
        Arguments.of(
            "a planned class still running holds it", Set.of(Early.class), Set.of(), Early.class),
        Arguments.of(
            "one of two still running holds it",
            Set.of(Early.class, Late.class),
            Set.of(Early.class),
            Late.class));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("gates")
  void theGate(String name, Set<Class<?>> planned, Set<Class<?>> finished, Class<?> holding)
      throws Exception {
    SuiteProgress.Progress run = new SuiteProgress.Progress();
    run.planned(Set.copyOf(planned.stream().map(Class::getName).toList()));
    finished.forEach(c -> run.finished(c.getName()));
    List<Class<?>> awaited = List.of(Early.class, Late.class);
    if (holding == null) {
      run.awaitFinished(awaited, SHORT);
    } else {
      assertThatThrownBy(() -> run.awaitFinished(awaited, SHORT))
          .isInstanceOf(IllegalStateException.class)
          .hasMessageEndingWith("still waiting after " + SHORT + " for " + holding.getName());
    }
  }

  @Test
  void theGateOpensWhenTheClassFinishes() throws Exception {
    SuiteProgress.Progress run = new SuiteProgress.Progress();
    run.planned(Set.of(Early.class.getName()));
    CompletableFuture<Void> waiting =
        CompletableFuture.runAsync(
            () -> {
              try {
                run.awaitFinished(List.of(Early.class), Duration.ofSeconds(30));
              } catch (InterruptedException e) {
                throw new IllegalStateException(e);
              }
            });
    Thread.sleep(200);
    assertThat(waiting).as("held while the class runs").isNotDone();
    run.finished(Early.class.getName());
    waiting.get(10, TimeUnit.SECONDS);
  }

  @Test
  void withoutAPlanTheGateRefusesRatherThanLetEveryoneThrough() {
    assertThatThrownBy(
            () -> new SuiteProgress.Progress().awaitFinished(List.of(Early.class), SHORT))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("META-INF/services");
  }

  /**
   * The node loss powers the second node off while other classes run: every class that uses that
   * node must be one it waits for, or be a case one of those runs (NodesE2EIT's nested classes).
   */
  @Test
  void theNodeLossWaitsForEveryUserOfTheSecondNode() throws Exception {
    Path dir = Path.of("src/test/java/org/standalonecinder/e2e");
    List<Class<?>> awaited = List.of(NodeLossE2EIT.class.getAnnotation(RunsAfter.class).value());
    List<String> awaitedSources = new ArrayList<>();
    for (Class<?> c : awaited) {
      awaitedSources.add(Files.readString(dir.resolve(c.getSimpleName() + ".java")));
    }
    List<String> users;
    // Every source of the suite, its subpackages' too (the snapshot-controller stand-in's).
    try (Stream<Path> files = Files.walk(dir)) {
      users =
          files
              .filter(f -> Files.isRegularFile(f) && f.toString().endsWith(".java"))
              .filter(f -> read(f).matches("(?s).*(secondNode\\(\\)|node2\\.local\\.env).*"))
              .map(f -> f.getFileName().toString().replace(".java", ""))
              .filter(n -> !n.equals("NodeLossE2EIT") && !n.equals("SuiteProgressTest"))
              .toList();
    }
    assertThat(users).as("the second node's users, read from the sources").isNotEmpty();
    assertThat(users)
        .allSatisfy(
            user ->
                assertThat(
                        awaited.stream().anyMatch(c -> c.getSimpleName().equals(user))
                            || awaitedSources.stream()
                                .anyMatch(src -> src.contains("extends " + user)))
                    .as("%s uses the second node: NodeLossE2EIT must run after it", user)
                    .isTrue());
  }

  private static String read(Path f) {
    try {
      return Files.readString(f);
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  @Test
  void theLauncherToldThisRunsPlan() {
    assertThat(SuiteProgress.RUN.isPlanned(SuiteProgressTest.class))
        .as("the listener is registered: the gates know the plan")
        .isTrue();
  }
}
