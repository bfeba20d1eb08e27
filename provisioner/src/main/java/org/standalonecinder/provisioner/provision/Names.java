package org.standalonecinder.provisioner.provision;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Every name, annotation, label and metadata key the provisioner alone derives, in one place (the
 * claim annotations it shares with the webhook are {@code api.ClaimAnnotations}). Names come from
 * the claim's UID so that a repeated attempt finds what an earlier one made instead of making a
 * second one.
 */
public final class Names {

  public static final String ANN_IDENTITY = "standaloneCinderProvisionerIdentity";

  /** How the volume was made attachable: an attachment id, or {@link #RESERVED}. */
  public static final String ANN_ATTACHMENT = "standalone-cinder.io/attachment";

  /** {@link #ANN_ATTACHMENT} for os-reserve + os-initialize_connection. */
  public static final String RESERVED = "reserved";

  /**
   * On a clone's PV: the source claim ({@code ns/name}). The claim's {@code k8s.io/CloneOf} is
   * repaired from it after a crash, and only a PV that says so makes a claim a clone.
   */
  public static final String ANN_CLONE_OF = "standalone-cinder.io/clone-of";

  /** On a clone's volume: the source volume's id. */
  public static final String META_CLONE_OF = "standalone-cinder.io/clone-of";

  /**
   * On a source claim while a clone of it is being made, one per clone (the clone's uid follows),
   * so that concurrent clones never remove each other's protection.
   */
  public static final String CLONE_FINALIZER_PREFIX =
      org.standalonecinder.provisioner.controller.ClusterCache.OUR_FINALIZERS
          + "clone-in-progress-";

  /** On the PV of a restored claim: the VolumeSnapshot it was restored from. */
  public static final String ANN_RESTORED_FROM = "standalone-cinder.io/restored-from";

  /** In a restored volume's metadata: the Cinder snapshot it was made from. */
  public static final String META_RESTORED_FROM = "standalone-cinder.io/restored-from";

  public static final String LABEL_PV = "standalone-cinder.io/pv";
  public static final String LABEL_MANAGED_BY = "app.kubernetes.io/managed-by";
  public static final String MANAGED_BY = "standalone-cinder";

  /**
   * On auth Secrets that several PVs use (cephx): such a Secret goes when no PV refers to it.
   * Value: what it holds, e.g. {@code cephx}.
   */
  public static final String LABEL_SHARED_SECRET = "standalone-cinder.io/shared-secret";

  public static final String META_PVC_NAMESPACE = "kubernetes.io/created-for/pvc/namespace";
  public static final String META_PVC_NAME = "kubernetes.io/created-for/pvc/name";
  public static final String META_PV_NAME = "kubernetes.io/created-for/pv/name";
  public static final String META_PVC_UID = "standalone-cinder.io/pvc-uid";
  public static final String META_CLUSTER = "standalone-cinder.io/cluster-id";

  /**
   * Where a volume is in its life: {@link #STATE_PROVISIONING} from its creation until it is handed
   * to its PV, {@link #STATE_PROVISIONED} after. Only a volume still provisioning is ever deleted
   * without its PV (by the orphan sweeps): one that was handed to a PV is the PV's, and a PV with
   * reclaim policy Retain that an admin deleted must leave its data alone.
   */
  public static final String META_STATE = "standalone-cinder.io/state";

  public static final String STATE_PROVISIONING = "provisioning";
  public static final String STATE_PROVISIONED = "provisioned";

  private Names() {}

  /** The PV's name, which is also the Cinder volume's name. */
  public static String pvName(String claimUid) {
    return org.standalonecinder.provisioner.controller.ProvisionRequest.pvName(claimUid);
  }

  /** The metadata that identifies the claim's volume among all volumes of the project. */
  public static Map<String, String> identifying(String claimUid, String clusterId) {
    Map<String, String> m = new LinkedHashMap<>();
    m.put(META_PVC_UID, claimUid);
    m.put(META_CLUSTER, clusterId);
    return m;
  }

  /** The finalizer a clone puts on its source claim while it is being made. */
  public static String cloneFinalizer(String cloneUid) {
    return CLONE_FINALIZER_PREFIX + cloneUid;
  }

  /** Labels of the auth Secrets of a PV. */
  public static Map<String, String> secretLabels(String pvName) {
    Map<String, String> m = new LinkedHashMap<>();
    m.put(LABEL_PV, pvName);
    m.put(LABEL_MANAGED_BY, MANAGED_BY);
    return m;
  }

  /** Labels of the auth Secrets that several PVs use. */
  public static Map<String, String> sharedSecretLabels() {
    Map<String, String> m = new LinkedHashMap<>();
    m.put(LABEL_SHARED_SECRET, "cephx");
    m.put(LABEL_MANAGED_BY, MANAGED_BY);
    return m;
  }
}
