/**
 * The snapshot loop: a CSI snapshotter's part for this provisioner's driver. VolumeSnapshots of its
 * claims get their content ({@code SnapshotSync}); contents are taken, followed and deleted as
 * Cinder snapshots or backups ({@code ContentSync}, {@code ContentDeletion}) once their volume is
 * free and a backup has room ({@code TakeGate}, {@code SnapshotLimits}), swept after a restart, and
 * restored into claims ({@code RestoreResolver}).
 */
package org.standalonecinder.provisioner.snapshot;
