package org.standalonecinder.api;

import java.util.Map;

/**
 * Every annotation a claim carries that the webhook and the provisioner both read or write: the
 * ones Kubernetes sets, the clone requests users set and the marks the provisioner sets. The
 * provisioner's own marks on its PVs, volumes and Secrets are in its {@code provision.Names}.
 */
public final class ClaimAnnotations {

  /** The provisioner Kubernetes chose for the claim from its class (1.23 and later). */
  public static final String STORAGE_PROVISIONER = "volume.kubernetes.io/storage-provisioner";

  /** The same, as Kubernetes up to 1.22 writes it only, and later releases still write too. */
  public static final String STORAGE_PROVISIONER_BETA =
      "volume.beta.kubernetes.io/storage-provisioner";

  /** The node the scheduler selected for a claim of a WaitForFirstConsumer class. */
  public static final String SELECTED_NODE = "volume.kubernetes.io/selected-node";

  /** On a PV: the provisioner that made it. */
  public static final String PROVISIONED_BY = "pv.kubernetes.io/provisioned-by";

  /** On a claim (and its PV) of ours: the Cinder volume's id. */
  public static final String VOLUME_ID = "cinderVolumeId";

  /** Requests a clone: {@code <claim>} or {@code <namespace>/<claim>}, set by the user. */
  public static final String CLONE_REQUEST = "k8s.io/CloneRequest";

  /** Marks a finished clone: {@code <namespace>/<claim>} of its source, set by the provisioner. */
  public static final String CLONE_OF = "k8s.io/CloneOf";

  /**
   * On a source claim: namespaces (comma-separated) that may clone it ({@link ClaimRef#grants}).
   */
  public static final String CLONE_GRANT = "standalone-cinder.io/clone-grant";

  /** On a target claim: the webhook's signed {@link CloneToken}. */
  public static final String CLONE_TOKEN = "standalone-cinder.io/clone-token";

  private ClaimAnnotations() {}

  /**
   * The provisioner Kubernetes named for the claim: the current annotation, else the beta one (the
   * only one a 1.20 API server writes); null when neither is there.
   */
  public static String provisioner(Map<String, String> annotations) {
    if (annotations == null) {
      return null;
    }
    String p = annotations.get(STORAGE_PROVISIONER);
    return p != null ? p : annotations.get(STORAGE_PROVISIONER_BETA);
  }
}
