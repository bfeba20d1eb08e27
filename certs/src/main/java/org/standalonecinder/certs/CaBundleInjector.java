package org.standalonecinder.certs;

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
    var mutating = client.admissionRegistration().v1().mutatingWebhookConfigurations();
    var validating = client.admissionRegistration().v1().validatingWebhookConfigurations();
    return writeBack(
            () -> mutating.withName(configurationName).get(),
            m -> count(m.getWebhooks(), w -> w.getName(), w -> w.getClientConfig(), encoded),
            m -> m.getWebhooks().forEach(w -> set(w.getName(), w::getClientConfig, encoded)),
            m -> mutating.resource(m).update())
        + writeBack(
            () -> validating.withName(configurationName).get(),
            v -> count(v.getWebhooks(), w -> w.getName(), w -> w.getClientConfig(), encoded),
            v -> v.getWebhooks().forEach(w -> set(w.getName(), w::getClientConfig, encoded)),
            v -> validating.resource(v).update());
  }

  /**
   * Read, change, write back with the resourceVersion read: an update (which the webhook's RBAC
   * grants, by name), never a patch, and never over someone else's concurrent change, which is read
   * again instead (a few times; a later refresh tries again).
   */
  private static <C> int writeBack(
      Supplier<C> read,
      java.util.function.ToIntFunction<C> stale,
      java.util.function.Consumer<C> change,
      java.util.function.Consumer<C> update) {
    for (int attempt = 1; ; attempt++) {
      C c = read.get();
      int n = c == null ? 0 : stale.applyAsInt(c);
      if (n == 0) {
        return 0;
      }
      change.accept(c);
      try {
        update.accept(c);
        return n;
      } catch (io.fabric8.kubernetes.client.KubernetesClientException e) {
        if (e.getCode() != 409 || attempt >= 3) {
          throw e;
        }
      }
    }
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
