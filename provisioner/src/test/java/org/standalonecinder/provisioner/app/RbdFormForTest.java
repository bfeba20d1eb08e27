package org.standalonecinder.provisioner.app;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.standalonecinder.provisioner.controller.Cluster;
import org.standalonecinder.provisioner.mapping.RbdForm;

/**
 * {@code --rbd-form auto}: the PV form from the API server's version (the in-tree rbd plugin is
 * gone from 1.31), and no form at all when the version cannot be read.
 */
class RbdFormForTest {

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      nullValues = "none",
      value = {
        "1.20 (Debian's, the project's control plane) | 200 | {\"major\":\"1\",\"minor\":\"20\"} | RBD",
        "1.30, the last with the in-tree plugin | 200 | {\"major\":\"1\",\"minor\":\"30\"} | RBD",
        "1.31, the first without | 200 | {\"major\":\"1\",\"minor\":\"31\"} | CSI",
        "a managed cluster's 1.33+ | 200 | {\"major\":\"1\",\"minor\":\"33+\"} | CSI",
        "a version that cannot be read (forbidden) | 403 | {} | none",
        "a minor that is no number | 200 | {\"major\":\"1\",\"minor\":\"x\"} | none"
      })
  void theFormFollowsTheVersion(String name, int status, String body, RbdForm expected) {
    KubernetesMockServer server = new KubernetesMockServer(false);
    server.init();
    // The mock answers /version with its own release unless told otherwise.
    server.clearExpectations();
    server.expect().get().withPath("/version").andReturn(status, body).always();
    try (KubernetesClient client = server.createClient()) {
      assertThat(ProvisionerApp.rbdFormFor(client)).isEqualTo(expected);
    } finally {
      Cluster.destroy(server);
    }
  }
}
