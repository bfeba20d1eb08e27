package org.standalonecinder.webhook.policy;

import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.security.SecureRandom;
import java.util.Base64;
import org.standalonecinder.api.CloneToken;

/**
 * The key that signs clone tokens, in a Secret of the webhook's namespace that the provisioner
 * reads too. The first replica creates it with 32 random bytes; the others, and every restart, use
 * that one (a replica that loses the creation race reads the winner's).
 */
public final class CloneTokenKeyStore {

  private CloneTokenKeyStore() {}

  public static byte[] loadOrCreate(KubernetesClient client, String namespace) {
    var secrets = client.secrets().inNamespace(namespace);
    byte[] key = read(secrets.withName(CloneToken.KEY_SECRET).get());
    if (key != null) {
      return key;
    }
    byte[] fresh = new byte[32];
    new SecureRandom().nextBytes(fresh);
    Secret s =
        new SecretBuilder()
            .withNewMetadata()
            .withName(CloneToken.KEY_SECRET)
            .withNamespace(namespace)
            .addToLabels("app.kubernetes.io/managed-by", "standalone-cinder")
            .endMetadata()
            .withType("Opaque")
            .addToData(CloneToken.KEY_FIELD, Base64.getEncoder().encodeToString(fresh))
            .build();
    try {
      secrets.resource(s).create();
      return fresh;
    } catch (KubernetesClientException e) {
      if (e.getCode() != 409) {
        throw e;
      }
      byte[] theirs = read(secrets.withName(CloneToken.KEY_SECRET).get());
      if (theirs == null) {
        throw new IllegalStateException(
            "Secret " + CloneToken.KEY_SECRET + " exists without a " + CloneToken.KEY_FIELD);
      }
      return theirs;
    }
  }

  private static byte[] read(Secret s) {
    String v = s == null || s.getData() == null ? null : s.getData().get(CloneToken.KEY_FIELD);
    return v == null ? null : Base64.getDecoder().decode(v);
  }
}
