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
 */
public record RbdOptions(
    RbdForm form,
    String clusterId,
    String csiDriver,
    String imageFeatures,
    java.util.function.Supplier<Cephx> cephxLookup) {

  /** With the credentials known already. */
  public RbdOptions(
      RbdForm form, String clusterId, String csiDriver, String imageFeatures, Cephx cephx) {
    this(form, clusterId, csiDriver, imageFeatures, () -> cephx);
  }

  /** The credentials nodes map images with. */
  public Cephx cephx() {
    return cephxLookup.get();
  }

  public static final String DEFAULT_CSI_DRIVER = "rbd.csi.ceph.com";
  public static final String DEFAULT_IMAGE_FEATURES = "layering";
}
