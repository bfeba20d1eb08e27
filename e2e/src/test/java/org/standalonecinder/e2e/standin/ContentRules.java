package org.standalonecinder.e2e.standin;

import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What the stand-in does when it looks at a VolumeSnapshotContent (external-snapshotter v4.2.1's
 * {@code syncContent}), and how a snapshot's status follows its content's ({@code
 * updateSnapshotStatus}). Pure.
 */
final class ContentRules {

  private ContentRules() {}

  /** The steps for content {@code c}. */
  static List<Step> sync(SnapContent c, World world, Set<Rule> on) {
    List<Step> steps = new ArrayList<>();
    if ((c.volumeHandle() == null) == (c.snapshotHandle() == null)) {
      String why = "Exactly one of VolumeHandle and SnapshotHandle should be specified";
      steps.add(
          new Step.Event(
              Step.Target.content(c.name()), null, "Warning", "ContentValidationError", why));
      steps.add(new Step.Retry(why));
      return steps;
    }
    if (!c.bound()) {
      // Pre-bound to a snapshot not yet bound to it: the snapshot's sync binds it.
      return steps;
    }
    if (on.contains(Rule.CONTENT_FINALIZER)
        && !c.deleting()
        && !c.finalizers().contains(Names.CONTENT_FINALIZER)) {
      List<String> all = new ArrayList<>(c.finalizers());
      all.add(Names.CONTENT_FINALIZER);
      steps.add(
          new Step.Finalizers(
              Step.Target.content(c.name()),
              c.resourceVersion(),
              all,
              "+[" + Names.CONTENT_FINALIZER + "]"));
      return steps;
    }
    Snap s = world.snapshot(c.refNamespace(), c.refName());
    if (s != null && !s.uid().equals(c.refUid())) {
      // Another snapshot of the same name: the content's own is gone. Never a deletion from here.
      s = null;
    } else if (s != null && needsUpdate(s, c)) {
      steps.add(new Step.LookAgain(s.key()));
    }
    if (s != null
        && s.deletionCandidate()
        && on.contains(Rule.DELETION)
        && !c.annotations().containsKey(Names.BEING_DELETED)) {
      steps.add(new Step.Annotate(c, Names.BEING_DELETED, "yes"));
    }
    return steps;
  }

  /**
   * {@code needsUpdateSnapshotStatus}. Its readiness test compares two pointers, so it holds
   * whenever both sides have a readiness at all: the real one looks again at every content change.
   */
  static boolean needsUpdate(Snap s, SnapContent c) {
    Map<String, Object> cs = c.status();
    Map<String, Object> ss = s.status();
    if (ss == null && cs != null) {
      return true;
    }
    if (cs == null) {
      return false;
    }
    if (s.boundContentName() == null) {
      return true;
    }
    if (ss.get("creationTime") == null && cs.get("creationTime") != null) {
      return true;
    }
    if (cs.get("readyToUse") != null) {
      return true;
    }
    return ss.get("restoreSize") == null && cs.get("restoreSize") != null
        || "0".equals(Maps.string(ss.get("restoreSize")))
            && Maps.number(cs.get("restoreSize")) != null
            && Maps.number(cs.get("restoreSize")) > 0;
  }

  /** A snapshot's new status and the events that come with it. */
  record Followed(Map<String, Object> status, List<String[]> events) {}

  /**
   * {@code updateSnapshotStatus}: the status {@code s} gets from {@code c}, or null when nothing
   * changes. Events are {type, reason, message}.
   */
  static Followed follow(Snap s, SnapContent c) {
    Map<String, Object> cs = c.status() == null ? Map.of() : c.status();
    Long nanos = Maps.number(cs.get("creationTime"));
    String createdAt = nanos == null ? null : time(nanos);
    Long size = Maps.number(cs.get("restoreSize"));
    boolean ready = Boolean.TRUE.equals(cs.get("readyToUse"));
    Object error = seconds(cs.get("error"));
    Map<String, Object> next;
    boolean updated = false;
    if (s.status() == null) {
      next = new LinkedHashMap<>();
      next.put("boundVolumeSnapshotContentName", c.name());
      next.put("readyToUse", ready);
      put(next, "creationTime", createdAt);
      put(next, "restoreSize", size == null ? null : Quantities.binarySI(size));
      put(next, "error", error);
      updated = true;
    } else {
      next = new LinkedHashMap<>(s.status());
      if (s.boundContentName() == null) {
        next.put("boundVolumeSnapshotContentName", c.name());
        updated = true;
      }
      if (next.get("creationTime") == null && createdAt != null) {
        next.put("creationTime", createdAt);
        updated = true;
      }
      Object was = next.get("readyToUse");
      if (!(was instanceof Boolean b) || b != ready) {
        next.put("readyToUse", ready);
        updated = true;
        if (ready) {
          next.remove("error");
        }
      }
      String restore = Maps.string(next.get("restoreSize"));
      if (size != null && (restore == null || "0".equals(restore) && size > 0)) {
        next.put("restoreSize", Quantities.binarySI(size));
        updated = true;
      }
      Object shown = next.get("error");
      // The real one replaces a shown error with its content's only when both carry a time (it
      // then compares the addresses of the two times: always different), and clears it when the
      // content has none.
      boolean replace =
          shown == null && error != null
              || shown != null && error != null && hasTime(shown) && hasTime(error)
              || shown != null && error == null;
      if (replace) {
        if (error == null) {
          next.remove("error");
        } else {
          next.put("error", error);
        }
        updated = updated || !java.util.Objects.equals(shown, error);
      }
    }
    if (!updated) {
      return null;
    }
    List<String[]> events = new ArrayList<>();
    boolean wasCreated = s.status() != null && s.status().get("creationTime") != null;
    if (!wasCreated && next.get("creationTime") != null) {
      events.add(
          new String[] {
            "Normal",
            "SnapshotCreated",
            "Snapshot " + s.key() + " was successfully created by the CSI driver."
          });
    }
    if (!s.ready() && Boolean.TRUE.equals(next.get("readyToUse"))) {
      events.add(
          new String[] {"Normal", "SnapshotReady", "Snapshot " + s.key() + " is ready to use."});
    }
    return new Followed(next, events);
  }

  private static boolean hasTime(Object error) {
    return Maps.map(error).get("time") != null;
  }

  /**
   * A content's error as a VolumeSnapshot shows it: its time in whole seconds (the real one decodes
   * and encodes it again as a {@code metav1.Time}).
   */
  static Object seconds(Object error) {
    if (error == null) {
      return null;
    }
    Map<String, Object> e = new LinkedHashMap<>(Maps.map(error));
    Object time = e.get("time");
    if (time != null) {
      try {
        e.put(
            "time",
            Instant.parse(time.toString())
                .truncatedTo(java.time.temporal.ChronoUnit.SECONDS)
                .toString());
      } catch (java.time.format.DateTimeParseException unreadable) {
        // kept as written: the API server accepted it
      }
    }
    return e;
  }

  private static void put(Map<String, Object> m, String key, Object value) {
    if (value != null) {
      m.put(key, value);
    }
  }

  /**
   * A content's {@code creationTime} (nanoseconds) as a VolumeSnapshot shows it (RFC 3339,
   * seconds).
   */
  static String time(long nanos) {
    return Instant.ofEpochSecond(Math.floorDiv(nanos, 1_000_000_000L)).toString();
  }
}
