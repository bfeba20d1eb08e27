package org.standalonecinder.provisioner.controller;

import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.client.informers.cache.BasicItemStore;
import io.fabric8.kubernetes.client.informers.cache.Cache;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.standalonecinder.api.ClaimAnnotations;
import org.standalonecinder.api.ClaimRef;

/**
 * The claim informer's store: it keeps of each claim what the loop reads, so that the memory it
 * takes grows with the claims, not with what their owners wrote on them. Any tenant may create
 * claims, and an annotation may hold 256 KiB: a few hundred such claims anywhere in the cluster
 * once filled the provisioner's heap at every start, and no claim was provisioned any more.
 *
 * <p>Kept: the metadata the loop and the API calls need (name, namespace, uid, resource version,
 * timestamps), the project's own finalizers (the first {@link #FINALIZERS}; more are marked by
 * {@link ClusterCache#MORE_OF_OURS}), the annotations the provisioner reads, each up to {@link
 * #LIMITS} characters, and of the spec and status the fields read, each bounded ({@link
 * ClaimFields}). A longer value is kept as its start and length, which no reader takes for a valid
 * value (a name, a clone request, a token), so it fails with a short reason. Gone: labels, owners,
 * managedFields, other finalizers and every other annotation (e.g. kubectl's last-applied copy of
 * the whole claim). Only this copy is trimmed: every change of a claim comes whole from the API
 * server and replaces it, and writes of claims read the claim from the API server first.
 */
final class ClaimStore extends BasicItemStore<PersistentVolumeClaim> {

  /** The annotations read of a claim, and how long a value may be (characters). */
  static final Map<String, Integer> LIMITS =
      Map.ofEntries(
          Map.entry(ClaimAnnotations.STORAGE_PROVISIONER, 1024),
          Map.entry(ClaimAnnotations.STORAGE_PROVISIONER_BETA, 1024),
          Map.entry(ClaimAnnotations.SELECTED_NODE, 1024),
          Map.entry(ClaimAnnotations.PROVISIONED_BY, 1024),
          Map.entry(ClaimAnnotations.VOLUME_ID, 1024),
          Map.entry(ClaimAnnotations.CLONE_REQUEST, 1024),
          Map.entry(ClaimAnnotations.CLONE_OF, 1024),
          // A token names the requester's groups; a grant, namespaces: longer, but bounded.
          Map.entry(ClaimAnnotations.CLONE_TOKEN, 8192),
          Map.entry(ClaimAnnotations.CLONE_GRANT, 8192));

  /** The project's finalizers kept of a claim; one per clone of it in progress. */
  static final int FINALIZERS = 32;

  ClaimStore() {
    super(Cache::metaNamespaceKeyFunc);
  }

  @Override
  public PersistentVolumeClaim put(String key, PersistentVolumeClaim claim) {
    return super.put(key, trim(claim));
  }

  /**
   * The project's finalizers, the first {@link #FINALIZERS}, and the mark if there are more: any
   * tenant may add thousands named like ours, and a reader that needs one past the first asks the
   * API server ({@link ClusterCache#claimsWithFinalizer}).
   */
  private static List<String> ours(List<String> finalizers) {
    if (finalizers == null) {
      return null;
    }
    List<String> kept = new ArrayList<>();
    for (String f : finalizers) {
      if (f != null && f.startsWith(ClusterCache.OUR_FINALIZERS)) {
        if (kept.size() == FINALIZERS) {
          kept.add(ClusterCache.MORE_OF_OURS);
          break;
        }
        kept.add(ClaimFields.name(f));
      }
    }
    return kept;
  }

  /** The claim as kept: the object itself, its metadata replaced by what the loop reads. */
  static PersistentVolumeClaim trim(PersistentVolumeClaim claim) {
    ObjectMeta m = claim.getMetadata();
    if (m == null) {
      return claim;
    }
    Map<String, String> kept = null;
    if (m.getAnnotations() != null) {
      kept = new LinkedHashMap<>();
      for (Map.Entry<String, String> a : m.getAnnotations().entrySet()) {
        Integer limit = LIMITS.get(a.getKey());
        if (limit != null && a.getValue() != null) {
          String v = a.getValue();
          kept.put(a.getKey(), v.length() <= limit ? v : ClaimRef.quote(v));
        }
      }
    }
    claim.setMetadata(
        new ObjectMetaBuilder()
            .withName(m.getName())
            .withNamespace(m.getNamespace())
            .withUid(m.getUid())
            .withResourceVersion(m.getResourceVersion())
            .withGeneration(m.getGeneration())
            .withCreationTimestamp(m.getCreationTimestamp())
            .withDeletionTimestamp(m.getDeletionTimestamp())
            .withDeletionGracePeriodSeconds(m.getDeletionGracePeriodSeconds())
            .withFinalizers(ours(m.getFinalizers()))
            .withAnnotations(kept)
            .build());
    claim.setSpec(ClaimFields.spec(claim.getSpec()));
    claim.setStatus(ClaimFields.status(claim.getStatus()));
    claim.setAdditionalProperties(new LinkedHashMap<>());
    return claim;
  }
}
