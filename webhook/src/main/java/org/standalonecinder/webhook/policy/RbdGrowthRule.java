package org.standalonecinder.webhook.policy;

import io.fabric8.kubernetes.api.model.PersistentVolume;
import java.util.Map;
import org.standalonecinder.api.ClaimAnnotations;

/**
 * A claim on one of our Ceph RBD volumes is not grown, and the growth is refused where it is asked
 * for. Kubernetes' own expand controller takes claims of in-tree {@code rbd} PVs too (its rbd
 * plugin can expand), and on 1.20 it crashed the whole controller-manager when its status patch of
 * the claim met a newer claim: any user who may edit a claim of such a class, and writes it again
 * while the controller tries, could take down every controller of the cluster. Refused at
 * admission, the growth never reaches that controller. The provisioner refuses the same growth (for
 * an update this webhook did not answer); ceph-csi PVs are not grown either (their node plugin's,
 * untried).
 */
final class RbdGrowthRule implements ClaimRule {

  /** The rule's name in denials, warnings and metrics. */
  static final String NAME = "rbd-growth";

  static final String UNCHECKED =
      "whether this claim's volume can grow is checked by the provisioner when it grows it (claims"
          + " on Ceph RBD volumes are not grown; the claim's events say so): this webhook does not"
          + " look at volumes, as it does not authenticate the API server as the sender of its"
          + " reviews (serve --client-ca)";

  @Override
  public void check(ClaimReview r, Findings f) {
    if (!r.grows()) {
      return;
    }
    if (!r.settings.callerAuthenticated()) {
      // PVs are no user's to read: a review any pod can send must not learn what a PV is. The
      // answer is the same whatever the cluster holds; the provisioner refuses the growth.
      f.warn(NAME, UNCHECKED);
      return;
    }
    PersistentVolume pv = r.volume().orElse(null);
    if (pv == null || !ours(pv, r.settings.provisionerName())) {
      return;
    }
    String name = pv.getMetadata().getName();
    if (pv.getSpec().getRbd() != null) {
      f.deny(
          NAME,
          "claims on Ceph RBD volumes are not grown: PV "
              + name
              + " is an in-tree rbd volume, which Kubernetes' own expand controller would act on"
              + " too, and on Kubernetes 1.20 that can crash the controller-manager; keep the"
              + " request, or copy the data to a larger claim (docs/provisioner.md, Expansion)");
    } else if (pv.getSpec().getCsi() != null) {
      f.deny(
          NAME,
          "claims on Ceph RBD volumes are not grown: PV "
              + name
              + " is a ceph-csi volume, whose filesystem only ceph-csi's node plugin could grow;"
              + " keep the request, or copy the data to a larger claim (docs/provisioner.md,"
              + " Expansion)");
    }
  }

  private static boolean ours(PersistentVolume pv, String provisioner) {
    Map<String, String> a = pv.getMetadata() == null ? null : pv.getMetadata().getAnnotations();
    return pv.getSpec() != null
        && a != null
        && provisioner.equals(a.get(ClaimAnnotations.PROVISIONED_BY));
  }
}
