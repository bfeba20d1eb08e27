package org.standalonecinder.e2e.standin;

import static org.assertj.core.api.Assertions.assertThat;
import static org.standalonecinder.e2e.standin.Fixture.NS;
import static org.standalonecinder.e2e.standin.Fixture.annotated;
import static org.standalonecinder.e2e.standin.Fixture.content;
import static org.standalonecinder.e2e.standin.Fixture.contentStatus;
import static org.standalonecinder.e2e.standin.Fixture.handles;
import static org.standalonecinder.e2e.standin.Fixture.ref;
import static org.standalonecinder.e2e.standin.Fixture.snap;
import static org.standalonecinder.e2e.standin.Fixture.source;
import static org.standalonecinder.e2e.standin.Fixture.status;

import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The snapshot-controller stand-in's rules, one named row each: given what its caches hold, the
 * steps it takes for one snapshot or content, in order. Each expected step is the start of the step
 * as it reads ({@link Step#toString}).
 */
class StandInRulesTest {

  private static final String SRC = Names.AS_SOURCE;
  private static final String BOUND = Names.BOUND;
  private static final String PVC = Names.CLAIM_FINALIZER;

  private static final Map<String, Object> READY =
      Map.of(
          "snapshotHandle",
          "cs-1",
          "readyToUse",
          true,
          "restoreSize",
          1073741824L,
          "creationTime",
          1_764_000_000_123_456_789L);

  /** A row: the world, the object looked at (a Snap or a SnapContent), the steps expected. */
  private static Arguments row(
      String name, Supplier<Fixture> world, Object subject, String... steps) {
    return Arguments.of(name, world, subject, List.of(steps));
  }

  static Stream<Arguments> rows() {
    Snap s = snap("s");
    Snap bound =
        status(
            source(s, "snap", "data", null),
            "boundVolumeSnapshotContentName",
            "snapcontent-u1",
            "readyToUse",
            false);
    Snap ready =
        Fixture.snap(
            status(s, "boundVolumeSnapshotContentName", "snapcontent-u1", "readyToUse", true),
            false,
            List.of(SRC, BOUND));
    Snap deleting = Fixture.snap(bound, true, List.of(SRC, BOUND));
    SnapContent c = content();
    SnapContent pre = handles(ref(c, "s", NS, ""), null, "cs-1", null);
    String cannotFind =
        "Failed to create snapshot content with error cannot find CSI PersistentVolumeSource for volume pv-data";
    return Stream.of(
        row(
            "a new snapshot of a claim whose PV is not CSI: its finalizer and the claim's, then the error and event that no content is made",
            Fixture::usual,
            s,
            "finalizers of VolumeSnapshot ns/s: +[" + SRC + "]",
            "finalizers of PersistentVolumeClaim ns/data: +[" + PVC + "]",
            "error of VolumeSnapshot ns/s (not ready): " + cannotFind,
            "Warning event SnapshotContentCreationFailed on VolumeSnapshot ns/s: " + cannotFind,
            "retry: cannot find CSI"),
        row(
            "the same error is not written or told again",
            () -> Fixture.usual().claim("data", "Bound", "pv-data", PVC),
            Fixture.snap(status(s, "error", Map.of("message", cannotFind)), false, List.of(SRC)),
            "retry: cannot find CSI"),
        row(
            "a claim not yet bound: the error says so",
            () -> Fixture.usual().claim("data", "Pending", null, PVC),
            Fixture.snap(s, false, List.of(SRC)),
            "error of VolumeSnapshot ns/s (not ready): Failed to create snapshot content with error failed to get input parameters to create snapshot s: \"the PVC data is not yet bound to a PV, will not attempt to take a snapshot\"",
            "Warning event SnapshotContentCreationFailed",
            "retry"),
        row(
            "a claim that does not exist: no finalizer can be put on it",
            () -> {
              Fixture f = Fixture.usual();
              f.claims.clear();
              return f;
            },
            Fixture.snap(s, false, List.of(SRC)),
            "error of VolumeSnapshot ns/s (not ready): Failed to create snapshot content with error snapshot controller failed to update s on API server: cannot get claim from snapshot",
            "Warning event SnapshotContentCreationFailed",
            "retry"),
        row(
            "a CSI volume is beyond the stand-in: it says so rather than make a content",
            () ->
                Fixture.usual()
                    .volume("pv-data", "data", true)
                    .claim("data", "Bound", "pv-data", PVC),
            Fixture.snap(s, false, List.of(SRC)),
            "error of VolumeSnapshot ns/s (not ready): Failed to create snapshot content with error the e2e snapshot-controller stand-in makes no content for a CSI volume (pv-data)",
            "Warning event SnapshotContentCreationFailed on VolumeSnapshot ns/s: Failed to create snapshot content with error the e2e snapshot-controller stand-in",
            "retry: the e2e snapshot-controller stand-in makes no content for a CSI volume"),
        row(
            "snapcontent-<uid> naming the snapshot is bound: the status follows it",
            () -> Fixture.usual().add(c),
            Fixture.snap(s, false, List.of(SRC)),
            "status of VolumeSnapshot ns/s follows snapcontent-u1"),
        row(
            "a content whose ref has another uid is not bound",
            () -> Fixture.usual().add(ref(c, "s", NS, "u2")),
            Fixture.snap(s, false, List.of(SRC)),
            "error of VolumeSnapshot ns/s (not ready): VolumeSnapshotContent [snapcontent-u1] is bound to a different snapshot",
            "Warning event SnapshotContentMisbound",
            "Warning event SnapshotFinalizerError on VolumeSnapshot ns/s: Failed to check and update snapshot: VolumeSnapshotContent [snapcontent-u1] is bound to a different snapshot",
            "retry"),
        row(
            "a content whose ref names another namespace is not bound",
            () -> Fixture.usual().add(ref(c, "s", "other", "u1")),
            Fixture.snap(s, false, List.of(SRC)),
            "error of VolumeSnapshot ns/s (not ready): VolumeSnapshotContent [snapcontent-u1] is bound to a different snapshot",
            "Warning event SnapshotContentMisbound",
            "Warning event SnapshotFinalizerError",
            "retry"),
        row(
            "a content of another driver is bound all the same (v4.2.1 and v8 compare no drivers)",
            () -> Fixture.usual().add(Fixture.driver(c, "other.csi.example.org")),
            Fixture.snap(s, false, List.of(SRC)),
            "status of VolumeSnapshot ns/s follows snapcontent-u1"),
        row(
            "a dynamic snapshot's content with a snapshot handle is refused",
            () -> Fixture.usual().add(handles(c, null, "cs-1", "snap")),
            Fixture.snap(s, false, List.of(SRC)),
            "error of VolumeSnapshot ns/s (not ready): VolumeSnapshotContent snapcontent-u1 is pre-provisioned while expecting a dynamically provisioned one",
            "Warning event SnapshotContentMismatch",
            "Warning event SnapshotFinalizerError",
            "retry"),
        row(
            "a snapshot bound to a Delete content gets the bound finalizer",
            () -> Fixture.usual().add(c),
            Fixture.snap(bound, false, List.of(SRC)),
            "finalizers of VolumeSnapshot ns/s: +[" + BOUND + "]",
            "status of VolumeSnapshot ns/s follows snapcontent-u1"),
        row(
            "a snapshot bound to a Retain content gets no bound finalizer",
            () -> Fixture.usual().add(Fixture.content(c, "Retain", List.of())),
            Fixture.snap(bound, false, List.of(SRC)),
            "status of VolumeSnapshot ns/s follows snapcontent-u1"),
        row(
            "a pre-provisioned snapshot binds the content that names it: its uid and class filled in",
            () -> Fixture.usual().add(pre),
            Fixture.snap(source(s, "snap", null, "snapcontent-u1"), false, List.of(SRC)),
            "bind snapcontent-u1 to uid u1, class snap",
            "status of VolumeSnapshot ns/s follows snapcontent-u1"),
        row(
            "a pre-provisioned snapshot of no class binds it too (no default class is looked for)",
            () -> Fixture.usual().add(pre),
            Fixture.snap(source(s, null, null, "snapcontent-u1"), false, List.of(SRC)),
            "bind snapcontent-u1 to uid u1$",
            "status of VolumeSnapshot ns/s follows snapcontent-u1"),
        row(
            "a pre-provisioned snapshot does not bind a content whose ref names another snapshot",
            () -> Fixture.usual().add(ref(pre, "t", NS, "")),
            Fixture.snap(source(s, "snap", null, "snapcontent-u1"), false, List.of(SRC)),
            "error of VolumeSnapshot ns/s (not ready): VolumeSnapshotContent [snapcontent-u1] is bound to a different snapshot",
            "Warning event SnapshotContentMisbound",
            "Warning event SnapshotFinalizerError",
            "retry"),
        row(
            "a pre-provisioned snapshot does not bind a content bound to another uid",
            () -> Fixture.usual().add(ref(pre, "s", NS, "u9")),
            Fixture.snap(source(s, "snap", null, "snapcontent-u1"), false, List.of(SRC)),
            "error of VolumeSnapshot ns/s (not ready): VolumeSnapshotContent [snapcontent-u1] is bound to a different snapshot",
            "Warning event SnapshotContentMisbound",
            "Warning event SnapshotFinalizerError",
            "retry"),
        row(
            "a pre-provisioned snapshot of a dynamic content is refused",
            () -> Fixture.usual().add(ref(c, "s", NS, "")),
            Fixture.snap(source(s, "snap", null, "snapcontent-u1"), false, List.of(SRC)),
            "error of VolumeSnapshot ns/s (not ready): VolumeSnapshotContent is dynamically provisioned while expecting a pre-provisioned one",
            "Warning event SnapshotContentMismatch",
            "Warning event SnapshotFinalizerError",
            "retry"),
        row(
            "a pre-provisioned snapshot whose content does not exist waits for it",
            Fixture::usual,
            Fixture.snap(source(s, "snap", null, "snapcontent-u1"), false, List.of(SRC)),
            "error of VolumeSnapshot ns/s (not ready): VolumeSnapshotContent is missing",
            "Warning event SnapshotContentMissing",
            "retry: snapshot ns/s requests an non-existing content snapcontent-u1"),
        row(
            "a class that does not exist: the error says so and nothing else is done",
            Fixture::usual,
            source(s, "gone", "data", null),
            "error of VolumeSnapshot ns/s: Failed to get snapshot class with error volumesnapshotclass.snapshot.storage.k8s.io \"gone\" not found",
            "Warning event GetSnapshotClassFailed",
            "retry: no class gone"),
        row(
            "no class: none is chosen for a volume that is not CSI",
            Fixture::usual,
            source(s, null, "data", null),
            "error of VolumeSnapshot ns/s: Failed to set default snapshot class with error snapshotting non-CSI volumes is not supported, snapshot:ns/s",
            "Warning event SetDefaultSnapshotClassFailed",
            "retry"),
        row(
            "both a claim and a content as the source is invalid",
            Fixture::usual,
            source(s, "snap", "data", "snapcontent-u1"),
            "error of VolumeSnapshot ns/s (not ready): Exactly one of PersistentVolumeClaimName and VolumeSnapshotContentName should be specified",
            "Warning event SnapshotValidationError",
            "retry"),
        row(
            "deleting under Delete: the content marked and deleted, the bound finalizer kept until it is gone",
            () -> Fixture.usual().add(c),
            deleting,
            "annotate snapcontent-u1 " + Names.BEING_DELETED + "=yes",
            "delete snapcontent-u1",
            "finalizers of VolumeSnapshot ns/s: -[" + SRC + "]"),
        row(
            "deleting under Retain: the content marked and kept, both finalizers gone",
            () -> Fixture.usual().add(Fixture.content(c, "Retain", List.of())),
            deleting,
            "annotate snapcontent-u1 " + Names.BEING_DELETED + "=yes",
            "finalizers of VolumeSnapshot ns/s: -[" + SRC + ", " + BOUND + "]"),
        row(
            "deleting once the content is gone: the bound finalizer goes",
            Fixture::usual,
            Fixture.snap(deleting, true, List.of(BOUND)),
            "finalizers of VolumeSnapshot ns/s: -[" + BOUND + "]"),
        row(
            "deleting while a Pending claim restores from it: held, and told",
            () -> Fixture.usual().add(c).restore("copy", "Pending", "s"),
            deleting,
            "Warning event SnapshotDeletePending on VolumeSnapshot ns/s: Snapshot is being used to restore a PVC"),
        row(
            "deleting once the restoring claim is Bound: let go",
            () ->
                Fixture.usual()
                    .add(annotated(c, Names.BEING_DELETED))
                    .restore("copy", "Bound", "s"),
            deleting,
            "delete snapcontent-u1",
            "finalizers of VolumeSnapshot ns/s: -[" + SRC + "]"),
        row(
            "deleting a snapshot the content does not name leaves the content alone",
            () -> Fixture.usual().add(ref(c, "s", NS, "u2")),
            deleting,
            "finalizers of VolumeSnapshot ns/s: -[" + SRC + ", " + BOUND + "]"),
        row(
            "deleting a snapshot without the stand-in's finalizers: nothing to do",
            () -> Fixture.usual().add(c),
            Fixture.snap(bound, true, List.of("someone.else/keep")),
            new String[0]),
        row(
            "the claim's finalizer goes once every snapshot of it is ready",
            () ->
                Fixture.usual()
                    .claim("data", "Bound", "pv-data", PVC)
                    .add(Fixture.content(c, "Delete", List.of(Names.CONTENT_FINALIZER)))
                    .add(ready),
            ready,
            "finalizers of PersistentVolumeClaim ns/data: -["
                + PVC
                + "] (a failure told as ErrorPVCFinalizer)$"),
        row(
            "the claim's finalizer stays while another snapshot of it is unready",
            () ->
                Fixture.usual()
                    .claim("data", "Bound", "pv-data", PVC)
                    .add(c)
                    .add(ready)
                    .add(
                        Fixture.edit(
                            Fixture.snap(s, false, List.of(SRC)),
                            m -> {
                              m.name = "t";
                              m.uid = "u2";
                            })),
            ready,
            new String[0]),
        row(
            "a ready snapshot whose content is gone says so",
            Fixture::usual,
            ready,
            "error of VolumeSnapshot ns/s (not ready): VolumeSnapshotContent is missing",
            "Warning event SnapshotContentMissing"),
        row(
            "a ready snapshot bound to a content that names another snapshot says so",
            () -> Fixture.usual().add(ref(Fixture.renamed(c, "snapcontent-x"), "t", NS, "u2")),
            Fixture.snap(
                status(s, "boundVolumeSnapshotContentName", "snapcontent-x", "readyToUse", true),
                false,
                List.of(SRC, BOUND)),
            "error of VolumeSnapshot ns/s (not ready): VolumeSnapshotContent is not bound to the"
                + " VolumeSnapshot correctly",
            "Warning event SnapshotMisbound"),
        row(
            "a bound content gets the content finalizer",
            () -> Fixture.usual().add(bound),
            c,
            "finalizers of VolumeSnapshotContent snapcontent-u1: +["
                + Names.CONTENT_FINALIZER
                + "]"),
        row(
            "a content not yet bound (no uid in its ref) is left to its snapshot",
            Fixture::usual,
            ref(pre, "s", NS, ""),
            new String[0]),
        row(
            "a content with its finalizer and a readiness: its snapshot is looked at again (the real one compares two pointers, so any readiness counts)",
            () -> Fixture.usual().add(bound),
            contentStatus(Fixture.content(c, "Delete", List.of(Names.CONTENT_FINALIZER)), READY),
            "look again at VolumeSnapshot ns/s"),
        row(
            "a content whose snapshot is being deleted is marked being-deleted",
            () -> Fixture.usual().add(deleting),
            Fixture.content(c, "Retain", List.of(Names.CONTENT_FINALIZER)),
            "annotate snapcontent-u1 " + Names.BEING_DELETED + "=yes"),
        row(
            "a content whose snapshot was made again under its name is never marked (no deletion from here)",
            () ->
                Fixture.usual()
                    .add(Fixture.edit(Fixture.snap(s, true, List.of(SRC)), m -> m.uid = "u2")),
            Fixture.content(c, "Delete", List.of(Names.CONTENT_FINALIZER)),
            new String[0]),
        row(
            "a content being deleted gets no finalizer again",
            () -> Fixture.usual().add(bound),
            Fixture.deleting(c),
            new String[0]),
        row(
            "a content with its finalizer and no status yet: its snapshot is not looked at again",
            () -> Fixture.usual().add(bound),
            Fixture.content(c, "Delete", List.of(Names.CONTENT_FINALIZER)),
            new String[0]),
        row(
            "an empty claim name: no claim can be found, nor a finalizer put on it",
            Fixture::usual,
            Fixture.snap(source(s, "snap", "", null), false, List.of(SRC)),
            "error of VolumeSnapshot ns/s (not ready): Failed to create snapshot content with error"
                + " snapshot controller failed to update s on API server: cannot get claim from"
                + " snapshot$",
            "Warning event SnapshotContentCreationFailed",
            "retry: snapshot controller failed to update s on API server"),
        row(
            "a content with both handles is invalid",
            Fixture::usual,
            handles(c, "vol-1", "cs-1", "snap"),
            "Warning event ContentValidationError on VolumeSnapshotContent snapcontent-u1: Exactly one of VolumeHandle and SnapshotHandle should be specified",
            "retry"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("rows")
  void theSteps(String name, Supplier<Fixture> world, Object subject, List<String> expected) {
    assertSteps(steps(world.get(), subject, EnumSet.allOf(Rule.class)), expected);
  }

  private static List<String> steps(Fixture f, Object subject, Set<Rule> on) {
    // The informer holds the snapshot looked at (the rules get the API server's copy of it).
    if (subject instanceof Snap s && f.snapshot(s.namespace(), s.name()) == null) {
      f.add(s);
    }
    List<Step> steps =
        subject instanceof Snap s
            ? SnapshotRules.sync(s, f, on)
            : ContentRules.sync((SnapContent) subject, f, on);
    return steps.stream().map(Step::toString).toList();
  }

  /** Each expected step is the start of the actual one, or all of it when it ends with $. */
  private static void assertSteps(List<String> actual, List<String> expected) {
    assertThat(matches(actual, expected)).as("steps %s, expected %s", actual, expected).isTrue();
  }

  private static boolean matches(List<String> actual, List<String> expected) {
    if (actual.size() != expected.size()) {
      return false;
    }
    for (int i = 0; i < expected.size(); i++) {
      String e = expected.get(i);
      boolean ok =
          e.endsWith("$")
              ? actual.get(i).equals(e.substring(0, e.length() - 1))
              : actual.get(i).startsWith(e);
      if (!ok) {
        return false;
      }
    }
    return true;
  }

  /** Each rule is pinned: without it, some row of the table fails its own assertion. */
  @Test
  @SuppressWarnings("unchecked")
  void everyRuleFailsARowWhenLeftOut() {
    List<Rule> unpinned = new ArrayList<>();
    for (Rule rule : Rule.values()) {
      Set<Rule> on = EnumSet.allOf(Rule.class);
      on.remove(rule);
      boolean failsOne =
          rows()
              .map(Arguments::get)
              .anyMatch(
                  r ->
                      !matches(
                          steps(((Supplier<Fixture>) r[1]).get(), r[2], on), (List<String>) r[3]));
      if (!failsOne) {
        unpinned.add(rule);
      }
    }
    assertThat(unpinned).as("rules no row needs").isEmpty();
  }

  static Stream<Arguments> followed() {
    Snap s = snap("s");
    SnapContent c = content();
    Map<String, Object> error = Map.of("message", "Cinder said no", "time", "2026-12-03T10:00:00Z");
    return Stream.of(
        Arguments.of(
            "a first status: bound, ready, 1Gi, created in whole seconds, two events",
            s,
            contentStatus(c, READY),
            Map.of(
                "boundVolumeSnapshotContentName",
                "snapcontent-u1",
                "readyToUse",
                true,
                "restoreSize",
                "1Gi",
                "creationTime",
                "2025-11-24T16:00:00Z"),
            List.of("SnapshotCreated", "SnapshotReady")),
        Arguments.of(
            "a content without status: bound, not ready, no events",
            s,
            c,
            Map.of("boundVolumeSnapshotContentName", "snapcontent-u1", "readyToUse", false),
            List.of()),
        Arguments.of(
            "the content's error shown; readiness false",
            status(s, "boundVolumeSnapshotContentName", "snapcontent-u1", "readyToUse", false),
            contentStatus(c, Map.of("readyToUse", false, "error", error)),
            Map.of(
                "boundVolumeSnapshotContentName",
                "snapcontent-u1",
                "readyToUse",
                false,
                "error",
                error),
            List.of()),
        Arguments.of(
            "an error cleared once the content is ready",
            status(
                s,
                "boundVolumeSnapshotContentName",
                "snapcontent-u1",
                "readyToUse",
                false,
                "error",
                error),
            contentStatus(c, READY),
            Map.of(
                "boundVolumeSnapshotContentName",
                "snapcontent-u1",
                "readyToUse",
                true,
                "restoreSize",
                "1Gi",
                "creationTime",
                "2025-11-24T16:00:00Z"),
            List.of("SnapshotCreated", "SnapshotReady")),
        Arguments.of(
            "the content's error time shown in whole seconds",
            status(s, "boundVolumeSnapshotContentName", "snapcontent-u1", "readyToUse", false),
            contentStatus(
                c,
                Map.of(
                    "readyToUse",
                    false,
                    "error",
                    Map.of("message", "Cinder said no", "time", "2026-12-03T10:00:00.123456Z"))),
            Map.of(
                "boundVolumeSnapshotContentName",
                "snapcontent-u1",
                "readyToUse",
                false,
                "error",
                error),
            List.of()),
        Arguments.of(
            "a restore size already shown is kept",
            status(
                s,
                "boundVolumeSnapshotContentName",
                "snapcontent-u1",
                "readyToUse",
                false,
                "restoreSize",
                "2Gi"),
            contentStatus(c, READY),
            Map.of(
                "boundVolumeSnapshotContentName",
                "snapcontent-u1",
                "readyToUse",
                true,
                "restoreSize",
                "2Gi",
                "creationTime",
                "2025-11-24T16:00:00Z"),
            List.of("SnapshotCreated", "SnapshotReady")));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("followed")
  void theStatusFollowsTheContent(
      String name, Snap s, SnapContent c, Map<String, Object> status, List<String> events) {
    ContentRules.Followed f = ContentRules.follow(s, c);
    assertThat(f).isNotNull();
    assertThat(f.status()).isEqualTo(status);
    assertThat(f.events().stream().map(e -> e[1]).toList()).isEqualTo(events);
  }

  @Test
  void aStatusThatFollowsAlreadyIsNotWrittenAgain() {
    Snap s =
        status(
            snap("s"),
            "boundVolumeSnapshotContentName",
            "snapcontent-u1",
            "readyToUse",
            true,
            "restoreSize",
            "1Gi",
            "creationTime",
            "2025-11-24T16:00:00Z");
    assertThat(ContentRules.follow(s, contentStatus(content(), READY))).isNull();
  }

  static Stream<Arguments> quantities() {
    return Stream.of(
        Arguments.of("a GiB", 1L << 30, "1Gi"),
        Arguments.of("a byte over a GiB", (1L << 30) + 1, "1073741825"),
        Arguments.of("1.5 GiB in MiB", 1536L << 20, "1536Mi"),
        Arguments.of("a TiB", 1L << 40, "1Ti"),
        Arguments.of("under 1024: decimal", 512L, "512"),
        Arguments.of("1000: decimal SI", 1000L, "1k"),
        Arguments.of("zero", 0L, "0"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("quantities")
  void restoreSizesPrintAsKubernetesPrintsThem(String name, long bytes, String shown) {
    assertThat(Quantities.binarySI(bytes)).isEqualTo(shown);
  }

  static Stream<Arguments> backoffs() {
    return Stream.of(
        Arguments.of("the first retry after 1 s", 1, 1L),
        Arguments.of("doubling", 4, 8L),
        Arguments.of("at most 5 minutes", 12, 300L),
        Arguments.of("at most 5 minutes however often", 400, 300L));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("backoffs")
  void failedKeysComeBackAsTheRealOnesDo(String name, int failures, long seconds) {
    assertThat(KeyQueue.backoff(failures).toSeconds()).isEqualTo(seconds);
  }

  @Test
  void aFailedKeyComesBackOnceAfterItsBackoff() throws Exception {
    try (KeyQueue q = new KeyQueue("test")) {
      q.add("a");
      assertThat(q.take()).isEqualTo("a");
      q.done("a", true);
      assertThat(q.size()).as("not at once").isZero();
      long t0 = System.nanoTime();
      assertThat(q.take()).isEqualTo("a");
      assertThat(java.time.Duration.ofNanos(System.nanoTime() - t0))
          .as("after its first backoff")
          .isGreaterThanOrEqualTo(KeyQueue.FIRST_RETRY.minusMillis(50));
    }
  }

  @Test
  void aKeyAddedWhileWorkedOnIsWorkedOnAgainAndQueuedOnce() throws Exception {
    try (KeyQueue q = new KeyQueue("test")) {
      q.add("a");
      q.add("a");
      assertThat(q.size()).isEqualTo(1);
      assertThat(q.take()).isEqualTo("a");
      q.add("a");
      assertThat(q.size()).isZero();
      q.done("a", false);
      assertThat(q.size()).isEqualTo(1);
    }
  }
}
