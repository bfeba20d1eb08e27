package org.standalonecinder.provisioner.mapping;

import java.util.Map;

/**
 * What a mapper needs besides Cinder's answer.
 *
 * @param pvName the PersistentVolume's name; auth Secrets of its own are named after it
 * @param initiatorName the cluster's iSCSI initiator, also sent to Cinder
 * @param fsType the filesystem for Filesystem-mode volumes, or null
 * @param block whether the claim asked for volumeMode Block (then no fsType)
 * @param readOnly whether the claim only asked for ReadOnlyMany
 * @param secretNamespace where auth Secrets live (the provisioner's namespace)
 * @param secretLabels labels that tie an auth Secret to its PV
 * @param sharedSecretLabels labels of auth Secrets that several PVs use
 * @param rbd how RBD exports become PVs, for this claim
 * @param multiNode whether the claim asked for ReadWriteMany (writers on several nodes at once)
 * @param chapOptional whether an iSCSI export without CHAP may become a PV (the admin opted in)
 */
public record MappingContext(
    String pvName,
    String initiatorName,
    String fsType,
    boolean block,
    boolean readOnly,
    String secretNamespace,
    Map<String, String> secretLabels,
    Map<String, String> sharedSecretLabels,
    RbdOptions rbd,
    boolean multiNode,
    boolean chapOptional) {

  /** CHAP required of iSCSI exports. */
  public MappingContext(
      String pvName,
      String initiatorName,
      String fsType,
      boolean block,
      boolean readOnly,
      String secretNamespace,
      Map<String, String> secretLabels,
      Map<String, String> sharedSecretLabels,
      RbdOptions rbd,
      boolean multiNode) {
    this(
        pvName,
        initiatorName,
        fsType,
        block,
        readOnly,
        secretNamespace,
        secretLabels,
        sharedSecretLabels,
        rbd,
        multiNode,
        false);
  }

  /** Without RBD configuration: RBD exports are refused with the reason. */
  public MappingContext(
      String pvName,
      String initiatorName,
      String fsType,
      boolean block,
      boolean readOnly,
      String secretNamespace,
      Map<String, String> secretLabels) {
    this(
        pvName,
        initiatorName,
        fsType,
        block,
        readOnly,
        secretNamespace,
        secretLabels,
        Map.of(),
        new RbdOptions(
            null,
            null,
            RbdOptions.DEFAULT_CSI_DRIVER,
            RbdOptions.DEFAULT_IMAGE_FEATURES,
            Cephx.none(secretNamespace)),
        false);
  }

  /** The same context for a claim that does (or does not) ask for ReadWriteMany. */
  public MappingContext withMultiNode(boolean multiNode) {
    return new MappingContext(
        pvName,
        initiatorName,
        fsType,
        block,
        readOnly,
        secretNamespace,
        secretLabels,
        sharedSecretLabels,
        rbd,
        multiNode,
        chapOptional);
  }

  /** The same context, with an iSCSI export without CHAP allowed (or not). */
  public MappingContext withChapOptional(boolean optional) {
    return new MappingContext(
        pvName,
        initiatorName,
        fsType,
        block,
        readOnly,
        secretNamespace,
        secretLabels,
        sharedSecretLabels,
        rbd,
        multiNode,
        optional);
  }
}
