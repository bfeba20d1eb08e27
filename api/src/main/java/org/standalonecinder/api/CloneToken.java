package org.standalonecinder.api;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The hand-off from the webhook to the provisioner for a cross-namespace clone: the mutating
 * webhook stamps the accepted claim with a token it signs (HMAC-SHA256 with a key both share), and
 * the provisioner clones across namespaces only with a valid one. A cluster where the webhook is
 * missing or bypassed thus cannot clone another namespace's data.
 *
 * <p>The token names the source and the target by namespace and name, not by the target's uid:
 * mutating admission runs before the API server assigns the uid. Instead the provisioner checks
 * that the claim was created while the token was valid ({@code creationTimestamp} is the API
 * server's), and the webhook keeps the annotation immutable, so a token cannot be moved to a later
 * claim of the same name after it expired.
 *
 * <p>Format: {@code base64url(payload) "." base64url(hmac)}, payload {@code
 * v1|srcNs|srcName|dstNs|dstName|issuedEpochSeconds|expiresEpochSeconds} (names cannot contain a
 * {@code |}).
 */
public final class CloneToken {

  /** The annotation the token travels in, on the target claim. */
  public static final String ANNOTATION = "standalone-cinder.io/clone-token";

  /**
   * The Secret (in the namespace of the webhook and the provisioner) that holds the key, under
   * {@link #KEY_FIELD}. The webhook creates it with a random key on its first start.
   */
  public static final String KEY_SECRET = "standalone-cinder-clone-token-key";

  public static final String KEY_FIELD = "key";

  /** How long after issue a claim may be created with the token. */
  public static final Duration VALIDITY = Duration.ofMinutes(5);

  /** Clock skew tolerated between the webhook and the API server. */
  public static final Duration SKEW = Duration.ofMinutes(1);

  private static final String ALGORITHM = "HmacSHA256";

  /**
   * What a token says.
   *
   * @param source the claim to clone
   * @param target the claim that is the clone
   * @param issued when the webhook signed it
   * @param expires the last moment a claim may be created with it
   */
  public record Claims(ClaimRef source, ClaimRef target, Instant issued, Instant expires) {}

  /** A token that does not verify; the message says why (never the key). */
  public static final class InvalidTokenException extends Exception {
    public InvalidTokenException(String message) {
      super(message);
    }
  }

  private CloneToken() {}

  /** Signs the claims with the key. */
  public static String sign(Claims c, byte[] key) {
    String payload =
        String.join(
            "|",
            "v1",
            c.source().namespace(),
            c.source().name(),
            c.target().namespace(),
            c.target().name(),
            Long.toString(c.issued().getEpochSecond()),
            Long.toString(c.expires().getEpochSecond()));
    byte[] bytes = payload.getBytes(StandardCharsets.UTF_8);
    Base64.Encoder b64 = Base64.getUrlEncoder().withoutPadding();
    return b64.encodeToString(bytes) + "." + b64.encodeToString(mac(key, bytes));
  }

  /**
   * Verifies the signature and that the token is for this source and target, and that the target
   * was created while the token was valid.
   *
   * @param created the target claim's creationTimestamp
   * @throws InvalidTokenException saying what does not match
   */
  public static Claims verify(
      String token, byte[] key, ClaimRef source, ClaimRef target, Instant created)
      throws InvalidTokenException {
    if (token == null || token.isBlank()) {
      throw new InvalidTokenException("the claim carries no " + ANNOTATION);
    }
    String[] parts = token.split("\\.", -1);
    byte[] payload;
    byte[] signature;
    try {
      if (parts.length != 2) {
        throw new IllegalArgumentException();
      }
      payload = Base64.getUrlDecoder().decode(parts[0]);
      signature = Base64.getUrlDecoder().decode(parts[1]);
    } catch (IllegalArgumentException e) {
      throw new InvalidTokenException(ANNOTATION + " is not a token");
    }
    if (!MessageDigest.isEqual(mac(key, payload), signature)) {
      throw new InvalidTokenException(ANNOTATION + " was not signed by the webhook");
    }
    String[] f = new String(payload, StandardCharsets.UTF_8).split("\\|", -1);
    if (f.length != 7 || !f[0].equals("v1")) {
      throw new InvalidTokenException(ANNOTATION + " has an unknown format");
    }
    Claims c;
    try {
      c =
          new Claims(
              new ClaimRef(f[1], f[2]),
              new ClaimRef(f[3], f[4]),
              Instant.ofEpochSecond(Long.parseLong(f[5])),
              Instant.ofEpochSecond(Long.parseLong(f[6])));
    } catch (NumberFormatException e) {
      throw new InvalidTokenException(ANNOTATION + " has an unknown format");
    }
    if (!c.source().equals(source)) {
      throw new InvalidTokenException(
          ANNOTATION + " is for source " + c.source() + ", not " + source);
    }
    if (!c.target().equals(target)) {
      throw new InvalidTokenException(
          ANNOTATION + " is for claim " + c.target() + ", not " + target);
    }
    if (created == null
        || created.isBefore(c.issued().minus(SKEW))
        || created.isAfter(c.expires().plus(SKEW))) {
      throw new InvalidTokenException(
          ANNOTATION
              + " expired: it was valid until "
              + c.expires()
              + ", the claim was created "
              + created);
    }
    return c;
  }

  private static byte[] mac(byte[] key, byte[] payload) {
    try {
      Mac mac = Mac.getInstance(ALGORITHM);
      mac.init(new SecretKeySpec(key, ALGORITHM));
      return mac.doFinal(payload);
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("HMAC-SHA256 is part of every JDK", e);
    }
  }
}
