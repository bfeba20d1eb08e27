package org.standalonecinder.provisioner.clone;

import io.fabric8.kubernetes.api.model.GenericKubernetesResourceList;
import io.fabric8.kubernetes.api.model.ListOptionsBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import java.util.List;
import java.util.Map;
import org.standalonecinder.api.ReferenceGrants;

/** How ReferenceGrants are listed through fabric8: no discovery, one small page at a time. */
final class ReferenceGrantLists {

  // Named in full, so that a cluster without the kind answers 404 rather than failing discovery.
  static final ResourceDefinitionContext CONTEXT =
      new ResourceDefinitionContext.Builder()
          .withGroup(ReferenceGrants.GROUP)
          .withVersion(ReferenceGrants.VERSION)
          .withKind(ReferenceGrants.KIND)
          .withPlural(ReferenceGrants.PLURAL)
          .withNamespaced(true)
          .build();

  private ReferenceGrantLists() {}

  /**
   * A page of the namespace's grants, kept as their {@code from} and {@code to} only: the rest of
   * each object (up to 256 KiB of annotations) is dropped with the page.
   */
  static ReferenceGrants.Page page(KubernetesClient client, String namespace, String next) {
    GenericKubernetesResourceList list =
        client
            .genericKubernetesResources(CONTEXT)
            .inNamespace(namespace)
            .list(
                new ListOptionsBuilder()
                    .withLimit((long) ReferenceGrants.PAGE)
                    .withContinue(next)
                    .build());
    List<Map<String, Object>> specs =
        list.getItems().stream()
            .map(g -> g.getAdditionalProperties().get("spec"))
            .filter(Map.class::isInstance)
            .map(m -> (Map<?, ?>) m)
            .map(
                m -> {
                  Map<String, Object> kept = new java.util.HashMap<>();
                  kept.put("from", m.get("from"));
                  kept.put("to", m.get("to"));
                  return kept;
                })
            .toList();
    return new ReferenceGrants.Page(
        specs, list.getMetadata() == null ? null : list.getMetadata().getContinue());
  }
}
