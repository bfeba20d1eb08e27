package org.standalonecinder.webhook.policy;

import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.authentication.UserInfo;
import io.fabric8.kubernetes.api.model.authorization.v1.SubjectAccessReview;
import io.fabric8.kubernetes.api.model.authorization.v1.SubjectAccessReviewBuilder;
import io.fabric8.kubernetes.api.model.storage.StorageClass;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.standalonecinder.api.ClaimRef;
import org.standalonecinder.api.ReferenceGrants;

/**
 * The cluster as the API server answers now: no cache, since a stale answer could let a clone
 * through that should be denied. Every failure to ask counts as "no": the webhook fails closed (a
 * failed lookup is a {@link LookupFailedException}, a failed SubjectAccessReview a "no").
 *
 * <p>A name that cannot be a Kubernetes name names nothing, and is never asked for: it would go
 * into the URL's path, where {@code ..} or a {@code /} reaches another resource than the one meant.
 */
@SuppressWarnings("unchecked") // a ReferenceGrant's spec, read as JSON maps
public final class KubernetesClusterView implements ClusterView {

  private static final Logger LOG = LoggerFactory.getLogger(KubernetesClusterView.class);

  private final KubernetesClient client;

  public KubernetesClusterView(KubernetesClient client) {
    this.client = client;
  }

  @Override
  public Optional<StorageClass> storageClass(String name) {
    if (!ClaimRef.isName(name)) {
      return Optional.empty();
    }
    try {
      return Optional.ofNullable(client.storage().v1().storageClasses().withName(name).get());
    } catch (KubernetesClientException e) {
      throw new LookupFailedException("StorageClass " + name, e);
    }
  }

  @Override
  public Optional<PersistentVolume> volume(String name) {
    if (!ClaimRef.isName(name)) {
      return Optional.empty();
    }
    try {
      return Optional.ofNullable(client.persistentVolumes().withName(name).get());
    } catch (KubernetesClientException e) {
      throw new LookupFailedException("persistentvolume " + name, e);
    }
  }

  @Override
  public Optional<PersistentVolumeClaim> claim(String namespace, String name) {
    if (!ClaimRef.isNamespace(namespace) || !ClaimRef.isName(name)) {
      return Optional.empty();
    }
    try {
      return Optional.ofNullable(
          client.persistentVolumeClaims().inNamespace(namespace).withName(name).get());
    } catch (KubernetesClientException e) {
      throw new LookupFailedException("claim " + namespace + "/" + name, e);
    }
  }

  @Override
  public java.util.Map<String, String> namespaceLabels(String namespace) {
    if (!ClaimRef.isNamespace(namespace)) {
      return java.util.Map.of();
    }
    io.fabric8.kubernetes.api.model.Namespace ns;
    try {
      ns = client.namespaces().withName(namespace).get();
    } catch (KubernetesClientException e) {
      throw new LookupFailedException("namespace " + namespace, e);
    }
    return ns == null || ns.getMetadata().getLabels() == null
        ? java.util.Map.of()
        : ns.getMetadata().getLabels();
  }

  @Override
  public ReferenceGrants.Page referenceGrants(String namespace, String next) {
    if (!ClaimRef.isNamespace(namespace)) {
      return ReferenceGrants.Page.of(java.util.List.of());
    }
    try {
      // A small page at a time, each grant kept as its from and to only: a namespace's owner
      // writes its grants, up to 256 KiB of annotations each.
      var list =
          client
              .genericKubernetesResources(REFERENCE_GRANTS)
              .inNamespace(namespace)
              .list(
                  new io.fabric8.kubernetes.api.model.ListOptionsBuilder()
                      .withLimit((long) ReferenceGrants.PAGE)
                      .withContinue(next)
                      .build());
      java.util.List<java.util.Map<String, Object>> specs =
          list.getItems().stream()
              .map(g -> g.getAdditionalProperties().get("spec"))
              .filter(java.util.Map.class::isInstance)
              .map(m -> (java.util.Map<String, Object>) m)
              .map(
                  m ->
                      java.util.Map.of(
                          "from", m.getOrDefault("from", ""), "to", m.getOrDefault("to", "")))
              .toList();
      return new ReferenceGrants.Page(
          specs, list.getMetadata() == null ? null : list.getMetadata().getContinue());
    } catch (KubernetesClientException e) {
      if (e.getCode() == 404) {
        // the kind is not installed: nobody granted anything by it
        return ReferenceGrants.Page.of(java.util.List.of());
      }
      if (e.getCode() == 403) {
        LOG.warn(
            "cannot read the ReferenceGrants of {}: this account may not list referencegrants"
                + " (apply the current RBAC); they are not honoured meanwhile",
            namespace);
        return ReferenceGrants.Page.of(java.util.List.of());
      }
      throw new LookupFailedException("the ReferenceGrants of " + namespace, e);
    }
  }

  // Named in full, so that a cluster without the kind answers 404 rather than failing discovery.
  private static final io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext
      REFERENCE_GRANTS =
          new io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext.Builder()
              .withGroup(ReferenceGrants.GROUP)
              .withVersion(ReferenceGrants.VERSION)
              .withKind(ReferenceGrants.KIND)
              .withPlural(ReferenceGrants.PLURAL)
              .withNamespaced(true)
              .build();

  @Override
  public boolean canCreatePods(UserInfo user, String namespace) {
    if (!ClaimRef.isNamespace(namespace)) {
      return false;
    }
    // An API server always names the requester; a review that names nobody has no rights to ask
    // about (the API server would refuse the question with a 422 anyway).
    boolean nobody =
        (user.getUsername() == null || user.getUsername().isBlank())
            && (user.getGroups() == null || user.getGroups().isEmpty());
    if (nobody) {
      return false;
    }
    SubjectAccessReview review =
        new SubjectAccessReviewBuilder()
            .withNewSpec()
            .withUser(user.getUsername())
            .withUid(user.getUid())
            .withGroups(user.getGroups())
            .withExtra(user.getExtra())
            .withNewResourceAttributes()
            .withNamespace(namespace)
            .withVerb("create")
            .withResource("pods")
            .endResourceAttributes()
            .endSpec()
            .build();
    try {
      SubjectAccessReview answer = client.authorization().v1().subjectAccessReview().create(review);
      return answer.getStatus() != null && Boolean.TRUE.equals(answer.getStatus().getAllowed());
    } catch (KubernetesClientException e) {
      LOG.warn(
          "SubjectAccessReview for {} in {} failed ({}); denying",
          user.getUsername(),
          namespace,
          e.getMessage());
      return false;
    }
  }
}
