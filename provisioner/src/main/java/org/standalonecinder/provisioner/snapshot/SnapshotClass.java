package org.standalonecinder.provisioner.snapshot;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What this provisioner reads of a {@code VolumeSnapshotClass} (whose fields sit beside its
 * metadata, not under a spec).
 *
 * @param name its name
 * @param driver the driver it is for
 * @param deletionPolicy {@code Delete} or {@code Retain}
 * @param parameters its parameters (string values only)
 */
public record SnapshotClass(
    String name, String driver, String deletionPolicy, Map<String, String> parameters) {

  /** The view of {@code r}. */
  public static SnapshotClass of(GenericKubernetesResource r) {
    Map<String, Object> props = r.getAdditionalProperties();
    Map<String, String> parameters = new LinkedHashMap<>();
    Json.map(props.get("parameters"))
        .forEach(
            (k, v) -> {
              if (v instanceof String s) {
                parameters.put(k, s);
              }
            });
    return new SnapshotClass(
        r.getMetadata().getName(),
        Json.string(props.get("driver")),
        Json.string(props.get("deletionPolicy")),
        Map.copyOf(parameters));
  }
}
