package org.standalonecinder.api;

/**
 * What a claim asks to be filled from, read the same way by the webhook and the provisioner: its
 * {@code k8s.io/CloneRequest} annotation and its native data source ({@code dataSourceRef}, else
 * {@code dataSource}), each parsed, or with why it cannot be. A data source is a claim (a clone), a
 * {@code VolumeSnapshot} (a restore) or any other kind, which a volume populator fills and this
 * project leaves alone. What to do about an error (deny the claim, fail its provisioning) is the
 * reader's.
 *
 * @param annotated the claim the annotation names, or null (none, or malformed)
 * @param annotationError why the annotation names no claim, or null
 * @param dataSource the claim the data source names, or null (none, or not a claim)
 * @param dataSourceError why the data source cannot fill one of our volumes, or null
 * @param snapshot the VolumeSnapshot (namespace and name) the data source names, or null
 * @param populator the {@code group/kind} of a data source of another kind, or null
 */
public record CloneRequest(
    ClaimRef annotated,
    String annotationError,
    ClaimRef dataSource,
    String dataSourceError,
    ClaimRef snapshot,
    String populator) {

  /** The API group of VolumeSnapshots. */
  public static final String SNAPSHOT_GROUP = "snapshot.storage.k8s.io";

  public static final String SNAPSHOT_KIND = "VolumeSnapshot";

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
    ClaimRef snapshot = null;
    String populator = null;
    String sourceNamespace = dataSourceRef != null ? ds.namespace() : null;
    if (ds == null) {
      // nothing asked of a data source
    } else if (isSnapshot(ds)) {
      try {
        snapshot = snapshotRef(ds.name(), sourceNamespace, namespace);
      } catch (IllegalArgumentException e) {
        dataSourceError = e.getMessage();
      }
    } else if (isClaim(ds)) {
      try {
        fromDataSource =
            ClaimRef.fromDataSource(
                ds.apiGroup(), ds.kind(), ds.name(), sourceNamespace, namespace);
      } catch (IllegalArgumentException e) {
        dataSourceError = e.getMessage();
      }
    } else {
      // Only ever told, quoted: a kind is whatever the claim's writer put there.
      populator =
          ClaimRef.quote(ds.apiGroup() == null ? "" : ds.apiGroup())
              + "/"
              + ClaimRef.quote(ds.kind());
    }
    return new CloneRequest(
        annotated, annotationError, fromDataSource, dataSourceError, snapshot, populator);
  }

  private static boolean isClaim(DataSource ds) {
    return (ds.apiGroup() == null || ds.apiGroup().isEmpty())
        && "PersistentVolumeClaim".equals(ds.kind());
  }

  private static boolean isSnapshot(DataSource ds) {
    return SNAPSHOT_GROUP.equals(ds.apiGroup()) && SNAPSHOT_KIND.equals(ds.kind());
  }

  /**
   * A restore reads a VolumeSnapshot of the claim's own namespace: across namespaces the source's
   * owner would have to consent, and snapshots have no such consent here yet.
   */
  private static ClaimRef snapshotRef(String name, String sourceNamespace, String namespace) {
    String ns = sourceNamespace == null || sourceNamespace.isEmpty() ? namespace : sourceNamespace;
    if (!ClaimRef.isName(name) || !ClaimRef.isNamespace(ns)) {
      throw new IllegalArgumentException(
          "the data source VolumeSnapshot "
              + ClaimRef.quote(ns)
              + "/"
              + ClaimRef.quote(name)
              + " does not name a snapshot: each must be a valid Kubernetes name");
    }
    if (!ns.equals(namespace)) {
      throw new IllegalArgumentException(
          "the data source VolumeSnapshot "
              + ns
              + "/"
              + name
              + " is in another namespace: a claim is restored only from a VolumeSnapshot of its"
              + " own namespace");
    }
    return new ClaimRef(ns, name);
  }

  /** Whether the claim names a data source at all (valid or not). */
  public boolean hasDataSource() {
    return dataSource != null || dataSourceError != null || snapshot != null || populator != null;
  }

  /**
   * Whether the annotation and the data source name two different sources: two claims, or a claim
   * and a snapshot or populated kind.
   */
  public boolean conflicting() {
    return annotated != null
        && ((dataSource != null && !annotated.equals(dataSource))
            || snapshot != null
            || populator != null);
  }
}
