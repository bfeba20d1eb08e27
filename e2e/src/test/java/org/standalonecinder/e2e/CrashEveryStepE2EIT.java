package org.standalonecinder.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Secret;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.standalonecinder.api.ClaimRef;
import org.standalonecinder.demo.LocalInstall;
import org.standalonecinder.provisioner.cinder.Attachment;
import org.standalonecinder.provisioner.cinder.Volume;
import org.standalonecinder.provisioner.provision.Names;
import org.standalonecinder.provisioner.provision.ProvisionerSettings;

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

  /** One run: its names, and the state it checks. */
  private final class Run {
    final Operation op;
    final int dieAfter;
    final String tag;
    final String ns;
    final String className;
    final ProvisionerSettings settings;
    final LocalInstall it;

    Run(LocalInstall it, Operation op, int dieAfter) {
      this.it = it;
      this.op = op;
      this.dieAfter = dieAfter;
      String id = UUID.randomUUID().toString().substring(0, 6);
      tag = op.name().toLowerCase() + "-" + dieAfter + "-" + id;
      ns = it.namespace("crash-" + op.name().toLowerCase() + "-" + dieAfter);
      className = "crash-" + tag;
      settings =
          new ProvisionerSettings(
              "crash.e2e.standalone-cinder.test/" + tag,
              "crash-" + tag,
              "crash-" + tag,
              "iqn.2026-11.org.standalonecinder:crash-" + tag,
              "crash-" + tag,
              "127.0.0.1",
              ns,
              false);
      it.kubectl.ok(
          """
          apiVersion: storage.k8s.io/v1
          kind: StorageClass
          metadata: {name: %s}
          provisioner: %s
          parameters: {smartclone: "true"}
          reclaimPolicy: Delete
          """
              .formatted(className, settings.provisionerName()),
          "apply",
          "-f",
          "-");
    }

    MortalProvisioner provisioner(int dieAfter) {
      return new MortalProvisioner(it.admin.getConfiguration(), it.cinder, settings, dieAfter);
    }

    void claim(String name, String annotations) {
      it.kubectl.ok(LocalInstall.claimYaml(ns, name, className, annotations), "apply", "-f", "-");
    }

    /** What must be there before the operation: made by a provisioner that does not die. */
    void prepare() throws Exception {
      if (op == Operation.PROVISION) {
        return;
      }
      try (MortalProvisioner healthy = provisioner(0)) {
        claim(op == Operation.CLONE ? "src" : "data", "");
        settle(op == Operation.CLONE ? Set.of("src") : Set.of("data"));
      }
    }

    /** Starts the operation the provisioner is to carry out. */
    void act() {
      switch (op) {
        case PROVISION -> claim("data", "");
        case CLONE -> claim("copy", "\"" + ClaimRef.CLONE_REQUEST + "\": src");
        case DELETE -> it.admin.persistentVolumeClaims().inNamespace(ns).withName("data").delete();
      }
    }

    Set<String> claimsAfter() {
      return switch (op) {
        case PROVISION -> Set.of("data");
        case CLONE -> Set.of("src", "copy");
        case DELETE -> Set.of();
      };
    }

    /**
     * What is wrong with the claims {@code expected} of this run and everything made for them;
     * empty when all is as it must be.
     */
    List<String> problems(Set<String> expected) {
      List<String> p = new ArrayList<>();
      List<PersistentVolumeClaim> claims =
          it.admin.persistentVolumeClaims().inNamespace(ns).list().getItems();
      List<PersistentVolume> pvs =
          it.admin.persistentVolumes().list().getItems().stream()
              .filter(pv -> pv.getSpec().getClaimRef() != null)
              .filter(pv -> ns.equals(pv.getSpec().getClaimRef().getNamespace()))
              .toList();
      List<Volume> volumes =
          it.cinder.findVolumes(null, Map.of(Names.META_CLUSTER, settings.clusterId()));
      List<Secret> secrets =
          it.admin
              .secrets()
              .inNamespace(ns)
              .withLabel(Names.LABEL_MANAGED_BY, Names.MANAGED_BY)
              .list()
              .getItems();

      Set<String> names =
          claims.stream().map(c -> c.getMetadata().getName()).collect(Collectors.toSet());
      if (!names.equals(expected)) {
        p.add("claims " + new TreeSet<>(names) + ", want " + new TreeSet<>(expected));
      }
      for (PersistentVolumeClaim c : claims) {
        String name = c.getMetadata().getName();
        if (c.getStatus() == null || !"Bound".equals(c.getStatus().getPhase())) {
          p.add(name + " is not Bound");
        }
        List<String> finalizers =
            c.getMetadata().getFinalizers() == null ? List.of() : c.getMetadata().getFinalizers();
        finalizers.stream()
            .filter(f -> f.startsWith(Names.CLONE_FINALIZER_PREFIX))
            .forEach(f -> p.add(name + " still has " + f));
      }
      if (pvs.size() != expected.size()) {
        p.add(pvs.size() + " PVs for " + expected.size() + " claims");
      }
      Set<String> pvVolumes = new TreeSet<>();
      for (PersistentVolume pv : pvs) {
        String pvName = pv.getMetadata().getName();
        Map<String, String> ann = pv.getMetadata().getAnnotations();
        String volumeId = ann.get(Names.ANN_VOLUME_ID);
        if (!pvVolumes.add(volumeId)) {
          p.add("volume " + volumeId + " is in two PVs");
        }
        if (pv.getStatus() == null || !"Bound".equals(pv.getStatus().getPhase())) {
          p.add(pvName + " is not Bound");
        }
        String secret = pv.getSpec().getIscsi().getSecretRef().getName();
        if (secrets.stream().noneMatch(s -> s.getMetadata().getName().equals(secret))) {
          p.add(pvName + " names Secret " + secret + ", which is missing");
        }
        List<String> attachments =
            it.cinder.listAttachments(volumeId).stream().map(Attachment::id).toList();
        if (!attachments.equals(List.of(ann.get(Names.ANN_ATTACHMENT)))) {
          p.add(
              "volume "
                  + volumeId
                  + " has attachments "
                  + attachments
                  + ", its PV "
                  + ann.get(Names.ANN_ATTACHMENT));
        }
      }
      Set<String> cinderVolumes =
          volumes.stream().map(Volume::id).collect(Collectors.toCollection(TreeSet::new));
      if (!cinderVolumes.equals(pvVolumes)) {
        p.add("Cinder has volumes " + cinderVolumes + ", the PVs " + pvVolumes);
      }
      volumes.stream()
          .filter(v -> !v.status().equals("in-use"))
          .forEach(v -> p.add("volume " + v.id() + " is " + v.status()));
      Set<String> pvNames =
          pvs.stream().map(pv -> pv.getMetadata().getName()).collect(Collectors.toSet());
      for (Secret s : secrets) {
        String owner = s.getMetadata().getLabels().get(Names.LABEL_PV);
        if (!pvNames.contains(owner)) {
          p.add("Secret " + s.getMetadata().getName() + " belongs to no PV (" + owner + ")");
        }
      }
      return p;
    }

    /** Deletes what is left with a provisioner that does not die, and checks nothing remains. */
    void cleanUp() throws Exception {
      try (MortalProvisioner healthy = provisioner(0)) {
        it.admin.persistentVolumeClaims().inNamespace(ns).delete();
        settle(Set.of());
      }
      it.admin.storage().v1().storageClasses().withName(className).delete();
      it.admin.namespaces().withName(ns).delete();
    }

    /** Waits until {@link #problems} finds none; fails with the last ones it found. */
    void settle(Set<String> expected) throws InterruptedException {
      long end = System.nanoTime() + SETTLE.toNanos();
      List<String> last = problems(expected);
      while (!last.isEmpty()) {
        if (System.nanoTime() > end) {
          throw new AssertionError(
              tag + ": still wrong after " + SETTLE.toSeconds() + " s: " + last);
        }
        Thread.sleep(250);
        last = problems(expected);
      }
    }
  }

  /** The steps of the operation when nothing dies; the run is checked like every other. */
  private List<String> steps(LocalInstall it, Operation op) throws Exception {
    Run run = new Run(it, op, 0);
    run.prepare();
    try (MortalProvisioner p = run.provisioner(0)) {
      run.act();
      run.settle(run.claimsAfter());
      List<String> steps = p.steps();
      report.add(op + " takes " + steps.size() + " steps: " + String.join(", ", steps));
      run.cleanUp();
      return steps;
    }
  }

  /** Dies after step {@code n}, restarts, checks, cleans up; the step's name, or why it failed. */
  private String dieAndRestart(LocalInstall it, Operation op, int n, String step) throws Exception {
    Run run = new Run(it, op, n);
    run.prepare();
    long start = System.nanoTime();
    try (MortalProvisioner mortal = run.provisioner(n)) {
      run.act();
      if (!mortal.awaitDeath(SETTLE)) {
        return "did not die: it took " + mortal.steps().size() + " steps " + mortal.steps();
      }
      if (!mortal.steps().get(n - 1).equals(step)) {
        // Steps taken in parallel may come in another order; the run is no less valid.
        report.add(op + " run " + n + " died after " + mortal.steps().get(n - 1));
      }
    }
    try (MortalProvisioner restarted = run.provisioner(0)) {
      run.settle(run.claimsAfter());
    }
    long ms = (System.nanoTime() - start) / 1_000_000;
    run.cleanUp();
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
      write();
      assertThat(failed).as("runs that did not end as they must").isEmpty();
    } finally {
      pool.shutdownNow();
    }
  }

  private void write() throws IOException {
    Path out = Path.of("target", "reliability", "crash-every-step.txt");
    Files.createDirectories(out.getParent());
    Files.write(out, report);
    report.forEach(System.out::println);
  }
}
