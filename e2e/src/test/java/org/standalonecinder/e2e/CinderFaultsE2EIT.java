package org.standalonecinder.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.standalonecinder.demo.LocalInstall;
import org.standalonecinder.demo.Waits;
import org.standalonecinder.provisioner.cinder.CinderClient;
import org.standalonecinder.provisioner.cinder.openstack.OpenStackCinderClient;
import org.standalonecinder.provisioner.cinder.openstack.config.CloudConfigLoader;
import org.standalonecinder.provisioner.controller.EventRecorder;
import org.standalonecinder.provisioner.provision.Names;

/**
 * The real local Cinder misbehaving under a provisioner at work (in-process, on the real API
 * server): its API killed or frozen in the middle of a burst of claims and started again, a volume
 * that goes to {@code error}, a quota that runs out and is raised. Each ends with every claim bound
 * once or refused with a clear event, and nothing of the claims left in Cinder or the cluster once
 * they are deleted.
 */
@ExtendWith(Installed.class)
// After the hostile objects' classes, once their namespaces are gone (quietMachine).
// Not while the node loss runs: it needs Cinder to make and delete its volume.
@RunsAfter(NodeLossE2EIT.class)
@Order(9)
class CinderFaultsE2EIT {

  private static final Duration SETTLE = Duration.ofMinutes(4);
  private static final ReliabilityReport REPORT = ReliabilityReport.fresh("cinder-faults.txt");
  private static final int BURST = Integer.getInteger("faults.burst", 12);

  /**
   * With {@code DEV_TEST_AT_ONCE=1}, dev/test.sh runs the other modules' tests beside this suite,
   * and theirs use the local Cinder too: Cinder goes down only once they have ended (their status
   * file, {@code -Dothers.status}; whether they passed is theirs to say). Without one, nothing else
   * runs beside.
   */
  /**
   * Not beside kube-controller-manager's deletion of the hostile objects' namespaces: deleting a
   * thousand claims of 200 KiB (and the fuzz namespace) holds this 2-core machine for 11 to 15
   * minutes, and the rows' Cinder client times out after 5 s; in two clean-clone CI runs the first
   * row's claims never got a PV beside it (its volumes made, their steps timing out).
   */
  @BeforeAll
  static void quietMachine(LocalInstall it) {
    HostileObjectsE2EIT.awaitDeletions(it);
  }

  @BeforeAll
  static void theOtherModulesAreDoneWithCinder() {
    String status = System.getProperty("others.status", "");
    if (!status.isEmpty()) {
      long t = System.nanoTime();
      PodDeployment.awaitStatusFile(
          Path.of(status),
          "the other modules' tests to end (dev/test.sh; their console: target/others-output.log)");
      System.out.printf(
          "CinderFaultsE2EIT: waited %d s for the other modules' tests%n",
          (System.nanoTime() - t) / 1_000_000_000);
    }
  }

  /** How the API goes away. */
  enum Outage {
    /** SIGKILL: connections refused until it is started again. */
    KILLED("stop", "start", 20),
    /**
     * SIGSTOP: connections accepted and never answered, so every call times out. Longer than the 20
     * s a read may take with its repeats (4 tries of the 5 s timeout): a shorter outage can fall
     * wholly inside the reads under way, and then no call fails and nothing is to be told.
     */
    FROZEN("pause", "resume", 30);

    final String down;
    final String up;
    final Duration length;

    Outage(String down, String up, int seconds) {
      this.down = down;
      this.up = up;
      this.length = Duration.ofSeconds(seconds);
    }
  }

  @ParameterizedTest(name = "cinder-api {0} in a burst of claims")
  @EnumSource(Outage.class)
  void everyClaimIsBoundOnceWhenCinderComesBack(Outage outage, LocalInstall it) throws Exception {
    IsolatedClaims claims =
        new IsolatedClaims(it, "cinder-" + outage.name().toLowerCase(), Map.of());
    Set<String> names =
        IntStream.range(0, BURST).mapToObj(i -> "c" + i).collect(Collectors.toSet());
    long back;
    try (CinderClient cinder = client(it, 5);
        MortalProvisioner p = claims.provisioner(0, cinder)) {
      claims.claims(names, "");
      // Before any outage, so not what the row measures: the first row runs beside
      // kube-controller-manager's deletion of HostileObjectsE2EIT's thousand fat claims and its
      // fuzz namespace, which holds the binder (the only one that names claims ours) until they
      // are gone: 647 s and 870 s from their start in a clean-clone CI run.
      Waits.await("the first PVs", () -> claims.bound() >= 2, Duration.ofSeconds(900));
      int before = claims.bound();
      service(it, outage.down);
      try {
        Thread.sleep(outage.length.toMillis());
      } finally {
        service(it, outage.up);
      }
      back = System.nanoTime();
      // The provisioner's client held connections to the API that is gone: its first call after
      // the restart still gets through (a GET is tried again on a fresh connection).
      assertThat(cinder.findVolumes(null, Map.of(Names.META_CLUSTER, claims.settings.clusterId())))
          .isNotNull();
      List<String> stuck = leftReserved(it, claims);
      claims.settle(names, SETTLE);
      long ms = (System.nanoTime() - back) / 1_000_000;
      List<String> failed = claims.events(EventRecorder.PROVISIONING_FAILED);
      REPORT.line(
          "cinder-api %s for %d s: %d of %d claims bound before, all %d bound once %d ms after it"
              + " came back; %d ProvisioningFailed events, e.g. \"%s\"; volumes Cinder left"
              + " reserved without an attachment, released by the provisioner: %s; volumes never"
              + " scheduled, replaced by the provisioner: %d",
          outage,
          outage.length.toSeconds(),
          before,
          BURST,
          BURST,
          ms,
          failed.size(),
          failed.isEmpty() ? "" : failed.get(0),
          stuck,
          failed.stream().filter(m -> m.contains("never scheduled")).count());
      assertThat(failed).as("the outage is told on the claims").isNotEmpty();
      assertThat(failed).allMatch(m -> m.contains("Cinder") || m.contains("cinder"));
    }
    claims.cleanUp(SETTLE);
  }

  @Test
  void volumesThatGoToErrorAreDeletedAndTheClaimIsTriedAgainWithBackoff(LocalInstall it)
      throws Exception {
    String type = "e2e-nowhere-" + UUID.randomUUID().toString().substring(0, 6);
    admin(it, "POST", "/types", typeBody(type, "nowhere"));
    try {
      IsolatedClaims claims = new IsolatedClaims(it, "cinder-error", Map.of("type", type));
      try (MortalProvisioner p = claims.provisioner(0)) {
        claims.claim("data", "");
        // Each attempt's volume goes to error and is deleted before the next is made: never
        // more than one at a time, whatever the number of attempts.
        int most = 0;
        long end = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (System.nanoTime() < end) {
          most = Math.max(most, volumesOf(it, claims).size());
          Thread.sleep(100);
        }
        List<String> failed = claims.events(EventRecorder.PROVISIONING_FAILED);
        REPORT.line(
            "volumes of type %s (no backend) for 20 s: %d attempts, at most %d volume at a time;"
                + " the claim told \"%s\"",
            type, failed.size(), most, failed.isEmpty() ? "" : failed.get(0));
        assertThat(failed).as("tried again").hasSizeGreaterThanOrEqualTo(2);
        assertThat(failed).allMatch(m -> m.contains("went to status error"));
        assertThat(most).as("volumes in error at once").isLessThanOrEqualTo(1);
        assertThat(
                it.admin
                    .persistentVolumeClaims()
                    .inNamespace(claims.ns)
                    .withName("data")
                    .get()
                    .getStatus()
                    .getPhase())
            .isEqualTo("Pending");
      }
      // Deleting the claim stops the attempts and leaves no volume behind.
      claims.cleanUp(SETTLE);
    } finally {
      admin(it, "DELETE", "/types/" + typeId(it, type), null);
    }
  }

  /**
   * The volumes of these claims that are {@code reserved} with no attachment: what a cinder-api
   * killed inside its attachment reservation leaves (the volume set to {@code reserved}, the
   * attachment row not yet written: two statements, not one transaction). The provisioner resets
   * them after a grace; the report says how many there were.
   */
  private static List<String> leftReserved(LocalInstall it, IsolatedClaims claims) {
    return volumesOf(it, claims).stream()
        .filter(v -> v.status().equals("reserved"))
        .filter(v -> it.cinder.listAttachments(v.id()).isEmpty())
        .map(org.standalonecinder.provisioner.cinder.Volume::id)
        .toList();
  }

  /**
   * The state a cinder-api killed mid-reservation leaves, made on purpose: the provisioner dies
   * right after creating the volume, an admin sets the volume {@code reserved} (no attachment), and
   * the next provisioner finds it so. It must reset it after the grace and bind the claim to that
   * same volume, with no second one.
   */
  @Test
  void aVolumeCinderLeftReservedIsResetAndTheClaimBoundToIt(LocalInstall it) throws Exception {
    IsolatedClaims claims = new IsolatedClaims(it, "cinder-reserved", Map.of());
    try (MortalProvisioner mortal = claims.provisioner(1)) {
      claims.claim("data", "");
      assertThat(mortal.awaitDeath(SETTLE)).as("died after creating the volume").isTrue();
    }
    Waits.await(
        "the volume",
        () -> volumesOf(it, claims).stream().anyMatch(v -> v.status().equals("available")),
        Duration.ofSeconds(60));
    String volume = volumesOf(it, claims).get(0).id();
    admin(
        it,
        "POST",
        "/volumes/" + volume + "/action",
        "{\"os-reset_status\": {\"status\": \"reserved\"}}");
    assertThat(leftReserved(it, claims)).containsExactly(volume);
    long start = System.nanoTime();
    try (MortalProvisioner restarted = claims.provisioner(0)) {
      claims.settle(Set.of("data"), SETTLE);
      List<String> steps = restarted.steps();
      long ms = (System.nanoTime() - start) / 1_000_000;
      REPORT.line(
          "a volume left reserved without an attachment: reset by the next provisioner and its"
              + " claim bound to it %d ms after it started (grace 15 s); its steps: %s",
          ms, steps);
      assertThat(steps).startsWith("cinder resetToAvailable");
      assertThat(ms).as("waited the grace first").isGreaterThanOrEqualTo(15_000);
    }
    assertThat(it.cinder.getVolume(volume)).get().extracting(v -> v.status()).isEqualTo("in-use");
    claims.cleanUp(SETTLE);
  }

  /**
   * The state a cinder-api killed between a new volume's row and its cast to the scheduler leaves,
   * made on purpose: with the scheduler stopped, a provisioner creates the volume and dies; the
   * cast waiting in the scheduler's queue is dropped, and the scheduler started again. The volume
   * is {@code creating} for good with no host. The next provisioner must delete it after its grace
   * and bind the claim to a new volume, with nothing left.
   */
  @Test
  void aVolumeNoSchedulerTookIsDeletedAndTheClaimBoundToANewOne(LocalInstall it) throws Exception {
    IsolatedClaims claims = new IsolatedClaims(it, "cinder-unscheduled", Map.of());
    String lost;
    service(it, "stop", "cinder-scheduler");
    try {
      try (MortalProvisioner mortal = claims.provisioner(1)) {
        claims.claim("data", "");
        assertThat(mortal.awaitDeath(SETTLE)).as("died after creating the volume").isTrue();
      }
      lost = volumesOf(it, claims).get(0).id();
      service(it, "purge", "cinder-scheduler");
    } finally {
      service(it, "start", "cinder-scheduler");
    }
    Duration grace = Duration.ofSeconds(20);
    long start = System.nanoTime();
    try (MortalProvisioner restarted = claims.provisioner(0, grace)) {
      claims.settle(Set.of("data"), SETTLE);
      List<String> steps = restarted.steps();
      long ms = (System.nanoTime() - start) / 1_000_000;
      List<String> told = claims.events(EventRecorder.PROVISIONING_FAILED);
      REPORT.line(
          "a volume no scheduler took (creating, no host): deleted by the next provisioner after"
              + " its grace (%d s), its claim bound to a new one %d ms after it started; told"
              + " \"%s\"; its steps: %s",
          grace.toSeconds(), ms, told.isEmpty() ? "" : told.get(0), steps);
      // deleted (the rollback's second delete finds it gone), then one new volume
      assertThat(steps).startsWith("cinder deleteVolume");
      assertThat(steps).containsOnlyOnce("cinder createVolume");
      assertThat(told).anyMatch(m -> m.contains("Cinder never scheduled volume " + lost));
      assertThat(ms).as("waited the grace first").isGreaterThanOrEqualTo(grace.toMillis());
    }
    assertThat(it.cinder.getVolume(lost)).isEmpty();
    assertThat(volumesOf(it, claims))
        .singleElement()
        .satisfies(v -> assertThat(v.id()).isNotEqualTo(lost))
        .extracting(v -> v.status())
        .isEqualTo("in-use");
    claims.cleanUp(SETTLE);
  }

  /**
   * The other side of that question: a volume the scheduler took but the volume service has not yet
   * made (cinder-volume frozen) is still {@code creating} after the grace, and Cinder refuses its
   * delete. The provisioner must keep waiting for it, and bind the claim to that same volume once
   * it is made.
   */
  @Test
  void aVolumeBeingCreatedSlowlyIsWaitedForAndNotReplaced(LocalInstall it) throws Exception {
    IsolatedClaims claims = new IsolatedClaims(it, "cinder-slow", Map.of());
    Duration grace = Duration.ofSeconds(10);
    service(it, "pause", "cinder-volume");
    String slow;
    try (MortalProvisioner p = claims.provisioner(0, grace)) {
      try {
        claims.claim("data", "");
        Waits.await("the volume", () -> !volumesOf(it, claims).isEmpty(), Duration.ofSeconds(60));
        slow = volumesOf(it, claims).get(0).id();
        // Past the grace the provisioner asks Cinder to delete the volume, and Cinder refuses
        // one a backend is creating: that refusal, not a pause, shows the question was asked.
        Waits.await(
            "the provisioner's delete of the creating volume, refused by Cinder",
            () -> p.refusals().contains("cinder deleteVolume"),
            grace.multipliedBy(3));
        assertThat(volumesOf(it, claims))
            .as("still creating past the grace, not deleted")
            .singleElement()
            .satisfies(v -> assertThat(v.id()).isEqualTo(slow))
            .extracting(v -> v.status())
            .isEqualTo("creating");
      } finally {
        service(it, "resume", "cinder-volume");
      }
      claims.settle(Set.of("data"), SETTLE);
      REPORT.line(
          "a volume being created while cinder-volume was frozen for %d s (twice the grace):"
              + " Cinder refused the provisioner's delete (%s), the claim was bound to the volume"
              + " once made; steps: %s",
          grace.multipliedBy(2).toSeconds(), p.refusals(), p.steps());
      assertThat(p.refusals()).as("asked once").containsExactly("cinder deleteVolume");
      assertThat(p.steps())
          .doesNotContain("cinder deleteVolume")
          .containsOnlyOnce("cinder createVolume");
    }
    assertThat(volumesOf(it, claims)).extracting(v -> v.id()).containsExactly(slow);
    claims.cleanUp(SETTLE);
  }

  private static List<org.standalonecinder.provisioner.cinder.Volume> volumesOf(
      LocalInstall it, IsolatedClaims claims) {
    return it.cinder.findVolumes(null, Map.of(Names.META_CLUSTER, claims.settings.clusterId()));
  }

  @Test
  void claimsOverQuotaWaitAndAreBoundOnceTheQuotaIsRaised(LocalInstall it) throws Exception {
    String type = "e2e-quota-" + UUID.randomUUID().toString().substring(0, 6);
    admin(it, "POST", "/types", typeBody(type, "file"));
    String project = it.cinderEnv.get("CINDER_PROJECT_ID");
    String quota = "/os-quota-sets/" + project;
    try {
      admin(it, "PUT", quota, "{\"quota_set\": {\"volumes_" + type + "\": 2}}");
      IsolatedClaims claims = new IsolatedClaims(it, "cinder-quota", Map.of("type", type));
      Set<String> names = Set.of("q0", "q1", "q2", "q3");
      try (MortalProvisioner p = claims.provisioner(0)) {
        names.forEach(n -> claims.claim(n, ""));
        Waits.await(
            "two claims bound and the others told of the quota",
            () ->
                claims.bound() == 2
                    && claims.events(EventRecorder.PROVISIONING_FAILED).stream()
                        .anyMatch(m -> m.contains("quota")),
            Duration.ofSeconds(90));
        String why =
            claims.events(EventRecorder.PROVISIONING_FAILED).stream()
                .filter(m -> m.contains("quota"))
                .findFirst()
                .orElseThrow();
        admin(it, "PUT", quota, "{\"quota_set\": {\"volumes_" + type + "\": -1}}");
        long raised = System.nanoTime();
        claims.settle(names, SETTLE);
        REPORT.line(
            "quota of 2 volumes for 4 claims: 2 bound, the others told \"%s\"; all 4 bound once"
                + " %d ms after the quota was raised",
            why, (System.nanoTime() - raised) / 1_000_000);
      }
      claims.cleanUp(SETTLE);
    } finally {
      admin(it, "PUT", quota, "{\"quota_set\": {\"volumes_" + type + "\": -1}}");
      admin(it, "DELETE", "/types/" + typeId(it, type), null);
    }
  }

  /** A Cinder client of its own whose calls time out after {@code seconds}. */
  private static CinderClient client(LocalInstall it, int seconds) throws IOException {
    Path conf = it.work.resolve("cloud-timeout-" + seconds + ".conf");
    Files.writeString(
        conf,
        Files.readString(it.cloudConfig())
            + "\n[BlockStorage]\nrequest-timeout = "
            + seconds
            + "\n");
    return OpenStackCinderClient.create(CloudConfigLoader.load(conf, Map.of()));
  }

  /** dev/cinder-local/service.sh on cinder-api. */
  private static void service(LocalInstall it, String action) throws Exception {
    service(it, action, "cinder-api");
  }

  private static void service(LocalInstall it, String action, String service) throws Exception {
    Process p =
        new ProcessBuilder(
                "bash",
                it.root.resolve("dev/cinder-local/service.sh").toString(),
                action,
                service,
                "--state-dir",
                it.cinderEnv.get("CINDER_LOCAL_STATE"))
            .redirectErrorStream(true)
            .start();
    String out = new String(p.getInputStream().readAllBytes());
    assertThat(p.waitFor()).as("service.sh " + action + ": " + out).isZero();
  }

  private static final HttpClient HTTP = HttpClient.newHttpClient();

  private static String typeBody(String name, String backend) {
    return "{\"volume_type\": {\"name\": \""
        + name
        + "\", \"extra_specs\": {\"volume_backend_name\": \""
        + backend
        + "\"}}}";
  }

  /** An admin call through the noauth API (noauth makes every caller an admin). */
  private static String admin(LocalInstall it, String method, String path, String body)
      throws Exception {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(URI.create(it.cinderEnv.get("CINDER_PROJECT_ENDPOINT") + path))
            .header("X-Auth-Token", it.cinderEnv.get("CINDER_NOAUTH_TOKEN"))
            .header("Content-Type", "application/json")
            .method(
                method,
                body == null
                    ? HttpRequest.BodyPublishers.noBody()
                    : HttpRequest.BodyPublishers.ofString(body));
    HttpResponse<String> r = HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).as(method + " " + path + ": " + r.body()).isLessThan(300);
    return r.body();
  }

  private static String typeId(LocalInstall it, String name) throws Exception {
    var types =
        new com.fasterxml.jackson.databind.ObjectMapper()
            .readTree(admin(it, "GET", "/types", null))
            .get("volume_types");
    for (var t : types) {
      if (name.equals(t.get("name").asText())) {
        return t.get("id").asText();
      }
    }
    throw new AssertionError("no volume type " + name);
  }
}
