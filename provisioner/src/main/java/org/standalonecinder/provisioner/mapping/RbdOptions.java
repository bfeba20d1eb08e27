package org.standalonecinder.provisioner.mapping;

/**
 * How RBD exports become PVs, for one claim: its class's choices over the provisioner's defaults.
 *
 * @param form the PV form, or null when it could not be decided (the Kubernetes version was unknown
 *     and nothing was configured): RBD exports are then refused with the reason
 * @param clusterId the ceph-csi {@code clusterID}, needed by the {@code csi} form, or null
 * @param csiDriver the ceph-csi RBD driver's name, {@code rbd.csi.ceph.com} unless deployed under
 *     another (Rook: {@code <namespace>.rbd.csi.ceph.com})
 * @param imageFeatures the image features ceph-csi maps with (the {@code imageFeatures} attribute)
 * @param cephxLookup the credentials nodes map images with, looked up when an RBD export first
 *     needs them (an iSCSI or FC export never does, so its claim costs no read of the admin's
 *     Secret)
 * @param growableClass the claim's class when it allows volume expansion, else null: no in-tree
 *     {@code rbd} PV is made for such a claim (see {@link #inGrowableClass})
 */
public record RbdOptions(
    RbdForm form,
    String clusterId,
    String csiDriver,
    String imageFeatures,
    java.util.function.Supplier<Cephx> cephxLookup,
    String growableClass) {

  /** In a class that does not allow volume expansion. */
  public RbdOptions(
      RbdForm form,
      String clusterId,
      String csiDriver,
      String imageFeatures,
      java.util.function.Supplier<Cephx> cephxLookup) {
    this(form, clusterId, csiDriver, imageFeatures, cephxLookup, null);
  }

  /** With the credentials known already. */
  public RbdOptions(
      RbdForm form, String clusterId, String csiDriver, String imageFeatures, Cephx cephx) {
    this(form, clusterId, csiDriver, imageFeatures, () -> cephx, null);
  }

  /**
   * The same options for a claim of {@code className}, which allows volume expansion (null: it does
   * not). Kubernetes' API server refuses to grow a claim whose class does not allow it (its
   * PersistentVolumeClaimResize admission, on by default, on 1.20 as on current releases), and so
   * no request of a user's ever reaches Kubernetes' own expand controller, which takes in-tree rbd
   * claims too and on 1.20 crashed the whole controller-manager: an in-tree rbd PV is made only in
   * a class that does not allow expansion.
   */
  public RbdOptions inGrowableClass(String className) {
    return new RbdOptions(form, clusterId, csiDriver, imageFeatures, cephxLookup, className);
  }

  /** The credentials nodes map images with. */
  public Cephx cephx() {
    return cephxLookup.get();
  }

  public static final String DEFAULT_CSI_DRIVER = "rbd.csi.ceph.com";
  public static final String DEFAULT_IMAGE_FEATURES = "layering";
}
