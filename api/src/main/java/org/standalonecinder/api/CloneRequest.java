package org.standalonecinder.api;

/**
 * What a claim asks to be cloned from, read the same way by the webhook and the provisioner: its
 * {@code k8s.io/CloneRequest} annotation and its native data source ({@code dataSourceRef}, else
 * {@code dataSource}), each parsed, or with why it cannot be. What to do about an error (deny the
 * claim, fail its provisioning) is the reader's.
 *
 * @param annotated the claim the annotation names, or null (none, or malformed)
 * @param annotationError why the annotation names no claim, or null
 * @param dataSource the claim the data source names, or null (none, or not a claim)
 * @param dataSourceError why the data source cannot fill one of our volumes, or null
 */
public record CloneRequest(
    ClaimRef annotated, String annotationError, ClaimRef dataSource, String dataSourceError) {

  /** A data source as the claim's spec names it. */
  public record DataSource(String apiGroup, String kind, String name, String namespace) {}

  /**
   * Reads a claim's request.
   *
   * @param namespace the claim's namespace (for a bare name, and a data source without one)
   * @param annotation the value of {@code k8s.io/CloneRequest}, or null
   * @param dataSourceRef {@code spec.dataSourceRef}, or null
   * @param dataSource {@code spec.dataSource}, or null; read only without a dataSourceRef (the API
   *     server copies one into the other, and only the ref can name another namespace)
   */
  public static CloneRequest read(
      String namespace, String annotation, DataSource dataSourceRef, DataSource dataSource) {
    ClaimRef annotated = null;
    String annotationError = null;
    if (annotation != null) {
      try {
        annotated = ClaimRef.parseCloneRequest(annotation, namespace);
      } catch (IllegalArgumentException e) {
        annotationError = e.getMessage();
      }
    }
    DataSource ds = dataSourceRef != null ? dataSourceRef : dataSource;
    ClaimRef fromDataSource = null;
    String dataSourceError = null;
    if (ds != null) {
      try {
        fromDataSource =
            ClaimRef.fromDataSource(
                ds.apiGroup(),
                ds.kind(),
                ds.name(),
                dataSourceRef != null ? ds.namespace() : null,
                namespace);
      } catch (IllegalArgumentException e) {
        dataSourceError = e.getMessage();
      }
    }
    return new CloneRequest(annotated, annotationError, fromDataSource, dataSourceError);
  }

  /** Whether the claim names a data source at all (valid or not). */
  public boolean hasDataSource() {
    return dataSource != null || dataSourceError != null;
  }

  /** Whether the annotation and the data source name two different claims. */
  public boolean conflicting() {
    return annotated != null && dataSource != null && !annotated.equals(dataSource);
  }
}
