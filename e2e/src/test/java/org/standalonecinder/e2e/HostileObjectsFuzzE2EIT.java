package org.standalonecinder.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.PersistentVolumeBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaimBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.storage.StorageClassBuilder;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.standalonecinder.demo.Claims;
import org.standalonecinder.demo.LocalInstall;
import org.standalonecinder.demo.Waits;

/**
 * Hostile objects by the thousand through the real API server ({@code fuzz.objects}: 3,000 in CI,
 * 10,000 in dev/reliability.sh): claims of our classes and others with hostile names, annotations,
 * sizes, access modes and data sources; PVs that claim to be ours; StorageClasses with hostile
 * parameters. The claims are made in a namespace the policy exempts, so that the webhook's early
 * refusals do not keep them out: the provisioner meets what a cluster whose webhook was bypassed
 * could hold. Every claim of our classes is made so that nothing may be provisioned for it (refused
 * before Cinder is asked, or waiting for a node that never comes). Afterwards the provisioner still
 * provisions and deletes, no worker is lost, and its log holds no stack trace for each object.
 */
@ExtendWith(Installed.class)
// Late: thousands of claims keep kube-controller-manager busy for a while after it (their deletion
// goes on behind CinderFaultsE2EIT; KubeFaultsE2EIT waits for it). Before KubeFaultsE2EIT, after
// which the provisioner may have stopped.
@Order(8)
class HostileObjectsFuzzE2EIT {

  static final int OBJECTS = Integer.getInteger("fuzz.objects", 3_000);
  static final long SEED = Long.getLong("fuzz.seed", System.nanoTime());
  private static final String OURS = "openstack.org/standalone-cinder";

  @Test
  void thousandsOfHostileObjectsLeaveTheProvisionerProvisioning(LocalInstall it) throws Exception {
    it.kubectl.ok(ClaimLifecycleE2EIT.CLASSES, "apply", "-f", "-");
    it.kubectl.ok(CloneAttacksE2EIT.WFFC_CLASS, "apply", "-f", "-");
    String ns = it.namespace("e2e-fuzz");
    try {
      flood(it, ns);
    } finally {
      // Whatever failed: thousands of claims left behind keep kube-controller-manager busy for
      // the rest of the run, and the classes after would fail on its delay, not on theirs.
      it.admin.persistentVolumes().withLabel("e2e-fuzz", "true").delete();
      it.admin.storage().v1().storageClasses().withLabel("e2e-fuzz", "true").delete();
      HostileObjectsE2EIT.startDeleting(it, ns);
    }
  }

  private static void flood(LocalInstall it, String ns) throws Exception {
    Path log = it.work.resolve("logs").resolve("provisioner.log");
    long logFrom = Files.size(log);
    it.kubectl.ok(null, "label", "namespace", ns, "policy.standalone-cinder.io/exempt=true");
    Random random = new Random(SEED);
    List<HasMetadata> objects = new ArrayList<>();
    int pvs = OBJECTS / 25;
    int classes = OBJECTS / 50;
    for (int i = 0; i < pvs; i++) {
      objects.add(pv(random, i));
    }
    for (int i = 0; i < classes; i++) {
      objects.add(storageClass(random, i));
    }
    for (int i = objects.size(); i < OBJECTS; i++) {
      objects.add(claim(random, ns, i));
    }
    String before = Files.readString(it.policyFile);
    AtomicInteger refused = new AtomicInteger();
    long t0 = System.nanoTime();
    try {
      Files.writeString(
          it.policyFile,
          before
              + "exemptNamespaces:\n  matchLabels: {policy.standalone-cinder.io/exempt: \"true\"}\n");
      Waits.await(
          "the namespace exempt",
          () ->
              it.kubectl
                  .run(
                      Claims.yaml(ns, "probe", "e2e-cinder", "k8s.io/CloneRequest: a/b/c"),
                      "create",
                      "--dry-run=server",
                      "-f",
                      "-")
                  .ok(),
          Duration.ofSeconds(30));
      ExecutorService pool = Executors.newFixedThreadPool(8);
      try {
        List<Future<?>> done = new ArrayList<>();
        for (HasMetadata o : objects) {
          done.add(
              pool.submit(
                  () -> {
                    try {
                      it.admin.resource(o).create();
                    } catch (io.fabric8.kubernetes.client.KubernetesClientException e) {
                      // The API server's own validation refused it: that shape never exists.
                      refused.incrementAndGet();
                    }
                  }));
        }
        for (Future<?> f : done) {
          f.get(10, TimeUnit.MINUTES);
        }
      } finally {
        pool.shutdownNow();
      }
    } finally {
      Files.writeString(it.policyFile, before);
    }
    long createdMillis = (System.nanoTime() - t0) / 1_000_000;

    // Another tenant's claim, made while the provisioner's queue holds the flood: served in its
    // turn, not after thousands of keys of one namespace.
    double queued = metric(it, "standalone_cinder_queue_depth");
    String plain = it.namespace("e2e-after-fuzz");
    long t1 = System.nanoTime();
    it.kubectl.ok(Claims.yaml(plain, "plain", "e2e-cinder", ""), "create", "-f", "-");
    long namedMillis = HostileObjectsE2EIT.namedOurs(it, plain, "plain", t1);
    String uid =
        it.admin
            .persistentVolumeClaims()
            .inNamespace(plain)
            .withName("plain")
            .get()
            .getMetadata()
            .getUid();
    String pv = "pvc-" + uid;
    Waits.await(
        "the provisioner's PV for the plain claim",
        () -> it.admin.persistentVolumes().withName(pv).get() != null,
        Duration.ofSeconds(60));
    long pvMillis = (System.nanoTime() - t1) / 1_000_000 - namedMillis;
    it.claims.bound(plain, "plain");
    long boundMillis = (System.nanoTime() - t1) / 1_000_000;

    // The provisioner works through the flood: its queue empties, whatever each key did.
    Waits.await(
        "the provisioner's queue worked through",
        () -> metric(it, "standalone_cinder_queue_depth") < 10,
        Duration.ofSeconds(240));
    long drainedMillis = (System.nanoTime() - t1) / 1_000_000;

    // Every key comes again at each resync (30 s here): a refusal told already is not told again,
    // so the tenant's thousands of refused claims do not become thousands of events a resync.
    // A resync has passed once the refusals counted grow by a fifth of the objects (half the claims
    // are refused at each resync).
    long toldBefore = eventsBy(it, ns);
    double refusals = metric(it, "standalone_cinder_gave_up_total");
    assertThat(refusals).as("refusals counted").isLessThan(1e9);
    Waits.await(
        "a resync over the refused claims",
        () -> {
          double now = metric(it, "standalone_cinder_gave_up_total");
          return now < 1e9 && now > refusals + OBJECTS / 5;
        },
        Duration.ofSeconds(120));
    long toldInAResync = eventsBy(it, ns) - toldBefore;
    it.kubectl.ok(null, "delete", "pvc", "plain", "-n", plain, "--timeout=60s");
    Waits.await(
        "its PV deleted",
        () -> it.admin.persistentVolumes().withName(pv).get() == null,
        Duration.ofSeconds(90));
    HttpResponse<String> health = HostileObjectsE2EIT.provisioner(it, "/healthz");
    String logged = Files.readString(log);
    String since = logged.substring((int) Math.min(logFrom, logged.length()));
    long stackLines = since.lines().filter(l -> l.startsWith("\tat ")).count();
    System.out.printf(
        "HostileObjectsFuzzE2EIT (seed %d): %d objects (%d PVs, %d classes, the rest claims), %d"
            + " refused by the API server's validation, created in %.1f s; %.0f keys in the"
            + " provisioner's queue then; a plain claim of another namespace made then was named"
            + " ours by kube-controller-manager after %d ms, its PV made %d ms after that, bound"
            + " after %d ms in all; the queue worked through after %d ms; events told in the"
            + " next resync: %d; the claim deleted; /healthz: %s; stack trace lines logged: %d%n",
        SEED,
        OBJECTS,
        pvs,
        classes,
        refused.get(),
        createdMillis / 1000.0,
        queued,
        namedMillis,
        pvMillis,
        boundMillis,
        drainedMillis,
        toldInAResync,
        health.body().trim(),
        stackLines);
    assertThat(pvMillis).as("ms from the claim named ours to its PV").isLessThan(10_000);
    assertThat(toldInAResync).as("events told about the flood in one resync").isLessThan(50);
    assertThat(health.statusCode()).isEqualTo(200);
    assertThat(health.body())
        .isEqualTo(
            "ok: claims: 4 of 4 workers alive (0 replaced),"
                + " snapshots: 4 of 4 workers alive (0 replaced)\n");
    assertThat(stackLines).as("stack trace lines in the provisioner's log").isLessThan(100);
    assertThat(since).doesNotContain("StackOverflowError").doesNotContain("OutOfMemoryError");
  }

  /** How many events the provisioner told in the namespace. */
  private static long eventsBy(LocalInstall it, String ns) {
    return it.admin.events().v1().events().inNamespace(ns).list().getItems().stream()
        .filter(e -> OURS.equals(e.getReportingController()))
        .count();
  }

  /** The provisioner's metric's value (first sample), or a large number while it cannot be read. */
  private static double metric(LocalInstall it, String name) {
    try {
      String text = HostileObjectsE2EIT.provisioner(it, "/metrics").body();
      return text.lines()
          .filter(l -> l.startsWith(name + " ") || l.startsWith(name + "{"))
          .mapToDouble(l -> Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1)))
          .findFirst()
          .orElse(1e9);
    } catch (Exception e) {
      return 1e9;
    }
  }

  /** Strings a tenant might write where a name or a value is read. */
  private static String hostile(Random r) {
    return switch (r.nextInt(9)) {
      case 0 -> "a" + ".a".repeat(1 + r.nextInt(60_000));
      case 1 -> "x".repeat(1 + r.nextInt(2_000));
      case 2 -> "ünïcødé/" + "\u202e" + "name";
      case 3 -> "a/b/c";
      case 4 -> "";
      case 5 -> "../../etc/passwd";
      case 6 -> "-o-" + r.nextInt();
      case 7 -> "victim/" + "d".repeat(254);
      default -> "ns-" + r.nextInt(1000) + "/src-" + r.nextInt(1000);
    };
  }

  /**
   * A claim: of our Immediate class only in shapes refused before Cinder is asked; of our
   * WaitForFirstConsumer class waiting for a node that does not exist; of another provisioner's
   * class, or none, with annotations that claim otherwise.
   */
  private static HasMetadata claim(Random r, String ns, int i) {
    Map<String, String> ann = new HashMap<>();
    String className;
    List<String> modes = List.of("ReadWriteOnce");
    String size = "1Gi";
    String volumeMode = "Filesystem";
    Quantity limit = null;
    PersistentVolumeClaimBuilder b = new PersistentVolumeClaimBuilder();
    switch (i % 6) {
      case 0 -> {
        className = "e2e-cinder";
        modes = List.of("ReadWriteMany"); // refused: a filesystem shared read-write
        ann.put("k8s.io/CloneRequest", hostile(r));
      }
      case 1 -> {
        className = "e2e-cinder";
        size = (65_537 + r.nextInt(1 << 20)) + "Gi"; // past the largest volume
        ann.put("standalone-cinder.io/clone-token", hostile(r));
      }
      case 2 -> {
        className = "e2e-cinder";
        size = "3Gi";
        limit = new Quantity("2500Mi"); // rounds up past its limit: refused
        b.withNewSpec()
            .withNewDataSource()
            .withApiGroup(r.nextBoolean() ? "" : "x.example.com")
            .withKind(r.nextBoolean() ? "PersistentVolumeClaim" : "Weird" + r.nextInt(9))
            .withName("src-" + r.nextInt(100))
            .endDataSource()
            .endSpec();
      }
      case 3 -> {
        className = "e2e-later"; // waits for a node; one that does not exist is named
        ann.put("volume.kubernetes.io/selected-node", "no-such-node-" + r.nextInt(1_000_000));
        ann.put("k8s.io/CloneRequest", hostile(r));
      }
      case 4 -> {
        className = "e2e-foreign-" + r.nextInt(5); // another provisioner's, or none at all
        ann.put("volume.kubernetes.io/storage-provisioner", OURS);
        ann.put("volume.beta.kubernetes.io/storage-provisioner", OURS);
        ann.put("k8s.io/CloneOf", hostile(r));
      }
      default -> {
        className = "";
        ann.put("volume.kubernetes.io/storage-provisioner", OURS);
        ann.put("standalone-cinder.io/clone-grant", hostile(r));
        volumeMode = r.nextBoolean() ? "Block" : "Filesystem";
      }
    }
    ann.put("e2e.example.com/padding", "p".repeat(r.nextInt(4_096)));
    var spec =
        b.withNewMetadata()
            .withName("f-" + i + "-" + Integer.toHexString(r.nextInt()))
            .withNamespace(ns)
            .withAnnotations(ann)
            .addToLabels("e2e-fuzz", "true")
            .endMetadata()
            .editOrNewSpec()
            .withStorageClassName(className)
            .withAccessModes(modes)
            .withVolumeMode(volumeMode)
            .withNewResources()
            .addToRequests("storage", new Quantity(size));
    if (limit != null) {
      spec.addToLimits("storage", limit);
    }
    return spec.endResources().endSpec().build();
  }

  /**
   * A PV that says it is ours (or almost), bound to nothing of this test's, of a class no claim
   * asks for (so that Kubernetes binds it to nobody), some of them already Released.
   */
  private static HasMetadata pv(Random r, int i) {
    Map<String, String> ann = new HashMap<>();
    ann.put("pv.kubernetes.io/provisioned-by", r.nextBoolean() ? OURS : hostile(r));
    ann.put(
        "cinderVolumeId", r.nextBoolean() ? java.util.UUID.randomUUID().toString() : hostile(r));
    if (r.nextBoolean()) {
      ann.put("standaloneCinderProvisionerIdentity", hostile(r));
    }
    return new PersistentVolumeBuilder()
        .withNewMetadata()
        .withName("e2e-fuzz-pv-" + i)
        .withAnnotations(ann)
        .addToLabels("e2e-fuzz", "true")
        .endMetadata()
        .withNewSpec()
        .withStorageClassName("e2e-fuzz-none")
        .withCapacity(Map.of("storage", new Quantity((1 + r.nextInt(100)) + "Gi")))
        .withAccessModes("ReadWriteOnce")
        .withPersistentVolumeReclaimPolicy(r.nextBoolean() ? "Delete" : "Retain")
        .withNewClaimRef()
        .withNamespace("e2e-fuzz-nobody")
        .withName("gone-" + i)
        .withUid(java.util.UUID.randomUUID().toString())
        .endClaimRef()
        .withNewIscsi()
        .withTargetPortal("127.0.0.1:3260")
        .withIqn("iqn.2026-11.org.example:fuzz-" + i)
        .withLun(0)
        .endIscsi()
        .endSpec()
        .build();
  }

  /** A class of another provisioner's name with hostile parameters (ours would be judged). */
  private static HasMetadata storageClass(Random r, int i) {
    Map<String, String> params = new HashMap<>();
    params.put("type", hostile(r));
    params.put("smartclone", r.nextBoolean() ? "yes" : "true");
    params.put("maxSizeGiB", r.nextBoolean() ? "0" : hostile(r));
    return new StorageClassBuilder()
        .withNewMetadata()
        .withName("e2e-foreign-" + i)
        .addToLabels("e2e-fuzz", "true")
        .endMetadata()
        .withProvisioner("example.com/fuzz-" + i)
        .withParameters(params)
        .build();
  }
}
