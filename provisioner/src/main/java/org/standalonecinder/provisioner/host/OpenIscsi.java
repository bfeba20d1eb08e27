package org.standalonecinder.provisioner.host;

import io.fabric8.kubernetes.api.model.ISCSIPersistentVolumeSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.standalonecinder.provisioner.mapping.IscsiMapper;

/**
 * The {@code iscsiadm} commands that log this host in to an iSCSI export and out again, in the
 * order os-brick and the kubelet run them: a node record per portal ({@code --op new}, without a
 * discovery, so a target that hides itself from SendTargets still works), its CHAP settings, the
 * login, and {@code node.startup automatic} so that the session comes back after a reboot. The
 * export is described as a PV's {@code spec.iscsi} and CHAP Secret describe it, so the host logs in
 * exactly as a node would for the same volume.
 */
public final class OpenIscsi {

  /** iscsiadm's "session exists": a login that is already done. */
  static final int SESSION_EXISTS = 15;

  /** iscsiadm's "no records or sessions found": a logout or delete that is already done. */
  static final int NOTHING_FOUND = 21;

  /**
   * iscsiadm's "iSCSI database failure": the node record was not there for a moment. Another
   * iscsiadm rewrites every record of a portal when it discovers through it, as the kubelet's iSCSI
   * plugin does for each of its volumes on the same node ("iface iter could not stat
   * /etc/iscsi/nodes/...", seen in CI on a node whose kubelet attached a volume meanwhile).
   */
  static final int DATABASE_FAILURE = 6;

  private OpenIscsi() {}

  /** The portals to log in to: the main one, and with multipath the others of the same LUN. */
  public static List<String> portals(ISCSIPersistentVolumeSource s, boolean multipath) {
    List<String> out = new ArrayList<>(List.of(s.getTargetPortal()));
    if (multipath && s.getPortals() != null) {
      s.getPortals().stream().filter(p -> !out.contains(p)).forEach(out::add);
    }
    return out;
  }

  /**
   * The login, portal by portal.
   *
   * @param chap the CHAP Secret's data ({@link IscsiMapper#SESSION_USER}, {@link
   *     IscsiMapper#SESSION_PASSWORD}), empty without CHAP
   */
  public static List<Command> login(
      ISCSIPersistentVolumeSource s, Map<String, String> chap, boolean multipath) {
    List<Command> out = new ArrayList<>();
    for (String portal : portals(s, multipath)) {
      out.add(node(s, portal, "--op", "new"));
      if (Boolean.TRUE.equals(s.getChapAuthSession())) {
        out.add(update(s, portal, "node.session.auth.authmethod", "CHAP"));
        out.add(update(s, portal, IscsiMapper.SESSION_USER, chap.get(IscsiMapper.SESSION_USER)));
        out.add(
            update(
                s, portal, IscsiMapper.SESSION_PASSWORD, chap.get(IscsiMapper.SESSION_PASSWORD)));
      }
      out.add(node(s, portal, "--login").alsoOk(SESSION_EXISTS));
      out.add(update(s, portal, "node.startup", "automatic"));
    }
    return out;
  }

  /**
   * The logout: each portal's session is not brought back at boot, ended, and its node record
   * deleted. Each step is done already when there is nothing to end or delete, so a logout can be
   * repeated after one that stopped half way.
   */
  public static List<Command> logout(ISCSIPersistentVolumeSource s, boolean multipath) {
    List<Command> out = new ArrayList<>();
    for (String portal : portals(s, multipath)) {
      out.addAll(logout(s, portal));
    }
    return out;
  }

  /**
   * The logout of one portal's session (see {@link #logout(ISCSIPersistentVolumeSource, boolean)}).
   */
  public static List<Command> logout(ISCSIPersistentVolumeSource s, String portal) {
    return List.of(
        update(s, portal, "node.startup", "manual").alsoOk(NOTHING_FOUND),
        node(s, portal, "--logout").alsoOk(NOTHING_FOUND),
        node(s, portal, "--op", "delete").alsoOk(NOTHING_FOUND));
  }

  /** Where udev links iSCSI LUNs by portal, target and LUN. */
  public static final String BY_PATH = "/dev/disk/by-path";

  /** The block device udev names for the LUN through a portal. */
  public static String device(ISCSIPersistentVolumeSource s, String portal) {
    return BY_PATH + "/ip-" + portal + "-iscsi-" + s.getIqn() + "-lun-" + s.getLun();
  }

  /**
   * A command on this host's own node record of the target through the portal: always through the
   * {@code default} interface. Without it iscsiadm acts on every record of the target, and the
   * kubelet's SendTargets discovery for another volume on the same portal writes one for every
   * target there under an interface of its own (named after its PV, with that PV's CHAP): a login
   * then also tried that record and failed on its CHAP (seen in CI), and an update or a delete
   * would change the kubelet's records.
   */
  private static Command node(ISCSIPersistentVolumeSource s, String portal, String... rest) {
    List<String> argv =
        new ArrayList<>(
            List.of(
                "iscsiadm",
                "-m",
                "node",
                "-T",
                s.getIqn(),
                "-p",
                portal,
                "--interface",
                "default"));
    argv.addAll(List.of(rest));
    return Command.of(argv).againOn(DATABASE_FAILURE);
  }

  private static Command update(
      ISCSIPersistentVolumeSource s, String portal, String name, String value) {
    return node(s, portal, "--op", "update", "-n", name, "-v", value);
  }
}
