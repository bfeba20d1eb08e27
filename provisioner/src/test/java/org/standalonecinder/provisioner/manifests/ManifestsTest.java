package org.standalonecinder.provisioner.manifests;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The provisioner's container in manifests/base as the code expects it. (That every object of every
 * kustomization and of the chart reads into fabric8's model with no unknown field, and passes the
 * OpenAPI schemas, is e2e's ManifestsIT, on the rendered objects.)
 */
class ManifestsTest {

  private static final Path ROOT = Path.of("..", "manifests");
  private static final KubernetesSerialization SERIALIZATION = new KubernetesSerialization();

  static List<HasMetadata> load(Path p) throws IOException {
    List<HasMetadata> out = new ArrayList<>();
    for (String doc : Files.readString(p).split("(?m)^---\\s*$")) {
      if (!doc.strip().isEmpty() && !doc.lines().allMatch(l -> l.isBlank() || l.startsWith("#"))) {
        out.add(SERIALIZATION.unmarshal(doc));
      }
    }
    return out;
  }

  @Test
  void theDeploymentRunsTwoNonRootReplicasWithProbes() throws Exception {
    Deployment d = (Deployment) load(ROOT.resolve("base/deployment.yaml")).get(0);
    // Two only because a Lease elects one leader: each replica has its own name for it.
    assertThat(d.getSpec().getReplicas()).isEqualTo(2);
    assertThat(d.getSpec().getStrategy().getType()).isEqualTo("RollingUpdate");
    var pod = d.getSpec().getTemplate().getSpec();
    assertThat(pod.getSecurityContext().getRunAsNonRoot()).isTrue();
    var c =
        pod.getContainers().stream()
            .filter(x -> x.getName().equals("provisioner"))
            .findFirst()
            .orElseThrow();
    assertThat(c.getArgs()).containsExactly("run");
    assertThat(c.getReadinessProbe().getHttpGet().getPath()).isEqualTo("/readyz");
    assertThat(c.getLivenessProbe().getHttpGet().getPath()).isEqualTo("/healthz");
    assertThat(c.getEnv()).anyMatch(e -> e.getName().equals("POD_NAMESPACE"));
    assertThat(c.getEnv())
        .anyMatch(
            e ->
                e.getName().equals("POD_NAME")
                    && e.getValueFrom().getFieldRef().getFieldPath().equals("metadata.name"));
    assertThat(c.getEnv()).noneMatch(e -> e.getName().equals("LEADER_ELECT"));
    // The webhook beside it asks it for clone checks: it serves them.
    assertThat(c.getEnv()).anyMatch(e -> e.getName().equals("RESOLVER_TOKEN_FILE"));
  }
}
