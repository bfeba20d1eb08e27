package org.standalonecinder.provisioner.snapshot;

import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.function.Predicate;
import java.util.stream.Stream;

/**
 * Which VolumeSnapshots the caps on what is kept admit ({@link SnapshotLimits#keptPerClaim}, {@link
 * SnapshotLimits#keptPerNamespace}): of a namespace's VolumeSnapshots of this provisioner's
 * classes, the oldest first. A rank, not a count of what was made: a burst of a thousand at once
 * admits the same ones whichever is looked at first, and one past the cap moves up as older ones
 * are deleted.
 */
final class KeptCaps {

  private KeptCaps() {}

  /**
   * Why {@code s} may not be made, if it may not.
   *
   * @param ofNamespace the VolumeSnapshots of its namespace, as cached
   * @param ours whether a VolumeSnapshot is of a class of this provisioner
   */
  static Optional<String> refusal(
      VolumeSnapshot s,
      List<VolumeSnapshot> ofNamespace,
      Predicate<VolumeSnapshot> ours,
      SnapshotLimits limits) {
    List<VolumeSnapshot> counted =
        Stream.concat(ofNamespace.stream(), Stream.of(s))
            .filter(x -> x.namespace().equals(s.namespace()))
            .filter(x -> !x.deleting() && x.claimName() != null && x.contentName() == null)
            .filter(x -> x.key().equals(s.key()) || ours.test(x))
            .distinct()
            .sorted(OLDEST_FIRST)
            .toList();
    List<VolumeSnapshot> ofClaim =
        counted.stream().filter(x -> x.claimName().equals(s.claimName())).toList();
    int inClaim = rank(ofClaim, s);
    if (inClaim >= limits.keptPerClaim()) {
      return Optional.of(
          over(s, "claim " + s.claimName(), ofClaim.size(), limits.keptPerClaim(), "per-claim"));
    }
    int inNamespace = rank(counted, s);
    if (inNamespace >= limits.keptPerNamespace()) {
      return Optional.of(
          over(
              s,
              "namespace " + s.namespace(),
              counted.size(),
              limits.keptPerNamespace(),
              "per-namespace"));
    }
    return Optional.empty();
  }

  /** By creation, then name: the order every replica and every look agree on. */
  private static final Comparator<VolumeSnapshot> OLDEST_FIRST =
      Comparator.comparing((VolumeSnapshot x) -> x.created() == null ? "~" : x.created())
          .thenComparing(VolumeSnapshot::name);

  private static int rank(List<VolumeSnapshot> ordered, VolumeSnapshot s) {
    for (int i = 0; i < ordered.size(); i++) {
      if (ordered.get(i).key().equals(s.key())) {
        return i;
      }
    }
    return ordered.size();
  }

  private static String over(VolumeSnapshot s, String of, int asked, int cap, String flag) {
    return "VolumeSnapshot "
        + s.key()
        + " is not made: "
        + of
        + " asks for "
        + asked
        + " snapshots and backups, and at most "
        + cap
        + " are kept (--max-snapshots-"
        + flag
        + ", the oldest first); it is made once older VolumeSnapshots are deleted";
  }
}
