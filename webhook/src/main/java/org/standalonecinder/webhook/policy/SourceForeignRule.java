package org.standalonecinder.webhook.policy;

import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import java.util.Map;
import org.standalonecinder.api.ClaimAnnotations;

/** Only a volume we provisioned (it carries its Cinder volume's ID) can be cloned in Cinder. */
final class SourceForeignRule implements ClaimRule {

  /** The rule's name in denials, warnings and metrics. */
  static final String NAME = "clone-source-foreign";

  @Override
  public void check(ClaimReview r, Findings f) {
    if (r.isUpdate()) {
      return;
    }
    r.visibleSourceClaim()
        .filter(s -> !ours(s, r.settings.provisionerName()))
        .ifPresent(
            s ->
                f.deny(
                    NAME,
                    "source claim "
                        + r.source()
                        + " was not provisioned by "
                        + r.settings.provisionerName()));
  }

  private static boolean ours(PersistentVolumeClaim source, String provisionerName) {
    Map<String, String> ann = source.getMetadata().getAnnotations();
    return ann != null
        && provisionerName.equals(ClaimAnnotations.provisioner(ann))
        && ann.get(ClaimAnnotations.VOLUME_ID) != null;
  }
}
