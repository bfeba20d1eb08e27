package org.standalonecinder.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.standalonecinder.api.ClaimAnnotations;
import org.standalonecinder.demo.LocalInstall;
import org.standalonecinder.demo.Waits;

/**
 * The real API server misbehaving under a provisioner at work (in-process, real Cinder): killed in
 * the middle of a burst of claims and started again (every watch dropped, every call refused for a
 * while), and claims changed by someone else all the time while they are cloned (the provisioner's
 * updates meet 409 Conflict). Each ends with every claim bound exactly once and nothing left once
 * the claims are deleted.
 */
@ExtendWith(Installed.class)
// Not while the node loss runs: the API server's outage would make the first node NotReady too.
@RunsAfter(NodeLossE2EIT.class)
@Order(10)
class KubeFaultsE2EIT {

  /** The API server is killed here: not while it is still deleting the hostile objects. */
  @org.junit.jupiter.api.BeforeAll
  static void quietApiServer(LocalInstall it) {
    HostileObjectsE2EIT.awaitDeletions(it);
  }

  private static final Duration SETTLE = Duration.ofMinutes(4);
  private static final ReliabilityReport REPORT = ReliabilityReport.fresh("kube-faults.txt");
  private static final int BURST = Integer.getInteger("faults.burst", 12);
  private static final Duration OUTAGE = Duration.ofSeconds(15);

  @Test
  void everyClaimIsBoundOnceAfterTheApiServerWasKilledMidBurst(LocalInstall it) throws Exception {
    IsolatedClaims claims = new IsolatedClaims(it, "kube-down", Map.of());
    Set<String> names =
        IntStream.range(0, BURST).mapToObj(i -> "c" + i).collect(Collectors.toSet());
    try (MortalProvisioner p = claims.provisioner(0)) {
      claims.claims(names, "");
      Waits.await("the first PVs", () -> claims.bound() >= 2, Duration.ofSeconds(90));
      int before = claims.bound();
      Path state = Path.of(it.kubeEnv.get("KUBE_LOCAL_KUBECONFIG")).getParent();
      long pid = Long.parseLong(Files.readString(state.resolve("run/kube-apiserver.pid")).strip());
      java.time.Instant killedAt = java.time.Instant.now();
      ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly);
      long killed = System.nanoTime();
      try {
        Thread.sleep(OUTAGE.toMillis());
      } finally {
        // start.sh starts again only what is not running: the API server, on the same etcd.
        Process start =
            new ProcessBuilder(
                    "bash",
                    it.root.resolve("dev/kube-local/start.sh").toString(),
                    "--state-dir",
                    state.toString())
                .redirectErrorStream(true)
                .start();
        String out = new String(start.getInputStream().readAllBytes());
        assertThat(start.waitFor()).as("kube-local start.sh: " + out).isZero();
      }
      long back = System.nanoTime();
      OUTAGES.add(new Outage(killedAt, java.time.Instant.now().plus(SYNCING)));
      claims.settle(names, SETTLE);
      REPORT.line(
          "kube-apiserver killed for %d s (back after %d ms): %d of %d claims bound before, all"
              + " %d bound once %d ms after it came back",
          OUTAGE.toSeconds(),
          (back - killed) / 1_000_000,
          before,
          BURST,
          BURST,
          (System.nanoTime() - back) / 1_000_000);
    }
    claims.cleanUp(SETTLE);
  }

  /**
   * How long a restarted API server may still refuse what RBAC allows: its authorizer answers
   * before its caches of Roles and bindings are filled.
   */
  static final Duration SYNCING = Duration.ofSeconds(15);

  /** From the kill to the restart plus {@link #SYNCING}. */
  record Outage(java.time.Instant from, java.time.Instant to) {
    boolean covers(java.time.Instant t) {
      return !t.isBefore(from) && !t.isAfter(to);
    }
  }

  /** This run's API server outages, for the RBAC audit (which runs last, in the same JVM). */
  static final java.util.List<Outage> OUTAGES = new java.util.concurrent.CopyOnWriteArrayList<>();

  /** Another client's change of a claim: a new value of its label {@code meddled}. */
  private static void meddle(LocalInstall it, String ns, String name, AtomicInteger changes) {
    it.admin
        .persistentVolumeClaims()
        .inNamespace(ns)
        .withName(name)
        .edit(
            x -> {
              Map<String, String> labels =
                  new java.util.HashMap<>(
                      x.getMetadata().getLabels() == null ? Map.of() : x.getMetadata().getLabels());
              labels.put("meddled", Integer.toString(changes.incrementAndGet()));
              x.getMetadata().setLabels(labels);
              return x;
            });
  }

  @Test
  void clonesAreMadeOnceWhileSomeoneElseKeepsChangingTheClaims(LocalInstall it) throws Exception {
    IsolatedClaims claims = new IsolatedClaims(it, "kube-conflict", Map.of());
    int clones = 6;
    AtomicBoolean stop = new AtomicBoolean();
    AtomicInteger changes = new AtomicInteger();
    Thread meddler =
        new Thread(
            () -> {
              while (!stop.get()) {
                for (var c :
                    it.admin.persistentVolumeClaims().inNamespace(claims.ns).list().getItems()) {
                  try {
                    meddle(it, claims.ns, c.getMetadata().getName(), changes);
                  } catch (RuntimeException e) {
                    // gone or changed meanwhile: the next round takes it again
                  }
                }
              }
            },
            "meddler");
    Set<String> names = new java.util.HashSet<>(Set.of("src"));
    try (MortalProvisioner p = claims.provisioner(0)) {
      claims.claim("src", "");
      claims.settle(Set.of("src"), SETTLE);
      // Another controller labelling every claim of the namespace, as fast as it can; whether it
      // lands between the provisioner's read and write is luck, so the first update of each claim
      // is also made to meet a change for certain.
      meddler.start();
      p.interfereWithFirstUpdates((ns, name) -> meddle(it, ns, name, changes));
      Set<String> copies =
          IntStream.range(0, clones).mapToObj(i -> "copy" + i).collect(Collectors.toSet());
      names.addAll(copies);
      claims.claims(copies, "\"" + ClaimAnnotations.CLONE_REQUEST + "\": src");
      claims.settle(names, SETTLE);
      stop.set(true);
      meddler.join();
      REPORT.line(
          "%d clones while another client changed the claims %d times: all bound once, no"
              + " finalizer left; the provisioner met %d 409 Conflicts (%d made certain, on %s)",
          clones, changes.get(), p.conflicts(), p.interfered().size(), p.interfered());
      assertThat(p.interfered()).as("claims changed under the provisioner's update").isNotEmpty();
      assertThat(p.conflicts())
          .as("the provisioner met a conflict for each")
          .isGreaterThanOrEqualTo(p.interfered().size());
    } finally {
      stop.set(true);
      meddler.join();
    }
    claims.cleanUp(SETTLE);
  }
}
