package org.standalonecinder.provisioner.cinder.openstack;

import static org.standalonecinder.provisioner.cinder.openstack.CinderJson.JSON;
import static org.standalonecinder.provisioner.cinder.openstack.CinderJson.backup;
import static org.standalonecinder.provisioner.cinder.openstack.CinderJson.id;
import static org.standalonecinder.provisioner.cinder.openstack.CinderJson.putIfSet;
import static org.standalonecinder.provisioner.cinder.openstack.CinderJson.required;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.openstack4j.core.transport.HttpMethod;
import org.standalonecinder.provisioner.cinder.Backoff;
import org.standalonecinder.provisioner.cinder.Backup;
import org.standalonecinder.provisioner.cinder.BackupSpec;
import org.standalonecinder.provisioner.cinder.CinderException;
import org.standalonecinder.provisioner.cinder.Microversion;

/** Backups: make, find, wait for, delete. */
final class BackupCalls {

  private final CinderHttp http;
  private final Waiting waits;

  BackupCalls(CinderHttp http, Waiting waits) {
    this.http = http;
    this.waits = waits;
  }

  Backup createBackup(BackupSpec spec) {
    ObjectNode body = JSON.createObjectNode();
    ObjectNode b = body.putObject("backup");
    b.put("volume_id", spec.volumeId());
    b.put("name", spec.name());
    putIfSet(b, "description", spec.description());
    // An in-use volume is refused without it (400 "Backing up an in-use volume must use the
    // force flag"); an available one takes it as well. Crash-consistent either way.
    b.put("force", true);
    if (!spec.metadata().isEmpty()
        && http.apiVersions().used().atLeast(Microversion.BACKUP_METADATA)) {
      ObjectNode md = b.putObject("metadata");
      spec.metadata().forEach(md::put);
    }
    JsonNode res =
        http.call(
            "back up volume " + spec.volumeId() + " as " + spec.name(),
            HttpMethod.POST,
            "/backups",
            body,
            null);
    // Cinder answers with the id, name and links only: the rest is read back. An answer without
    // an id is garbage: the look-up by name finds the backup, if one was made, on the retry.
    JsonNode made = required(res, "backup", "back up volume " + spec.volumeId());
    String id = required(made, "id", "back up volume " + spec.volumeId()).asText();
    return getBackup(id)
        .orElseThrow(
            () ->
                new CinderException.NotFound(
                    "backup " + id + " was made and is gone already", null));
  }

  Optional<Backup> getBackup(String backupId) {
    try {
      JsonNode res =
          http.call("get backup " + backupId, HttpMethod.GET, "/backups/" + id(backupId));
      return Optional.of(backup(required(res, "backup", "get backup " + backupId)));
    } catch (CinderException.NotFound e) {
      return Optional.empty();
    }
  }

  List<Backup> findBackups(String name, Map<String, String> metadata) {
    // Cinder filters backups by name, status and volume only (a metadata filter is refused to
    // users who are not admins): the metadata is compared here.
    return Listing.all(
            http, "/backups/detail", "backups", name, null, CinderJson::backup, Backup::id)
        .stream()
        .filter(b -> b.metadata().entrySet().containsAll(metadata.entrySet()))
        .toList();
  }

  Backup awaitBackupStatus(String backupId, Set<String> wanted, Backoff backoff) {
    return waits.forStatus(
        "backup " + backupId,
        wanted,
        backoff,
        () -> getBackup(backupId),
        Backup::status,
        Backup::failReason);
  }

  void updateBackupMetadata(String backupId, Map<String, String> metadata) {
    if (!http.apiVersions().used().atLeast(Microversion.BACKUP_METADATA)) {
      throw new CinderException.Unsupported(
          "Cinder keeps backup metadata from microversion "
              + Microversion.BACKUP_METADATA
              + "; this one speaks "
              + http.apiVersions().used(),
          0,
          null);
    }
    Backup now =
        getBackup(backupId)
            .orElseThrow(
                () -> new CinderException.NotFound("backup " + backupId + " does not exist", null));
    // PUT replaces the metadata whole (Cinder's backup_metadata_update with delete): merged here.
    Map<String, String> merged = new java.util.LinkedHashMap<>(now.metadata());
    merged.putAll(metadata);
    ObjectNode body = JSON.createObjectNode();
    ObjectNode md = body.putObject("backup").putObject("metadata");
    merged.forEach(md::put);
    http.call(
        "update metadata of backup " + backupId,
        HttpMethod.PUT,
        "/backups/" + id(backupId),
        body,
        null);
  }

  void deleteBackup(String backupId) {
    try {
      http.call("delete backup " + backupId, HttpMethod.DELETE, "/backups/" + id(backupId));
    } catch (CinderException.NotFound e) {
      // already gone: what the caller wanted
    }
  }

  void awaitBackupDeleted(String backupId, Backoff backoff) {
    waits.forGone(
        "backup " + backupId, backoff, () -> getBackup(backupId), Backup::status, status -> null);
  }
}
