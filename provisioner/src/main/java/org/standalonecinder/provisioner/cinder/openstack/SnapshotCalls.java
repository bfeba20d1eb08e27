package org.standalonecinder.provisioner.cinder.openstack;

import static org.standalonecinder.provisioner.cinder.openstack.CinderJson.JSON;
import static org.standalonecinder.provisioner.cinder.openstack.CinderJson.id;
import static org.standalonecinder.provisioner.cinder.openstack.CinderJson.required;
import static org.standalonecinder.provisioner.cinder.openstack.CinderJson.snapshot;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Map;
import java.util.Optional;
import org.openstack4j.core.transport.HttpMethod;
import org.standalonecinder.provisioner.cinder.Backoff;
import org.standalonecinder.provisioner.cinder.CinderException;
import org.standalonecinder.provisioner.cinder.Snapshot;

/** Snapshots: create, wait for, delete. */
final class SnapshotCalls {

  private final CinderHttp http;

  SnapshotCalls(CinderHttp http) {
    this.http = http;
  }

  Snapshot createSnapshot(String volumeId, String name, Map<String, String> metadata) {
    ObjectNode body = JSON.createObjectNode();
    ObjectNode s = body.putObject("snapshot");
    s.put("volume_id", volumeId);
    s.put("name", name);
    if (metadata != null && !metadata.isEmpty()) {
      ObjectNode md = s.putObject("metadata");
      metadata.forEach(md::put);
    }
    JsonNode res =
        http.call("snapshot volume " + volumeId, HttpMethod.POST, "/snapshots", body, null);
    return snapshot(required(res, "snapshot", "snapshot volume " + volumeId));
  }

  Optional<Snapshot> getSnapshot(String snapshotId) {
    try {
      JsonNode res =
          http.call("get snapshot " + snapshotId, HttpMethod.GET, "/snapshots/" + id(snapshotId));
      return Optional.of(snapshot(required(res, "snapshot", "get snapshot " + snapshotId)));
    } catch (CinderException.NotFound e) {
      return Optional.empty();
    }
  }

  Snapshot awaitSnapshotAvailable(String snapshotId, Backoff backoff) {
    long deadline = System.nanoTime() + backoff.deadline().toNanos();
    for (int attempt = 0; ; attempt++) {
      Snapshot s =
          getSnapshot(snapshotId)
              .orElseThrow(
                  () ->
                      new CinderException.NotFound(
                          "snapshot " + snapshotId + " disappeared", null));
      if (s.status().equals("available")) {
        return s;
      }
      if (s.status().startsWith("error")) {
        throw new CinderException.UnexpectedState(
            "snapshot " + snapshotId + " went to status " + s.status(), s.status(), false);
      }
      Waiting.sleepOrGiveUp(
          backoff, attempt, deadline, "snapshot " + snapshotId, "available", s.status());
    }
  }

  void deleteSnapshot(String snapshotId) {
    try {
      http.call("delete snapshot " + snapshotId, HttpMethod.DELETE, "/snapshots/" + id(snapshotId));
    } catch (CinderException.NotFound e) {
      // already gone
    }
  }
}
