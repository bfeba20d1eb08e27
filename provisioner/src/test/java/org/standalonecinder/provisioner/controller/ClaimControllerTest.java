package org.standalonecinder.provisioner.controller;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The claim loop alone, with a provisioner that makes nothing: which claims reach the provisioner,
 * and what the loop does with each answer the contract allows. No Cinder is involved, which is the
 * point: the loop is a library.
 */
class ClaimControllerTest {

  private static final String NAME = "example.org/fake";

  private io.fabric8.kubernetes.client.server.mock.KubernetesMockServer server;
  private KubernetesClient client;
  private FakeProvisioner provisioner;
  private ClaimController controller;
  private Processed processed;

  /** A provisioner that answers as the row says and records what the loop asked. */
  static final class FakeProvisioner implements Provisioner {
    final Function<ProvisionRequest, ProvisionResult> answer;
    final List<String> calls = new ArrayList<>();

    FakeProvisioner(Function<ProvisionRequest, ProvisionResult> answer) {
      this.answer = answer;
    }

    @Override
    public String name() {
      return NAME;
    }

    @Override
    public ProvisionResult provision(ProvisionRequest request) {
      synchronized (this) {
        calls.add("provision " + request.claim().getMetadata().getName());
      }
      return answer.apply(request); // unlocked: an answer may be held while others are asked
    }

    @Override
    public synchronized void created(ProvisionRequest request, PersistentVolume pv) {
      calls.add("created " + pv.getMetadata().getName());
    }

    @Override
    public synchronized DeleteOutcome delete(PersistentVolume pv) {
      calls.add("delete " + pv.getMetadata().getName());
      return DeleteOutcome.DELETED;
    }

    synchronized List<String> calls() {
      return List.copyOf(calls);
    }

    synchronized long provisions() {
      return calls.stream().filter(c -> c.startsWith("provision")).count();
    }
  }

  private static PersistentVolume pvFor(ProvisionRequest r) {
    return new PersistentVolumeBuilder()
        .withNewMetadata()
        .withName(r.pvName())
        .addToAnnotations("pv.kubernetes.io/provisioned-by", NAME)
        .endMetadata()
        .withNewSpec()
        .withCapacity(Map.of("storage", new io.fabric8.kubernetes.api.model.Quantity("1Gi")))
        .withAccessModes("ReadWriteOnce")
        .withNewHostPath("/nowhere", null)
        .endSpec()
        .build();
  }

  /** One answer of the provisioner and what the loop then does. */
  record Row(
      String name,
      Function<ProvisionRequest, ProvisionResult> answer,
      boolean pvCreated,
      boolean provisionedAgain,
      List<String> events) {
    @Override
    public String toString() {
      return name;
    }
  }

  static Stream<Arguments> answers() {
    return Stream.of(
            new Row(
                "finished: the loop creates the PV, tells the provisioner and the claim, once",
                r -> {
                  r.starting(" (detail)");
                  return ProvisionResult.finished(pvFor(r), " (made)");
                },
                true,
                false,
                List.of("ProvisioningSucceeded: Successfully provisioned volume PV (made)")),
            new Row(
                "finished after it lasted: told it was under way, then the outcome",
                r -> {
                  r.starting(" (detail)");
                  lasts();
                  return ProvisionResult.finished(pvFor(r), " (made)");
                },
                true,
                false,
                List.of(
                    "Provisioning: External provisioner is provisioning volume for claim apps/data"
                        + " (detail)",
                    "ProvisioningSucceeded: Successfully provisioned volume PV (made)")),
            new Row(
                "failed after it lasted: told it was under way, then the failure",
                r -> {
                  r.starting("");
                  lasts();
                  throw ProvisioningException.invalid("bad parameter");
                },
                false,
                false,
                List.of(
                    "Provisioning: External provisioner is provisioning volume for claim apps/data",
                    "ProvisioningFailed: bad parameter")),
            new Row(
                "in background a moment: looked at again after its delay, nothing told",
                r ->
                    ProvisionResult.inBackground(
                        "copying",
                        new ProvisionResult.Progress(
                            Duration.ofMillis(300), Duration.ofMillis(50))),
                false,
                true,
                List.of()),
            new Row(
                "in background for a while: looked at again, told what is under way (once for the"
                    + " same words)",
                r ->
                    ProvisionResult.inBackground(
                        "Cinder is copying",
                        new ProvisionResult.Progress(Duration.ofSeconds(5), Duration.ofMillis(50))),
                false,
                true,
                List.of(
                    "Provisioning: External provisioner is provisioning volume for claim apps/data:"
                        + " Cinder is copying")),
            new Row(
                "no change: nothing done or told",
                r -> ProvisionResult.noChange("nothing to do"),
                false,
                false,
                List.of()),
            new Row(
                "ignored: nothing done or told",
                r -> ProvisionResult.ignored("not mine after all"),
                false,
                false,
                List.of()),
            new Row(
                "final failure: told once, not retried",
                r -> {
                  throw ProvisioningException.invalid("bad parameter");
                },
                false,
                false,
                List.of("ProvisioningFailed: bad parameter")),
            new Row(
                "transient failure: retried until the policy gives up, then told so (a retry that"
                    + " fails the same way is not told again)",
                r -> {
                  throw new ProvisioningException("backend busy", false, null);
                },
                false,
                true,
                List.of(
                    "ProvisioningFailed: backend busy",
                    "ProvisioningFailed: backend busy (gave up after 3 attempts; will try again at the"
                        + " next change or resync)")),
            new Row(
                "a failure told as another reason keeps it",
                r -> {
                  throw ProvisioningException.invalid("cannot grow").toldAs("VolumeResizeFailed");
                },
                false,
                false,
                List.of("VolumeResizeFailed: cannot grow")))
        .map(Arguments::of);
  }

  /** A provisioning that outlasts the moment after which the claim is told it is under way. */
  private static void lasts() {
    try {
      Thread.sleep(ClaimSync.TELL_AFTER.toMillis() + 500);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  @BeforeEach
  void start() {
    server = Cluster.newApiServer();
    client = server.createClient();
  }

  private void run(Function<ProvisionRequest, ProvisionResult> answer) {
    run(answer, 2, FairPool.inline());
  }

  private void run(
      Function<ProvisionRequest, ProvisionResult> answer, int workers, FairPool steps) {
    provisioner = new FakeProvisioner(answer);
    controller =
        new ClaimController(
            client,
            new ClusterCache(client, Duration.ofMinutes(10)),
            provisioner,
            new EventRecorder(client, NAME, "test", Clock.systemUTC()),
            // Long enough that a pending look-again is still pending when a row checks for it.
            new RetryPolicy(Duration.ofMillis(300), Duration.ofMillis(400), 3),
            workers,
            Duration.ofMinutes(10),
            new SimpleMeterRegistry(),
            steps);
    processed = Processed.by(controller);
    controller.start();
    Cluster.await("synced", controller::synced, Duration.ofSeconds(10));
  }

  @AfterEach
  void stop() {
    if (controller != null) {
      controller.close();
    }
    client.close();
    Cluster.destroy(server);
  }

  private List<String> events() {
    return client.events().v1().events().inAnyNamespace().list().getItems().stream()
        .sorted(java.util.Comparator.comparing(e -> e.getMetadata().getCreationTimestamp()))
        .map(e -> e.getReason() + ": " + e.getNote())
        .toList();
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("answers")
  void theLoopDoesWhatTheAnswerSays(Row row) {
    run(row.answer());
    Cluster.createClass(client, "fake", NAME, Map.of(), "Delete", "Immediate");
    PersistentVolumeClaim c =
        Cluster.createClaim(client, "data", "fake", NAME, "Filesystem", Map.of());
    String pvName = ProvisionRequest.pvName(c.getMetadata().getUid());
    List<String> expected =
        row.events().stream().map(e -> e.replace("volume PV", "volume " + pvName)).toList();
    Cluster.await(
        "the events " + expected,
        () -> events().size() >= expected.size() && provisioner.provisions() >= 1,
        Duration.ofSeconds(10));
    if (row.provisionedAgain()) {
      Cluster.await(
          "a second provisioning", () -> provisioner.provisions() >= 2, Duration.ofSeconds(10));
    } else {
      processed.claim("apps", "data");
      assertThat(provisioner.provisions()).isEqualTo(1);
      // Nothing brings it back but a change: no retry or look again is pending either.
      assertThat(controller.scheduled(new WorkKey.Claim("apps", "data")))
          .as("looked at again later")
          .isFalse();
    }
    assertThat(events()).containsExactlyElementsOf(expected);
    assertThat(client.persistentVolumes().withName(pvName).get() != null)
        .as("PV created")
        .isEqualTo(row.pvCreated());
    if (row.pvCreated()) {
      assertThat(provisioner.calls()).containsExactly("provision data", "created " + pvName);
    }
  }

  /**
   * The attack on the workers: a claim whose provisioning the storage holds (a long copy, a Cinder
   * that does not answer), with a single worker. Its step runs off the worker: another claim gets
   * its PV meanwhile, and the held one is told it is under way, with what it makes, once it has
   * lasted. With the step on the worker (as before), the other claim waited for it.
   */
  @Test
  void aProvisioningTheStorageHoldsHoldsNoWorker() throws Exception {
    java.util.concurrent.CountDownLatch held = new java.util.concurrent.CountDownLatch(1);
    run(
        r -> {
          if (r.claim().getMetadata().getName().equals("held")) {
            r.starting(" as a clone of apps/source");
            try {
              held.await(20, java.util.concurrent.TimeUnit.SECONDS);
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            }
          }
          return ProvisionResult.finished(pvFor(r), "");
        },
        1,
        FairPool.ofThreads(4, "test-steps"));
    Cluster.createClass(client, "fake", NAME, Map.of(), "Delete", "Immediate");
    PersistentVolumeClaim slow =
        Cluster.createClaim(client, "held", "fake", NAME, "Filesystem", Map.of());
    Cluster.await(
        "the held step runs", () -> provisioner.provisions() >= 1, Duration.ofSeconds(10));
    PersistentVolumeClaim quick =
        Cluster.createClaim(client, "quick", "fake", NAME, "Filesystem", Map.of());
    String quickPv = ProvisionRequest.pvName(quick.getMetadata().getUid());
    Cluster.await(
        "the other claim's PV while the held one waits for the storage",
        () -> client.persistentVolumes().withName(quickPv).get() != null,
        Duration.ofSeconds(10));
    assertThat(held.getCount()).as("the held step still runs").isEqualTo(1);
    Cluster.await(
        "the held claim told what is under way",
        () ->
            events().stream()
                .anyMatch(e -> e.contains("making its volume as a clone of apps/source")),
        Duration.ofSeconds(10));
    held.countDown();
    String slowPv = ProvisionRequest.pvName(slow.getMetadata().getUid());
    Cluster.await(
        "the held claim's PV once the storage answers",
        () -> client.persistentVolumes().withName(slowPv).get() != null,
        Duration.ofSeconds(10));
    assertThat(provisioner.provisions()).as("each asked once").isEqualTo(2);
  }

  /** Which claims reach the provisioner at all. */
  record Gate(String name, String classProvisioner, String claimProvisioner, String binding) {
    @Override
    public String toString() {
      return name;
    }
  }

  static Stream<Arguments> gates() {
    return Stream.of(
            new Gate(
                "a claim Kubernetes named another provisioner for", NAME, "other", "Immediate"),
            new Gate("a class of another provisioner", "other", NAME, "Immediate"),
            new Gate(
                "WaitForFirstConsumer before a node is selected",
                NAME,
                NAME,
                "WaitForFirstConsumer"))
        .map(Arguments::of);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("gates")
  void theseClaimsNeverReachTheProvisioner(Gate gate) {
    run(r -> ProvisionResult.finished(pvFor(r), ""));
    Cluster.createClass(
        client, "fake", gate.classProvisioner(), Map.of(), "Delete", gate.binding());
    Cluster.createClaim(client, "data", "fake", gate.claimProvisioner(), "Filesystem", Map.of());
    processed.claim("apps", "data");
    assertThat(provisioner.calls()).isEmpty();
    assertThat(events()).isEmpty();
  }

  /**
   * The attack: one claim whose provisioning throws an {@link Error} (as a name of tens of
   * thousands of labels once overflowed the stack of a parser). It fails alone, retried and told as
   * an event; every worker stays alive, and every other claim is provisioned.
   */
  @ParameterizedTest(name = "{0}")
  @MethodSource("errors")
  void aClaimThatThrowsAnErrorFailsAloneAndNoWorkerIsLost(String name, Throwable thrown) {
    run(
        r -> {
          if (r.claim().getMetadata().getName().equals("poison")) {
            sneaky(thrown);
          }
          return ProvisionResult.finished(pvFor(r), "");
        });
    Cluster.createClass(client, "fake", NAME, Map.of(), "Delete", "Immediate");
    Cluster.createClaim(client, "poison", "fake", NAME, "Filesystem", Map.of());
    Cluster.await("a retry of the poison", () -> poisonAttempts() >= 2, Duration.ofSeconds(10));
    List<String> pvs = new ArrayList<>();
    for (int i = 0; i < 6; i++) {
      PersistentVolumeClaim c =
          Cluster.createClaim(client, "plain-" + i, "fake", NAME, "Filesystem", Map.of());
      pvs.add(ProvisionRequest.pvName(c.getMetadata().getUid()));
    }
    Cluster.await(
        "every other claim provisioned",
        () -> pvs.stream().allMatch(pv -> client.persistentVolumes().withName(pv).get() != null),
        Duration.ofSeconds(10));
    assertThat(controller.workersHealthy()).as(controller.workersAlive()).isTrue();
    assertThat(controller.workersAlive()).isEqualTo("2 of 2 workers alive (0 replaced)");
    assertThat(events())
        .contains("ProvisioningFailed: internal error: " + thrown)
        .noneMatch(e -> e.contains("plain-"));
  }

  static Stream<Arguments> errors() {
    return Stream.of(
        Arguments.of("a StackOverflowError", new StackOverflowError()),
        Arguments.of("an AssertionError", new AssertionError("a broken invariant")),
        Arguments.of("a class that fails to link", new NoClassDefFoundError("org/example/Gone")),
        Arguments.of("an ExceptionInInitializerError", new ExceptionInInitializerError("init")));
  }

  private long poisonAttempts() {
    return provisioner.calls().stream().filter(c -> c.equals("provision poison")).count();
  }

  @SuppressWarnings("unchecked")
  private static <T extends Throwable> void sneaky(Throwable t) throws T {
    throw (T) t;
  }

  /**
   * What gets past a key's own handling (here the loop's listener throws once) kills its worker: it
   * is replaced at once, counted, and the health check says so; claims go on being provisioned.
   */
  @org.junit.jupiter.api.Test
  void aWorkerThatDiesIsReplaced() {
    run(r -> ProvisionResult.finished(pvFor(r), ""));
    java.util.concurrent.atomic.AtomicBoolean once =
        new java.util.concurrent.atomic.AtomicBoolean();
    controller.onProcessed(
        (k, o) -> {
          if (once.compareAndSet(false, true)) {
            throw new StackOverflowError();
          }
        });
    Cluster.createClass(client, "fake", NAME, Map.of(), "Delete", "Immediate");
    Cluster.createClaim(client, "first", "fake", NAME, "Filesystem", Map.of());
    Cluster.await("the listener thrown", once::get, Duration.ofSeconds(10));
    Cluster.await(
        "a worker replaced",
        () -> controller.workersAlive().equals("2 of 2 workers alive (1 replaced)"),
        Duration.ofSeconds(10));
    assertThat(controller.workersHealthy()).isTrue();
    for (int i = 0; i < 4; i++) {
      PersistentVolumeClaim c =
          Cluster.createClaim(client, "after-" + i, "fake", NAME, "Filesystem", Map.of());
      String pv = ProvisionRequest.pvName(c.getMetadata().getUid());
      Cluster.await(
          "after-" + i + " provisioned",
          () -> client.persistentVolumes().withName(pv).get() != null,
          Duration.ofSeconds(10));
    }
  }
}
