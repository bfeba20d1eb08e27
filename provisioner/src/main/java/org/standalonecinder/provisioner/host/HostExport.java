package org.standalonecinder.provisioner.host;

import io.fabric8.kubernetes.api.model.ISCSIPersistentVolumeSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.standalonecinder.provisioner.cinder.ConnectionInfo;
import org.standalonecinder.provisioner.cinder.Connector;
import org.standalonecinder.provisioner.mapping.IscsiTarget;
import org.standalonecinder.provisioner.mapping.RbdImage;
import org.standalonecinder.provisioner.mapping.UnmappableExportException;

/**
 * A Cinder export as this host reaches it: the commands that make its block device appear and go
 * away again, and the names the device may appear under. Each command is safe to repeat.
 */
public sealed interface HostExport {

  /** What the export is, for messages: protocol, target and image, never a credential. */
  String describe();

  /** The commands that make the device appear, in order; empty when it is there already. */
  List<Command> connect(Host host);

  /** The commands that take the device away, in order; empty when there is nothing to undo. */
  List<Command> disconnect(Host host);

  /** The paths the device appears under; any one of them is enough. */
  List<String> devices();

  /**
   * Why part of this export stays connected when it is disconnected (another volume of this host
   * uses the same session); empty when all of it goes.
   */
  default java.util.Optional<String> kept(Host host) {
    return java.util.Optional.empty();
  }

  /**
   * How this host reaches Cinder's export.
   *
   * @param connector what Cinder was told of this host (its initiator name is the one that logs in)
   * @throws HostException when the protocol is not one this host can attach, or the export lacks
   *     what it needs
   */
  static HostExport of(ConnectionInfo info, Connector connector, boolean multipath) {
    try {
      return switch (String.valueOf(info.driverVolumeType())) {
        case "iscsi" -> Iscsi.of(info, connector, multipath);
        case "rbd" -> new Rbd(RbdImage.of(info));
        default ->
            throw new HostException(
                "Cinder exported the volume over "
                    + info.driverVolumeType()
                    + "; this command attaches iSCSI and RBD exports only");
      };
    } catch (UnmappableExportException e) {
      throw new HostException(e.getMessage(), e);
    }
  }

  /**
   * iSCSI through open-iscsi: the same {@code spec.iscsi} and CHAP data a node would get from the
   * provisioner's PV, logged in to with {@link OpenIscsi}'s commands.
   */
  record Iscsi(ISCSIPersistentVolumeSource source, Map<String, String> chap, boolean multipath)
      implements HostExport {

    public Iscsi {
      chap = Map.copyOf(chap);
    }

    static Iscsi of(ConnectionInfo info, Connector connector, boolean multipath) {
      // The admin attaches this volume here by hand, on purpose: an export without CHAP is the
      // cloud's choice, not a pod's way in, so it is not refused as a PV's would be.
      IscsiTarget target = IscsiTarget.of(info);
      return new Iscsi(
          target.source(connector.initiator(), null, false, null), target.chapData(), multipath);
    }

    @Override
    public String describe() {
      return "iSCSI "
          + source.getIqn()
          + " lun "
          + source.getLun()
          + " at "
          + String.join(", ", OpenIscsi.portals(source, multipath));
    }

    @Override
    public List<Command> connect(Host host) {
      // Always run: a login that exists counts as done, and the node record is set up either way.
      return OpenIscsi.login(source, chap, multipath);
    }

    @Override
    public List<Command> disconnect(Host host) {
      // Always run: each step counts "nothing to log out" as done, and the node records go too.
      // But a session is the target's, not the LUN's: many arrays export every volume of a host
      // through one IQN, and logging out would take the other volumes' devices away too.
      List<Command> out = new ArrayList<>();
      for (String portal : OpenIscsi.portals(source, multipath)) {
        if (otherLuns(host, portal).isEmpty()) {
          out.addAll(OpenIscsi.logout(source, portal));
        }
      }
      return out;
    }

    @Override
    public java.util.Optional<String> kept(Host host) {
      List<String> kept = new ArrayList<>();
      for (String portal : OpenIscsi.portals(source, multipath)) {
        List<String> others = otherLuns(host, portal);
        if (!others.isEmpty()) {
          kept.add(portal + " (LUN " + String.join(", ", others) + ")");
        }
      }
      return kept.isEmpty()
          ? java.util.Optional.empty()
          : java.util.Optional.of(
              "the session to "
                  + source.getIqn()
                  + " stays logged in at "
                  + String.join(", ", kept)
                  + ": other volumes of this host use the same target");
    }

    /** The other LUNs of this target that have a device on the host through the portal. */
    private List<String> otherLuns(Host host, String portal) {
      String prefix = "ip-" + portal + "-iscsi-" + source.getIqn() + "-lun-";
      List<String> out = new ArrayList<>();
      for (String name : host.list(OpenIscsi.BY_PATH)) {
        if (name.startsWith(prefix)) {
          String lun = name.substring(prefix.length());
          if (lun.matches("[0-9]+") && Integer.parseInt(lun) != source.getLun()) {
            out.add(lun);
          }
        }
      }
      return out;
    }

    @Override
    public List<String> devices() {
      List<String> out = new ArrayList<>();
      for (String portal : OpenIscsi.portals(source, multipath)) {
        out.add(OpenIscsi.device(source, portal));
      }
      return out;
    }
  }

  /**
   * Ceph RBD through the kernel's rbd driver ({@code rbd device map}, from ceph-common): the host
   * needs a keyring for the Ceph user Cinder names in {@code /etc/ceph}, as any Ceph client does.
   */
  record Rbd(RbdImage image) implements HostExport {

    @Override
    public String describe() {
      return "RBD image " + image.spec() + " on " + String.join(",", image.monitors());
    }

    @Override
    public List<Command> connect(Host host) {
      // A second map of a mapped image makes a second device: map only what is not mapped.
      if (mapped(host)) {
        return List.of();
      }
      List<String> argv =
          new ArrayList<>(
              List.of(
                  "rbd", "device", "map", image.spec(), "-m", String.join(",", image.monitors())));
      if (image.user() != null) {
        argv.addAll(List.of("--id", image.user()));
      }
      return List.of(Command.of(argv));
    }

    @Override
    public List<Command> disconnect(Host host) {
      // rbd says "not mapped" with the same exit code as any other failure: ask the device first.
      return mapped(host) ? List.of(Command.of("rbd", "device", "unmap", image.spec())) : List.of();
    }

    private boolean mapped(Host host) {
      return devices().stream().anyMatch(host::exists);
    }

    @Override
    public List<String> devices() {
      // the link ceph-common's udev rule makes
      return List.of("/dev/rbd/" + image.spec());
    }
  }
}
