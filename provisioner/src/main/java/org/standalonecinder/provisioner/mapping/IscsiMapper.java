package org.standalonecinder.provisioner.mapping;

import io.fabric8.kubernetes.api.model.ISCSIPersistentVolumeSource;
import io.fabric8.kubernetes.api.model.ISCSIPersistentVolumeSourceBuilder;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.api.model.SecretReference;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.standalonecinder.provisioner.cinder.ConnectionInfo;

/**
 * iSCSI: {@code spec.iscsi} with portal(s), IQN, LUN, the cluster's initiator name, and a {@code
 * kubernetes.io/iscsi-chap} Secret when Cinder set up CHAP.
 *
 * <p>The initiator name goes into the PV because many targets (LIO, most arrays) admit only the
 * initiator Cinder was told about; without it a node logs in with its own name and is refused.
 */
public final class IscsiMapper implements VolumeMapper {

  /** The Secret type the kubelet's iSCSI plugin reads CHAP credentials from. */
  public static final String CHAP_SECRET_TYPE = "kubernetes.io/iscsi-chap";

  public static final String SESSION_USER = "node.session.auth.username";
  public static final String SESSION_PASSWORD = "node.session.auth.password";
  public static final String DISCOVERY_USER = "discovery.sendtargets.auth.username";
  public static final String DISCOVERY_PASSWORD = "discovery.sendtargets.auth.password";

  /** The CHAP Secret's name for a PV. */
  public static String secretName(String pvName) {
    return "chap-" + pvName;
  }

  @Override
  public String driverVolumeType() {
    return "iscsi";
  }

  @Override
  public MappedVolume map(ConnectionInfo info, MappingContext ctx) {
    String portal = info.string("target_portal");
    String iqn = info.string("target_iqn");
    Integer lun = lun(info.data().get("target_lun"));
    List<String> missing = new ArrayList<>();
    if (blank(portal)) {
      missing.add("target_portal");
    }
    if (blank(iqn)) {
      missing.add("target_iqn");
    }
    if (lun == null) {
      missing.add("target_lun");
    }
    if (!missing.isEmpty()) {
      throw new UnmappableExportException(
          "Cinder's iSCSI connection info lacks "
              + String.join(", ", missing)
              + ": the backend's driver did not export the volume (is it a real iSCSI backend?)");
    }
    ExportNames.iqn(iqn);
    ExportNames.portal(portal);
    ExportNames.lun(lun);
    if (Boolean.TRUE.equals(info.data().get("encrypted"))) {
      throw new UnmappableExportException(
          "the volume is encrypted; Kubernetes' iSCSI plugin cannot open Cinder's LUKS volumes:"
              + " use a volume type without encryption");
    }

    boolean chapSession = "CHAP".equalsIgnoreCase(info.string("auth_method"));
    boolean chapDiscovery = "CHAP".equalsIgnoreCase(info.string("discovery_auth_method"));
    if (!chapSession && !ctx.chapOptional()) {
      throw new UnmappableExportException(
          "Cinder exported the volume over iSCSI without CHAP (auth_method "
              + (blank(info.string("auth_method")) ? "absent" : info.string("auth_method"))
              + "): any pod that reaches "
              + portal
              + " could read and write it, so it was refused and undone. Have Cinder's driver use"
              + " CHAP (e.g. use_chap_auth = True for LVM/tgt), or, if the storage network is"
              + " closed to pods, allow it: the class parameter iscsiChap: optional, or"
              + " --iscsi-chap optional (env ISCSI_CHAP)");
    }
    Map<String, String> secretData = new LinkedHashMap<>();
    if (chapSession) {
      requireCredentials(info, "auth_username", "auth_password");
      secretData.put(SESSION_USER, info.string("auth_username"));
      secretData.put(SESSION_PASSWORD, info.string("auth_password"));
    }
    if (chapDiscovery) {
      requireCredentials(info, "discovery_auth_username", "discovery_auth_password");
      secretData.put(DISCOVERY_USER, info.string("discovery_auth_username"));
      secretData.put(DISCOVERY_PASSWORD, info.string("discovery_auth_password"));
    }

    boolean readOnly = ctx.readOnly() || "ro".equalsIgnoreCase(info.string("access_mode"));
    ISCSIPersistentVolumeSourceBuilder b =
        new ISCSIPersistentVolumeSourceBuilder()
            .withTargetPortal(portal)
            .withIqn(iqn)
            .withLun(lun)
            .withIscsiInterface("default")
            .withInitiatorName(ctx.initiatorName())
            .withReadOnly(readOnly)
            .withChapAuthSession(chapSession)
            .withChapAuthDiscovery(chapDiscovery);
    if (!ctx.block() && ctx.fsType() != null) {
      b.withFsType(ctx.fsType());
    }
    List<String> others = otherPortals(info, portal, iqn, lun);
    if (!others.isEmpty()) {
      b.withPortals(others);
    }
    Optional<Secret> secret = Optional.empty();
    if (!secretData.isEmpty()) {
      String name = secretName(ctx.pvName());
      b.withSecretRef(new SecretReference(name, ctx.secretNamespace()));
      secret =
          Optional.of(
              new SecretBuilder()
                  .withNewMetadata()
                  .withName(name)
                  .withNamespace(ctx.secretNamespace())
                  .withLabels(ctx.secretLabels())
                  .endMetadata()
                  .withType(CHAP_SECRET_TYPE)
                  .withStringData(secretData)
                  .build());
    }
    ISCSIPersistentVolumeSource source = b.build();
    return new MappedVolume(spec -> spec.setIscsi(source), secret);
  }

  /**
   * Multipath portals other than the main one. Kubernetes' iSCSI source has one IQN and LUN, so
   * only portals that serve the same IQN and LUN are usable.
   */
  private static List<String> otherPortals(
      ConnectionInfo info, String portal, String iqn, int lun) {
    List<String> out = new ArrayList<>();
    if (!(info.data().get("target_portals") instanceof List<?> portals)) {
      return out;
    }
    List<?> iqns = info.data().get("target_iqns") instanceof List<?> l ? l : List.of();
    List<?> luns = info.data().get("target_luns") instanceof List<?> l ? l : List.of();
    for (int i = 0; i < portals.size(); i++) {
      String p = String.valueOf(portals.get(i));
      boolean sameIqn = i >= iqns.size() || iqn.equals(String.valueOf(iqns.get(i)));
      Integer l = i < luns.size() ? lun(luns.get(i)) : Integer.valueOf(lun);
      if (!p.equals(portal) && sameIqn && l != null && l == lun && !out.contains(p)) {
        out.add(ExportNames.portal(p));
      }
    }
    return out;
  }

  private static void requireCredentials(ConnectionInfo info, String user, String password) {
    if (blank(info.string(user)) || blank(info.string(password))) {
      throw new UnmappableExportException(
          "Cinder asked for CHAP but sent no " + user + "/" + password + " for it");
    }
  }

  private static Integer lun(Object raw) {
    if (raw instanceof Number n) {
      return n.intValue();
    }
    if (raw != null) {
      try {
        return Integer.parseInt(raw.toString().trim());
      } catch (NumberFormatException e) {
        return null;
      }
    }
    return null;
  }

  private static boolean blank(String s) {
    return s == null || s.isBlank();
  }
}
