package org.standalonecinder.e2e;

import static org.standalonecinder.demo.LocalNode.quote;

import io.fabric8.kubernetes.api.model.ISCSIPersistentVolumeSource;
import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.Secret;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.Map;
import org.standalonecinder.demo.LocalNode;

/**
 * An iSCSI PV as the kubelet's in-tree iSCSI plugin uses it, written as the scripts the node runs:
 * an iface of its own carrying the PV's initiator name, a node record for the PV's portal, target
 * and LUN with the CHAP Secret's values, the login, and udev's by-path link as the device. Every
 * value comes from the PV and its Secret and nothing else.
 */
final class NodeIscsi {

  final ISCSIPersistentVolumeSource source;
  final String user;
  final String password;
  private final String iface;

  /**
   * @param secret the PV's CHAP Secret, as the kubelet reads it
   */
  NodeIscsi(PersistentVolume pv, Secret secret) {
    this.source = pv.getSpec().getIscsi();
    this.user = value(secret, "node.session.auth.username");
    this.password = value(secret, "node.session.auth.password");
    // The kubelet's name for an iface made for a PV's initiator name.
    this.iface = source.getTargetPortal() + ":" + pv.getMetadata().getName();
  }

  private static String value(Secret s, String key) {
    String b64 = s.getData().get(key);
    return b64 == null ? null : new String(Base64.getDecoder().decode(b64), StandardCharsets.UTF_8);
  }

  /** udev's link for the LUN, the path the kubelet waits for. */
  String byPath() {
    return byPath(source);
  }

  /** udev's link for the LUN of an iSCSI PV. */
  static String byPath(ISCSIPersistentVolumeSource source) {
    return "/dev/disk/by-path/ip-"
        + source.getTargetPortal()
        + "-iscsi-"
        + source.getIqn()
        + "-lun-"
        + source.getLun();
  }

  private String node(String op) {
    return "iscsiadm -m node -p "
        + quote(source.getTargetPortal())
        + " -T "
        + quote(source.getIqn())
        + " -I "
        + quote(iface)
        + " "
        + op;
  }

  /** Makes the iface and the node record, with this CHAP password, and logs in. */
  String login(String withPassword) {
    StringBuilder s = new StringBuilder();
    s.append("iscsiadm -m iface -I ").append(quote(iface)).append(" -o new >/dev/null\n");
    s.append("iscsiadm -m iface -I ")
        .append(quote(iface))
        .append(" -o update -n iface.initiatorname -v ")
        .append(quote(source.getInitiatorName()))
        .append('\n');
    s.append(node("-o new >/dev/null")).append('\n');
    Map<String, String> auth = new LinkedHashMap<>();
    if (Boolean.TRUE.equals(source.getChapAuthSession())) {
      auth.put("node.session.auth.authmethod", "CHAP");
      auth.put("node.session.auth.username", user);
      auth.put("node.session.auth.password", withPassword);
    }
    auth.forEach(
        (k, v) -> s.append(node("-o update -n " + k + " -v " + quote(v))).append(" || exit 90\n"));
    s.append(node("--login")).append('\n');
    s.append("rc=$?\n");
    s.append("if [ $rc != 0 ]; then ").append(node("-o delete")).append("; ");
    s.append("iscsiadm -m iface -I ").append(quote(iface)).append(" -o delete; exit $rc; fi\n");
    // udev makes the link a moment after the login returns
    s.append("for i in $(seq 100); do [ -e ")
        .append(quote(byPath()))
        .append(" ] && break; sleep 0.2; done\n");
    s.append("echo DEVICE=$(readlink -f ").append(quote(byPath())).append(")\n");
    return s.toString();
  }

  /** Logs out and removes the node record and the iface, as the kubelet's detach does. */
  String logout() {
    return node("--logout")
        + "\n"
        + node("-o delete")
        + "\niscsiadm -m iface -I "
        + quote(iface)
        + " -o delete\n";
  }

  /** The value a script printed as {@code KEY=value}, or null. */
  static String printed(LocalNode.Result r, String key) {
    for (String line : r.output().lines().toList()) {
      if (line.startsWith(key + "=")) {
        return line.substring(key.length() + 1);
      }
    }
    return null;
  }
}
