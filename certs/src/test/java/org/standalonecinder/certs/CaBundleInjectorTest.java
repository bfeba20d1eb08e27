package org.standalonecinder.certs;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.admissionregistration.v1.MutatingWebhookConfiguration;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.MutatingWebhookConfigurationBuilder;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingWebhookConfigurationBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import org.junit.jupiter.api.Test;

/** caBundle goes into our webhook entries only, and only when it changed. */
@EnableKubernetesMockClient(crud = true)
class CaBundleInjectorTest {

  static KubernetesClient client;
  static io.fabric8.kubernetes.client.server.mock.KubernetesMockServer server;

  @Test
  void onlyOurEntriesGetTheBundle() throws Exception {
    client
        .admissionRegistration()
        .v1()
        .mutatingWebhookConfigurations()
        .resource(
            new MutatingWebhookConfigurationBuilder()
                .withNewMetadata()
                .withName("standalone-cinder")
                .endMetadata()
                .addNewWebhook()
                .withName("clone.standalone-cinder.io")
                .withNewClientConfig()
                .withNewService()
                .withName("webhook")
                .withNamespace("standalone-cinder")
                .endService()
                .endClientConfig()
                .endWebhook()
                .addNewWebhook()
                .withName("other.example.com")
                .withNewClientConfig()
                .withCaBundle("Zm9yZWlnbg==")
                .withUrl("https://other.example.com")
                .endClientConfig()
                .endWebhook()
                .build())
        .create();
    client
        .admissionRegistration()
        .v1()
        .validatingWebhookConfigurations()
        .resource(
            new ValidatingWebhookConfigurationBuilder()
                .withNewMetadata()
                .withName("standalone-cinder")
                .endMetadata()
                .addNewWebhook()
                .withName("validate.standalone-cinder.io")
                .withNewClientConfig()
                .endClientConfig()
                .endWebhook()
                .build())
        .create();
    CertificateAuthority ca =
        CertificateAuthority.generate("ca", Duration.ofDays(1), Clock.systemUTC());
    CaBundle bundle = CaBundle.of(List.of(ca.certificate()));
    CaBundleInjector injector =
        new CaBundleInjector(client, "standalone-cinder", n -> n.endsWith(".standalone-cinder.io"));

    for (int i = server.getRequestCount(); i > 0; i--) {
      server.takeRequest(); // what the setup sent
    }
    int before = server.getRequestCount();
    assertThat(injector.inject(bundle)).isEqualTo(2);
    // The webhook's RBAC grants get and update of the two objects by name: no patch.
    List<String> methods = new java.util.ArrayList<>();
    for (int i = before; i < server.getRequestCount(); i++) {
      methods.add(server.takeRequest().getMethod());
    }
    assertThat(methods).containsOnly("GET", "PUT").contains("PUT");
    MutatingWebhookConfiguration m =
        client
            .admissionRegistration()
            .v1()
            .mutatingWebhookConfigurations()
            .withName("standalone-cinder")
            .get();
    String ours = m.getWebhooks().get(0).getClientConfig().getCaBundle();
    assertThat(new String(Base64.getDecoder().decode(ours), StandardCharsets.UTF_8))
        .isEqualTo(bundle.pem());
    assertThat(m.getWebhooks().get(1).getClientConfig().getCaBundle()).isEqualTo("Zm9yZWlnbg==");
    assertThat(
            client
                .admissionRegistration()
                .v1()
                .validatingWebhookConfigurations()
                .withName("standalone-cinder")
                .get()
                .getWebhooks()
                .get(0)
                .getClientConfig()
                .getCaBundle())
        .isEqualTo(ours);

    assertThat(injector.inject(bundle)).as("nothing to write the second time").isZero();
  }

  @Test
  void missingConfigurationsAreNotAnError() {
    CertificateAuthority ca =
        CertificateAuthority.generate("ca", Duration.ofDays(1), Clock.systemUTC());
    assertThat(
            new CaBundleInjector(client, "absent", n -> true)
                .inject(CaBundle.of(List.of(ca.certificate()))))
        .isZero();
  }
}
