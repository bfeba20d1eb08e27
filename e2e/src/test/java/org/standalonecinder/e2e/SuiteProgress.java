package org.standalonecinder.e2e;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.engine.support.descriptor.ClassSource;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.TestPlan;

/**
 * Which test classes this run holds and which of them have finished, as JUnit's launcher tells its
 * listeners (registered in META-INF/services, so every run of the module has it); {@link Gate}
 * waits on it for {@link RunsAfter}.
 */
public final class SuiteProgress implements TestExecutionListener {

  /** Longer than the suite's longest class twice over: past it a wait is a mistake, not a turn. */
  static final Duration LONGEST_WAIT = Duration.ofMinutes(60);

  /** This run's. */
  static final Progress RUN = new Progress();

  @Override
  public void testPlanExecutionStarted(TestPlan plan) {
    Set<String> planned = new HashSet<>();
    ArrayDeque<TestIdentifier> todo = new ArrayDeque<>(plan.getRoots());
    while (!todo.isEmpty()) {
      TestIdentifier id = todo.pop();
      className(id).ifPresent(planned::add);
      todo.addAll(plan.getChildren(id));
    }
    RUN.planned(planned);
  }

  @Override
  public void executionFinished(TestIdentifier id, TestExecutionResult result) {
    className(id).ifPresent(RUN::finished);
  }

  @Override
  public void executionSkipped(TestIdentifier id, String reason) {
    className(id).ifPresent(RUN::finished);
  }

  private static Optional<String> className(TestIdentifier id) {
    return id.getSource()
        .filter(ClassSource.class::isInstance)
        .map(s -> ((ClassSource) s).getClassName());
  }

  /** The classes planned and finished, by name. */
  static final class Progress {
    private final Set<String> planned = new HashSet<>();
    private final Set<String> finished = new HashSet<>();
    private boolean known;

    synchronized void planned(Set<String> classes) {
      planned.clear();
      planned.addAll(classes);
      finished.clear();
      known = true;
    }

    synchronized void finished(String className) {
      finished.add(className);
      notifyAll();
    }

    synchronized boolean isPlanned(Class<?> c) {
      return planned.contains(c.getName());
    }

    /**
     * Waits until each class has finished or is not in the plan.
     *
     * @throws IllegalStateException past {@code longest}, naming the classes still awaited; or at
     *     once if no plan was told (every class would look absent and the gate let all through)
     */
    synchronized void awaitFinished(List<Class<?>> classes, Duration longest)
        throws InterruptedException {
      if (!known) {
        throw new IllegalStateException(
            "JUnit's launcher told no plan to "
                + SuiteProgress.class.getName()
                + ": see META-INF/services/org.junit.platform.launcher.TestExecutionListener");
      }
      long end = System.nanoTime() + longest.toNanos();
      while (true) {
        List<String> awaited =
            classes.stream()
                .map(Class::getName)
                .filter(n -> planned.contains(n) && !finished.contains(n))
                .toList();
        if (awaited.isEmpty()) {
          return;
        }
        long left = end - System.nanoTime();
        if (left <= 0) {
          throw new IllegalStateException(
              "still waiting after " + longest + " for " + String.join(", ", awaited));
        }
        wait(Math.max(1, left / 1_000_000));
      }
    }
  }

  /** Holds a class annotated {@link RunsAfter} back until the classes it names have finished. */
  static final class Gate implements BeforeAllCallback {

    @Override
    public void beforeAll(ExtensionContext context) throws Exception {
      List<Class<?>> after =
          context
              .getTestClass()
              .map(c -> c.getAnnotation(RunsAfter.class))
              .map(a -> Stream.of(a.value()).toList())
              .orElse(List.of());
      if (!after.isEmpty()) {
        RUN.awaitFinished(after, LONGEST_WAIT);
      }
    }
  }
}
