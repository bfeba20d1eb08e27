package org.standalonecinder.provisioner.clone;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.ListOptions;
import io.fabric8.kubernetes.api.model.ListOptionsBuilder;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import java.util.List;
import java.util.Map;
import org.standalonecinder.api.ReferenceGrants;

/** How ReferenceGrants are listed through fabric8: no discovery, one bounded page. */
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

  static final ListOptions PAGE =
      new ListOptionsBuilder().withLimit((long) ReferenceGrants.MAX_READ).build();

  private ReferenceGrantLists() {}

  @SuppressWarnings("unchecked")
  static List<Map<String, Object>> specs(List<GenericKubernetesResource> grants) {
    return grants.stream()
        .map(g -> g.getAdditionalProperties().get("spec"))
        .filter(Map.class::isInstance)
        .map(m -> (Map<String, Object>) m)
        .toList();
  }
}
