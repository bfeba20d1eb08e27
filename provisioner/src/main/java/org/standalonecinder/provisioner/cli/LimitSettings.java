package org.standalonecinder.provisioner.cli;

import org.standalonecinder.api.settings.Setting;
import org.standalonecinder.api.settings.Values;
import org.standalonecinder.provisioner.provision.CopyLimits;
import org.standalonecinder.provisioner.snapshot.SnapshotLimits;

/**
 * The bounds {@code run} puts on Cinder's slow operations in flight (copies and backups), and on
 * the snapshots and backups kept.
 */
final class LimitSettings {

  private LimitSettings() {}

  static final Setting<Integer> MAX_COPIES =
      Setting.integer("--max-copies", 1, 10_000)
          .env("MAX_COPIES")
          .byDefault(String.valueOf(CopyLimits.DEFAULT.total()))
          .doc(
              "clones and restores Cinder may be copying for claims at once; more wait in the"
                  + " queue, told why, without asking Cinder");

  static final Setting<Integer> MAX_COPIES_PER_NAMESPACE =
      Setting.integer("--max-copies-per-namespace", 1, 10_000)
          .env("MAX_COPIES_PER_NAMESPACE")
          .byDefault(String.valueOf(CopyLimits.DEFAULT.perNamespace()))
          .doc("of those, how many for the claims of one namespace");

  static final Setting<Integer> MAX_BACKUPS =
      Setting.integer("--max-backups", 1, 10_000)
          .env("MAX_BACKUPS")
          .byDefault(String.valueOf(SnapshotLimits.DEFAULT.total()))
          .doc(
              "backups Cinder may be taking for VolumeSnapshots at once; more wait in the queue,"
                  + " told why, without asking Cinder");

  static final Setting<Integer> MAX_BACKUPS_PER_NAMESPACE =
      Setting.integer("--max-backups-per-namespace", 1, 10_000)
          .env("MAX_BACKUPS_PER_NAMESPACE")
          .byDefault(String.valueOf(SnapshotLimits.DEFAULT.perNamespace()))
          .doc("of those, how many for the VolumeSnapshots of one namespace");

  static final Setting<Integer> MAX_SNAPSHOTS_PER_CLAIM =
      Setting.integer("--max-snapshots-per-claim", 1, 100_000)
          .env("MAX_SNAPSHOTS_PER_CLAIM")
          .byDefault(String.valueOf(SnapshotLimits.DEFAULT.keptPerClaim()))
          .doc(
              "snapshots and backups kept of one claim (VolumeSnapshots of this provisioner's"
                  + " classes); one past it is not made, and is told why, until older ones go");

  static final Setting<Integer> MAX_SNAPSHOTS_PER_NAMESPACE =
      Setting.integer("--max-snapshots-per-namespace", 1, 1_000_000)
          .env("MAX_SNAPSHOTS_PER_NAMESPACE")
          .byDefault(String.valueOf(SnapshotLimits.DEFAULT.keptPerNamespace()))
          .doc("snapshots and backups kept of the claims of one namespace");

  static CopyLimits copies(Values v) {
    return new CopyLimits(v.get(MAX_COPIES), v.get(MAX_COPIES_PER_NAMESPACE));
  }

  static SnapshotLimits backups(Values v) {
    return new SnapshotLimits(
        v.get(MAX_BACKUPS),
        v.get(MAX_BACKUPS_PER_NAMESPACE),
        v.get(MAX_SNAPSHOTS_PER_CLAIM),
        v.get(MAX_SNAPSHOTS_PER_NAMESPACE));
  }
}
