package org.standalonecinder.provisioner.clone;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.util.LinkedHashMap;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.standalonecinder.api.ClaimAnnotations;
import org.standalonecinder.api.ClaimRef;
import org.standalonecinder.provisioner.controller.ClusterCache;
import org.standalonecinder.provisioner.controller.ProvisioningException;
import org.standalonecinder.provisioner.provision.Names;

/**
 * Tells a provisioned claim what it holds: its Cinder volume's id and, for a clone, {@code
 * k8s.io/CloneOf}, which is how users (and CDI) see that the clone is done. Only a PV made as a
 * clone ({@link Names#ANN_CLONE_OF}) makes a claim one: a blank volume is never marked CloneOf.
 */
public final class CloneMarking {

  private static final Logger LOG = LoggerFactory.getLogger(CloneMarking.class);
  private static final ObjectMapper JSON = new ObjectMapper();

  private final KubernetesClient client;
  private final ClusterCache cache;

  public CloneMarking(KubernetesClient client, ClusterCache cache) {
    this.client = client;
    this.cache = cache;
  }

  /**
   * Marks the claim of a PV that was just created: its volume id and, when the PV is a clone's, its
   * source.
   *
   * @throws ProvisioningException when a clone cannot be marked (retried; a plain claim's failure
   *     is only logged, its PV has the id too); a claim that is gone needs no mark
   */
  public void mark(PersistentVolumeClaim claim, PersistentVolume pv) {
    Map<String, String> pvAnn = pv.getMetadata().getAnnotations();
    String source = pvAnn.get(Names.ANN_CLONE_OF);
    annotate(
        claim,
        pvAnn.get(ClaimAnnotations.VOLUME_ID),
        source == null
            ? null
            : ClaimRef.parseCloneRequest(source, claim.getMetadata().getNamespace()));
  }

  /**
   * For a claim that is provisioned already (a crash may have come between its PV and the rest): a
   * clone's claim that lacks {@code k8s.io/CloneOf} gets it.
   */
  public void repair(PersistentVolumeClaim claim) {
    Map<String, String> ann = claim.getMetadata().getAnnotations();
    if (ann != null && ann.get(ClaimAnnotations.CLONE_OF) != null) {
      return;
    }
    PersistentVolume pv = cache.volumeNow(Names.pvName(claim.getMetadata().getUid()));
    Map<String, String> pvAnn = pv == null ? null : pv.getMetadata().getAnnotations();
    if (pvAnn != null && pvAnn.get(Names.ANN_CLONE_OF) != null && !cloneOfInApiServer(claim)) {
      mark(claim, pv);
    }
  }

  /**
   * Whether the API server's copy of the claim has {@code k8s.io/CloneOf} (a gone claim counts as
   * having it: there is nothing to mark). The informer's copy can predate this provisioner's own
   * annotation when the binder wrote the claim in between; annotating again is harmless but is a
   * needless write per clone, and one whose presence depended on timing.
   */
  private boolean cloneOfInApiServer(PersistentVolumeClaim claim) {
    PersistentVolumeClaim fresh =
        client
            .persistentVolumeClaims()
            .inNamespace(claim.getMetadata().getNamespace())
            .withName(claim.getMetadata().getName())
            .get();
    if (fresh == null || !claim.getMetadata().getUid().equals(fresh.getMetadata().getUid())) {
      return true;
    }
    Map<String, String> ann = fresh.getMetadata().getAnnotations();
    return ann != null && ann.get(ClaimAnnotations.CLONE_OF) != null;
  }

  /**
   * Sets the claim's volume id and, for a clone, {@code k8s.io/CloneOf}. A merge patch: it carries
   * no resourceVersion, so the binder's concurrent writes do not make it fail.
   */
  private void annotate(PersistentVolumeClaim claim, String volumeId, ClaimRef cloneOf) {
    Map<String, String> ann = new LinkedHashMap<>();
    ann.put(ClaimAnnotations.VOLUME_ID, volumeId);
    if (cloneOf != null) {
      ann.put(ClaimAnnotations.CLONE_OF, cloneOf.toString());
    }
    ObjectNode patch = JSON.createObjectNode();
    ObjectNode annotations = patch.putObject("metadata").putObject("annotations");
    ann.forEach(annotations::put);
    try {
      // On the claim as the cache has it: fabric8 reads a claim named only by its name from the
      // API server before it patches (a GET per claim for nothing: the patch names no version).
      client
          .persistentVolumeClaims()
          .inNamespace(claim.getMetadata().getNamespace())
          .resource(claim)
          .patch(
              io.fabric8.kubernetes.client.dsl.base.PatchContext.of(
                  io.fabric8.kubernetes.client.dsl.base.PatchType.JSON_MERGE),
              patch.toString());
    } catch (KubernetesClientException e) {
      if (e.getCode() == 404) {
        // The claim is gone (deleted right after its PV was made): nothing to mark. A retry would
        // run on the cache's copy of the claim, which may not show the delete yet, and could
        // provision it again once its PV had been released and deleted.
        LOG.debug("claim {} is gone before it was marked", claim.getMetadata().getName());
        return;
      }
      if (cloneOf != null) {
        // CloneOf is how users (and CDI) see that the clone is done: fail, so it is retried.
        throw new ProvisioningException(
            "cannot mark claim "
                + claim.getMetadata().getName()
                + " as a clone of "
                + cloneOf
                + ": "
                + e.getMessage(),
            false,
            e);
      }
      // The PV has the id too; clones read the claim's copy, so say it, but do not fail.
      LOG.warn(
          "cannot annotate claim {} with its volume id: {}",
          claim.getMetadata().getName(),
          e.getMessage());
    }
  }
}
