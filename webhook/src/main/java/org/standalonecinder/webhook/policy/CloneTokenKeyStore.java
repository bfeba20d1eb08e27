package org.standalonecinder.webhook.policy;

import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.security.SecureRandom;
import java.util.Base64;
import org.standalonecinder.api.CloneToken;

/**
 * The keys of clone tokens, in a Secret of the webhook's namespace that the provisioner reads too:
 * {@code key} signs, {@code previous-key} (set by an admin who rotates, docs/webhook.md) still
 * verifies. The first replica creates the Secret with 32 random bytes; the others, and every
 * restart, use that one (a replica that loses the creation race reads the winner's).
 */
public final class CloneTokenKeyStore {

  private CloneTokenKeyStore() {}

  public static CloneToken.Keys loadOrCreate(KubernetesClient client, String namespace) {
    var secrets = client.secrets().inNamespace(namespace);
    CloneToken.Keys keys = read(secrets.withName(CloneToken.KEY_SECRET).get());
    if (keys != null) {
      return keys;
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
      return CloneToken.Keys.of(fresh, null);
    } catch (KubernetesClientException e) {
      if (e.getCode() != 409) {
        throw e;
      }
      CloneToken.Keys theirs = read(secrets.withName(CloneToken.KEY_SECRET).get());
      if (theirs == null) {
        throw new IllegalStateException(
            "Secret " + CloneToken.KEY_SECRET + " exists without a " + CloneToken.KEY_FIELD);
      }
      return theirs;
    }
  }

  private static CloneToken.Keys read(Secret s) {
    var data = s == null || s.getData() == null ? java.util.Map.<String, String>of() : s.getData();
    String current = data.get(CloneToken.KEY_FIELD);
    String previous = data.get(CloneToken.PREVIOUS_KEY_FIELD);
    return current == null
        ? null
        : CloneToken.Keys.of(
            Base64.getDecoder().decode(current),
            previous == null ? null : Base64.getDecoder().decode(previous));
  }
}
