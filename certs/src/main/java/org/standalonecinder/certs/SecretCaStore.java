package org.standalonecinder.certs;

import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps the webhook's CA in a Secret ({@code kubernetes.io/tls}: {@code tls.crt}, {@code tls.key}),
 * so that every replica and every restart serves certificates of the same CA and the caBundle stays
 * valid. When the CA is due for renewal it is replaced, and the previous CA is kept in {@code
 * ca-previous.crt} until it expires: clients trust both meanwhile.
 */
public final class SecretCaStore {

  static final String PREVIOUS = "ca-previous.crt";
  private static final Logger LOG = LoggerFactory.getLogger(SecretCaStore.class);

  private final KubernetesClient client;
  private final String namespace;
  private final String name;
  private final String commonName;
  private final Duration validity;
  private final RenewalPolicy policy;
  private final Clock clock;

  public SecretCaStore(
      KubernetesClient client,
      String namespace,
      String name,
      String commonName,
      Duration validity,
      RenewalPolicy policy,
      Clock clock) {
    this.client = client;
    this.namespace = namespace;
    this.name = name;
    this.commonName = commonName;
    this.validity = validity;
    this.policy = policy;
    this.clock = clock;
  }

  /** The CA and the bundle to trust: loaded, created if absent, rotated if due. */
  public record Loaded(CertificateAuthority ca, CaBundle trust) {}

  public Loaded loadOrCreate() {
    Secret s = client.secrets().inNamespace(namespace).withName(name).get();
    if (s == null) {
      CertificateAuthority ca = CertificateAuthority.generate(commonName, validity, clock);
      try {
        client.secrets().inNamespace(namespace).resource(secret(ca, null, null)).create();
        LOG.info("created CA {} in Secret {}/{}", commonName, namespace, name);
        return new Loaded(ca, CaBundle.of(List.of(ca.certificate())));
      } catch (KubernetesClientException e) {
        if (e.getCode() != 409) {
          throw e;
        }
        // Another replica created it first: use theirs, so that everyone serves one CA.
        s = client.secrets().inNamespace(namespace).withName(name).get();
      }
    }
    CertificateAuthority ca =
        CertificateAuthority.fromPem(value(s, "tls.crt"), value(s, "tls.key"));
    String previous = value(s, PREVIOUS);
    CaBundle trust =
        previous == null
            ? CaBundle.of(List.of(ca.certificate()))
            : CaBundle.fromPem(previous).with(ca.certificate(), clock.instant());
    if (policy.due(ca.certificate(), clock.instant())) {
      return rotate(s, ca);
    }
    return new Loaded(ca, trust);
  }

  private Loaded rotate(Secret current, CertificateAuthority old) {
    CertificateAuthority next = CertificateAuthority.generate(commonName, validity, clock);
    Secret replacement = secret(next, old, current.getMetadata().getResourceVersion());
    try {
      // The resourceVersion makes this a compare-and-swap: two replicas cannot both rotate.
      client.secrets().inNamespace(namespace).resource(replacement).update();
    } catch (KubernetesClientException e) {
      if (e.getCode() == 409) {
        return loadOrCreate();
      }
      throw e;
    }
    LOG.info("rotated CA {}; the previous one stays trusted until it expires", commonName);
    return new Loaded(
        next,
        CaBundle.of(List.of(next.certificate(), old.certificate()))
            .withoutExpired(clock.instant()));
  }

  private Secret secret(CertificateAuthority ca, CertificateAuthority previous, String version) {
    Map<String, String> data = new LinkedHashMap<>();
    data.put("tls.crt", b64(ca.certificatePem()));
    data.put("tls.key", b64(ca.keyPem()));
    if (previous != null) {
      data.put(PREVIOUS, b64(previous.certificatePem()));
    }
    return new SecretBuilder()
        .withNewMetadata()
        .withName(name)
        .withNamespace(namespace)
        .withResourceVersion(version)
        .addToLabels("app.kubernetes.io/managed-by", "standalone-cinder")
        .endMetadata()
        .withType("kubernetes.io/tls")
        .withData(data)
        .build();
  }

  private static String b64(String s) {
    return Base64.getEncoder().encodeToString(s.getBytes(StandardCharsets.UTF_8));
  }

  private static String value(Secret s, String key) {
    String v = s.getData() == null ? null : s.getData().get(key);
    return v == null ? null : new String(Base64.getDecoder().decode(v), StandardCharsets.UTF_8);
  }
}
