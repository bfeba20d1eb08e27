package org.standalonecinder.provisioner.mapping;

import java.util.Map;

/**
 * What a mapper needs besides Cinder's answer.
 *
 * @param pvName the PersistentVolume's name; auth Secrets are named after it
 * @param initiatorName the cluster's iSCSI initiator, also sent to Cinder
 * @param fsType the filesystem for Filesystem-mode volumes, or null
 * @param block whether the claim asked for volumeMode Block (then no fsType)
 * @param readOnly whether the claim only asked for ReadOnlyMany
 * @param secretNamespace where auth Secrets live (the provisioner's namespace)
 * @param secretLabels labels that tie an auth Secret to its PV
 */
public record MappingContext(
    String pvName,
    String initiatorName,
    String fsType,
    boolean block,
    boolean readOnly,
    String secretNamespace,
    Map<String, String> secretLabels) {}
