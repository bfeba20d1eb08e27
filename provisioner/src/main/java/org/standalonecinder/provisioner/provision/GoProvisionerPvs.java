package org.standalonecinder.provisioner.provision;

import io.fabric8.kubernetes.api.model.ObjectReference;
import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.SecretReference;
import java.util.Optional;
import org.standalonecinder.provisioner.cinder.Connector;

/**
 * What the Go standalone-cinder (kubernetes-incubator/external-storage) left on the PVs it made,
 * and how it released them: what taking over its PVs needs to know. It wrote the same
 * provisioned-by, identity and volume-id annotations as this project, exported every volume with
 * os-reserve and os-initialize_connection to one fixed connector, and put an iSCSI PV's CHAP
 * credentials into the Secret {@code <pv>-secret} of the claim's namespace, named by the PV without
 * a namespace (the kubelet then reads the pod's). Its RBD PVs name the admin's {@code
 * <class>-cephx-secret}, which it never deleted and neither does this.
 */
final class GoProvisionerPvs {

  /**
   * The connector it sent Cinder for every export. Withdrawing the export with the same one lets a
   * driver that maps volumes per initiator remove that mapping.
   */
  static final Connector CONNECTOR =
      new Connector("iqn.1994-05.com.redhat:a13fc3d1cc22", "localhost", "127.0.0.1", false);

  /** The status os-reserve leaves a volume in until os-unreserve. */
  static final String RESERVED_STATUS = "attaching";

  private GoProvisionerPvs() {}

  /** The name it gave an iSCSI PV's CHAP Secret. */
  static String chapSecretName(String pvName) {
    return pvName + "-secret";
  }

  /**
   * The CHAP Secret it made for this PV, in the claim's namespace: only a reference of the iSCSI
   * source with exactly its name and no other namespace, so that a PV edited to name some other
   * Secret never has that one deleted.
   */
  static Optional<SecretReference> chapSecret(PersistentVolume pv) {
    var spec = pv.getSpec();
    ObjectReference claim = spec == null ? null : spec.getClaimRef();
    if (spec == null || spec.getIscsi() == null || claim == null || claim.getNamespace() == null) {
      return Optional.empty();
    }
    SecretReference ref = spec.getIscsi().getSecretRef();
    if (ref == null || !chapSecretName(pv.getMetadata().getName()).equals(ref.getName())) {
      return Optional.empty();
    }
    if (ref.getNamespace() != null
        && !ref.getNamespace().isEmpty()
        && !ref.getNamespace().equals(claim.getNamespace())) {
      return Optional.empty();
    }
    return Optional.of(new SecretReference(ref.getName(), claim.getNamespace()));
  }
}
