package org.standalonecinder.certs;

import io.fabric8.kubernetes.api.model.admissionregistration.v1.MutatingWebhookConfiguration;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingWebhookConfiguration;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.WebhookClientConfig;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * Writes the CA bundle into our entries of our Mutating and ValidatingWebhookConfigurations, so the
 * API server trusts the webhook's certificates. Entries of other webhooks in the same objects are
 * never touched, and nothing is written when the bundle is already in place.
 */
public final class CaBundleInjector {

  private final KubernetesClient client;
  private final String configurationName;
  private final Predicate<String> ours;

  /**
   * @param configurationName the name of both configuration objects
   * @param ours which webhook entries (by name) are ours, e.g. names ending in our domain
   */
  public CaBundleInjector(
      KubernetesClient client, String configurationName, Predicate<String> ours) {
    this.client = client;
    this.configurationName = configurationName;
    this.ours = ours;
  }

  /**
   * @return how many webhook entries got the new bundle
   */
  public int inject(CaBundle bundle) {
    String encoded =
        Base64.getEncoder().encodeToString(bundle.pem().getBytes(StandardCharsets.UTF_8));
    int changed = 0;
    var mutating =
        client
            .admissionRegistration()
            .v1()
            .mutatingWebhookConfigurations()
            .withName(configurationName);
    MutatingWebhookConfiguration m = mutating.get();
    if (m != null) {
      int n = count(m.getWebhooks(), w -> w.getName(), w -> w.getClientConfig(), encoded);
      if (n > 0) {
        mutating.edit(
            c -> {
              c.getWebhooks().forEach(w -> set(w.getName(), w::getClientConfig, encoded));
              return c;
            });
        changed += n;
      }
    }
    var validating =
        client
            .admissionRegistration()
            .v1()
            .validatingWebhookConfigurations()
            .withName(configurationName);
    ValidatingWebhookConfiguration v = validating.get();
    if (v != null) {
      int n = count(v.getWebhooks(), w -> w.getName(), w -> w.getClientConfig(), encoded);
      if (n > 0) {
        validating.edit(
            c -> {
              c.getWebhooks().forEach(w -> set(w.getName(), w::getClientConfig, encoded));
              return c;
            });
        changed += n;
      }
    }
    return changed;
  }

  private <W> int count(
      List<W> webhooks,
      java.util.function.Function<W, String> name,
      java.util.function.Function<W, WebhookClientConfig> config,
      String encoded) {
    if (webhooks == null) {
      return 0;
    }
    int n = 0;
    for (W w : webhooks) {
      WebhookClientConfig cc = config.apply(w);
      if (ours.test(name.apply(w)) && cc != null && !encoded.equals(cc.getCaBundle())) {
        n++;
      }
    }
    return n;
  }

  private void set(String name, Supplier<WebhookClientConfig> config, String encoded) {
    WebhookClientConfig cc = config.get();
    if (ours.test(name) && cc != null) {
      cc.setCaBundle(encoded);
    }
  }
}
