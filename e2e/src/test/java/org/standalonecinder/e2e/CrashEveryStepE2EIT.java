package org.standalonecinder.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.standalonecinder.api.ClaimAnnotations;
import org.standalonecinder.demo.LocalInstall;
import org.standalonecinder.demo.Waits;

/**
 * The provisioner killed after each step of provisioning, cloning, deleting and growing a claim, on
 * the real API server (whose PV controller binds and releases) and the real Cinder, then started
 * again. A first run of each operation without a death lists its steps; then every step gets a run
 * that dies right after it. After the restart: every claim is bound exactly once, every Cinder
 * volume of the run belongs to exactly one PV and is attached once, every CHAP Secret belongs to a
 * PV, no clone finalizer is left; and deleting what is left leaves nothing in Cinder or the
 * cluster.
 *
 * <p>Each run has its own provisioner name, cluster id and namespace, so runs go in parallel and
 * the installed provisioner leaves them alone. {@code -Dcrash.parallel} sets how many at once (two
 * a core).
 */
@ExtendWith(Installed.class)
@Order(7)
class CrashEveryStepE2EIT {

  enum Operation {
    PROVISION,
    CLONE,
    DELETE,
    EXPAND
  }

  private static final Duration SETTLE = Duration.ofSeconds(150);

  /** One run of an operation, on claims of its own. */
  private static final class Run implements CrashRuns.Run {
    final Operation op;
    final IsolatedClaims claims;

    Run(LocalInstall it, Operation op, int dieAfter) {
      this.op = op;
      claims =
          new IsolatedClaims(it, "crash-" + op.name().toLowerCase() + "-" + dieAfter, Map.of());
    }

    @Override
    public void prepare() throws InterruptedException {
      if (op == Operation.PROVISION) {
        return;
      }
      try (MortalProvisioner healthy = claims.provisioner(0)) {
        String name = op == Operation.CLONE ? "src" : "data";
        claims.claim(name, "");
        claims.settle(Set.of(name), SETTLE);
      }
    }

    @Override
    public void act() {
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
        case EXPAND ->
            assertThat(ClaimLifecycleE2EIT.request(claims.it, claims.ns, "data", "2Gi").ok())
                .isTrue();
      }
    }

    @Override
    public void settle() throws InterruptedException {
      claims.settle(
          switch (op) {
            case PROVISION -> Set.of("data");
            case CLONE -> Set.of("src", "copy");
            case DELETE -> Set.of();
            case EXPAND -> Set.of("data");
          },
          SETTLE);
      if (op == Operation.EXPAND) {
        // Grown as asked: the volume and the PV at 2 GiB, the claim waiting for its filesystem.
        Waits.await("data grown to 2 GiB", () -> claims.grown(claims.ns, "data", 2), SETTLE);
      }
    }

    @Override
    public void cleanUp() throws InterruptedException {
      claims.cleanUp(SETTLE);
    }

    @Override
    public MortalProvisioner provisioner(int dieAfter) {
      return claims.provisioner(dieAfter);
    }
  }

  @Test
  void killedAfterAnyStepTheNextProvisionerFinishesTheJobOnceAndLeavesNothing(LocalInstall it)
      throws Exception {
    CrashRuns<Operation> drill = new CrashRuns<>((op, n) -> new Run(it, op, n), SETTLE);
    List<String> failed =
        drill.failures(List.of(Operation.values()), CrashRuns.atOnce(2), "crash-every-step.txt");
    assertThat(failed).as("runs that did not end as they must").isEmpty();
  }
}
