package org.standalonecinder.provisioner.mapping;

import io.fabric8.kubernetes.api.model.ISCSIPersistentVolumeSource;
import io.fabric8.kubernetes.api.model.ISCSIPersistentVolumeSourceBuilder;
import io.fabric8.kubernetes.api.model.SecretReference;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.standalonecinder.provisioner.cinder.ConnectionInfo;

/**
 * The iSCSI target a Cinder {@code iscsi} export names, checked: portal, IQN and LUN present and
 * well formed, the other portals that serve the same IQN and LUN, CHAP credentials wherever Cinder
 * asks for CHAP, and the volume not encrypted. PVs ({@link IscsiMapper}) and the host's own login
 * (the attach CLI) are both made from it, as {@link RbdImage} is for RBD.
 *
 * @param portal the main portal, {@code host:port}
 * @param otherPortals multipath portals serving the same IQN and LUN
 * @param readOnly whether Cinder exported it read-only ({@code access_mode ro})
 * @param session CHAP for the session, or null for none
 * @param discovery CHAP for discovery, or null for none
 */
public record IscsiTarget(
    String portal,
    String iqn,
    int lun,
    List<String> otherPortals,
    boolean readOnly,
    Chap session,
    Chap discovery) {

  /** A CHAP user and secret. */
  public record Chap(String user, String password) {
    @Override
    public String toString() {
      return "Chap[user=" + user + ", password=(hidden)]";
    }
  }

  public IscsiTarget {
    otherPortals = List.copyOf(otherPortals);
  }

  /**
   * The target of an export.
   *
   * @throws UnmappableExportException when the export lacks or garbles what names the target, asks
   *     for CHAP without credentials, or the volume is encrypted
   */
  public static IscsiTarget of(ConnectionInfo info) {
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
    Chap session =
        "CHAP".equalsIgnoreCase(info.string("auth_method"))
            ? chap(info, "auth_username", "auth_password")
            : null;
    Chap discovery =
        "CHAP".equalsIgnoreCase(info.string("discovery_auth_method"))
            ? chap(info, "discovery_auth_username", "discovery_auth_password")
            : null;
    return new IscsiTarget(
        portal,
        iqn,
        lun,
        otherPortals(info, portal, iqn, lun),
        "ro".equalsIgnoreCase(info.string("access_mode")),
        session,
        discovery);
  }

  /**
   * The {@code spec.iscsi} a node logs in with.
   *
   * @param initiatorName the initiator Cinder exported the volume to
   * @param fsType the filesystem, or null (a block volume)
   * @param readOnly read-only whatever Cinder said
   * @param chapSecret where the CHAP Secret is, or null when there is none
   */
  public ISCSIPersistentVolumeSource source(
      String initiatorName, String fsType, boolean readOnly, SecretReference chapSecret) {
    ISCSIPersistentVolumeSourceBuilder b =
        new ISCSIPersistentVolumeSourceBuilder()
            .withTargetPortal(portal)
            .withIqn(iqn)
            .withLun(lun)
            .withIscsiInterface("default")
            .withInitiatorName(initiatorName)
            .withReadOnly(readOnly || this.readOnly)
            .withChapAuthSession(session != null)
            .withChapAuthDiscovery(discovery != null);
    if (fsType != null) {
      b.withFsType(fsType);
    }
    if (!otherPortals.isEmpty()) {
      b.withPortals(otherPortals);
    }
    if (chapSecret != null) {
      b.withSecretRef(chapSecret);
    }
    return b.build();
  }

  /** The CHAP data in the keys the kubelet's iSCSI plugin and open-iscsi read; empty for none. */
  public Map<String, String> chapData() {
    Map<String, String> out = new LinkedHashMap<>();
    if (session != null) {
      out.put(IscsiMapper.SESSION_USER, session.user());
      out.put(IscsiMapper.SESSION_PASSWORD, session.password());
    }
    if (discovery != null) {
      out.put(IscsiMapper.DISCOVERY_USER, discovery.user());
      out.put(IscsiMapper.DISCOVERY_PASSWORD, discovery.password());
    }
    return out;
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

  private static Chap chap(ConnectionInfo info, String user, String password) {
    if (blank(info.string(user)) || blank(info.string(password))) {
      throw new UnmappableExportException(
          "Cinder asked for CHAP but sent no " + user + "/" + password + " for it");
    }
    return new Chap(info.string(user), info.string(password));
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
