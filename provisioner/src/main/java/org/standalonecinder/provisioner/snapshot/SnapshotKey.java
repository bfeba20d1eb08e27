package org.standalonecinder.provisioner.snapshot;

/** What a snapshot worker works on: a VolumeSnapshot, or a VolumeSnapshotContent. */
sealed interface SnapshotKey {

  /** A VolumeSnapshot, by namespace and name. */
  record Of(String namespace, String name) implements SnapshotKey {
    @Override
    public String toString() {
      return "volumesnapshot " + namespace + "/" + name;
    }
  }

  /** A VolumeSnapshotContent, by name. */
  record ContentOf(String name) implements SnapshotKey {
    @Override
    public String toString() {
      return "volumesnapshotcontent " + name;
    }
  }
}
