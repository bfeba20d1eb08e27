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
 * @param cephx the credentials nodes map images with
 */
public record RbdOptions(
    RbdForm form, String clusterId, String csiDriver, String imageFeatures, Cephx cephx) {

  public static final String DEFAULT_CSI_DRIVER = "rbd.csi.ceph.com";
  public static final String DEFAULT_IMAGE_FEATURES = "layering";
}
