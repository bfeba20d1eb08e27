package org.standalonecinder.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.standalonecinder.api.ClaimAnnotations;
import org.standalonecinder.demo.LocalInstall;

/**
 * The provisioner killed after each step of provisioning, cloning and deleting a claim, on the real
 * API server (whose PV controller binds and releases) and the real Cinder, then started again. A
 * first run of each operation without a death lists its steps; then every step gets a run that dies
 * right after it. After the restart: every claim is bound exactly once, every Cinder volume of the
 * run belongs to exactly one PV and is attached once, every CHAP Secret belongs to a PV, no clone
 * finalizer is left; and deleting what is left leaves nothing in Cinder or the cluster.
 *
 * <p>Each run has its own provisioner name, cluster id and namespace, so runs go in parallel and
 * the installed provisioner leaves them alone. {@code -Dcrash.parallel} sets how many at once (4).
 */
@ExtendWith(Installed.class)
@Order(7)
class CrashEveryStepE2EIT {

  enum Operation {
    PROVISION,
    CLONE,
    DELETE
  }

  private static final Duration SETTLE = Duration.ofSeconds(150);
  private final List<String> report = Collections.synchronizedList(new ArrayList<>());

  /** One run of an operation, on claims of its own. */
  private static final class Run {
    final Operation op;
    final IsolatedClaims claims;

    Run(LocalInstall it, Operation op, int dieAfter) {
      this.op = op;
      claims =
          new IsolatedClaims(it, "crash-" + op.name().toLowerCase() + "-" + dieAfter, Map.of());
    }

    /** What must be there before the operation: made by a provisioner that does not die. */
    void prepare() throws InterruptedException {
      if (op == Operation.PROVISION) {
        return;
      }
      try (MortalProvisioner healthy = claims.provisioner(0)) {
        String name = op == Operation.CLONE ? "src" : "data";
        claims.claim(name, "");
        claims.settle(Set.of(name), SETTLE);
      }
    }

    /** Starts the operation the provisioner is to carry out. */
    void act() {
      switch (op) {
        case PROVISION -> claims.claim("data", "");
        case CLONE -> claims.claim("copy", "\"" + ClaimAnnotations.CLONE_REQUEST + "\": src");
        case DELETE ->
            claims
                .it
                .admin
                .persistentVolumeClaims()
                .inNamespace(claims.ns)
                .withName("data")
                .delete();
      }
    }

    /** Waits until the operation is done and everything is as it must be. */
    void settle() throws InterruptedException {
      claims.settle(
          switch (op) {
            case PROVISION -> Set.of("data");
            case CLONE -> Set.of("src", "copy");
            case DELETE -> Set.of();
          },
          SETTLE);
    }
  }

  /** The steps of the operation when nothing dies; the run is checked like every other. */
  private List<String> steps(LocalInstall it, Operation op) throws Exception {
    Run run = new Run(it, op, 0);
    run.prepare();
    try (MortalProvisioner p = run.claims.provisioner(0)) {
      run.act();
      run.settle();
      List<String> steps = p.steps();
      report.add(op + " takes " + steps.size() + " steps: " + String.join(", ", steps));
      run.claims.cleanUp(SETTLE);
      return steps;
    }
  }

  /** Dies after step {@code n}, restarts, checks, cleans up; the step's name, or why it failed. */
  private String dieAndRestart(LocalInstall it, Operation op, int n, String step) throws Exception {
    Run run = new Run(it, op, n);
    run.prepare();
    long start = System.nanoTime();
    try (MortalProvisioner mortal = run.claims.provisioner(n)) {
      run.act();
      if (!mortal.awaitDeath(SETTLE)) {
        return "did not die: it took " + mortal.steps().size() + " steps " + mortal.steps();
      }
      if (!mortal.steps().get(n - 1).equals(step)) {
        // Steps taken in parallel may come in another order; the run is no less valid.
        report.add(op + " run " + n + " died after " + mortal.steps().get(n - 1));
      }
    }
    try (MortalProvisioner restarted = run.claims.provisioner(0)) {
      run.settle();
    }
    long ms = (System.nanoTime() - start) / 1_000_000;
    run.claims.cleanUp(SETTLE);
    return "ok in " + ms + " ms";
  }

  @Test
  void killedAfterAnyStepTheNextProvisionerFinishesTheJobOnceAndLeavesNothing(LocalInstall it)
      throws Exception {
    int parallel = Integer.getInteger("crash.parallel", 4);
    ExecutorService pool = Executors.newFixedThreadPool(parallel);
    Map<String, Future<String>> runs = new java.util.LinkedHashMap<>();
    try {
      for (Operation op : Operation.values()) {
        List<String> steps = steps(it, op);
        assertThat(steps).as(op + " takes steps").isNotEmpty();
        for (int n = 1; n <= steps.size(); n++) {
          int at = n;
          String step = steps.get(n - 1);
          runs.put(
              op + " dies after step " + n + " (" + step + ")",
              pool.submit(() -> dieAndRestart(it, op, at, step)));
        }
      }
      List<String> failed = new ArrayList<>();
      for (var e : runs.entrySet()) {
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
      ReliabilityReport out = ReliabilityReport.fresh("crash-every-step.txt");
      report.forEach(l -> out.line("%s", l));
      assertThat(failed).as("runs that did not end as they must").isEmpty();
    } finally {
      pool.shutdownNow();
    }
  }
}
