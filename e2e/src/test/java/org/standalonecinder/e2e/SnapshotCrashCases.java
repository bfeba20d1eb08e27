package org.standalonecinder.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.standalonecinder.demo.LocalInstall;
import org.standalonecinder.demo.Waits;
import org.standalonecinder.provisioner.cinder.Backup;
import org.standalonecinder.provisioner.cinder.Snapshot;
import org.standalonecinder.provisioner.provision.Names;

/**
 * The provisioner killed after each step of taking a snapshot, restoring a claim from one and
 * deleting one (each through a class of Cinder snapshots and one of Cinder backups), with the
 * suite's snapshot-controller stand-in, the real API server and the real Cinder, then started again
 * (as {@link CrashEveryStepE2EIT} does for claims). After the restart: the snapshot is ready (or
 * gone) exactly once, Cinder holds exactly the snapshots that remain, once each, and every claim is
 * bound exactly once; deleting what is left leaves nothing in Cinder or the cluster.
 */
abstract class SnapshotCrashCases {

  /** What a run does, through a class of snapshots or of backups ({@code type: backup}). */
  enum Operation {
    SNAPSHOT(false),
    RESTORE(false),
    UNSNAPSHOT(false),
    BACKUP(true),
    RESTORE_BACKUP(true),
    UNBACKUP(true);

    final boolean backups;

    Operation(boolean backups) {
      this.backups = backups;
    }

    boolean takes() {
      return this == SNAPSHOT || this == BACKUP;
    }

    boolean restores() {
      return this == RESTORE || this == RESTORE_BACKUP;
    }

    boolean deletes() {
      return this == UNSNAPSHOT || this == UNBACKUP;
    }

    /**
     * Whether a death after step {@code n} is drilled. A restore is a provision but for its first
     * step, the volume made from the snapshot (or backup: then also the identity written back over
     * what Cinder's restore gave it); the provision's other steps are {@link
     * CrashEveryStepE2EIT}'s, drilled there. Through a backup class only the steps of its own are:
     * the Cinder backup made or deleted; the rest is the snapshot runs' code, drilled there.
     */
    boolean drilledAfter(int n, String step) {
      if (restores()) {
        return n <= (backups ? 2 : 1);
      }
      return !backups || step.contains("Backup");
    }
  }

  // Under the node suite's load a restored claim's attachment alone took 20 s and more.
  private static final Duration SETTLE = Duration.ofSeconds(240);

  @BeforeAll
  static void theClusterServesSnapshots(LocalInstall it) {
    // Only the check: every run makes its own classes.
    SnapshotCases.requireSnapshotController(it);
  }

  /** One run of an operation, on claims, a snapshot class and a provisioner of its own. */
  private static final class Run implements CrashRuns.Run {
    final Operation op;
    final IsolatedClaims claims;
    final String snapshotClass;

    Run(LocalInstall it, Operation op, int dieAfter) {
      this.op = op;
      claims =
          new IsolatedClaims(
              it,
              "snapcrash-" + op.name().toLowerCase().replace('_', '-') + "-" + dieAfter,
              Map.of());
      snapshotClass = "snap-" + claims.ns;
      it.kubectl.ok(
          SnapshotObjects.snapshotClass(
              snapshotClass, claims.settings.provisionerName(), op.backups),
          "apply",
          "-f",
          "-");
    }

    LocalInstall it() {
      return claims.it;
    }

    void snapshot() {
      it().kubectl
          .ok(
              SnapshotObjects.snapshot(claims.ns, "snap", "data", snapshotClass),
              "apply",
              "-f",
              "-");
    }

    @Override
    public void prepare() throws InterruptedException {
      try (MortalProvisioner healthy = claims.provisioner(0)) {
        claims.claim("data", "");
        claims.settle(Set.of("data"), SETTLE);
        if (!op.takes()) {
          snapshot();
          SnapshotObjects.ready(it(), claims.ns, "snap");
        }
      }
    }

    @Override
    public void act() {
      if (op.takes()) {
        snapshot();
      } else if (op.restores()) {
        it().kubectl
            .ok(
                SnapshotObjects.restored(claims.ns, "copy", "1Gi", "snap")
                    .replace("e2e-cinder", claims.className),
                "apply",
                "-f",
                "-");
      } else {
        it().admin
            .genericKubernetesResources(SnapshotObjects.SNAPSHOTS)
            .inNamespace(claims.ns)
            .withName("snap")
            .delete();
      }
    }

    /** The names of the Cinder snapshots (or backups) of this run's provisioner. */
    List<String> cinderSnapshots() {
      Map<String, String> ours = Map.of(Names.META_CLUSTER, claims.settings.clusterId());
      return op.backups
          ? it().cinder.findBackups(null, ours).stream().map(Backup::name).toList()
          : it().cinder.findSnapshots(null, ours).stream().map(Snapshot::name).toList();
    }

    @Override
    public void settle() throws InterruptedException {
      if (op.takes()) {
        SnapshotObjects.ready(it(), claims.ns, "snap");
      } else if (op.restores()) {
        claims.settle(Set.of("data", "copy"), SETTLE);
      } else {
        Waits.await(
            "the snapshot gone",
            () -> SnapshotObjects.get(it(), claims.ns, "snap") == null,
            SETTLE);
      }
      int expected = op.deletes() ? 0 : 1;
      Waits.await(
          expected + " Cinder snapshot(s) of the run",
          () -> cinderSnapshots().size() == expected,
          SETTLE);
      if (expected == 1) {
        GenericKubernetesResource s = SnapshotObjects.get(it(), claims.ns, "snap");
        String content = "snapcontent-" + s.getMetadata().getUid();
        assertThat(cinderSnapshots().get(0)).isEqualTo(content);
      }
      claims.settle(op.restores() ? Set.of("data", "copy") : Set.of("data"), SETTLE);
    }

    /** Deletes the snapshot and the claims with a provisioner that does not die. */
    @Override
    public void cleanUp() throws InterruptedException {
      try (MortalProvisioner healthy = claims.provisioner(0)) {
        it().admin
            .genericKubernetesResources(SnapshotObjects.SNAPSHOTS)
            .inNamespace(claims.ns)
            .withName("snap")
            .delete();
        Waits.await("no Cinder snapshot of the run", () -> cinderSnapshots().isEmpty(), SETTLE);
        // Its content's finalizer goes at the look after Cinder's delete: by this provisioner.
        Waits.await(
            "the snapshot gone",
            () -> SnapshotObjects.get(it(), claims.ns, "snap") == null,
            SETTLE);
      }
      claims.cleanUp(SETTLE);
      it().admin
          .genericKubernetesResources(SnapshotObjects.CLASSES)
          .withName(snapshotClass)
          .delete();
    }

    @Override
    public MortalProvisioner provisioner(int dieAfter) {
      return claims.provisioner(dieAfter);
    }
  }

  @Test
  void killedAfterAnyStepTheNextProvisionerFinishesTheSnapshotOnceAndLeavesNothing(LocalInstall it)
      throws Exception {
    CrashRuns<Operation> drill = new CrashRuns<>((op, n) -> new Run(it, op, n), SETTLE);
    List<String> failed =
        drill.failures(
            List.of(Operation.values()),
            // Runs of two to eight steps, mostly waiting for the snapshot-controller stand-in.
            CrashRuns.atOnce(4),
            "snapshot-crash-every-step.txt",
            (op, n, step) -> op.drilledAfter(n, step));
    assertThat(failed).as("runs that did not end as they must").isEmpty();
  }
}
