package org.standalonecinder.provisioner.snapshot;

import org.standalonecinder.provisioner.controller.InFlight;

/**
 * How many backups Cinder may be taking for VolumeSnapshots at once. No worker waits for a backup,
 * so the workers no longer bound them; these do: a backup reads its whole volume, and a namespace's
 * hundred VolumeSnapshots through a backup class would otherwise start a hundred at once in
 * cinder-backup, ahead of every other namespace's.
 *
 * @param total overall
 * @param perNamespace for the VolumeSnapshots of one namespace
 */
public record BackupLimits(int total, int perNamespace) {

  /** The defaults: 8 at once, a namespace at most half of them. */
  public static final BackupLimits DEFAULT = new BackupLimits(8, 4);

  public BackupLimits {
    if (total < 1 || perNamespace < 1) {
      throw new IllegalArgumentException("backup limits must be at least 1");
    }
  }

  InFlight.Limits inFlight() {
    return new InFlight.Limits(
        "backups", total, perNamespace, "--max-backups", "--max-backups-per-namespace");
  }
}
