package org.standalonecinder.provisioner.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaimBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The provisioner's steps off the workers: a look starts a step and goes on, the step's end brings
 * the key back, and that look takes its outcome, for the claim as it was asked for. The pool here
 * runs a task only when the test says so, so each row sees the step waiting, running or ended.
 */
class OffWorkersTest {

  private static final WorkKey.Claim KEY = new WorkKey.Claim("apps", "data");
  private static final String UID = "uid-1";

  private final List<Runnable> tasks = new ArrayList<>();
  private final List<WorkKey> woken = new ArrayList<>();
  private final List<WorkKey> unscheduled = new ArrayList<>();
  private final Inner inner = new Inner();
  private final OffWorkers off =
      new OffWorkers(
          inner, new FairPool(tasks::add, 4), woken::add, unscheduled::add, Clock.systemUTC());

  /** Records what it was asked; each answer may act while its step runs. */
  private static class Inner implements Provisioner {
    final List<String> calls = new ArrayList<>();
    Function<ProvisionRequest, ProvisionResult> answer = r -> ProvisionResult.finished(pv(), "");
    Runnable whileAbandoning = () -> {};

    @Override
    public String name() {
      return "example.org/fake";
    }

    @Override
    public synchronized ProvisionResult provision(ProvisionRequest request) {
      calls.add("provision " + request.claim().getMetadata().getAnnotations());
      return answer.apply(request);
    }

    @Override
    public synchronized DeleteOutcome delete(PersistentVolume pv) {
      calls.add("delete");
      return DeleteOutcome.DELETED;
    }

    @Override
    public synchronized Optional<Duration> abandoned(WorkKey.Claim claim, String claimUid) {
      calls.add("abandoned");
      whileAbandoning.run();
      return Optional.empty();
    }

    synchronized List<String> calls() {
      return List.copyOf(calls);
    }
  }

  private static PersistentVolume pv() {
    return new PersistentVolumeBuilder()
        .withNewMetadata()
        .withName("pvc-" + UID)
        .endMetadata()
        .build();
  }

  private static int versions;

  /** The claim as the API server would have it: every write a new resource version. */
  private static PersistentVolumeClaim claim(
      Map<String, String> annotations, Map<String, String> labels) {
    return new PersistentVolumeClaimBuilder()
        .withNewMetadata()
        .withNamespace(KEY.namespace())
        .withName(KEY.name())
        .withUid(UID)
        .withResourceVersion(String.valueOf(++versions))
        .withAnnotations(annotations)
        .withLabels(labels)
        .endMetadata()
        .withNewSpec()
        .withStorageClassName("cinder")
        .withNewResources()
        .withRequests(Map.of("storage", new Quantity("1Gi")))
        .endResources()
        .endSpec()
        .build();
  }

  private static ProvisionRequest request(PersistentVolumeClaim c) {
    return new ProvisionRequest(c, null, "pvc-" + UID, Map.of(), detail -> {});
  }

  private static final PersistentVolumeClaim ASKED =
      claim(Map.of("volume.kubernetes.io/selected-node", "node-a"), Map.of());

  /** Runs the tasks the pool handed out, and those they hand out, in order. */
  private void runAll() {
    while (!tasks.isEmpty()) {
      tasks.remove(0).run();
    }
  }

  @Test
  void aProvisioningRunsOffTheWorkerAndItsEndBringsTheClaimBack() {
    ProvisionResult first = off.provision(request(ASKED));
    assertThat(first.state()).isEqualTo(ProvisionResult.State.IN_BACKGROUND);
    assertThat(first.detail()).startsWith("waits for its namespace's turn to make its volume");
    assertThat(inner.calls()).as("the look asked the storage nothing").isEmpty();
    assertThat(off.provision(request(ASKED)).state())
        .as("a look while it waits starts nothing more")
        .isEqualTo(ProvisionResult.State.IN_BACKGROUND);
    assertThat(tasks).hasSize(1);
    assertThat(unscheduled).as("the looks under way leave their delayed look").isEmpty();

    runAll();
    assertThat(woken).containsExactly(KEY);
    ProvisionResult taken = off.provision(request(ASKED));
    assertThat(taken.state()).isEqualTo(ProvisionResult.State.FINISHED);
    assertThat(inner.calls()).hasSize(1);
    assertThat(unscheduled)
        .as("the look that takes the outcome drops the delayed look the others left")
        .containsExactly(KEY);
  }

  /** What changed of the claim between the look that asked and the look that takes. */
  enum Change {
    NOTHING(true),
    A_LABEL(true),
    A_TOOLS_ANNOTATION(true),
    THE_SELECTED_NODE(false),
    THE_SIZE(false),
    THIS_REPLICA_STOPPED_LEADING_WHILE_IT_RAN(false);

    final boolean taken;

    Change(boolean taken) {
      this.taken = taken;
    }
  }

  @ParameterizedTest(name = "{0}")
  @EnumSource(Change.class)
  void anOutcomeIsTakenOnlyForTheClaimAsItWasAskedFor(Change change) {
    List<ProvisionResult> meanwhile = new ArrayList<>();
    if (change == Change.THIS_REPLICA_STOPPED_LEADING_WHILE_IT_RAN) {
      inner.answer =
          r -> {
            off.paused();
            // A look while the stale step still runs must not ask for the same thing again.
            meanwhile.add(off.provision(request(ASKED)));
            return ProvisionResult.finished(pv(), "");
          };
    }
    off.provision(request(ASKED));
    runAll();
    assertThat(meanwhile).allMatch(r -> r.state() == ProvisionResult.State.IN_BACKGROUND);
    assertThat(inner.calls()).as("nothing asked again while the stale step ran").hasSize(1);
    inner.answer = r -> ProvisionResult.finished(pv(), "");
    PersistentVolumeClaim now =
        switch (change) {
          case A_LABEL -> claim(ASKED.getMetadata().getAnnotations(), Map.of("team", "a"));
          case A_TOOLS_ANNOTATION -> {
            Map<String, String> ann = new java.util.HashMap<>(ASKED.getMetadata().getAnnotations());
            ann.put("argocd.argoproj.io/sync-wave", "3");
            yield claim(ann, Map.of());
          }
          case THE_SELECTED_NODE ->
              claim(Map.of("volume.kubernetes.io/selected-node", "node-b"), Map.of());
          case THE_SIZE -> {
            PersistentVolumeClaim c = claim(ASKED.getMetadata().getAnnotations(), Map.of());
            c.getSpec().getResources().setRequests(Map.of("storage", new Quantity("2Gi")));
            yield c;
          }
          default -> ASKED;
        };
    ProvisionResult result = off.provision(request(now));
    if (change.taken) {
      assertThat(result.state()).isEqualTo(ProvisionResult.State.FINISHED);
      assertThat(inner.calls()).hasSize(1);
    } else {
      assertThat(result.state()).isEqualTo(ProvisionResult.State.IN_BACKGROUND);
      runAll();
      assertThat(off.provision(request(now)).state()).isEqualTo(ProvisionResult.State.FINISHED);
      assertThat(inner.calls()).as("asked again for the claim as it is").hasSize(2);
    }
  }

  @Test
  void aClaimDeletedWhileItsProvisioningWaitsIsNeverProvisioned() {
    off.provision(request(ASKED));
    assertThat(off.abandoned(KEY, UID)).as("its clean-up waits for its turn").isPresent();
    runAll();
    assertThat(inner.calls()).containsExactly("abandoned");
    assertThat(off.abandoned(KEY, UID)).as("nothing left").isEmpty();
  }

  @Test
  void aClaimDeletedWhileItsProvisioningRunsIsCleanedUpOnlyAfterIt() {
    List<Optional<Duration>> meanwhile = new ArrayList<>();
    inner.answer =
        r -> {
          meanwhile.add(off.abandoned(KEY, UID));
          return ProvisionResult.finished(pv(), "");
        };
    off.provision(request(ASKED));
    runAll();
    assertThat(meanwhile).containsExactly(Optional.of(Pace.LONGEST_LOOK));
    assertThat(inner.calls()).as("nothing cleaned up while it made the volume").hasSize(1);
    assertThat(woken).as("its end brings the claim back").containsExactly(KEY);

    assertThat(off.abandoned(KEY, UID)).isPresent();
    runAll();
    assertThat(off.abandoned(KEY, UID)).isEmpty();
    assertThat(inner.calls()).last().isEqualTo("abandoned");
  }

  /** What a step throws reaches the worker that takes it, an {@link Error} as it was. */
  @ParameterizedTest(name = "{0}")
  @EnumSource(Thrown.class)
  void whatAStepThrowsIsThrownToTheLookThatTakesIt(Thrown thrown) {
    inner.answer =
        r -> {
          Throwable t = thrown.make();
          if (t instanceof Error e) {
            throw e;
          }
          throw (RuntimeException) t;
        };
    off.provision(request(ASKED));
    runAll();
    assertThatThrownBy(() -> off.provision(request(ASKED))).isInstanceOf(thrown.make().getClass());
    assertThat(unscheduled).as("a failure's retry is the loop's to set").containsExactly(KEY);
    assertThat(off.provision(request(ASKED)).state())
        .as("taken once: the next look asks again")
        .isEqualTo(ProvisionResult.State.IN_BACKGROUND);
  }

  enum Thrown {
    A_REFUSAL,
    AN_ERROR;

    Throwable make() {
      return this == A_REFUSAL
          ? ProvisioningException.invalid("no such class parameter")
          : new StackOverflowError("a bug deep down");
    }
  }

  /**
   * What follows a PV runs after the look that made it, and a look of the claim before it has run
   * (a cache that has not seen the PV yet) waits for it instead of cancelling it.
   */
  @Test
  void whatFollowsAPvIsNeverCancelledByTheClaimsNextLook() {
    List<String> followed = new ArrayList<>();
    OffWorkers o =
        new OffWorkers(
            new Inner() {
              @Override
              public void created(ProvisionRequest request, PersistentVolume pv) {
                followed.add(pv.getMetadata().getName());
              }
            },
            new FairPool(tasks::add, 4),
            woken::add,
            unscheduled::add,
            Clock.systemUTC());
    o.created(request(ASKED), pv());
    assertThat(o.provision(request(ASKED)).state()).isEqualTo(ProvisionResult.State.IN_BACKGROUND);
    runAll();
    assertThat(followed).containsExactly("pvc-" + UID);
  }

  /**
   * A worker still at its key when this replica stopped leading: the step it asks for never runs
   * and its outcome is never taken; the first look after the replica leads again asks anew.
   */
  @Test
  void aStepAskedWhileThisReplicaStandsByNeverRuns() {
    FairPool pool = new FairPool(tasks::add, 4);
    OffWorkers o = new OffWorkers(inner, pool, woken::add, unscheduled::add, Clock.systemUTC());
    pool.standBy();
    o.paused();
    assertThat(o.provision(request(ASKED)).state()).isEqualTo(ProvisionResult.State.IN_BACKGROUND);
    runAll();
    assertThat(inner.calls()).isEmpty();

    pool.act();
    assertThat(o.provision(request(ASKED)).state()).isEqualTo(ProvisionResult.State.IN_BACKGROUND);
    runAll();
    assertThat(o.provision(request(ASKED)).state()).isEqualTo(ProvisionResult.State.FINISHED);
    assertThat(inner.calls()).hasSize(1);
  }

  /**
   * The attack on memory: a claim whose spec is as long as the API server takes. What its call
   * keeps of it is a digest, not a second copy of the spec.
   */
  @Test
  void aCallKeepsADigestOfTheClaimNotItsSpec() {
    PersistentVolumeClaim huge = claim(Map.of(), Map.of());
    huge.getSpec().setStorageClassName("c".repeat(1_400_000));
    assertThat(OffWorkers.asked(huge)).hasSizeLessThan(100);
    assertThat(OffWorkers.asked(huge)).isNotEqualTo(OffWorkers.asked(ASKED));
  }

  @Test
  void aReleasedPvIsDeletedOffTheWorker() {
    PersistentVolume pv = pv();
    pv.getMetadata().setUid("pv-uid");
    Provisioner.DeleteOutcome first = off.delete(pv);
    assertThat(first.state()).isEqualTo(Provisioner.DeleteOutcome.State.IN_PROGRESS);
    assertThat(first.detail())
        .as("what waits, and how long so far, as a pending provisioning says")
        .startsWith("waits for its namespace's turn to delete the storage of ")
        .contains("; ")
        .contains(Pace.soFar(first.progress().soFar()));
    assertThat(inner.calls()).isEmpty();
    runAll();
    assertThat(woken).containsExactly(new WorkKey.Volume(pv.getMetadata().getName()));
    assertThat(off.delete(pv)).isEqualTo(Provisioner.DeleteOutcome.DELETED);
    assertThat(unscheduled).containsExactly(new WorkKey.Volume(pv.getMetadata().getName()));
  }

  @Test
  void onAnInlinePoolEachStepRunsInTheLookThatAsks() {
    OffWorkers inline =
        new OffWorkers(inner, FairPool.inline(), woken::add, unscheduled::add, Clock.systemUTC());
    assertThat(inline.provision(request(ASKED)).state()).isEqualTo(ProvisionResult.State.FINISHED);
    assertThat(woken).isEmpty();
  }
}
