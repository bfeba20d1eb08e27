package org.standalonecinder.provisioner.manifests;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.io.IOException;
import java.lang.reflect.Method;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every manifest parses into fabric8's model without unknown fields: a misspelt field would be
 * silently dropped by a real API server (or rejected with strict validation).
 */
class ManifestsTest {

  private static final Path ROOT = Path.of("..", "manifests");
  private static final KubernetesSerialization SERIALIZATION = new KubernetesSerialization();

  static Stream<Path> files() throws IOException {
    try (Stream<Path> s = Files.walk(ROOT)) {
      return s
          .filter(p -> p.toString().endsWith(".yaml"))
          .filter(p -> !p.getFileName().toString().equals("kustomization.yaml"))
          .sorted()
          .toList()
          .stream();
    }
  }

  static List<HasMetadata> load(Path p) throws IOException {
    List<HasMetadata> out = new ArrayList<>();
    for (String doc : Files.readString(p).split("(?m)^---\\s*$")) {
      if (!doc.strip().isEmpty() && !doc.lines().allMatch(l -> l.isBlank() || l.startsWith("#"))) {
        out.add(SERIALIZATION.unmarshal(doc));
      }
    }
    return out;
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("files")
  void noUnknownFields(Path file) throws Exception {
    List<HasMetadata> docs = load(file);
    assertThat(docs).isNotEmpty();
    for (HasMetadata d : docs) {
      List<String> unknown = new ArrayList<>();
      walk(d, d.getKind() + "/" + d.getMetadata().getName(), unknown);
      assertThat(unknown).as(file + " has unknown fields").isEmpty();
    }
  }

  @Test
  void theDeploymentRunsTwoNonRootReplicasWithProbes() throws Exception {
    Deployment d = (Deployment) load(ROOT.resolve("base/deployment.yaml")).get(0);
    // Two only because a Lease elects one leader: each replica has its own name for it.
    assertThat(d.getSpec().getReplicas()).isEqualTo(2);
    assertThat(d.getSpec().getStrategy().getType()).isEqualTo("RollingUpdate");
    var pod = d.getSpec().getTemplate().getSpec();
    assertThat(pod.getSecurityContext().getRunAsNonRoot()).isTrue();
    var c = pod.getContainers().get(0);
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
  }

  /** Collects every non-empty additionalProperties map under {@code o}. */
  private static void walk(Object o, String path, List<String> unknown) throws Exception {
    if (o == null || o instanceof String || o instanceof Number || o instanceof Boolean) {
      return;
    }
    if (o instanceof Collection<?> c) {
      int i = 0;
      for (Object x : c) {
        walk(x, path + "[" + i++ + "]", unknown);
      }
      return;
    }
    if (o instanceof Map<?, ?> m) {
      for (Map.Entry<?, ?> e : m.entrySet()) {
        walk(e.getValue(), path + "." + e.getKey(), unknown);
      }
      return;
    }
    if (!o.getClass().getName().startsWith("io.fabric8.kubernetes.api.model")) {
      return;
    }
    for (Method m : o.getClass().getMethods()) {
      if (m.getParameterCount() != 0
          || !m.getName().startsWith("get")
          || m.getName().equals("getClass")) {
        continue;
      }
      Object v = m.invoke(o);
      if (m.getName().equals("getAdditionalProperties")) {
        if (v instanceof Map<?, ?> extra && !extra.isEmpty()) {
          unknown.add(path + ": " + extra.keySet());
        }
      } else {
        walk(v, path + "." + m.getName().substring(3), unknown);
      }
    }
  }
}
