package org.standalonecinder.provisioner.cinder;

import java.util.function.Consumer;

/**
 * The one way the project makes a volume attachable for a connector, and undoes it: for the
 * provisioner (the cluster's connector) and for the attach CLI (a host's). The path is {@link
 * ExportPath}'s: an attachment when Cinder has the attachments API, else os-reserve and
 * os-initialize_connection. Completing the attachment is the caller's, once its side is ready.
 */
public final class CinderExport {

  /**
   * What Cinder made.
   *
   * @param path the path taken
   * @param attachmentId the attachment's id, or null on the reserve path
   * @param info what Cinder says to connect with; null only when Cinder left it out of an
   *     attachment, which the caller refuses in its own terms
   */
  public record Exported(ExportPath path, String attachmentId, ConnectionInfo info) {}

  private final CinderClient cinder;
  private final Consumer<String> say;

  /**
   * @param say told of each call before it is made, and of each undo (the attach CLI prints it)
   */
  public CinderExport(CinderClient cinder, Consumer<String> say) {
    this.cinder = cinder;
    this.say = say;
  }

  /** Exports the volume; the undo of each step is pushed on {@code rollback} once it is done. */
  public Exported export(
      String volumeId, Connector connector, boolean readOnly, Rollback rollback) {
    Microversion used = cinder.apiVersions().used();
    if (ExportPath.of(used, readOnly) == ExportPath.RESERVE) {
      say.accept("cinder: reserve volume " + volumeId + " (API " + used + ")");
      cinder.reserve(volumeId);
      rollback.push("unreserve " + volumeId, undo("unreserve", () -> cinder.unreserve(volumeId)));
      say.accept("cinder: export volume " + volumeId + " to " + connector.initiator());
      ConnectionInfo info = cinder.initializeConnection(volumeId, connector);
      rollback.push(
          "terminate connection " + volumeId,
          undo("terminate connection", () -> cinder.terminateConnection(volumeId, connector)));
      return new Exported(ExportPath.RESERVE, null, info);
    }
    say.accept(
        "cinder: create a "
            + (readOnly ? "ro" : "rw")
            + " attachment of volume "
            + volumeId
            + " for "
            + connector.host()
            + " ("
            + connector.initiator()
            + ")");
    Attachment a = cinder.createAttachment(volumeId, connector, readOnly);
    rollback.push(
        "delete attachment " + a.id(),
        undo("delete attachment " + a.id(), () -> cinder.deleteAttachment(a.id())));
    return new Exported(ExportPath.ATTACHMENTS, a.id(), a.connectionInfo());
  }

  /** Withdraws an export made on the reserve path. */
  public void withdrawReservation(String volumeId, Connector connector) {
    cinder.terminateConnection(volumeId, connector);
    cinder.unreserve(volumeId);
  }

  private Runnable undo(String what, Runnable step) {
    return () -> {
      say.accept("undo: " + what);
      step.run();
    };
  }
}
