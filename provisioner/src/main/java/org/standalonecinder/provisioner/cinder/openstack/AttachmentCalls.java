package org.standalonecinder.provisioner.cinder.openstack;

import static org.standalonecinder.provisioner.cinder.openstack.CinderJson.JSON;
import static org.standalonecinder.provisioner.cinder.openstack.CinderJson.attachment;
import static org.standalonecinder.provisioner.cinder.openstack.CinderJson.connectionInfo;
import static org.standalonecinder.provisioner.cinder.openstack.CinderJson.id;
import static org.standalonecinder.provisioner.cinder.openstack.CinderJson.nullAction;
import static org.standalonecinder.provisioner.cinder.openstack.CinderJson.required;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.openstack4j.core.transport.HttpMethod;
import org.standalonecinder.provisioner.cinder.Attachment;
import org.standalonecinder.provisioner.cinder.CinderException;
import org.standalonecinder.provisioner.cinder.ConnectionInfo;
import org.standalonecinder.provisioner.cinder.Connector;
import org.standalonecinder.provisioner.cinder.Microversion;

/**
 * Making a volume attachable without Nova: the volume actions (reserve, initialize and terminate a
 * connection, reset) and the attachments API.
 */
final class AttachmentCalls {

  private final CinderHttp http;

  AttachmentCalls(CinderHttp http) {
    this.http = http;
  }

  void reserve(String volumeId) {
    http.action(volumeId, "reserve volume " + volumeId, nullAction("os-reserve"));
  }

  void unreserve(String volumeId) {
    http.action(volumeId, "unreserve volume " + volumeId, nullAction("os-unreserve"));
  }

  void resetToAvailable(String volumeId) {
    ObjectNode body = JSON.createObjectNode();
    body.putObject("os-reset_status").put("status", "available").put("attach_status", "detached");
    http.action(volumeId, "reset the status of volume " + volumeId + " to available", body);
  }

  ConnectionInfo initializeConnection(String volumeId, Connector connector) {
    ObjectNode body = JSON.createObjectNode();
    body.putObject("os-initialize_connection")
        .set("connector", JSON.valueToTree(connector.toApi()));
    JsonNode res = http.action(volumeId, "initialize connection of volume " + volumeId, body);
    return connectionInfo(
        required(res, "connection_info", "initialize connection of volume " + volumeId));
  }

  void terminateConnection(String volumeId, Connector connector) {
    ObjectNode body = JSON.createObjectNode();
    body.putObject("os-terminate_connection").set("connector", JSON.valueToTree(connector.toApi()));
    http.action(volumeId, "terminate connection of volume " + volumeId, body);
  }

  Attachment createAttachment(String volumeId, Connector connector, boolean readOnly) {
    http.requireVersion(Microversion.ATTACHMENTS, "the attachments API");
    if (readOnly) {
      http.requireVersion(Microversion.ATTACH_MODE, "a read-only attachment");
    }
    ObjectNode body = JSON.createObjectNode();
    ObjectNode a = body.putObject("attachment");
    a.put("volume_uuid", volumeId);
    // No instance_uuid: with one, Cinder would ask Nova about the instance.
    a.set("connector", JSON.valueToTree(connector.toApi()));
    if (readOnly) {
      a.put("mode", "ro");
    }
    JsonNode res =
        http.call("attach volume " + volumeId, HttpMethod.POST, "/attachments", body, null);
    return attachment(required(res, "attachment", "attach volume " + volumeId));
  }

  Optional<Attachment> getAttachment(String attachmentId) {
    http.requireVersion(Microversion.ATTACHMENTS, "the attachments API");
    try {
      JsonNode res =
          http.call(
              "show attachment " + attachmentId,
              HttpMethod.GET,
              "/attachments/" + id(attachmentId));
      return Optional.of(
          attachment(required(res, "attachment", "show attachment " + attachmentId)));
    } catch (CinderException.NotFound e) {
      return Optional.empty();
    }
  }

  void markAttached(String volumeId, String hostName, String mountpoint, boolean readOnly) {
    ObjectNode body = JSON.createObjectNode();
    body.putObject("os-attach")
        .put("host_name", hostName)
        .put("mountpoint", mountpoint)
        .put("mode", readOnly ? "ro" : "rw");
    http.action(volumeId, "mark volume " + volumeId + " attached to " + hostName, body);
  }

  void markDetached(String volumeId, String attachmentId) {
    ObjectNode body = JSON.createObjectNode();
    body.putObject("os-detach").put("attachment_id", id(attachmentId));
    http.action(volumeId, "mark volume " + volumeId + " detached", body);
  }

  List<Attachment> listAttachments(String volumeId) {
    if (!http.apiVersions().used().atLeast(Microversion.ATTACHMENTS)) {
      return List.of();
    }
    JsonNode res =
        http.call(
            "list attachments of volume " + volumeId,
            HttpMethod.GET,
            "/attachments",
            null,
            Map.of("volume_id", id(volumeId)));
    List<Attachment> out = new ArrayList<>();
    for (JsonNode a : required(res, "attachments", "list attachments of volume " + volumeId)) {
      Attachment at = attachment(a);
      // The filter is applied by Cinder; checked again so a cloud that ignores it cannot make
      // us detach another volume.
      if (volumeId.equals(at.volumeId())) {
        out.add(at);
      }
    }
    return out;
  }

  void completeAttachment(String attachmentId) {
    http.requireVersion(Microversion.ATTACHMENT_COMPLETE, "completing an attachment");
    http.call(
        "complete attachment " + attachmentId,
        HttpMethod.POST,
        "/attachments/" + id(attachmentId) + "/action",
        nullAction("os-complete"),
        null);
  }

  void deleteAttachment(String attachmentId) {
    http.requireVersion(Microversion.ATTACHMENTS, "the attachments API");
    try {
      http.call(
          "delete attachment " + attachmentId,
          HttpMethod.DELETE,
          "/attachments/" + id(attachmentId));
    } catch (CinderException.NotFound e) {
      // already gone
    }
  }
}
