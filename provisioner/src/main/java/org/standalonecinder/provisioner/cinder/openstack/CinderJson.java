package org.standalonecinder.provisioner.cinder.openstack;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.standalonecinder.provisioner.cinder.Attachment;
import org.standalonecinder.provisioner.cinder.CinderException;
import org.standalonecinder.provisioner.cinder.ConnectionInfo;
import org.standalonecinder.provisioner.cinder.Snapshot;
import org.standalonecinder.provisioner.cinder.Volume;

/** Cinder's JSON to this project's types and back; ids checked before they go into a path. */
final class CinderJson {

  static final ObjectMapper JSON = new ObjectMapper();

  private CinderJson() {}

  static Volume volume(JsonNode v) {
    Map<String, String> md = new LinkedHashMap<>();
    for (Iterator<Map.Entry<String, JsonNode>> it = v.path("metadata").fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> e = it.next();
      md.put(e.getKey(), e.getValue().asText());
    }
    List<String> attachments = new ArrayList<>();
    Map<String, String> hosts = new LinkedHashMap<>();
    for (JsonNode a : v.path("attachments")) {
      String id = text(a, "attachment_id");
      id = id != null ? id : text(a, "id");
      attachments.add(id);
      String host = text(a, "host_name");
      if (id != null && host != null) {
        hosts.put(id, host);
      }
    }
    return new Volume(
        text(v, "id"),
        text(v, "name"),
        text(v, "status"),
        v.path("size").asInt(),
        text(v, "availability_zone"),
        text(v, "volume_type"),
        md,
        text(v, "source_volid"),
        text(v, "snapshot_id"),
        v.path("multiattach").asBoolean(false),
        attachments,
        hosts,
        instant(text(v, "created_at")));
  }

  static Snapshot snapshot(JsonNode s) {
    Map<String, String> md = new LinkedHashMap<>();
    for (Iterator<Map.Entry<String, JsonNode>> it = s.path("metadata").fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> e = it.next();
      md.put(e.getKey(), e.getValue().asText());
    }
    return new Snapshot(
        text(s, "id"),
        text(s, "name"),
        text(s, "volume_id"),
        text(s, "status"),
        s.path("size").asInt(),
        md,
        instant(text(s, "created_at")));
  }

  static org.standalonecinder.provisioner.cinder.Backup backup(JsonNode b) {
    Map<String, String> md = new LinkedHashMap<>();
    for (Iterator<Map.Entry<String, JsonNode>> it = b.path("metadata").fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> e = it.next();
      md.put(e.getKey(), e.getValue().asText());
    }
    return new org.standalonecinder.provisioner.cinder.Backup(
        text(b, "id"),
        text(b, "name"),
        text(b, "volume_id"),
        text(b, "status"),
        b.path("size").asInt(),
        md,
        instant(text(b, "created_at")),
        text(b, "fail_reason"));
  }

  /** Cinder's timestamps: ISO local date-times in UTC, with or without a zone; null if unread. */
  static java.time.Instant instant(String t) {
    if (t == null) {
      return null;
    }
    try {
      return java.time.OffsetDateTime.parse(t).toInstant();
    } catch (java.time.format.DateTimeParseException withoutZone) {
      try {
        return java.time.LocalDateTime.parse(t).toInstant(java.time.ZoneOffset.UTC);
      } catch (java.time.format.DateTimeParseException e) {
        return null;
      }
    }
  }

  static Attachment attachment(JsonNode a) {
    JsonNode ci = a.get("connection_info");
    ConnectionInfo info = null;
    if (ci != null && ci.isObject() && ci.size() > 0) {
      info = connectionInfo(ci);
    }
    return new Attachment(
        text(a, "id"), text(a, "volume_id"), text(a, "status"), info, text(a, "attach_mode"));
  }

  @SuppressWarnings("unchecked")
  static ConnectionInfo connectionInfo(JsonNode ci) {
    // The attachments API flattens the data next to driver_volume_type; the old action nests it.
    JsonNode data = ci.has("data") ? ci.get("data") : ci;
    Map<String, Object> map = JSON.convertValue(data, Map.class);
    map.remove("driver_volume_type");
    return new ConnectionInfo(text(ci, "driver_volume_type"), map);
  }

  static JsonNode required(JsonNode res, String field, String what) {
    JsonNode n = res.get(field);
    if (n == null || n.isNull()) {
      throw new CinderException.Unavailable(
          what + ": the answer has no '" + field + "' (an empty 204 means a missing token)",
          0,
          null,
          null);
    }
    return n;
  }

  static String text(JsonNode n, String field) {
    JsonNode v = n.get(field);
    return v == null || v.isNull() ? null : v.asText();
  }

  static Object raw(JsonNode n) {
    if (n == null || n.isNull()) {
      return null;
    }
    return n.isNumber() ? n.numberValue() : n.asText();
  }

  static void putIfSet(ObjectNode o, String field, String value) {
    if (value != null) {
      o.put(field, value);
    }
  }

  static ObjectNode nullAction(String name) {
    ObjectNode o = JSON.createObjectNode();
    o.putNull(name);
    return o;
  }

  /** Ids go into URL paths: refuse anything that could change the path. */
  static String id(String id) {
    if (id == null || !id.matches("[A-Za-z0-9-]+")) {
      throw new CinderException.BadRequest("not a Cinder id: '" + id + "'", 0, null);
    }
    return id;
  }
}
