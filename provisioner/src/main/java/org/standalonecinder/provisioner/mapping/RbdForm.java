package org.standalonecinder.provisioner.mapping;

import java.util.Locale;

/** The PersistentVolume source an RBD export becomes. */
public enum RbdForm {
  /** In-tree {@code spec.rbd}: Kubernetes up to 1.30, where the kubelet's rbd plugin exists. */
  RBD,
  /** A static ceph-csi volume, {@code spec.csi}: Kubernetes 1.31 and later. */
  CSI;

  /** The first Kubernetes minor version (of 1.x) without the in-tree rbd plugin. */
  public static final int IN_TREE_REMOVED_IN = 31;

  /** The form a cluster of version 1.{@code minor} needs. */
  public static RbdForm forKubernetesMinor(int minor) {
    return minor >= IN_TREE_REMOVED_IN ? CSI : RBD;
  }

  /** {@code rbd} or {@code csi}, as StorageClasses and flags spell it. */
  public String spelling() {
    return name().toLowerCase(Locale.ROOT);
  }

  /**
   * Parses {@code rbd} or {@code csi} (any case).
   *
   * @throws IllegalArgumentException naming the accepted values
   */
  public static RbdForm parse(String s) {
    for (RbdForm f : values()) {
      if (f.spelling().equalsIgnoreCase(s == null ? "" : s.trim())) {
        return f;
      }
    }
    throw new IllegalArgumentException(
        "RBD form '" + s + "' is neither rbd (in-tree, Kubernetes up to 1.30) nor csi (ceph-csi)");
  }
}
