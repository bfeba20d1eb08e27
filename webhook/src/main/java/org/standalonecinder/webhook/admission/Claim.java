package org.standalonecinder.webhook.admission;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Quantity;
import java.util.List;
import java.util.Map;

/**
 * A claim in an admission request, holding only the fields the webhook's rules and the
 * provisioner's clone check read, in the API's shape (so that it is written back as a claim the
 * resolver can read). Everything else (status, selector, managedFields, labels...) is skipped
 * unread: no rule may depend on it, and it is most of what a claim's JSON holds.
 *
 * @param apiVersion always {@code v1}: other versions are not claims to the reader
 * @param kind always {@code PersistentVolumeClaim}
 */
@JsonIgnoreProperties(ignoreUnknown = true)
@JsonInclude(JsonInclude.Include.NON_EMPTY)
public record Claim(String apiVersion, String kind, Meta metadata, Spec spec) {

  /** The claim's identity and annotations. */
  @JsonIgnoreProperties(ignoreUnknown = true)
  @JsonInclude(JsonInclude.Include.NON_EMPTY)
  public record Meta(
      String name,
      String namespace,
      String uid,
      String creationTimestamp,
      String deletionTimestamp,
      Map<String, String> annotations) {}

  /** What the claim asks for. */
  @JsonIgnoreProperties(ignoreUnknown = true)
  @JsonInclude(JsonInclude.Include.NON_EMPTY)
  public record Spec(
      List<String> accessModes,
      String storageClassName,
      String volumeMode,
      String volumeName,
      Resources resources,
      Source dataSource,
      Source dataSourceRef) {}

  /** The claim's requests and limits, as the API's quantities. */
  @JsonIgnoreProperties(ignoreUnknown = true)
  @JsonInclude(JsonInclude.Include.NON_EMPTY)
  public record Resources(Map<String, Quantity> requests, Map<String, Quantity> limits) {}

  /** A {@code dataSource} or {@code dataSourceRef} (the first has no namespace). */
  @JsonIgnoreProperties(ignoreUnknown = true)
  @JsonInclude(JsonInclude.Include.NON_EMPTY)
  public record Source(String apiGroup, String kind, String name, String namespace) {}

  private static final ObjectMapper JSON = new ObjectMapper();

  /**
   * The lean claim of a fabric8 one (a StatefulSet's template, a test's fixture), through its JSON:
   * the same as reading that claim in a review.
   */
  public static Claim of(PersistentVolumeClaim claim) {
    return JSON.convertValue(claim, Claim.class);
  }

  /** The claim with other annotations (null or empty for none). */
  public Claim withAnnotations(Map<String, String> annotations) {
    Meta m = metadata == null ? new Meta(null, null, null, null, null, null) : metadata;
    return new Claim(
        apiVersion,
        kind,
        new Meta(
            m.name(),
            m.namespace(),
            m.uid(),
            m.creationTimestamp(),
            m.deletionTimestamp(),
            annotations),
        spec);
  }

  /** The annotation's value; null when it or the claim's annotations are absent. */
  public String annotation(String key) {
    Map<String, String> a = metadata == null ? null : metadata.annotations();
    return a == null ? null : a.get(key);
  }

  /** Whether the claim carries no annotation at all (absent and empty are sent alike). */
  public boolean noAnnotations() {
    return metadata == null || metadata.annotations() == null || metadata.annotations().isEmpty();
  }

  /** The claim's name; null when absent (the API server fills it in from generateName later). */
  public String name() {
    return metadata == null ? null : metadata.name();
  }

  /** The namespace the claim itself names; null when absent. */
  public String namespace() {
    return metadata == null ? null : metadata.namespace();
  }

  /** The StorageClass the claim names; null when it names none. */
  public String className() {
    return spec == null ? null : spec.storageClassName();
  }

  /** The volumeMode, with the API's default. */
  public String mode() {
    return spec == null || spec.volumeMode() == null ? "Filesystem" : spec.volumeMode();
  }

  /** The storage the claim requests; null when it requests none. */
  public Quantity storageRequest() {
    Map<String, Quantity> r =
        spec == null || spec.resources() == null ? null : spec.resources().requests();
    return r == null ? null : r.get("storage");
  }
}
