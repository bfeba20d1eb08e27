package org.standalonecinder.provisioner.mapping;

import io.fabric8.kubernetes.api.model.PersistentVolumeSpec;
import io.fabric8.kubernetes.api.model.SecretReference;
import java.util.ArrayList;
import java.util.List;

/** The Secrets a PV refers to, in every volume source the mappers write. */
public final class SecretRefs {

  private SecretRefs() {}

  /**
   * The references of the PV's iSCSI, RBD and CSI sources; a reference without a namespace is
   * returned as written (the kubelet then looks in the claim's namespace).
   */
  public static List<SecretReference> of(PersistentVolumeSpec spec) {
    List<SecretReference> refs = new ArrayList<>();
    if (spec == null) {
      return refs;
    }
    if (spec.getIscsi() != null) {
      add(refs, spec.getIscsi().getSecretRef());
    }
    if (spec.getRbd() != null) {
      add(refs, spec.getRbd().getSecretRef());
    }
    if (spec.getCsi() != null) {
      var csi = spec.getCsi();
      add(refs, csi.getNodeStageSecretRef());
      add(refs, csi.getNodePublishSecretRef());
      add(refs, csi.getControllerPublishSecretRef());
      add(refs, csi.getControllerExpandSecretRef());
      add(refs, csi.getNodeExpandSecretRef());
    }
    return refs;
  }

  /** Whether the PV refers to the Secret {@code namespace/name}. */
  public static boolean refersTo(PersistentVolumeSpec spec, String namespace, String name) {
    return of(spec).stream()
        .anyMatch(r -> name.equals(r.getName()) && namespace.equals(r.getNamespace()));
  }

  private static void add(List<SecretReference> refs, SecretReference r) {
    if (r != null && r.getName() != null) {
      refs.add(r);
    }
  }
}
