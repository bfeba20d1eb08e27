package org.standalonecinder.provisioner.provision;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.standalonecinder.provisioner.provision.Fixtures.PV;
import static org.standalonecinder.provisioner.provision.Fixtures.UID;
import static org.standalonecinder.provisioner.provision.Fixtures.claim;
import static org.standalonecinder.provisioner.provision.Fixtures.claimOf;
import static org.standalonecinder.provisioner.provision.Fixtures.storageClass;

import io.fabric8.kubernetes.api.model.ISCSIPersistentVolumeSource;
import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.Quantity;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.standalonecinder.api.ClaimAnnotations;
import org.standalonecinder.provisioner.cinder.Backoff;
import org.standalonecinder.provisioner.cinder.CinderException;
import org.standalonecinder.provisioner.cinder.FakeCinderClient;
import org.standalonecinder.provisioner.cinder.Microversion;
import org.standalonecinder.provisioner.cinder.Volume;
import org.standalonecinder.provisioner.controller.ProvisioningException;
import org.standalonecinder.provisioner.mapping.VolumeMappers;

/**
 * The provisioning logic against the fake Cinder: every failure point with the exact sequence of
 * calls it causes (the rollback in reverse order) and nothing left behind; then the PV it makes,
 * reuse of an earlier attempt's volume, and deletion.
 */
class VolumeProvisionerTest {

  private static final Microversion OLD = new Microversion(3, 0);
  private static final Supplier<RuntimeException> OUTAGE =
      () -> new CinderException.Unavailable("Cinder down", 503, "req-x", null);

  private final FakeCinderClient cinder = new FakeCinderClient();
  private final FakeSecretStore secrets = new FakeSecretStore(cinder::note);
  private final VolumeProvisioner provisioner =
      new VolumeProvisioner(
          cinder, secrets, VolumeMappers.standard(), Fixtures.settings(), Backoff.DEFAULT);

  private static final String FIND = "findVolumes " + PV;
  private static final String CREATE = "createVolume " + PV;
  private static final String AWAIT = "awaitVolumeStatus vol-1";
  private static final String LIST = "listAttachments vol-1";
  private static final String ATTACH = "createAttachment vol-1";
  private static final String COMPLETE = "completeAttachment att-2";
  private static final String DETACH = "deleteAttachment att-2";
  private static final String DELETE = "deleteVolume vol-1";
  private static final String RESERVE = "reserve vol-1";
  private static final String INIT = "initializeConnection vol-1";
  private static final String TERMINATE = "terminateConnection vol-1";
  private static final String UNRESERVE = "unreserve vol-1";
  private static final String PUT_SECRET = "putSecret chap-" + PV;
  private static final String DELETE_SECRET = "deleteSecret chap-" + PV;
  private static final String HAND_OVER = "updateVolumeMetadata vol-1";

  static Arguments fails(
      String name, Consumer<VolumeProvisionerTest> inject, boolean isFinal, String... calls) {
    return Arguments.of(name, inject, isFinal, List.of(calls));
  }

  static Stream<Arguments> failurePoints() {
    return Stream.of(
        fails(
            "lookup fails: nothing was done",
            t -> t.cinder.failNext("findVolumes", OUTAGE),
            false,
            FIND),
        fails(
            "create over quota: tried again later, nothing to undo",
            t ->
                t.cinder.failNext(
                    "createVolume", () -> new CinderException.QuotaExceeded("quota", "req-q")),
            false,
            FIND,
            CREATE),
        fails(
            "volume goes to error: deleted, tried again later",
            t ->
                t.cinder.failNext(
                    "awaitVolumeStatus",
                    () -> {
                      t.cinder.setStatus("vol-1", "error");
                      return new CinderException.UnexpectedState("error", "error", false);
                    }),
            false,
            FIND,
            CREATE,
            FIND,
            LIST,
            AWAIT,
            DELETE),
        fails(
            "attachment fails: volume deleted",
            t -> t.cinder.failNext("createAttachment", OUTAGE),
            false,
            FIND,
            CREATE,
            FIND,
            LIST,
            AWAIT,
            ATTACH,
            DELETE),
        fails(
            "completing fails: attachment, then volume",
            t -> t.cinder.failNext("completeAttachment", OUTAGE),
            false,
            FIND,
            CREATE,
            FIND,
            LIST,
            AWAIT,
            ATTACH,
            COMPLETE,
            DETACH,
            DELETE),
        fails(
            "no portal in the export: attachment, then volume",
            t -> {
              Map<String, Object> d = new HashMap<>(FakeCinderClient.defaultExport());
              d.remove("target_portal");
              t.cinder.export("iscsi", d);
            },
            true,
            FIND,
            CREATE,
            FIND,
            LIST,
            AWAIT,
            ATTACH,
            COMPLETE,
            DETACH,
            DELETE),
        fails(
            "unknown protocol: attachment, then volume",
            t -> t.cinder.export("nvmeof", Map.of("target_nqn", "x")),
            true,
            FIND,
            CREATE,
            FIND,
            LIST,
            AWAIT,
            ATTACH,
            COMPLETE,
            DETACH,
            DELETE),
        fails(
            "Secret cannot be written: Secret, attachment, volume",
            t -> t.secrets.failNextPut(() -> new IllegalStateException("apiserver timeout")),
            false,
            FIND,
            CREATE,
            FIND,
            LIST,
            AWAIT,
            ATTACH,
            COMPLETE,
            PUT_SECRET,
            DELETE_SECRET,
            DETACH,
            DELETE),
        fails(
            "ReadWriteMany without multiattach: volume deleted",
            t -> {},
            true,
            FIND,
            CREATE,
            FIND,
            LIST,
            AWAIT,
            DELETE),
        fails(
            "old Cinder: reserve fails: volume deleted",
            t -> t.cinder.microversion(OLD).failNext("reserve", OUTAGE),
            false,
            FIND,
            CREATE,
            FIND,
            LIST,
            AWAIT,
            RESERVE,
            DELETE),
        fails(
            "old Cinder: initialize fails: unreserve, volume",
            t -> t.cinder.microversion(OLD).failNext("initializeConnection", OUTAGE),
            false,
            FIND,
            CREATE,
            FIND,
            LIST,
            AWAIT,
            RESERVE,
            INIT,
            UNRESERVE,
            DELETE),
        fails(
            "old Cinder: bad export: terminate, unreserve, volume",
            t -> t.cinder.microversion(OLD).export("iscsi", Map.of("target_lun", 1)),
            true,
            FIND,
            CREATE,
            FIND,
            LIST,
            AWAIT,
            RESERVE,
            INIT,
            TERMINATE,
            UNRESERVE,
            DELETE),
        fails(
            "old Cinder: Secret fails: Secret, terminate, unreserve, volume",
            t -> {
              t.cinder.microversion(OLD);
              t.secrets.failNextPut(() -> new IllegalStateException("apiserver timeout"));
            },
            false,
            FIND,
            CREATE,
            FIND,
            LIST,
            AWAIT,
            RESERVE,
            INIT,
            PUT_SECRET,
            DELETE_SECRET,
            TERMINATE,
            UNRESERVE,
            DELETE));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("failurePoints")
  void everyFailureIsRolledBackInReverse(
      String name, Consumer<VolumeProvisionerTest> inject, boolean isFinal, List<String> calls) {
    rolledBack(name, inject, isFinal, calls, UntilMade::again, provisioner);
  }

  /**
   * The same with the export off the worker: the same calls in the same order, the export's undo
   * run by the export before the claim's next look is told, and nothing left.
   */
  @ParameterizedTest(name = "{0}")
  @MethodSource("failurePoints")
  void everyFailureIsRolledBackInReverseWithExportsInTheBackground(
      String name, Consumer<VolumeProvisionerTest> inject, boolean isFinal, List<String> calls) {
    List<Runnable> exports = new java.util.ArrayList<>();
    var woken = new java.util.concurrent.atomic.AtomicInteger();
    rolledBack(
        name,
        inject,
        isFinal,
        calls,
        look -> inBackground(exports, woken, look),
        provisioner.withBackground(exports::add));
    // The export ran between two looks, off the look that started it.
    assertThat(woken.get()).isEqualTo(calls.contains(ATTACH) || calls.contains(RESERVE) ? 1 : 0);
  }

  /**
   * Looks as the claim loop does with Cinder calls in the background: a look that starts a create
   * or an export is told so with a wake that the call's end completes, and a look while it waits
   * asks Cinder nothing; the call runs between two looks.
   */
  private PersistentVolume inBackground(
      List<Runnable> exports,
      java.util.concurrent.atomic.AtomicInteger woken,
      Supplier<PersistentVolume> look) {
    return UntilMade.again(
        () -> {
          try {
            return look.get();
          } catch (StillMaking e) {
            var wake = e.progress().wake();
            if (wake != null) {
              assertThat(wake.toCompletableFuture()).isNotDone();
              assertThat(e.getMessage())
                  .matches(
                      "volume (vol-1 waits for its turn to be exported to the cluster|"
                          + PV
                          + " waits for its turn to be asked of Cinder) .*");
              List<String> before = cinder.log();
              assertThatThrownBy(look::get)
                  .isInstanceOfSatisfying(
                      StillMaking.class,
                      again -> assertThat(again.progress().wake()).as("woken once").isNull())
                  .hasMessage(e.getMessage());
              assertThat(cinder.log()).as("a look while it waits").isEqualTo(before);
              List.copyOf(exports).forEach(Runnable::run);
              exports.clear();
              assertThat(wake.toCompletableFuture()).isDone();
              woken.incrementAndGet();
            }
            throw e;
          }
        });
  }

  /**
   * Looks, running each background create as it is asked, until the claim's export is asked and
   * waits for its turn; returns what that look was told.
   */
  private static StillMaking untilExportWaits(Runnable look, List<Runnable> background) {
    for (int i = 0; i < UntilMade.LOOKS; i++) {
      StillMaking told = catchThrowableOfType(look::run, StillMaking.class);
      if (told.getMessage().startsWith("volume vol-1 waits for its turn to be exported")) {
        return told;
      }
      List.copyOf(background).forEach(Runnable::run);
      background.clear();
    }
    throw new AssertionError("no export asked within " + UntilMade.LOOKS + " looks");
  }

  /**
   * A claim deleted while a look runs its create (on another thread: the deleted claim's path may
   * meet a look that is still at it): the volume exists only once the create ends, so the deletion
   * answers "still going" until then, and then finds and deletes it; nothing leaks.
   */
  @Test
  void aClaimDeletedWhileItsCreateRunsHasTheVolumeItMakesDeleted() throws Exception {
    var entered = new java.util.concurrent.CountDownLatch(1);
    var open = new java.util.concurrent.CountDownLatch(1);
    var gated =
        org.standalonecinder.provisioner.cinder.CinderDecorator.wrap(
            cinder,
            (operation, args, call) -> {
              if (operation.equals("createVolume")) {
                entered.countDown();
                try {
                  open.await(10, java.util.concurrent.TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                  Thread.currentThread().interrupt();
                }
              }
              return call.proceed();
            });
    VolumeProvisioner p =
        new VolumeProvisioner(
            gated, secrets, VolumeMappers.standard(), Fixtures.settings(), Backoff.DEFAULT);
    var look =
        java.util.concurrent.CompletableFuture.runAsync(
            () -> {
              try {
                p.provision(claim("1Gi"), storageClass(Map.of()), null, Map.of(), pv -> false);
              } catch (StillMaking making) {
                // Cinder makes it: the claim's next look would take it
              }
            });
    assertThat(entered.await(10, java.util.concurrent.TimeUnit.SECONDS)).isTrue();

    assertThat(p.deleteOrphans(UID)).as("still going while the create runs").isEqualTo(1);
    assertThat(cinder.log()).doesNotContain(DELETE);
    open.countDown();
    look.get(10, java.util.concurrent.TimeUnit.SECONDS);
    for (int n = 0; n < UntilMade.LOOKS && p.deleteOrphans(UID) != 0; n++) {
      // the fake deletes between two looks
    }
    assertThat(cinder.log()).contains(CREATE, DELETE);
    assertThat(cinder.volumes()).isEmpty();
  }

  /**
   * A claim deleted while its export waits for its turn: the export never asks Cinder, and the
   * claim's volume goes by the deleted claim's path.
   */
  @Test
  void anExportForgottenBeforeItsTurnAsksCinderNothing() {
    List<Runnable> exports = new java.util.ArrayList<>();
    VolumeProvisioner p = provisioner.withBackground(exports::add);
    var claim = claim("1Gi");
    Runnable look = () -> p.provision(claim, storageClass(Map.of()), null, Map.of(), pv -> false);
    StillMaking started = untilExportWaits(look, exports);
    assertThat(exports).hasSize(1);

    p.deleteOrphans(UID);
    exports.forEach(Runnable::run);
    assertThat(cinder.log()).doesNotContain(ATTACH).contains(DELETE);
    assertThat(cinder.attachments()).isEmpty();
    assertThat(started.progress().wake().toCompletableFuture()).isCompletedExceptionally();
  }

  /**
   * A replica that stops leading drops its exports: one not yet run never runs, and one that ran is
   * not taken; the next look (here, or the next leader's) finds the volume as Cinder has it, undoes
   * the export it finds and makes its own.
   */
  @ParameterizedTest(name = "{0}")
  @CsvSource({"waiting for its turn, false", "ended but not taken, true"})
  void aReplicaThatStopsLeadingDropsItsExports(String name, boolean ran) {
    List<Runnable> exports = new java.util.ArrayList<>();
    VolumeProvisioner p = provisioner.withBackground(exports::add);
    var claim = claim("1Gi");
    Runnable look = () -> p.provision(claim, storageClass(Map.of()), null, Map.of(), pv -> false);
    untilExportWaits(look, exports);
    if (ran) {
      exports.forEach(Runnable::run);
      exports.clear();
      assertThat(cinder.log()).endsWith(ATTACH, COMPLETE);
    }

    p.paused();
    exports.forEach(Runnable::run);
    exports.clear();
    cinder.clearLog();
    assertThatThrownBy(look::run).hasMessageStartingWith("volume vol-1 waits for its turn");
    assertThat(cinder.log())
        .as("found again in Cinder, its export undone when one was made")
        .startsWith(ran ? new String[] {FIND, LIST, DETACH} : new String[] {FIND, LIST, AWAIT});
    exports.forEach(Runnable::run);
    PersistentVolume pv = p.provision(claim, storageClass(Map.of()), null, Map.of(), n -> false);
    assertThat(pv.getMetadata().getAnnotations())
        .containsEntry(ClaimAnnotations.VOLUME_ID, "vol-1");
    assertThat(cinder.attachments()).as("one export, the last one").hasSize(1);
  }

  private void rolledBack(
      String name,
      Consumer<VolumeProvisionerTest> inject,
      boolean isFinal,
      List<String> calls,
      java.util.function.Function<Supplier<PersistentVolume>, PersistentVolume> looks,
      VolumeProvisioner p) {
    inject.accept(this);
    var claim =
        name.startsWith("ReadWriteMany")
            ? claimOf(UID, "data", "1Gi", "Block", "ReadWriteMany")
            : claim("1Gi");
    assertThatThrownBy(
            () ->
                looks.apply(
                    () -> p.provision(claim, storageClass(Map.of()), null, Map.of(), pv -> false)))
        .isInstanceOfSatisfying(
            ProvisioningException.class, e -> assertThat(e.isFinal()).isEqualTo(isFinal));
    assertThat(cinder.log()).containsExactlyElementsOf(calls);
    assertThat(cinder.volumes()).isEmpty();
    assertThat(cinder.attachments()).isEmpty();
    assertThat(secrets.secrets).isEmpty();
  }

  @Test
  void aFailingRollbackStepKeepsTheOriginalErrorAndTheNextAttemptRecovers() {
    cinder.failNext("completeAttachment", OUTAGE);
    cinder.failNext(
        "deleteAttachment", () -> new CinderException.Unavailable("still down", 503, null, null));
    assertThatThrownBy(() -> UntilMade.provision(provisioner, claim("1Gi"), storageClass(Map.of())))
        .isInstanceOf(ProvisioningException.class)
        .hasMessageContaining("Cinder down")
        // The detach failed, so Cinder refused to delete the attached volume as well.
        .satisfies(e -> assertThat(e.getCause().getSuppressed()).hasSize(2));
    assertThat(cinder.log()).endsWith(DETACH, DELETE);
    assertThat(cinder.volumes()).containsKey("vol-1");

    // The next attempt finds the volume, detaches it and carries on: nothing is lost or leaked.
    cinder.clearLog();
    PersistentVolume pv = UntilMade.provision(provisioner, claim("1Gi"), storageClass(Map.of()));
    assertThat(cinder.log()).startsWith(FIND, "listAttachments vol-1", DETACH, AWAIT, ATTACH);
    assertThat(pv.getMetadata().getAnnotations())
        .containsEntry(ClaimAnnotations.VOLUME_ID, "vol-1");
    assertThat(cinder.volumes()).hasSize(1);
    assertThat(cinder.attachments()).hasSize(1);
  }

  // ------------------------------------------------------------------ success

  @Test
  void theAttachmentsPathMakesAnIscsiPvWithChap() {
    PersistentVolume pv =
        UntilMade.provision(
            provisioner, claim("1500Mi"), storageClass(Map.of("fsType", "xfs", "type", "fast")));
    assertThat(cinder.log())
        .containsExactly(FIND, CREATE, FIND, LIST, AWAIT, ATTACH, COMPLETE, PUT_SECRET);
    assertThat(pv.getMetadata().getName()).isEqualTo(PV);
    assertThat(pv.getMetadata().getAnnotations())
        .containsEntry(ClaimAnnotations.VOLUME_ID, "vol-1")
        .containsEntry(Names.ANN_ATTACHMENT, "att-2")
        .containsEntry(Names.ANN_IDENTITY, "cluster-a")
        .containsEntry(ClaimAnnotations.PROVISIONED_BY, "openstack.org/standalone-cinder");
    var spec = pv.getSpec();
    assertThat(spec.getCapacity()).containsEntry("storage", new Quantity("2Gi"));
    assertThat(spec.getClaimRef().getUid()).isEqualTo(UID);
    assertThat(spec.getClaimRef().getNamespace()).isEqualTo("apps");
    assertThat(spec.getStorageClassName()).isEqualTo("cinder");
    assertThat(spec.getPersistentVolumeReclaimPolicy()).isEqualTo("Delete");
    assertThat(spec.getMountOptions()).containsExactly("noatime");
    assertThat(spec.getVolumeMode()).isEqualTo("Filesystem");
    ISCSIPersistentVolumeSource iscsi = spec.getIscsi();
    assertThat(iscsi.getTargetPortal()).isEqualTo("127.0.0.1:3260");
    assertThat(iscsi.getIqn()).isEqualTo("iqn.2010-10.org.openstack:volume-x");
    assertThat(iscsi.getLun()).isEqualTo(1);
    assertThat(iscsi.getInitiatorName()).isEqualTo("iqn.2026-11.org.standalonecinder:cluster-a");
    assertThat(iscsi.getFsType()).isEqualTo("xfs");
    assertThat(iscsi.getChapAuthSession()).isTrue();
    assertThat(iscsi.getSecretRef().getNamespace()).isEqualTo("standalone-cinder");
    var secret = secrets.secrets.get("standalone-cinder/chap-" + PV);
    assertThat(secret.getType()).isEqualTo("kubernetes.io/iscsi-chap");
    assertThat(secret.getStringData()).containsEntry("node.session.auth.password", "chap-secret");
    assertThat(secret.getMetadata().getLabels()).containsEntry(Names.LABEL_PV, PV);
    Volume v = cinder.volumes().get("vol-1");
    assertThat(v.sizeGib()).isEqualTo(2);
    assertThat(v.volumeType()).isEqualTo("fast");
    assertThat(v.metadata())
        .containsEntry(Names.META_PVC_UID, UID)
        .containsEntry(Names.META_CLUSTER, "cluster-a")
        .containsEntry(Names.META_PVC_NAMESPACE, "apps")
        .containsEntry(Names.META_PVC_NAME, "data")
        .containsEntry(Names.META_STATE, Names.STATE_PROVISIONING);
    // The PV's from the moment it exists: the controller hands it over.
    cinder.clearLog();
    provisioner.handOver(pv);
    assertThat(cinder.log()).containsExactly(HAND_OVER);
    assertThat(cinder.volumes().get("vol-1").metadata())
        .containsEntry(Names.META_STATE, Names.STATE_PROVISIONED);
    assertThat(v.status()).isEqualTo("in-use");
  }

  @Test
  void anOldCinderIsReservedAndInitialized() {
    cinder.microversion(OLD);
    PersistentVolume pv =
        UntilMade.provision(
            provisioner,
            claimOf(UID, "raw", "1Gi", "Block", "ReadOnlyMany"),
            storageClass(Map.of()));
    assertThat(cinder.log())
        .containsExactly(FIND, CREATE, FIND, LIST, AWAIT, RESERVE, INIT, PUT_SECRET);
    assertThat(pv.getMetadata().getAnnotations()).containsEntry(Names.ANN_ATTACHMENT, "reserved");
    assertThat(pv.getSpec().getVolumeMode()).isEqualTo("Block");
    assertThat(pv.getSpec().getIscsi().getFsType()).isNull();
    assertThat(pv.getSpec().getIscsi().getReadOnly()).isTrue();
  }

  static Arguments leftBy(
      String name,
      String status,
      List<String> attachments,
      Consumer<VolumeProvisionerTest> inject,
      String failure,
      String... calls) {
    return Arguments.of(name, status, attachments, inject, failure, List.of(calls));
  }

  private static final String OLD_FIND = "listAttachments vol-old";
  private static final String OLD_AWAIT = "awaitVolumeStatus vol-old";
  private static final String[] THEN_ATTACHED = {
    "createAttachment vol-old", "completeAttachment att-1", PUT_SECRET
  };

  private static String[] calls(String[] head, String... tail) {
    return Stream.concat(Stream.of(head), Stream.of(tail)).toArray(String[]::new);
  }

  static Stream<Arguments> volumesLeftByAnEarlierAttempt() {
    return Stream.of(
        leftBy(
            "in-use with an attachment: detached first",
            "in-use",
            List.of("att-old"),
            t -> {},
            null,
            calls(
                new String[] {FIND, OLD_FIND, "deleteAttachment att-old", OLD_AWAIT},
                THEN_ATTACHED)),
        leftBy(
            "reserved with no attachment for the grace: reset to available",
            "reserved",
            List.of(),
            t -> {},
            null,
            calls(
                new String[] {
                  FIND, OLD_FIND, OLD_AWAIT, OLD_FIND, "resetToAvailable vol-old", OLD_AWAIT
                },
                THEN_ATTACHED)),
        leftBy(
            "reserved, and the attachment comes within the grace: detached, not reset",
            "reserved",
            List.of(),
            t ->
                t.cinder.failNext(
                    "awaitVolumeStatus",
                    () -> {
                      t.cinder.lateAttachment("vol-old", "att-late");
                      return null;
                    }),
            null,
            calls(
                new String[] {FIND, OLD_FIND, OLD_AWAIT, OLD_FIND, "deleteAttachment att-late"},
                calls(new String[] {OLD_AWAIT}, THEN_ATTACHED))),
        leftBy(
            "reserved with no attachment, reset forbidden: the admin's command, tried again",
            "reserved",
            List.of(),
            t ->
                t.cinder.failNext(
                    "resetToAvailable",
                    () ->
                        new CinderException.Forbidden(
                            "Policy doesn't allow volume_extension:volume_admin_actions:"
                                + "reset_status to be performed.",
                            "req-403")),
            "cinder reset-state --state available --attach-status detached vol-old",
            FIND,
            OLD_FIND,
            OLD_AWAIT,
            OLD_FIND,
            "resetToAvailable vol-old",
            "deleteVolume vol-old"));
  }

  /**
   * A volume of the claim that an earlier attempt left exported or half-reserved is released before
   * it is attached again; a reservation Cinder's API left behind (reserved, no attachment) is reset
   * only after it stayed so for the grace, and only by an admin.
   */
  @ParameterizedTest(name = "{0}")
  @MethodSource("volumesLeftByAnEarlierAttempt")
  void aVolumeLeftByAnEarlierAttemptIsReleasedFirst(
      String name,
      String status,
      List<String> attachments,
      Consumer<VolumeProvisionerTest> inject,
      String failure,
      List<String> calls) {
    seedOld(status, attachments);
    inject.accept(this);
    if (failure == null) {
      PersistentVolume pv = UntilMade.provision(provisioner, claim("1Gi"), storageClass(Map.of()));
      assertThat(pv.getMetadata().getAnnotations())
          .containsEntry(ClaimAnnotations.VOLUME_ID, "vol-old");
      assertThat(cinder.attachments()).containsOnlyKeys("att-1");
    } else {
      assertThatThrownBy(
              () -> UntilMade.provision(provisioner, claim("1Gi"), storageClass(Map.of())))
          .isInstanceOfSatisfying(
              ProvisioningException.class, e -> assertThat(e.isFinal()).isFalse())
          .hasMessageContaining(failure);
      assertThat(cinder.volumes().get("vol-old").status()).isEqualTo(status);
    }
    assertThat(cinder.log()).containsExactlyElementsOf(calls);
    assertThat(cinder.volumes()).containsOnlyKeys("vol-old");
  }

  private static final String OLD_DELETE = "deleteVolume vol-old";

  /**
   * A row of a volume found while Cinder still makes it.
   *
   * @param status its status
   * @param unscheduled whether no scheduler ever took it (Cinder deletes it at once)
   * @param grace the scheduling grace: zero when the volume is past it
   * @param looks how often the claim is looked at
   * @param failure what the last look fails with, or null when it says Cinder is still at it
   * @param calls Cinder's calls, of every look
   */
  record Making(
      String status,
      boolean unscheduled,
      java.time.Duration grace,
      int looks,
      String failure,
      List<String> calls) {}

  static Stream<Arguments> volumesBeingMade() {
    java.time.Duration within = Volumes.SCHEDULING_GRACE;
    java.time.Duration past = java.time.Duration.ZERO;
    return Stream.of(
        Arguments.of(
            "being filled, within the grace: left to Cinder, nothing waited for or undone",
            new Making("creating", false, within, 1, null, List.of(FIND))),
        Arguments.of(
            "restoring a backup: left to Cinder, never asked whether it was scheduled",
            new Making("restoring-backup", false, past, 2, null, List.of(FIND, FIND))),
        Arguments.of(
            "creating past the grace, a backend fills it: asked once (refused), then left",
            new Making("creating", false, past, 3, null, List.of(FIND, OLD_DELETE, FIND, FIND))),
        Arguments.of(
            "creating past the grace, never scheduled: deleted, the next attempt makes a new one",
            new Making(
                "creating",
                true,
                past,
                1,
                "Cinder never scheduled volume vol-old",
                List.of(FIND, OLD_DELETE))));
  }

  /**
   * No attempt waits for Cinder to make a volume (a copy may take hours): each look finds it by the
   * claim's identity, says how far Cinder has got and when to look again, and undoes nothing. A
   * volume still {@code creating} past the scheduling grace is asked once, by a delete, whether a
   * scheduler ever took it: Cinder deletes one with no host at once and refuses one being filled.
   */
  @ParameterizedTest(name = "{0}")
  @MethodSource("volumesBeingMade")
  void aVolumeBeingMadeIsLeftToCinderAndLookedAtAgain(String name, Making row) {
    seedOld(row.status(), List.of());
    if (row.unscheduled()) {
      cinder.neverScheduled("vol-old");
    } else {
      cinder.stillMaking("vol-old");
    }
    VolumeProvisioner graced = provisioner.withSchedulingGrace(row.grace());
    for (int look = 1; look < row.looks(); look++) {
      assertThatThrownBy(
              () ->
                  graced.provision(
                      claim("1Gi"), storageClass(Map.of()), null, Map.of(), pvName -> false))
          .isInstanceOf(StillMaking.class);
    }
    if (row.failure() == null) {
      assertThatThrownBy(
              () ->
                  graced.provision(
                      claim("1Gi"), storageClass(Map.of()), null, Map.of(), pvName -> false))
          .isInstanceOfSatisfying(
              StillMaking.class,
              e -> {
                assertThat(e.volumeId()).isEqualTo("vol-old");
                assertThat(e.progress().after())
                    .isEqualTo(org.standalonecinder.provisioner.controller.Pace.FIRST_LOOK);
              })
          .hasMessage(
              "Cinder is creating volume vol-old (status "
                  + row.status()
                  + "); under a minute so far");
      assertThat(cinder.volumes().get("vol-old").status()).isEqualTo(row.status());
    } else {
      assertThatThrownBy(
              () ->
                  graced.provision(
                      claim("1Gi"), storageClass(Map.of()), null, Map.of(), pvName -> false))
          .isInstanceOfSatisfying(
              ProvisioningException.class, e -> assertThat(e.isFinal()).isFalse())
          .hasMessageContaining(row.failure());
      assertThat(cinder.volumes()).isEmpty();
    }
    assertThat(cinder.log()).containsExactlyElementsOf(row.calls());
    assertThat(cinder.attachments()).isEmpty();
    assertThat(secrets.secrets).isEmpty();
  }

  /** Once Cinder has made it, the next look takes the volume on: exported, and its PV made. */
  @Test
  void aVolumeCinderHasMadeMeanwhileIsTakenOnByTheNextLook() {
    assertThatThrownBy(
            () ->
                provisioner.provision(
                    claim("1Gi"), storageClass(Map.of()), null, Map.of(), pvName -> false))
        .isInstanceOf(StillMaking.class)
        .hasMessage("Cinder is creating volume vol-1 (status creating); under a minute so far");
    assertThat(cinder.log()).containsExactly(FIND, CREATE);

    PersistentVolume pv =
        provisioner.provision(
            claim("1Gi"), storageClass(Map.of()), null, Map.of(), pvName -> false);

    assertThat(pv.getMetadata().getAnnotations())
        .containsEntry(ClaimAnnotations.VOLUME_ID, "vol-1");
    assertThat(cinder.log())
        .containsExactly(FIND, CREATE, FIND, LIST, AWAIT, ATTACH, COMPLETE, PUT_SECRET);
    assertThat(cinder.volumes()).containsOnlyKeys("vol-1");
  }

  /**
   * The loop's cache may lag behind a PV made a moment ago (by this replica or the last leader):
   * the API server is asked whether the claim's PV exists only when Cinder has the claim's volume
   * exported already (a PV is made only after the export), and a volume a PV holds is neither
   * detached, exported again nor rolled back.
   */
  @ParameterizedTest(name = "{0}")
  @CsvSource({
    "Cinder has no volume of the claim: the looks that make and find it ask nothing, , false, 0, vol-1",
    "Cinder has it available and never exported: no PV can hold it so none is asked,      available, false, 0, vol-old",
    "Cinder has it exported and no PV holds it: asked and then reused,                 in-use, false, 1, vol-old",
    "Cinder has it and its PV exists (the cache lagged): nothing is done,           in-use, true, 1, ",
  })
  void theApiServerIsAskedForThePvOnlyWhenCinderHasTheVolume(
      String name, String status, boolean pvExists, int asked, String provisioned) {
    if (status != null) {
      seedOld(status, status.equals("in-use") ? List.of("att-pv") : List.of());
    }
    List<String> questions = new java.util.ArrayList<>();
    java.util.function.Supplier<PersistentVolume> provision =
        () ->
            UntilMade.provision(
                provisioner,
                claim("1Gi"),
                storageClass(Map.of()),
                null,
                Map.of(),
                pv -> {
                  questions.add(pv);
                  return pvExists;
                });
    if (provisioned != null) {
      assertThat(provision.get().getMetadata().getAnnotations())
          .containsEntry(ClaimAnnotations.VOLUME_ID, provisioned);
    } else {
      assertThatThrownBy(provision::get)
          .isInstanceOf(AlreadyProvisioned.class)
          .hasMessage("PersistentVolume " + PV + " exists already");
      assertThat(cinder.log()).containsExactly(FIND);
      assertThat(cinder.volumes().get("vol-old").status()).isEqualTo("in-use");
      assertThat(cinder.volumes().get("vol-old").attachmentIds()).containsExactly("att-pv");
      assertThat(secrets.secrets).isEmpty();
    }
    assertThat(questions).hasSize(asked).allMatch(PV::equals);
  }

  @Test
  void aVolumeNeverScheduledIsReplacedByTheNextAttempt() {
    seedOld("creating", List.of());
    cinder.neverScheduled("vol-old");
    VolumeProvisioner past = provisioner.withSchedulingGrace(java.time.Duration.ZERO);
    assertThatThrownBy(() -> UntilMade.provision(past, claim("1Gi"), storageClass(Map.of())))
        .isInstanceOf(ProvisioningException.class);
    PersistentVolume pv = UntilMade.provision(past, claim("1Gi"), storageClass(Map.of()));
    assertThat(pv.getMetadata().getAnnotations())
        .containsEntry(ClaimAnnotations.VOLUME_ID, "vol-1");
    assertThat(cinder.volumes()).containsOnlyKeys("vol-1");
  }

  static Stream<Arguments> volumesThatGoWhileTheyAreMadeReady() {
    return Stream.of(
        Arguments.of(
            "being deleted by an earlier attempt's rollback: not waited for, not deleted again",
            "deleting",
            (Consumer<VolumeProvisionerTest>) t -> {},
            "vol-old of this claim is being deleted",
            List.of(FIND)),
        Arguments.of(
            "deleted while it was awaited: Cinder's 404 ends the attempt, not the claim",
            "available",
            (Consumer<VolumeProvisionerTest>)
                t ->
                    t.cinder.failNext(
                        "awaitVolumeStatus",
                        () -> {
                          t.cinder.deleteVolume("vol-old");
                          return new CinderException.NotFound(
                              "volume vol-old disappeared while waiting for [available]", null);
                        }),
            "vol-old of this claim was deleted while it was made ready",
            List.of(FIND, OLD_FIND, OLD_AWAIT, OLD_DELETE, OLD_DELETE)));
  }

  /**
   * The claim's volume gone or going under an attempt is a failure the next attempt mends with a
   * new volume: not a final one, which would leave the claim waiting for the next resync.
   */
  @ParameterizedTest(name = "{0}")
  @MethodSource("volumesThatGoWhileTheyAreMadeReady")
  void aVolumeThatGoesWhileItIsMadeReadyIsReplacedByTheNextAttempt(
      String name,
      String status,
      Consumer<VolumeProvisionerTest> inject,
      String failure,
      List<String> calls) {
    seedOld(status, List.of());
    inject.accept(this);
    assertThatThrownBy(() -> UntilMade.provision(provisioner, claim("1Gi"), storageClass(Map.of())))
        .isInstanceOfSatisfying(ProvisioningException.class, e -> assertThat(e.isFinal()).isFalse())
        .hasMessageContaining(failure);
    assertThat(cinder.log()).containsExactlyElementsOf(calls);

    for (String id : List.copyOf(cinder.volumes().keySet())) { // Cinder finishes the deletion
      cinder.setStatus(id, "available");
      cinder.deleteVolume(id);
    }
    PersistentVolume pv = UntilMade.provision(provisioner, claim("1Gi"), storageClass(Map.of()));
    assertThat(pv.getMetadata().getAnnotations())
        .containsEntry(ClaimAnnotations.VOLUME_ID, "vol-1");
    assertThat(cinder.volumes()).containsOnlyKeys("vol-1");
  }

  /** The claim's volume as an earlier attempt left it. */
  private void seedOld(String status, List<String> attachments) {
    cinder.seed(
        new Volume(
            "vol-old",
            PV,
            status,
            1,
            "nova",
            "__DEFAULT__",
            Names.identifying(UID, "cluster-a"),
            null,
            null,
            false,
            attachments));
  }

  @Test
  void aVolumeOfAnotherClusterIsNotTaken() {
    cinder.seed(
        new Volume(
            "vol-other",
            PV,
            "available",
            1,
            "nova",
            "__DEFAULT__",
            Names.identifying(UID, "cluster-b"),
            null,
            null,
            false,
            List.of()));
    UntilMade.provision(provisioner, claim("1Gi"), storageClass(Map.of()));
    assertThat(cinder.log()).contains(CREATE);
    assertThat(cinder.volumes()).containsKey("vol-other").hasSize(2);
  }

  @Test
  void aReusedVolumeOfAnotherSizeIsAFinalErrorAndIsKept() {
    cinder.seed(
        new Volume(
            "vol-old",
            PV,
            "available",
            5,
            "nova",
            "__DEFAULT__",
            Names.identifying(UID, "cluster-a"),
            null,
            null,
            false,
            List.of()));
    assertThatThrownBy(() -> UntilMade.provision(provisioner, claim("1Gi"), storageClass(Map.of())))
        .isInstanceOfSatisfying(ProvisioningException.class, e -> assertThat(e.isFinal()).isTrue())
        .hasMessageContaining("exists with 5 GiB but the claim asks for 1 GiB");
    assertThat(cinder.volumes()).containsKey("vol-old");
  }

  @ParameterizedTest(name = "{0} {1}")
  @CsvSource({
    "ReadWriteOnce, Filesystem",
    "ReadWriteOncePod, Filesystem",
    "ReadOnlyMany, Filesystem",
    "ReadOnlyMany, Block",
    "ReadWriteOnce, Block",
    "ReadWriteMany, Block"
  })
  void accessModesThatAreSafeAreProvisioned(String mode, String volumeMode) {
    cinder.multiattachTypes(true);
    PersistentVolume pv =
        UntilMade.provision(
            provisioner, claimOf(UID, "data", "1Gi", volumeMode, mode), storageClass(Map.of()));
    assertThat(pv.getSpec().getAccessModes()).containsExactly(mode);
    assertThat(pv.getSpec().getVolumeMode()).isEqualTo(volumeMode);
  }

  @Test
  void readWriteManyBlockWithAMultiattachType() {
    cinder.multiattachTypes(true);
    PersistentVolume pv =
        UntilMade.provision(
            provisioner,
            claimOf(UID, "data", "1Gi", "Block", "ReadWriteMany"),
            storageClass(Map.of()));
    assertThat(pv.getSpec().getAccessModes()).containsExactly("ReadWriteMany");
    assertThat(pv.getSpec().getVolumeMode()).isEqualTo("Block");
  }

  // ------------------------------------------------------------------ claims refused up front

  static Stream<Arguments> refusedClaims() {
    return Stream.of(
        Arguments.of(
            "unknown class parameter",
            claim("1Gi"),
            Map.of("iops", "5"),
            "unknown parameter 'iops'"),
        Arguments.of(
            "misspelt smartclone",
            claim("1Gi"),
            Map.of("smartClones", "true"),
            "did you mean 'smartclone'"),
        Arguments.of(
            "smartclone not a boolean",
            claim("1Gi"),
            Map.of("smartclone", "yes"),
            "must be \"true\" or \"false\""),
        Arguments.of("no size", claimOf(UID, "x", "0", null), Map.of(), "requests 0 of storage"),
        Arguments.of("too big", claim("100Ti"), Map.of(), "the largest volume is"),
        Arguments.of(
            "larger than the class allows",
            claim("11Gi"),
            Map.of("maxSizeGiB", "10"),
            "the claim requests 11Gi; StorageClass"),
        Arguments.of(
            "larger than a number of GiB can hold",
            claim("1000000000000Ei"),
            Map.of(),
            "the largest volume is 65536 GiB: nothing was asked of Cinder"),
        Arguments.of(
            "unknown access mode",
            claim("1Gi", "ReadWriteSometimes"),
            Map.of(),
            "unknown access mode"),
        Arguments.of(
            "unknown volume mode",
            claimOf(UID, "x", "1Gi", "Tape"),
            Map.of(),
            "unknown volumeMode Tape"),
        Arguments.of(
            "ReadWriteMany Filesystem (even on a multiattach type)",
            claimOf(UID, "x", "1Gi", "Filesystem", "ReadWriteMany"),
            Map.of(),
            "ReadWriteMany needs volumeMode Block"),
        Arguments.of(
            "ReadWriteMany without volumeMode (Filesystem by default)",
            claimOf(UID, "x", "1Gi", null, "ReadWriteMany"),
            Map.of(),
            "a Filesystem volume (ext4, xfs) mounted read-write on several nodes"),
        Arguments.of(
            "ReadWriteMany among other modes, Filesystem",
            claimOf(UID, "x", "1Gi", "Filesystem", "ReadWriteOnce", "ReadWriteMany"),
            Map.of(),
            "or ReadOnlyMany to share a filesystem read-only"),
        Arguments.of(
            "a request of eleven characters and 300 million digits (1e300000000)",
            claim("1e300000000"),
            Map.of(),
            "the largest volume is 65536 GiB: nothing was asked of Cinder"),
        Arguments.of(
            "a selector: it asks for an existing PV",
            withSelector(claim("1Gi")),
            Map.of(),
            "the claim has a selector (spec.selector)"),
        Arguments.of(
            "a request the cache kept quoted (no size)",
            withRequest(claim("1Gi"), new Quantity("9... (100000 characters)", null)),
            Map.of(),
            "the claim's storage request 9... (100000 characters) is not a size"));
  }

  private static io.fabric8.kubernetes.api.model.PersistentVolumeClaim withSelector(
      io.fabric8.kubernetes.api.model.PersistentVolumeClaim c) {
    c.getSpec().setSelector(new io.fabric8.kubernetes.api.model.LabelSelector());
    return c;
  }

  private static io.fabric8.kubernetes.api.model.PersistentVolumeClaim withRequest(
      io.fabric8.kubernetes.api.model.PersistentVolumeClaim c, Quantity q) {
    c.getSpec().getResources().setRequests(Map.of("storage", q));
    return c;
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("refusedClaims")
  @org.junit.jupiter.api.Timeout(20)
  void claimsThatCannotWorkAreRefusedBeforeAnyCall(
      String name,
      io.fabric8.kubernetes.api.model.PersistentVolumeClaim claim,
      Map<String, String> params,
      String message) {
    cinder.multiattachTypes(true);
    assertThatThrownBy(() -> UntilMade.provision(provisioner, claim, storageClass(params)))
        .isInstanceOfSatisfying(ProvisioningException.class, e -> assertThat(e.isFinal()).isTrue())
        .hasMessageContaining(message);
    assertThat(cinder.log()).isEmpty();
  }

  @Test
  void aLimitBelowTheRoundedSizeIsRefused() {
    var claim = claim("1500Mi");
    claim.getSpec().getResources().setLimits(Map.of("storage", new Quantity("1800Mi")));
    assertThatThrownBy(() -> UntilMade.provision(provisioner, claim, storageClass(Map.of())))
        .hasMessageContaining("rounds up to 2Gi, above its limit of 1800Mi");
  }

  // ------------------------------------------------------------------ protocols not mapped

  @ParameterizedTest(name = "{0}")
  @CsvSource({
    "nfs, export=10.0.0.5:/srv/cinder/volume-1",
    "nvmeof, target_nqn=nqn.2014-08.org.nvmexpress:x",
    "scaleio, scaleIO_volname=vol-1",
    "local, device_path=/dev/sdb"
  })
  void anExportOfAnotherProtocolIsAFinalRefusalWithNothingLeft(String type, String field) {
    String[] kv = field.split("=", 2);
    cinder.export(type, Map.of(kv[0], kv[1]));
    assertThatThrownBy(() -> UntilMade.provision(provisioner, claim("1Gi"), storageClass(Map.of())))
        .isInstanceOfSatisfying(ProvisioningException.class, e -> assertThat(e.isFinal()).isTrue())
        .hasMessageContaining("Cinder exported the volume over '" + type + "'")
        .hasMessageContaining("(supported: [fibre_channel, iscsi, rbd])");
    assertThat(cinder.log())
        .containsExactly(FIND, CREATE, FIND, LIST, AWAIT, ATTACH, COMPLETE, DETACH, DELETE);
    assertThat(cinder.volumes()).isEmpty();
    assertThat(cinder.attachments()).isEmpty();
    assertThat(secrets.secrets).isEmpty();
  }

  // ------------------------------------------------------------------ orphans

  private static Volume volume(String id, String uid, String cluster, String state) {
    Map<String, String> md = new java.util.LinkedHashMap<>(Names.identifying(uid, cluster));
    md.put(Names.META_PVC_NAMESPACE, "apps");
    md.put(Names.META_PVC_NAME, "data");
    if (state != null) {
      md.put(Names.META_STATE, state);
    }
    return new Volume(
        id, Names.pvName(uid), "available", 1, "nova", "__DEFAULT__", md, null, null, false, null);
  }

  static Stream<Arguments> orphans() {
    return Stream.of(
        Arguments.of(
            "still provisioning: deleted, with its Secret",
            volume("vol-a", UID, "cluster-a", Names.STATE_PROVISIONING),
            true),
        Arguments.of(
            "from before the state was kept: deleted as before",
            volume("vol-a", UID, "cluster-a", null),
            true),
        Arguments.of(
            "handed to a PV (a retained PV an admin deleted): kept, with its Secret",
            volume("vol-a", UID, "cluster-a", Names.STATE_PROVISIONED),
            false),
        Arguments.of(
            "another cluster's: never touched",
            volume("vol-a", UID, "cluster-b", Names.STATE_PROVISIONING),
            false),
        Arguments.of(
            "restored from a backup, under its source's identity and state: deleted",
            restoredUnderItsSource("vol-a"),
            true),
        Arguments.of(
            "its restore failed after Cinder wrote the source's metadata (error, no"
                + " src_backup_id): deleted",
            restoredHalfway("error"),
            true),
        Arguments.of(
            "named after it, another claim's metadata, neither restored nor being made: never"
                + " touched",
            restoredHalfway("available"),
            false));
  }

  /** Cinder's restore between its two writes: the source's metadata, not yet src_backup_id. */
  private static Volume restoredHalfway(String status) {
    Volume r = restoredUnderItsSource("vol-a");
    Map<String, String> md = new java.util.LinkedHashMap<>(r.metadata());
    md.remove("src_backup_id");
    return new Volume(
        r.id(), r.name(), status, 1, "nova", "__DEFAULT__", md, null, null, false, null);
  }

  /**
   * The claim's volume as Cinder's backup restore leaves it: named after the claim, the metadata
   * that of the volume the backup was made of (another claim's, handed over), and src_backup_id.
   */
  private static Volume restoredUnderItsSource(String id) {
    Volume source = volume(id, "uid-source", "cluster-a", Names.STATE_PROVISIONED);
    Map<String, String> md = new java.util.LinkedHashMap<>(source.metadata());
    md.put("src_backup_id", "backup-1");
    return new Volume(
        id, Names.pvName(UID), "available", 1, "nova", "__DEFAULT__", md, null, null, false, null);
  }

  /** Where an earlier attempt (a crash, a deadline) left Cinder's restore into the claim's name. */
  enum Earlier {
    NONE,
    RESTORED,
    HALFWAY,
    FAILED_HALFWAY
  }

  static Stream<Arguments> restoresFromBackups() {
    return Stream.of(
        Arguments.of("restored now: the claim's identity is written back", Earlier.NONE),
        Arguments.of(
            "restored by an attempt that ended before: found by its name and src_backup_id, not"
                + " made again",
            Earlier.RESTORED),
        Arguments.of(
            "still being restored, the source's metadata written and src_backup_id not yet (seen"
                + " in CI after a crash): found by its name and status, not made again",
            Earlier.HALFWAY),
        Arguments.of(
            "failed there (error, the source's metadata): found, deleted, made again",
            Earlier.FAILED_HALFWAY));
  }

  /** A backup of another claim's volume {@code vol-src}, available, as a restore's source. */
  private VolumeSource.FromBackup anAvailableBackupOfAnotherClaim() {
    cinder.seed(volume("vol-src", "uid-source", "cluster-a", Names.STATE_PROVISIONED));
    var backup =
        cinder.createBackup(
            new org.standalonecinder.provisioner.cinder.BackupSpec(
                "nightly", "vol-src", null, Map.of()));
    cinder.setBackupStatus(backup.id(), "available", null);
    return new VolumeSource.FromBackup(
        new org.standalonecinder.api.ClaimRef("apps", "nightly"),
        backup.id(),
        "vol-src",
        1,
        "available");
  }

  /** Cinder's restore gives the new volume its source's metadata: the claim's is written back. */
  @ParameterizedTest(name = "{0}")
  @MethodSource("restoresFromBackups")
  void aVolumeRestoredFromABackupCarriesTheClaimsIdentity(String name, Earlier earlier) {
    VolumeSource.FromBackup source = anAvailableBackupOfAnotherClaim();
    String backup = source.backupId();
    cinder.deleteVolume("vol-src");
    if (earlier != Earlier.NONE) {
      Volume made =
          cinder.createVolume(
              org.standalonecinder.provisioner.cinder.VolumeSpec.blank(PV, 1).fromBackup(backup));
      cinder.stillMaking(made.id());
      if (earlier == Earlier.RESTORED) {
        cinder.finishMaking(made.id());
        cinder.awaitVolumeStatus(made.id(), java.util.Set.of("available"), Backoff.DEFAULT);
      } else {
        cinder.restoredHalfway(made.id(), earlier == Earlier.FAILED_HALFWAY);
        assertThat(cinder.volumes().get(made.id()).metadata())
            .as("the fake does what Cinder does")
            .doesNotContainKey("src_backup_id");
      }
      assertThat(cinder.volumes().get(made.id()).metadata())
          .as("the fake does what Cinder does")
          .containsEntry(Names.META_PVC_UID, "uid-source");
      if (earlier == Earlier.HALFWAY) {
        assertThatThrownBy(
                () ->
                    provisioner.provision(
                        claim("1Gi"), storageClass(Map.of()), source, Map.of(), pv -> false))
            .isInstanceOf(StillMaking.class);
        assertThat(cinder.volumes()).as("not made again").hasSize(1);
        cinder.finishMaking(made.id());
      }
      if (earlier == Earlier.FAILED_HALFWAY) {
        assertThatThrownBy(
                () ->
                    provisioner.provision(
                        claim("1Gi"), storageClass(Map.of()), source, Map.of(), pv -> false))
            .isInstanceOf(ProvisioningException.class)
            .hasMessageContaining(made.id());
        assertThat(cinder.volumes()).as("the failed restore deleted").isEmpty();
      }
    }
    PersistentVolume pv =
        UntilMade.provision(provisioner, claim("1Gi"), storageClass(Map.of()), source);
    assertThat(cinder.volumes()).hasSize(1);
    Volume v = cinder.volumes().values().iterator().next();
    assertThat(pv.getMetadata().getAnnotations()).containsEntry(ClaimAnnotations.VOLUME_ID, v.id());
    assertThat(v.metadata())
        .containsEntry(Names.META_PVC_UID, UID)
        .containsEntry(Names.META_CLUSTER, Fixtures.settings().clusterId())
        .containsEntry(Names.META_PVC_NAME, claim("1Gi").getMetadata().getName())
        .containsEntry(Names.META_STATE, Names.STATE_PROVISIONING)
        .containsEntry(Names.META_RESTORED_FROM, backup)
        .containsEntry("src_backup_id", backup);
  }

  /**
   * Cinder restores from one backup at a time: a claim restored from a backup another restore is
   * reading is told the backup is busy and tried again, not shown a bare 400 as if refused.
   */
  @Test
  void aBackupAnotherRestoreIsReadingIsBusyAndTheClaimIsTriedAgain() {
    VolumeSource.FromBackup source = anAvailableBackupOfAnotherClaim();
    String backup = source.backupId();
    Volume other =
        cinder.createVolume(
            org.standalonecinder.provisioner.cinder.VolumeSpec.blank("another-claims", 1)
                .fromBackup(backup));

    assertThatThrownBy(
            () -> UntilMade.provision(provisioner, claim("1Gi"), storageClass(Map.of()), source))
        .isInstanceOfSatisfying(ProvisioningException.class, e -> assertThat(e.isFinal()).isFalse())
        .hasMessageStartingWith(
            "Cinder backup " + backup + " is busy (another restore from it, or its own")
        .hasMessageContaining("Cinder said: Invalid input received: Originating backup status");
    assertThat(cinder.volumes()).containsOnlyKeys("vol-src", other.id());

    cinder.awaitVolumeStatus(other.id(), java.util.Set.of("available"), Backoff.DEFAULT);
    PersistentVolume pv =
        UntilMade.provision(provisioner, claim("1Gi"), storageClass(Map.of()), source);
    assertThat(pv.getMetadata().getAnnotations().get(ClaimAnnotations.VOLUME_ID))
        .isNotIn("vol-src", other.id());
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("orphans")
  void anOrphanIsDeletedOnlyIfItWasNeverHandedToAPv(String name, Volume v, boolean deleted) {
    cinder.seed(v);
    secrets.put(
        new io.fabric8.kubernetes.api.model.SecretBuilder()
            .withNewMetadata()
            .withNamespace("standalone-cinder")
            .withName("chap-" + PV)
            .endMetadata()
            .build());
    // asked (and going) at the first call; seen gone, the Secret deleted, at the next
    assertThat(provisioner.deleteOrphans(UID)).isEqualTo(deleted ? 1 : 0);
    assertThat(provisioner.deleteOrphans(UID)).isZero();
    assertThat(cinder.volumes().containsKey("vol-a")).isEqualTo(!deleted);
    boolean ours =
        v.metadata().get(Names.META_CLUSTER).equals("cluster-a")
            && UID.equals(v.metadata().get(Names.META_PVC_UID));
    assertThat(secrets.secrets.containsKey("standalone-cinder/chap-" + PV))
        .as("the Secret goes with the volume")
        .isEqualTo(!deleted && ours);
  }

  @Test
  void unfinishedVolumesAreThisClustersStillProvisioning() {
    cinder.seed(volume("vol-a", UID, "cluster-a", Names.STATE_PROVISIONING));
    cinder.seed(volume("vol-b", "uid-b", "cluster-a", Names.STATE_PROVISIONED));
    cinder.seed(volume("vol-c", "uid-c", "cluster-b", Names.STATE_PROVISIONING));
    cinder.seed(volume("vol-d", "uid-d", "cluster-a", null));
    assertThat(provisioner.unfinished())
        .containsExactly(new Unfinished("vol-a", UID, "apps", "data"));
  }

  // ------------------------------------------------------------------ delete

  @Test
  void deleteUndoesAnAttachmentPvInOrder() {
    PersistentVolume pv = UntilMade.provision(provisioner, claim("1Gi"), storageClass(Map.of()));
    cinder.clearLog();
    assertThat(UntilMade.release(provisioner, pv))
        .isEqualTo(org.standalonecinder.provisioner.controller.Provisioner.DeleteOutcome.DELETED);
    assertThat(cinder.log())
        .containsExactly(
            "getVolume vol-1",
            "listAttachments vol-1",
            DETACH,
            DELETE,
            "getVolume vol-1",
            DELETE_SECRET);
    assertThat(cinder.volumes()).isEmpty();
    assertThat(secrets.secrets).isEmpty();
  }

  @Test
  void deleteUndoesAReservedPvInOrder() {
    cinder.microversion(OLD);
    PersistentVolume pv = UntilMade.provision(provisioner, claim("1Gi"), storageClass(Map.of()));
    cinder.clearLog();
    UntilMade.release(provisioner, pv);
    assertThat(cinder.log())
        .containsExactly(
            "getVolume vol-1",
            TERMINATE,
            UNRESERVE,
            "listAttachments vol-1",
            DELETE,
            "getVolume vol-1",
            DELETE_SECRET);
    assertThat(cinder.volumes()).isEmpty();
  }

  @Test
  void deleteOfAVolumeThatIsGoneOnlyRemovesTheSecret() {
    PersistentVolume pv = UntilMade.provision(provisioner, claim("1Gi"), storageClass(Map.of()));
    provisioner.delete(pv);
    cinder.clearLog();
    assertThat(UntilMade.release(provisioner, pv))
        .isEqualTo(org.standalonecinder.provisioner.controller.Provisioner.DeleteOutcome.DELETED);
    assertThat(cinder.log()).containsExactly("getVolume vol-1", DELETE_SECRET);
  }

  @Test
  void aVolumeCinderWillNotDeleteYetIsARetryableFailureAndTheSecretStays() {
    PersistentVolume pv = UntilMade.provision(provisioner, claim("1Gi"), storageClass(Map.of()));
    cinder.failNext(
        "deleteVolume",
        () ->
            new CinderException.BadRequest(
                "Invalid volume: Volume status must be available or error ... migrating",
                400,
                "req-s"));
    assertThatThrownBy(() -> provisioner.delete(pv))
        .isInstanceOfSatisfying(ProvisioningException.class, e -> assertThat(e.isFinal()).isFalse())
        .hasMessageContaining("migrating")
        .hasMessageContaining("req-s");
    assertThat(secrets.secrets).hasSize(1);
    assertThat(UntilMade.release(provisioner, pv))
        .isEqualTo(org.standalonecinder.provisioner.controller.Provisioner.DeleteOutcome.DELETED);
    assertThat(cinder.volumes()).isEmpty();
    assertThat(secrets.secrets).isEmpty();
  }

  /**
   * Cinder accepts the delete and its backend refuses it (the volume is available again): a failure
   * at the next look, with why, the Secret kept; the attempt after that asks again.
   */
  @Test
  void aVolumeCinderPutsBackAfterItsDeleteIsAFailureNotAskedAgainAtOnce() {
    PersistentVolume pv = UntilMade.provision(provisioner, claim("1Gi"), storageClass(Map.of()));
    cinder.slowDeletes();
    var inProgress =
        org.standalonecinder.provisioner.controller.Provisioner.DeleteOutcome.State.IN_PROGRESS;
    assertThat(provisioner.delete(pv).state()).isEqualTo(inProgress);
    assertThat(provisioner.delete(pv).state()).as("still deleting").isEqualTo(inProgress);
    cinder.refuseDeleting("vol-1");
    assertThatThrownBy(() -> provisioner.delete(pv))
        .isInstanceOfSatisfying(ProvisioningException.class, e -> assertThat(e.isFinal()).isFalse())
        .hasMessageContaining("Cinder did not delete volume vol-1: it is available again");
    assertThat(secrets.secrets).hasSize(1);
    assertThat(cinder.log().stream().filter(l -> l.equals(DELETE))).hasSize(1);
    assertThat(provisioner.delete(pv).state()).as("asked again").isEqualTo(inProgress);
    cinder.finishDeleting("vol-1");
    assertThat(UntilMade.release(provisioner, pv))
        .isEqualTo(org.standalonecinder.provisioner.controller.Provisioner.DeleteOutcome.DELETED);
    assertThat(secrets.secrets).isEmpty();
  }

  @Test
  void aVolumeCinderFailedToDeleteNamesTheAdminsCommand() {
    PersistentVolume pv = UntilMade.provision(provisioner, claim("1Gi"), storageClass(Map.of()));
    cinder.setStatus("vol-1", "error_deleting");
    assertThatThrownBy(() -> provisioner.delete(pv))
        .isInstanceOfSatisfying(ProvisioningException.class, e -> assertThat(e.isFinal()).isFalse())
        .hasMessageContaining("cinder reset-state --state available vol-1");
    assertThat(secrets.secrets).hasSize(1);
    assertThat(cinder.log()).doesNotContain(DELETE);
  }

  static Stream<Arguments> keptBy() {
    return Stream.of(
        Arguments.of(
            "its snapshots, until they are deleted",
            "snapshot",
            "has snapshots in Cinder, so it is kept until they are deleted"),
        Arguments.of(
            "a backup of it being made, until it is made (the backup outlives it)",
            "backup",
            "is backing-up in Cinder (a backup of it is being made), so it cannot be deleted yet"));
  }

  /**
   * A volume with snapshots is never deleted with them (no cascade: they are what the user kept),
   * and one being backed up cannot be: Cinder's refusal reads the same for both, the release says
   * which and waits, retried, until it can.
   */
  @ParameterizedTest(name = "kept for {0}")
  @MethodSource("keptBy")
  void aVolumeCinderKeepsIsReleasedOnceItCanBe(String name, String by, String says) {
    PersistentVolume pv = UntilMade.provision(provisioner, claim("1Gi"), storageClass(Map.of()));
    String volume = pv.getMetadata().getAnnotations().get(ClaimAnnotations.VOLUME_ID);
    Runnable done;
    String kept;
    if (by.equals("snapshot")) {
      kept =
          cinder
              .createSnapshot(
                  new org.standalonecinder.provisioner.cinder.SnapshotSpec(
                      "kept", volume, null, Map.of()))
              .id();
      done = () -> cinder.deleteSnapshot(kept);
    } else {
      kept =
          cinder
              .createBackup(
                  new org.standalonecinder.provisioner.cinder.BackupSpec(
                      "kept", volume, null, Map.of()))
              .id();
      done = () -> cinder.setBackupStatus(kept, "available", null);
    }
    assertThatThrownBy(() -> provisioner.delete(pv))
        .isInstanceOfSatisfying(ProvisioningException.class, e -> assertThat(e.isFinal()).isFalse())
        .hasMessageContaining(says);
    assertThat(cinder.volumes()).containsKey(volume);
    assertThat(secrets.secrets).hasSize(1);
    done.run();
    assertThat(UntilMade.release(provisioner, pv))
        .isEqualTo(org.standalonecinder.provisioner.controller.Provisioner.DeleteOutcome.DELETED);
    assertThat(cinder.volumes()).isEmpty();
    assertThat(secrets.secrets).isEmpty();
    assertThat(cinder.backups().containsKey(kept)).isEqualTo(by.equals("backup"));
  }

  @Test
  void aPvOfAnotherIdentityIsNotTouched() {
    PersistentVolume pv = UntilMade.provision(provisioner, claim("1Gi"), storageClass(Map.of()));
    pv.getMetadata().getAnnotations().put(Names.ANN_IDENTITY, "cluster-b");
    cinder.clearLog();
    assertThat(provisioner.delete(pv))
        .isEqualTo(org.standalonecinder.provisioner.controller.Provisioner.DeleteOutcome.NOT_MINE);
    assertThat(cinder.log()).isEmpty();
  }

  // ------------------------------------------------------------------ the Go provisioner's PVs

  private static final String GO_ID = "5d0f8a52-0d6e-11e8-9a3b-0242ac110002";
  private static final String GO_SECRET = PV + "-secret";

  /** A PV as the Go standalone-cinder wrote it: its annotations, its claim, its CHAP Secret ref. */
  private static PersistentVolume goPv(java.util.function.UnaryOperator<PersistentVolume> edit) {
    PersistentVolume pv =
        new io.fabric8.kubernetes.api.model.PersistentVolumeBuilder()
            .withNewMetadata()
            .withName(PV)
            .addToAnnotations("pv.kubernetes.io/provisioned-by", ProvisionerSettings.DEFAULT_NAME)
            .addToAnnotations(Names.ANN_IDENTITY, GO_ID)
            .addToAnnotations("cinderVolumeId", "vol-go")
            .endMetadata()
            .withNewSpec()
            .withNewClaimRef()
            .withNamespace("apps")
            .withName("data")
            .withUid(UID)
            .endClaimRef()
            .withNewIscsi()
            .withTargetPortal("192.0.2.10:3260")
            .withIqn("iqn.2010-10.org.openstack:volume-vol-go")
            .withLun(0)
            .withChapAuthSession(true)
            .withNewSecretRef()
            .withName(GO_SECRET)
            .endSecretRef()
            .endIscsi()
            .withPersistentVolumeReclaimPolicy("Delete")
            .endSpec()
            .build();
    return edit.apply(pv);
  }

  private void seedGo(String status) {
    cinder.seed(
        new Volume(
            "vol-go",
            PV,
            status,
            1,
            "nova",
            "__DEFAULT__",
            Map.of(),
            null,
            null,
            false,
            List.of()));
  }

  private void seedGoSecrets() {
    // The Go provisioner's Secret in the claim's namespace, and one of the same name in this
    // provisioner's namespace, which is not the PV's and must stay.
    for (String ns : List.of("apps", "standalone-cinder")) {
      secrets.put(
          new io.fabric8.kubernetes.api.model.SecretBuilder()
              .withNewMetadata()
              .withName(GO_SECRET)
              .withNamespace(ns)
              .endMetadata()
              .withType("kubernetes.io/iscsi-chap")
              .build());
    }
    cinder.clearLog();
  }

  // The steps of a Go-era PV's release, as the fake Cinder and Secret store log them.
  private static final List<String> LOOKED_UP = List.of("getVolume vol-go");
  private static final List<String> WITHDRAWN =
      List.of("getVolume vol-go", "terminateConnection vol-go", "unreserve vol-go");
  private static final List<String> DELETED =
      // asked, then seen gone at the next look (no wait on the worker)
      List.of("listAttachments vol-go", "deleteVolume vol-go", "getVolume vol-go");
  private static final List<String> SECRET_DELETED = List.of("deleteSecret " + GO_SECRET);

  @SafeVarargs
  private static List<String> calls(List<String>... steps) {
    return Stream.of(steps).flatMap(List::stream).toList();
  }

  static Stream<Arguments> goProvisionerPvs() {
    java.util.function.UnaryOperator<PersistentVolume> asWritten = pv -> pv;
    return Stream.of(
        Arguments.of(
            "iSCSI with CHAP, reserved as the Go provisioner left it: its export withdrawn with its"
                + " connector, the volume and its Secret in the claim's namespace deleted",
            "attaching",
            asWritten,
            calls(WITHDRAWN, DELETED, SECRET_DELETED),
            List.of("standalone-cinder/" + GO_SECRET)),
        Arguments.of(
            "a repeat after os-unreserve went through: the volume and the Secret",
            "available",
            asWritten,
            calls(LOOKED_UP, DELETED, SECRET_DELETED),
            List.of("standalone-cinder/" + GO_SECRET)),
        Arguments.of(
            "a PV edited to name another Secret: that Secret is not the Go provisioner's, it stays",
            "attaching",
            (java.util.function.UnaryOperator<PersistentVolume>)
                pv -> {
                  pv.getSpec().getIscsi().getSecretRef().setName("db-password");
                  return pv;
                },
            calls(WITHDRAWN, DELETED),
            List.of("apps/" + GO_SECRET, "standalone-cinder/" + GO_SECRET)),
        Arguments.of(
            "a Secret reference into another namespace: not the claim's, it stays",
            "available",
            (java.util.function.UnaryOperator<PersistentVolume>)
                pv -> {
                  pv.getSpec().getIscsi().getSecretRef().setNamespace("kube-system");
                  return pv;
                },
            calls(LOOKED_UP, DELETED),
            List.of("apps/" + GO_SECRET, "standalone-cinder/" + GO_SECRET)),
        Arguments.of(
            "RBD, naming the admin's <class>-cephx-secret: the volume only",
            "attaching",
            (java.util.function.UnaryOperator<PersistentVolume>)
                pv -> {
                  pv.getSpec().setIscsi(null);
                  pv.getSpec()
                      .setRbd(
                          new io.fabric8.kubernetes.api.model.RBDPersistentVolumeSourceBuilder()
                              .withMonitors("192.0.2.20:6789")
                              .withPool("volumes")
                              .withImage("volume-vol-go")
                              .withUser("cinder")
                              .withNewSecretRef()
                              .withName("cinder-cephx-secret")
                              .endSecretRef()
                              .build());
                  return pv;
                },
            calls(WITHDRAWN, DELETED),
            List.of("apps/" + GO_SECRET, "standalone-cinder/" + GO_SECRET)),
        Arguments.of(
            "the volume deleted in Cinder already: the Secret still goes",
            null,
            asWritten,
            calls(LOOKED_UP, SECRET_DELETED),
            List.of("standalone-cinder/" + GO_SECRET)));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("goProvisionerPvs")
  void aPvOfAnAdoptedGoIdentityIsReleasedAsTheGoProvisionerDid(
      String name,
      String volumeStatus,
      java.util.function.UnaryOperator<PersistentVolume> edit,
      List<String> calls,
      List<String> secretsLeft) {
    VolumeProvisioner adopting =
        new VolumeProvisioner(
            cinder,
            secrets,
            VolumeMappers.standard(),
            Fixtures.settings().withAdoptedIdentities(java.util.Set.of(GO_ID)),
            Backoff.DEFAULT);
    if (volumeStatus != null) {
      seedGo(volumeStatus);
    }
    seedGoSecrets();

    assertThat(UntilMade.release(adopting, goPv(edit)))
        .isEqualTo(org.standalonecinder.provisioner.controller.Provisioner.DeleteOutcome.DELETED);

    assertThat(cinder.log()).containsExactlyElementsOf(calls);
    assertThat(cinder.volumes()).isEmpty();
    assertThat(cinder.terminatedWith())
        .allSatisfy(c -> assertThat(c).isEqualTo(GoProvisionerPvs.CONNECTOR));
    assertThat(secrets.secrets.keySet()).containsExactlyInAnyOrderElementsOf(secretsLeft);
  }

  @Test
  void aPvOfAGoIdentityThatIsNotAdoptedIsNotTouched() {
    seedGo("attaching");
    seedGoSecrets();
    assertThat(provisioner.delete(goPv(pv -> pv)))
        .isEqualTo(org.standalonecinder.provisioner.controller.Provisioner.DeleteOutcome.NOT_MINE);
    assertThat(cinder.log()).isEmpty();
    assertThat(secrets.secrets).hasSize(2);
  }

  @Test
  void adoptingItsOwnIdentityIsRefused() {
    assertThatThrownBy(
            () -> Fixtures.settings().withAdoptedIdentities(java.util.Set.of(GO_ID, "cluster-a")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("'cluster-a' is this provisioner's own identity");
  }
}
