package org.standalonecinder.provisioner.host;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;
import org.standalonecinder.provisioner.cinder.Attachment;
import org.standalonecinder.provisioner.cinder.CinderClient;
import org.standalonecinder.provisioner.cinder.CinderException;
import org.standalonecinder.provisioner.cinder.CinderExport;
import org.standalonecinder.provisioner.cinder.ConnectionInfo;
import org.standalonecinder.provisioner.cinder.Connector;
import org.standalonecinder.provisioner.cinder.ExportPath;
import org.standalonecinder.provisioner.cinder.Microversion;
import org.standalonecinder.provisioner.cinder.Rollback;
import org.standalonecinder.provisioner.cinder.Volume;

/**
 * Attaches a Cinder volume to this host without Nova, and detaches it, as os-brick and Nova would:
 * Cinder exports the volume to this host's connector, the host logs in and waits for the device,
 * and only then does Cinder record the volume as {@code in-use}.
 *
 * <p>With the attachments API (microversion 3.44 and later; 3.54 for a read-only attachment) that
 * is create attachment, log in, complete attachment. Older clouds get os-reserve,
 * os-initialize_connection, log in, os-attach. Any failure undoes what was done, newest first, so
 * Cinder is left as it was: no attachment reserved, the volume {@code available} again.
 */
public final class Attacher {

  /**
   * A volume attached here.
   *
   * @param attachmentId Cinder's attachment
   * @param device where the volume appeared on this host
   * @param legacy whether it went through os-attach (no attachments API)
   */
  public record Attached(
      String volumeId, String attachmentId, String device, String export, boolean legacy) {}

  /**
   * A detach that ran, or found nothing to do.
   *
   * @param attachmentId the attachment ended, or null when the volume had none
   * @param skipped host-side steps that failed and were passed over ({@code --force}), with why
   */
  public record Detached(String volumeId, String attachmentId, List<String> skipped) {}

  private final CinderClient cinder;
  private final Host host;
  private final Connector connector;
  private final Consumer<String> say;
  private final HostSteps steps;

  /**
   * @param connector this host as Cinder is told of it (its {@code multipath} also chooses whether
   *     every portal is logged in to)
   * @param deviceTimeout how long the device may take to appear after the login
   * @param say where each step is reported, one line each (never a secret)
   */
  public Attacher(
      CinderClient cinder,
      Host host,
      Connector connector,
      Duration deviceTimeout,
      Consumer<String> say) {
    this.cinder = cinder;
    this.host = host;
    this.connector = connector;
    this.say = say;
    this.steps = new HostSteps(host, deviceTimeout, say);
  }

  /**
   * Attaches the volume to this host and returns where it appeared.
   *
   * @param readOnly attach read-only: recorded as {@code ro} in Cinder and enforced on the device
   *     ({@code blockdev --setro}), since Cinder's drivers export read-write whatever the mode
   * @throws AttachException when the volume is unknown or cannot be attached in its status
   * @throws HostException when this host cannot log in (not root, a tool missing, the login
   *     refused, no device in time); Cinder is as it was
   * @throws CinderException when Cinder refuses or fails; Cinder is as it was
   */
  public Attached attach(String volumeId, boolean readOnly) {
    requirePrivileged("attaching");
    requireAttachable(volume(volumeId));
    Rollback rollback = new Rollback();
    try {
      CinderExport.Exported exported =
          new CinderExport(cinder, say).export(volumeId, connector, readOnly, rollback);
      boolean legacy = exported.path() == ExportPath.RESERVE;
      String attachmentId = exported.attachmentId();
      ConnectionInfo info = exported.info();
      if (info == null) {
        throw new HostException(
            "Cinder's attachment " + attachmentId + " carries no connection info to log in with");
      }
      HostExport export = HostExport.of(info, connector, connector.multipath());
      say.accept("export: " + export.describe());
      // Pushed before the login: a login that stopped half way is undone too.
      rollback.push(
          "log out",
          () ->
              undo(
                  "log out",
                  () -> {
                    export.kept(host).ifPresent(say);
                    steps.runAll(export.disconnect(host));
                  }));
      steps.runAll(export.connect(host));
      String device = steps.awaitDevice(export);
      say.accept("device: " + device);
      if (readOnly) {
        steps.runAll(List.of(Command.of("blockdev", "--setro", device)));
      }
      if (legacy) {
        say.accept("cinder: mark volume " + volumeId + " attached to " + connector.host());
        cinder.markAttached(volumeId, connector.host(), device, readOnly);
        attachmentId = legacyAttachmentId(volumeId);
      } else {
        say.accept("cinder: complete attachment " + attachmentId);
        cinder.completeAttachment(attachmentId);
      }
      return new Attached(volumeId, attachmentId, device, export.describe(), legacy);
    } catch (RuntimeException e) {
      // Undo even after an interrupt (Ctrl-C): the undo's own calls must not be cut short by it.
      boolean interrupted = Thread.interrupted();
      rollback.run(e);
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
      throw e;
    }
  }

  /** Whether the volume can be attached here: not here already, and free or multiattach. */
  private void requireAttachable(Volume v) {
    String volumeId = v.id();
    String mine = attachmentOf(v).orElse(null);
    if (mine != null) {
      throw new AttachException(
          "volume "
              + volumeId
              + " is attached to this host ("
              + connector.host()
              + ") already, as attachment "
              + mine
              + ": detach it first");
    }
    boolean available = v.status().equals("available");
    if (!available && !(v.multiattach() && v.status().equals("in-use"))) {
      throw new AttachException(
          "volume "
              + volumeId
              + " is "
              + v.status()
              + (v.status().equals("in-use")
                  ? " (attached to " + hosts(v) + ") and not multiattach"
                  : "")
              + ": only an available volume, or an in-use one of a multiattach type, can be"
              + " attached");
    }
  }

  /**
   * Detaches the volume from this host: the host logs out, then Cinder ends the attachment.
   *
   * @param attachmentId the attachment to end, or null for this host's only one
   * @param force end Cinder's attachment even when the device is in use or the logout fails (the
   *     host may then keep a session or a device that leads nowhere)
   * @throws AttachException when the attachment to end is not clear, or the device is in use and
   *     {@code force} is not set; nothing was changed
   */
  public Detached detach(String volumeId, String attachmentId, boolean force) {
    requirePrivileged("detaching");
    Volume v = volume(volumeId);
    String id = attachmentToEnd(v, attachmentId);
    if (id == null) {
      say.accept("volume " + volumeId + " is not attached: nothing to do");
      return new Detached(volumeId, null, List.of());
    }
    boolean legacy = !cinder.apiVersions().used().atLeast(Microversion.ATTACHMENTS);
    ConnectionInfo info =
        legacy
            ? cinder.initializeConnection(volumeId, connector)
            : cinder.getAttachment(id).map(Attachment::connectionInfo).orElse(null);
    List<String> skipped = info == null ? new ArrayList<>() : logOut(info, force);
    if (legacy) {
      say.accept("cinder: terminate the export of volume " + volumeId);
      cinder.terminateConnection(volumeId, connector);
      say.accept("cinder: mark volume " + volumeId + " detached (" + id + ")");
      cinder.markDetached(volumeId, id);
    } else {
      say.accept("cinder: delete attachment " + id);
      cinder.deleteAttachment(id);
    }
    return new Detached(volumeId, id, List.copyOf(skipped));
  }

  /** The attachment a detach ends: the one named, or this host's only one; null for none. */
  private String attachmentToEnd(Volume v, String attachmentId) {
    List<String> all = allAttachments(v);
    String id;
    String volumeId = v.id();
    if (attachmentId != null) {
      if (!all.contains(attachmentId)) {
        throw new AttachException(
            "volume "
                + volumeId
                + " has no attachment "
                + attachmentId
                + (all.isEmpty() ? "" : " (its attachments: " + String.join(", ", all) + ")"));
      }
      id = attachmentId;
    } else {
      List<String> mine = mine(v);
      if (mine.size() > 1) {
        throw new AttachException(
            "this host ("
                + connector.host()
                + ") has "
                + mine.size()
                + " attachments of volume "
                + volumeId
                + ": "
                + String.join(", ", mine)
                + "; name one with --attachment-id");
      }
      if (mine.isEmpty()) {
        if (all.isEmpty()) {
          return null;
        }
        throw new AttachException(
            "none of the attachments of volume "
                + volumeId
                + " is this host's ("
                + connector.host()
                + "): "
                + describe(v, all)
                + "; name one with --attachment-id");
      }
      id = mine.get(0);
    }
    return id;
  }

  /**
   * The host logs out of the export. Returns what {@code force} let pass (a device in use, a failed
   * logout).
   */
  private List<String> logOut(ConnectionInfo info, boolean force) {
    List<String> skipped = new ArrayList<>();
    HostExport export = HostExport.of(info, connector, connector.multipath());
    say.accept("export: " + export.describe());
    for (String device : export.devices()) {
      Optional<String> user = host.exists(device) ? host.usedBy(device) : Optional.empty();
      if (user.isPresent()) {
        String why = "device " + device + " is in use (" + user.get() + ")";
        if (!force) {
          throw new AttachException(why + ": stop using it first, or detach with --force");
        }
        skipped.add(why);
      }
    }
    try {
      export.kept(host).ifPresent(say);
      steps.runAll(export.disconnect(host));
    } catch (HostException e) {
      if (!force) {
        throw e;
      }
      skipped.add(e.getMessage());
      say.accept("forced past: " + e.getMessage());
    }
    return skipped;
  }

  /**
   * The id Cinder gave an os-attach, for the report only: the volume is attached by now, and a
   * failure to look it up must not undo that.
   */
  private String legacyAttachmentId(String volumeId) {
    try {
      return attachmentOf(volume(volumeId)).orElse(null);
    } catch (RuntimeException e) {
      say.accept("attached, but its attachment id could not be read: " + e.getMessage());
      return null;
    }
  }

  private void requirePrivileged(String what) {
    if (!host.privileged()) {
      throw new HostException(
          what
              + " needs root: iscsiadm, rbd and the block devices are root's (run it with sudo);"
              + " nothing was changed");
    }
  }

  private Volume volume(String volumeId) {
    return cinder
        .getVolume(volumeId)
        .orElseThrow(() -> new AttachException("Cinder has no volume " + volumeId));
  }

  /** This host's attachments of the volume: completed ones that name its host. */
  private List<String> mine(Volume v) {
    List<String> out = new ArrayList<>();
    for (Map.Entry<String, String> e : v.attachedHosts().entrySet()) {
      if (connector.host().equals(e.getValue())) {
        out.add(e.getKey());
      }
    }
    out.sort(null);
    return out;
  }

  private Optional<String> attachmentOf(Volume v) {
    return mine(v).stream().findFirst();
  }

  /** Every attachment: the volume lists completed ones, the attachments API also the others. */
  private List<String> allAttachments(Volume v) {
    List<String> out = new ArrayList<>(v.attachmentIds());
    for (Attachment a : cinder.listAttachments(v.id())) {
      if (!out.contains(a.id())) {
        out.add(a.id());
      }
    }
    return out;
  }

  private static String hosts(Volume v) {
    return v.attachedHosts().isEmpty()
        ? "no host Cinder names"
        : String.join(", ", new java.util.TreeSet<>(v.attachedHosts().values()));
  }

  private static String describe(Volume v, List<String> ids) {
    List<String> out = new ArrayList<>();
    for (String id : ids) {
      String h = v.attachedHosts().get(id);
      out.add(id + (h == null ? " (not complete)" : " (" + h + ")"));
    }
    return String.join(", ", out);
  }

  private void undo(String what, Runnable step) {
    say.accept("undo: " + what);
    step.run();
  }
}
