package org.standalonecinder.provisioner.clone;

import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.authorization.v1.SubjectAccessReview;
import io.fabric8.kubernetes.api.model.authorization.v1.SubjectAccessReviewBuilder;
import io.fabric8.kubernetes.api.model.storage.StorageClass;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.standalonecinder.api.CloneToken;
import org.standalonecinder.api.ReferenceGrants;

/** {@link ClusterReader} on the API server, uncached. */
public final class KubernetesClusterReader implements ClusterReader {

  private static final org.slf4j.Logger LOG =
      org.slf4j.LoggerFactory.getLogger(KubernetesClusterReader.class);

  private final KubernetesClient client;
  private final String ownNamespace;

  /**
   * @param ownNamespace where the clone token key Secret lives (the provisioner's namespace)
   */
  public KubernetesClusterReader(KubernetesClient client, String ownNamespace) {
    this.client = client;
    this.ownNamespace = ownNamespace;
  }

  @Override
  public Optional<PersistentVolumeClaim> claim(String namespace, String name) {
    return Optional.ofNullable(
        client.persistentVolumeClaims().inNamespace(namespace).withName(name).get());
  }

  @Override
  public Optional<PersistentVolume> volume(String name) {
    return Optional.ofNullable(client.persistentVolumes().withName(name).get());
  }

  @Override
  public Optional<StorageClass> storageClass(String name) {
    return Optional.ofNullable(client.storage().v1().storageClasses().withName(name).get());
  }

  @Override
  public Optional<CloneToken.Keys> cloneTokenKeys() {
    Secret s = client.secrets().inNamespace(ownNamespace).withName(CloneToken.KEY_SECRET).get();
    Map<String, String> data = s == null || s.getData() == null ? Map.of() : s.getData();
    String current = data.get(CloneToken.KEY_FIELD);
    String previous = data.get(CloneToken.PREVIOUS_KEY_FIELD);
    return current == null
        ? Optional.empty()
        : Optional.of(
            CloneToken.Keys.of(
                Base64.getDecoder().decode(current),
                previous == null ? null : Base64.getDecoder().decode(previous)));
  }

  @Override
  public Optional<String> clonePolicy() {
    try {
      var map =
          client
              .configMaps()
              .inNamespace(ownNamespace)
              .withName(org.standalonecinder.api.ClonePolicyFile.CONFIG_MAP)
              .get();
      return Optional.ofNullable(
          map == null || map.getData() == null
              ? null
              : map.getData().get(org.standalonecinder.api.ClonePolicyFile.KEY));
    } catch (KubernetesClientException e) {
      if (e.getCode() == 403) {
        // An install from before the rule: read as no policy, whose defaults honour no token
        // given on a policy that allowed every clone.
        LOG.warn(
            "cannot read ConfigMap {}/{}: this account may not get it (apply the current RBAC);"
                + " clones across namespaces follow the policy's defaults meanwhile",
            ownNamespace,
            org.standalonecinder.api.ClonePolicyFile.CONFIG_MAP);
        return Optional.empty();
      }
      throw e;
    }
  }

  @Override
  public boolean canCreatePods(CloneToken.Principal who, String namespace) {
    SubjectAccessReview review =
        new SubjectAccessReviewBuilder()
            .withNewSpec()
            .withUser(who.user())
            .withUid(who.uid().isEmpty() ? null : who.uid())
            .withGroups(who.groups())
            .withExtra(who.extra())
            .withNewResourceAttributes()
            .withNamespace(namespace)
            .withVerb("create")
            .withResource("pods")
            .endResourceAttributes()
            .endSpec()
            .build();
    SubjectAccessReview answer = client.authorization().v1().subjectAccessReview().create(review);
    return answer.getStatus() != null && Boolean.TRUE.equals(answer.getStatus().getAllowed());
  }

  @Override
  public ReferenceGrants.Page referenceGrants(String namespace, String next) {
    try {
      return ReferenceGrantLists.page(client, namespace, next);
    } catch (KubernetesClientException e) {
      if (e.getCode() == 404) {
        return ReferenceGrants.Page.of(List.of()); // the kind is not installed: no grant by it
      }
      if (e.getCode() == 403) {
        // An install from before the rule: the annotation still works; say why this does not.
        LOG.warn(
            "cannot read the ReferenceGrants of {}: this account may not list referencegrants"
                + " (apply the current RBAC); they are not honoured meanwhile",
            namespace);
        return ReferenceGrants.Page.of(List.of());
      }
      throw e;
    }
  }
}
