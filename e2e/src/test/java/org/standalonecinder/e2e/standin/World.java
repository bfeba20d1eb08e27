package org.standalonecinder.e2e.standin;

import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import java.util.List;

/**
 * What the rules may look at. Snapshots, contents and classes come from the stand-in's informers
 * (the real one's listers); claims and PVs from the API server (the real one reads claims from a
 * lister and PVs with a GET: a fresher claim never makes the stand-in act on what is gone).
 */
interface World {

  /** The snapshot as the informer holds it, or null. */
  Snap snapshot(String namespace, String name);

  /** The snapshots of a namespace, as the informer holds them. */
  List<Snap> snapshotsIn(String namespace);

  SnapContent content(String name);

  /** Whether the VolumeSnapshotClass exists (all the rules ask of a class). */
  boolean classExists(String name);

  PersistentVolumeClaim claim(String namespace, String name);

  List<PersistentVolumeClaim> claimsIn(String namespace);

  PersistentVolume volume(String name);
}
