package org.standalonecinder.e2e;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.BiFunction;

/**
 * The crash-every-step drill shared by {@link CrashEveryStepE2EIT} and {@link SnapshotCrashCases}:
 * each operation runs once without a death, which lists its steps; then once per step, with a
 * provisioner that dies right after it and a fresh one that must finish the job; every run checks
 * what it left and cleans up.
 *
 * @param <O> the operations
 */
final class CrashRuns<O> {

  /** One run of an operation, on objects of its own. */
  interface Run {
    /** What must be there before the operation, made by a provisioner that does not die. */
    void prepare() throws Exception;

    /** Starts the operation. */
    void act() throws Exception;

    /** Waits until the operation is done and everything is as it must be. */
    void settle() throws Exception;

    /** Removes what the run made, checking that nothing is left. */
    void cleanUp() throws Exception;

    /** A provisioner for the run's objects that dies after step {@code dieAfter} (0: never). */
    MortalProvisioner provisioner(int dieAfter);
  }

  private final BiFunction<O, Integer, Run> runs;
  final List<String> report = Collections.synchronizedList(new ArrayList<>());
  private final java.time.Duration settle;

  /**
   * @param runs a run of an operation whose provisioner dies after the step given (0: never)
   * @param settle how long a provisioner is given to die
   */
  CrashRuns(BiFunction<O, Integer, Run> runs, java.time.Duration settle) {
    this.runs = runs;
    this.settle = settle;
  }

  /**
   * Runs {@code op} without a death and completes {@code steps} with the steps it took as soon as
   * they are known, before its clean-up: the runs that die after them need not wait for it.
   */
  private void steps(O op, CompletableFuture<List<String>> steps) throws Exception {
    Run run = runs.apply(op, 0);
    Phases phases = new Phases();
    try {
      run.prepare();
      phases.end("prepare");
      List<String> taken;
      try (MortalProvisioner p = run.provisioner(0)) {
        run.act();
        run.settle();
        phases.end("run");
        taken = p.steps();
      }
      steps.complete(taken);
      run.cleanUp();
      phases.end("clean-up");
      report.add(
          op + " takes " + taken.size() + " steps (" + phases + "): " + String.join(", ", taken));
    } catch (Exception | Error e) {
      steps.completeExceptionally(e);
      throw e;
    }
  }

  /** How long each phase of a run took, for the report: where a slow drill spends its time. */
  private static final class Phases {
    private final StringBuilder done = new StringBuilder();
    private long last = System.nanoTime();

    void end(String phase) {
      long now = System.nanoTime();
      done.append(done.isEmpty() ? "" : ", ")
          .append(phase)
          .append(' ')
          .append((now - last) / 1_000_000)
          .append(" ms");
      last = now;
    }

    @Override
    public String toString() {
      return done.toString();
    }
  }

  /** Dies after step {@code n}, restarts, checks, cleans up; "ok ..." or why it failed. */
  private String dieAndRestart(O op, int n, String step) throws Exception {
    Run run = runs.apply(op, n);
    Phases phases = new Phases();
    run.prepare();
    phases.end("prepare");
    try (MortalProvisioner mortal = run.provisioner(n)) {
      run.act();
      if (!mortal.awaitDeath(settle)) {
        return "did not die: it took " + mortal.steps().size() + " steps " + mortal.steps();
      }
      phases.end("death");
      if (!mortal.steps().get(n - 1).equals(step)) {
        // Steps taken in parallel may come in another order; the run is no less valid.
        report.add(op + " run " + n + " died after " + mortal.steps().get(n - 1));
      }
    }
    try (MortalProvisioner restarted = run.provisioner(0)) {
      run.settle();
    }
    phases.end("settled after the restart");
    run.cleanUp();
    phases.end("clean-up");
    return "ok (" + phases + ")";
  }

  private void submitDeaths(
      O op,
      List<String> steps,
      Drilled<O> drilled,
      ExecutorService pool,
      Map<String, Future<String>> all,
      List<String> failed) {
    if (steps.isEmpty()) {
      failed.add(op + " takes no step: nothing was drilled");
    }
    for (int n = 1; n <= steps.size(); n++) {
      int at = n;
      String step = steps.get(n - 1);
      if (drilled.after(op, n, step)) {
        all.put(
            op + " dies after step " + n + " (" + step + ")",
            pool.submit(() -> dieAndRestart(op, at, step)));
      }
    }
  }

  /** Which deaths of an operation are drilled: after step {@code n} (from 1), {@code step}. */
  @FunctionalInterface
  interface Drilled<O> {
    boolean after(O op, int n, String step);
  }

  /**
   * How many runs go at once: {@code perCore} for each core of the machine, or {@code
   * -Dcrash.parallel}. A run mostly waits (for Kubernetes' controllers, the stand-in, Cinder), but
   * its provisioner, the API server and Cinder work for it: 25 snapshot runs at once beside the
   * nodes' classes put the load at 29.5 on two cores.
   */
  static int atOnce(int perCore) {
    return Integer.getInteger(
        "crash.parallel", perCore * Runtime.getRuntime().availableProcessors());
  }

  /**
   * Every operation's runs, {@code parallel} at once; the runs that did not end as they must, each
   * with why. Every line of the drill goes to the report file {@code reportFile}.
   */
  List<String> failures(List<O> operations, int parallel, String reportFile) throws Exception {
    return failures(operations, parallel, reportFile, (op, n, step) -> true);
  }

  /** As {@link #failures(List, int, String)}, dying only after the steps {@code drilled} takes. */
  List<String> failures(List<O> operations, int parallel, String reportFile, Drilled<O> drilled)
      throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(parallel);
    Map<String, Future<String>> all = new java.util.LinkedHashMap<>();
    List<String> failed = new ArrayList<>();
    try {
      // The runs without a death at once: each lists its operation's steps.
      Map<O, CompletableFuture<List<String>>> dry = new java.util.LinkedHashMap<>();
      List<Future<?>> dryRuns = new ArrayList<>();
      for (O op : operations) {
        CompletableFuture<List<String>> steps = new CompletableFuture<>();
        dry.put(op, steps);
        dryRuns.add(
            pool.submit(
                () -> {
                  steps(op, steps);
                  return null;
                }));
      }
      // Each operation's deaths as soon as its dry run has listed the steps.
      java.util.Set<O> listing = new java.util.LinkedHashSet<>(operations);
      while (!listing.isEmpty()) {
        CompletableFuture.anyOf(listing.stream().map(dry::get).toArray(CompletableFuture[]::new))
            .exceptionally(e -> null)
            .get();
        for (java.util.Iterator<O> i = listing.iterator(); i.hasNext(); ) {
          O op = i.next();
          if (dry.get(op).isDone()) {
            i.remove();
            submitDeaths(op, dry.get(op).get(), drilled, pool, all, failed);
          }
        }
      }
      for (Future<?> f : dryRuns) {
        // A dry run's clean-up that failed fails the drill as a death's would.
        try {
          f.get();
        } catch (java.util.concurrent.ExecutionException ex) {
          failed.add("a run without a death: " + ex.getCause());
        }
      }
      for (var e : all.entrySet()) {
        String result;
        try {
          result = e.getValue().get();
        } catch (java.util.concurrent.ExecutionException ex) {
          result = "FAILED: " + ex.getCause();
        }
        report.add(e.getKey() + ": " + result);
        if (!result.startsWith("ok")) {
          failed.add(e.getKey() + ": " + result);
        }
      }
      ReliabilityReport out = ReliabilityReport.fresh(reportFile);
      report.forEach(l -> out.line("%s", l));
      return failed;
    } finally {
      pool.shutdownNow();
    }
  }
}
