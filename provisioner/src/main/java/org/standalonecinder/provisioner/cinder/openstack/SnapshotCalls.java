package org.standalonecinder.provisioner.cinder.openstack;

import static org.standalonecinder.provisioner.cinder.openstack.CinderJson.JSON;
import static org.standalonecinder.provisioner.cinder.openstack.CinderJson.id;
import static org.standalonecinder.provisioner.cinder.openstack.CinderJson.putIfSet;
import static org.standalonecinder.provisioner.cinder.openstack.CinderJson.required;
import static org.standalonecinder.provisioner.cinder.openstack.CinderJson.snapshot;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.openstack4j.core.transport.HttpMethod;
import org.standalonecinder.provisioner.cinder.Backoff;
import org.standalonecinder.provisioner.cinder.CinderException;
import org.standalonecinder.provisioner.cinder.Microversion;
import org.standalonecinder.provisioner.cinder.Snapshot;
import org.standalonecinder.provisioner.cinder.SnapshotSpec;

/** Snapshots: take, find, wait for, delete. */
final class SnapshotCalls {

  private final CinderHttp http;
  private final Waiting waits;

  SnapshotCalls(CinderHttp http, Waiting waits) {
    this.http = http;
    this.waits = waits;
  }

  Snapshot createSnapshot(SnapshotSpec spec) {
    ObjectNode body = JSON.createObjectNode();
    ObjectNode s = body.putObject("snapshot");
    s.put("volume_id", spec.volumeId());
    s.put("name", spec.name());
    putIfSet(s, "description", spec.description());
    if (!spec.metadata().isEmpty()) {
      ObjectNode md = s.putObject("metadata");
      spec.metadata().forEach(md::put);
    }
    // Below 3.66 Cinder refuses a snapshot of an in-use volume without force (400 "status must
    // be available"); from 3.66 on it takes one without, and refuses force=false. The snapshot is
    // crash-consistent either way: nothing here quiesces the filesystem.
    if (!http.apiVersions().used().atLeast(Microversion.SNAPSHOT_IN_USE)) {
      s.put("force", true);
    }
    JsonNode res =
        http.call(
            "snapshot volume " + spec.volumeId() + " as " + spec.name(),
            HttpMethod.POST,
            "/snapshots",
            body,
            null);
    return snapshot(required(res, "snapshot", "snapshot volume " + spec.volumeId()));
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

  List<Snapshot> findSnapshots(String name, Map<String, String> metadata) {
    return Listing.all(
        http, "/snapshots/detail", "snapshots", name, metadata, CinderJson::snapshot, Snapshot::id);
  }

  Snapshot awaitSnapshotStatus(String snapshotId, Set<String> wanted, Backoff backoff) {
    return waits.forStatus(
        "snapshot " + snapshotId,
        wanted,
        backoff,
        () -> getSnapshot(snapshotId),
        Snapshot::status,
        s -> null);
  }

  void updateSnapshotMetadata(String snapshotId, Map<String, String> metadata) {
    ObjectNode body = JSON.createObjectNode();
    ObjectNode md = body.putObject("metadata");
    metadata.forEach(md::put);
    // POST merges, as for volumes.
    http.call(
        "update metadata of snapshot " + snapshotId,
        HttpMethod.POST,
        "/snapshots/" + id(snapshotId) + "/metadata",
        body,
        null);
  }

  void deleteSnapshot(String snapshotId) {
    try {
      http.call("delete snapshot " + snapshotId, HttpMethod.DELETE, "/snapshots/" + id(snapshotId));
    } catch (CinderException.NotFound e) {
      // already gone: what the caller wanted
    }
  }

  void awaitSnapshotDeleted(String snapshotId, Backoff backoff) {
    // Cinder marks a snapshot deleting before it answers the DELETE; one that is available again
    // was kept by its backend: on RBD a volume made from it depends on it (cinder-volume logs
    // SnapshotIsBusy). Deleting that volume first lets it go.
    waits.forGone(
        "snapshot " + snapshotId,
        backoff,
        () -> getSnapshot(snapshotId),
        Snapshot::status,
        status ->
            status.equals("available")
                ? "is available again after its deletion: its backend keeps it (on RBD, a volume"
                    + " made from it still depends on it)"
                : null);
  }
}
