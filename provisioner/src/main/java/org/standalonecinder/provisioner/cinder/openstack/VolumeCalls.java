package org.standalonecinder.provisioner.cinder.openstack;

import static org.standalonecinder.provisioner.cinder.openstack.CinderJson.JSON;
import static org.standalonecinder.provisioner.cinder.openstack.CinderJson.id;
import static org.standalonecinder.provisioner.cinder.openstack.CinderJson.putIfSet;
import static org.standalonecinder.provisioner.cinder.openstack.CinderJson.required;
import static org.standalonecinder.provisioner.cinder.openstack.CinderJson.volume;

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
import org.standalonecinder.provisioner.cinder.Volume;
import org.standalonecinder.provisioner.cinder.VolumeSpec;

/** Volumes: create, find, wait for, change and delete. */
final class VolumeCalls {

  private final CinderHttp http;
  private final Waiting waits;

  VolumeCalls(CinderHttp http, Waiting waits) {
    this.http = http;
    this.waits = waits;
  }

  Volume createVolume(VolumeSpec spec) {
    ObjectNode body = JSON.createObjectNode();
    ObjectNode vol = body.putObject("volume");
    vol.put("name", spec.name());
    vol.put("size", spec.sizeGib());
    putIfSet(vol, "volume_type", spec.volumeType());
    // ignore-volume-az is applied once, by the provisioner's placement: a spec with a zone asks
    // for that zone.
    putIfSet(vol, "availability_zone", spec.availabilityZone());
    putIfSet(vol, "description", spec.description());
    putIfSet(vol, "source_volid", spec.sourceVolumeId());
    putIfSet(vol, "snapshot_id", spec.snapshotId());
    if (spec.backupId() != null) {
      if (!http.apiVersions().used().atLeast(Microversion.VOLUME_FROM_BACKUP)) {
        // Older Cinders ignore backup_id and make a blank volume: never that.
        throw new CinderException.Unsupported(
            "create volume "
                + spec.name()
                + " from backup "
                + spec.backupId()
                + ": this Cinder speaks microversion "
                + http.apiVersions().used()
                + ", and a volume is made from a backup from 3.47 on",
            0,
            null);
      }
      vol.put("backup_id", spec.backupId());
    }
    if (!spec.metadata().isEmpty()) {
      ObjectNode md = vol.putObject("metadata");
      spec.metadata().forEach(md::put);
    }
    JsonNode res =
        http.call("create volume " + spec.name(), HttpMethod.POST, "/volumes", body, null);
    return volume(required(res, "volume", "create volume " + spec.name()));
  }

  Optional<Volume> getVolume(String volumeId) {
    try {
      JsonNode res =
          http.call("get volume " + volumeId, HttpMethod.GET, "/volumes/" + id(volumeId));
      return Optional.of(volume(required(res, "volume", "get volume " + volumeId)));
    } catch (CinderException.NotFound e) {
      return Optional.empty();
    }
  }

  List<Volume> findVolumes(String name, Map<String, String> metadata) {
    return Listing.all(
        http, "/volumes/detail", "volumes", name, metadata, CinderJson::volume, Volume::id);
  }

  Volume awaitVolumeStatus(String volumeId, Set<String> wanted, Backoff backoff) {
    return waits.forStatus(
        "volume " + volumeId,
        wanted,
        backoff,
        () -> getVolume(volumeId),
        Volume::status,
        v -> null);
  }

  void awaitVolumeDeleted(String volumeId, Backoff backoff) {
    waits.forGone(
        "volume " + volumeId, backoff, () -> getVolume(volumeId), Volume::status, status -> null);
  }

  void updateVolumeMetadata(String volumeId, Map<String, String> metadata) {
    ObjectNode body = JSON.createObjectNode();
    ObjectNode md = body.putObject("metadata");
    metadata.forEach(md::put);
    // POST merges; PUT would replace every entry, including ones an admin added.
    http.call(
        "update metadata of volume " + volumeId,
        HttpMethod.POST,
        "/volumes/" + id(volumeId) + "/metadata",
        body,
        null);
  }

  void deleteVolume(String volumeId) {
    try {
      http.call("delete volume " + volumeId, HttpMethod.DELETE, "/volumes/" + id(volumeId));
    } catch (CinderException.NotFound e) {
      // already gone: what the caller wanted
    }
  }

  void extendVolume(String volumeId, int newSizeGib) {
    ObjectNode body = JSON.createObjectNode();
    body.putObject("os-extend").put("new_size", newSizeGib);
    http.action(volumeId, "extend volume " + volumeId + " to " + newSizeGib + " GiB", body);
  }
}
