package org.standalonecinder.provisioner.snapshot;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The writes of {@code VolumeSnapshotContent}s: made for a dynamic snapshot, annotated, given a
 * status, let go of. Every change is a JSON merge patch that names the resource version it was
 * decided on (the API server answers 409 when the content changed since: look again), and never a
 * whole object: fields of a newer CRD that this provisioner does not know stay as they are.
 */
final class ContentWrites {

  private static final ObjectMapper JSON = new ObjectMapper();

  private final KubernetesClient client;

  ContentWrites(KubernetesClient client) {
    this.client = client;
  }

  /** The content as the API server has it now, or null. */
  GenericKubernetesResource get(String name) {
    return client.genericKubernetesResources(SnapshotApi.CONTENTS).withName(name).get();
  }

  /**
   * Makes the content of a dynamic snapshot, named as the snapshot-controller looks for it.
   *
   * @return false when it exists already
   */
  boolean create(
      VolumeSnapshot snapshot, SnapshotClass cls, String driver, String volumeId, String mode) {
    Map<String, Object> ref = new LinkedHashMap<>();
    ref.put("apiVersion", SnapshotApi.API_VERSION);
    ref.put("kind", "VolumeSnapshot");
    ref.put("namespace", snapshot.namespace());
    ref.put("name", snapshot.name());
    ref.put("uid", snapshot.uid());
    ref.put("resourceVersion", snapshot.resourceVersion());
    Map<String, Object> spec = new LinkedHashMap<>();
    spec.put("driver", driver);
    spec.put(
        "deletionPolicy",
        SnapshotApi.RETAIN.equals(cls.deletionPolicy()) ? SnapshotApi.RETAIN : SnapshotApi.DELETE);
    spec.put("source", Map.of("volumeHandle", volumeId));
    spec.put("volumeSnapshotClassName", cls.name());
    spec.put("volumeSnapshotRef", ref);
    if (mode != null) {
      // Read by restores on clusters whose CRDs have it (external-snapshotter 6+); pruned before.
      spec.put("sourceVolumeMode", mode);
    }
    GenericKubernetesResource content = new GenericKubernetesResource();
    content.setApiVersion(SnapshotApi.API_VERSION);
    content.setKind("VolumeSnapshotContent");
    content.setMetadata(
        new ObjectMetaBuilder()
            .withName(SnapshotApi.contentName(snapshot.uid()))
            .withAnnotations(mode == null ? null : Map.of(SnapshotApi.SOURCE_VOLUME_MODE, mode))
            .build());
    content.setAdditionalProperty("spec", spec);
    try {
      client.genericKubernetesResources(SnapshotApi.CONTENTS).resource(content).create();
      return true;
    } catch (KubernetesClientException e) {
      if (e.getCode() == 409) {
        return false;
      }
      throw e;
    }
  }

  /** Sets ({@code value} not null) or removes an annotation. */
  GenericKubernetesResource annotate(Content c, String key, String value) {
    ObjectNode patch = guarded(c);
    ((ObjectNode) patch.get("metadata")).putObject("annotations").put(key, value);
    return patch(c.name(), patch, false);
  }

  /** Removes the snapshot-controller's finalizer: the content may go. */
  GenericKubernetesResource release(Content c) {
    if (!c.finalizers().contains(SnapshotApi.CONTENT_FINALIZER)) {
      return null;
    }
    List<String> rest =
        c.finalizers().stream().filter(f -> !f.equals(SnapshotApi.CONTENT_FINALIZER)).toList();
    ObjectNode patch = guarded(c);
    ObjectNode metadata = (ObjectNode) patch.get("metadata");
    if (rest.isEmpty()) {
      // null removes the list (fabric8's mock API server ends a deletion only then, not on []).
      metadata.putNull("finalizers");
    } else {
      metadata.set("finalizers", JSON.valueToTree(rest));
    }
    return patch(c.name(), patch, false);
  }

  /**
   * Writes the status: every field this provisioner sets, an error only when given.
   *
   * @param handle the storage snapshot, or null
   * @param error the error to show, or null to clear it
   */
  GenericKubernetesResource status(
      Content c,
      String handle,
      boolean ready,
      Instant created,
      long restoreBytes,
      String error,
      Instant now) {
    ObjectNode patch = guarded(c);
    ObjectNode status = patch.putObject("status");
    if (handle != null) {
      status.put("snapshotHandle", handle);
      status.put("creationTime", created.getEpochSecond() * 1_000_000_000L + created.getNano());
      status.put("restoreSize", restoreBytes);
    }
    status.put("readyToUse", ready);
    if (error != null) {
      status.putObject("error").put("message", error).put("time", now.toString());
    } else {
      status.putNull("error");
    }
    return patch(c.name(), patch, true);
  }

  private static ObjectNode guarded(Content c) {
    ObjectNode patch = JSON.createObjectNode();
    patch.putObject("metadata").put("resourceVersion", c.resourceVersion());
    return patch;
  }

  private GenericKubernetesResource patch(String name, ObjectNode patch, boolean status) {
    var resource = client.genericKubernetesResources(SnapshotApi.CONTENTS).withName(name);
    PatchContext merge = PatchContext.of(PatchType.JSON_MERGE);
    return status
        ? resource.subresource("status").patch(merge, patch.toString())
        : resource.patch(merge, patch.toString());
  }
}
