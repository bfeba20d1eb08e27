package org.standalonecinder.provisioner.snapshot;

import org.standalonecinder.provisioner.controller.InFlight;

/**
 * What the VolumeSnapshots of this provisioner's classes may cost Cinder.
 *
 * <p>How many backups Cinder may be taking at once: no worker waits for a backup, so the workers no
 * longer bound them; these do. A backup reads its whole volume, and a namespace's hundred
 * VolumeSnapshots through a backup class would otherwise start a hundred at once in cinder-backup,
 * ahead of every other namespace's.
 *
 * <p>How many snapshots and backups may be kept: each holds Cinder quota and space that every
 * tenant of the Cinder project shares, and one 1 TiB claim with a hundred full backups would take
 * them from all. A VolumeSnapshot past a cap is not made, and is told why; it is made once older
 * ones are deleted (the oldest are made first).
 *
 * @param total backups being taken at once, overall
 * @param perNamespace of those, for the VolumeSnapshots of one namespace
 * @param keptPerClaim snapshots and backups kept of one claim
 * @param keptPerNamespace snapshots and backups kept of the claims of one namespace
 */
public record SnapshotLimits(int total, int perNamespace, int keptPerClaim, int keptPerNamespace) {

  /**
   * The defaults: 8 backups at once, a namespace at most half of them; 64 kept of a claim (two
   * months of daily ones), 512 of a namespace.
   */
  public static final SnapshotLimits DEFAULT = new SnapshotLimits(8, 4, 64, 512);

  public SnapshotLimits {
    if (total < 1 || perNamespace < 1 || keptPerClaim < 1 || keptPerNamespace < 1) {
      throw new IllegalArgumentException("snapshot limits must be at least 1");
    }
  }

  /** These bounds on backups in flight, and the default caps on what is kept. */
  public SnapshotLimits(int total, int perNamespace) {
    this(total, perNamespace, DEFAULT.keptPerClaim, DEFAULT.keptPerNamespace);
  }

  InFlight.Limits inFlight() {
    return new InFlight.Limits(
        "backups", total, perNamespace, "--max-backups", "--max-backups-per-namespace");
  }
}
