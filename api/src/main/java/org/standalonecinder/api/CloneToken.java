package org.standalonecinder.api;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The hand-off from the webhook to the provisioner for a cross-namespace clone: the mutating
 * webhook stamps the accepted claim with a token it signs (HMAC-SHA256 with a key both share), and
 * the provisioner clones across namespaces only with a valid one. A cluster where the webhook is
 * missing or bypassed thus cannot clone another namespace's data.
 *
 * <p>The token says what the webhook decided and why, so that the provisioner can ask again when it
 * clones (for a WaitForFirstConsumer claim that may be days later): the source claim by namespace,
 * name and uid (a source deleted and re-created under its name is another claim), the target by
 * namespace and name, on what the clone was allowed ({@link Basis}) and who asked. The target's uid
 * is not in it: mutating admission runs before the API server assigns one. Instead the provisioner
 * checks that the claim was created while the token was valid ({@code creationTimestamp} is the API
 * server's), and the webhook keeps the annotation immutable.
 *
 * <p>Who asked is only as true as the review that said so: anyone who reaches the webhook's port
 * can send a review naming any user. So the token also says whom the webhook authenticated as the
 * review's sender ({@link Claims#caller()}: the API server's client certificate, or nobody), and
 * the provisioner honours a clone on the requester's rights ({@link Basis#REQUESTER}) only from a
 * review whose sender was authenticated. The other bases do not rest on the review: the source's
 * grant and the admin's policy are read from the cluster.
 *
 * <p>Format: {@code base64url(payload) "." base64url(hmac)}; the payload is {@code v3|keyId|srcNs|
 * srcName|srcUid|dstNs|dstName|issued|expires|basis|user|uid|groups|extra|caller}, names as they
 * are (they cannot contain a {@code |}), the requester's and caller's strings base64url-encoded
 * (they can). A {@code v2} token (without the caller) still verifies, as a token whose sender was
 * not authenticated.
 */
public final class CloneToken {

  /**
   * The Secret (in the namespace of the webhook and the provisioner) that holds the keys: {@link
   * #KEY_FIELD} signs, {@link #PREVIOUS_KEY_FIELD} (when set) still verifies. The webhook creates
   * it with a random key on its first start.
   */
  public static final String KEY_SECRET = "standalone-cinder-clone-token-key";

  /** The key new tokens are signed with. */
  public static final String KEY_FIELD = "key";

  /** A key that signed earlier tokens: they still verify, so a rotation breaks no pending clone. */
  public static final String PREVIOUS_KEY_FIELD = "previous-key";

  /** How long after issue a claim may be created with the token. */
  public static final Duration VALIDITY = Duration.ofMinutes(5);

  /** Clock skew tolerated between the webhook and the API server. */
  public static final Duration SKEW = Duration.ofMinutes(1);

  private static final String ALGORITHM = "HmacSHA256";
  private static final String VERSION = "v3";
  private static final int FIELDS = 15;
  private static final String V2 = "v2";
  private static final int V2_FIELDS = 14;

  /** On what the webhook allowed the clone; the provisioner asks the same again when it clones. */
  public enum Basis {
    /** The source's {@code standalone-cinder.io/clone-grant} named the target's namespace. */
    GRANT,
    /** The requester may create pods in the source's namespace (a SubjectAccessReview). */
    REQUESTER,
    /** The admin's policy allows every clone across namespaces ({@code crossNamespace: allow}). */
    POLICY
  }

  /**
   * Who asked for the clone, as the API server authenticated them.
   *
   * @param user the user name
   * @param uid the user's uid, or empty
   * @param groups the user's groups
   * @param extra the authenticator's extra attributes (an authorizer may read them)
   */
  public record Principal(
      String user, String uid, List<String> groups, Map<String, List<String>> extra) {
    public Principal {
      user = user == null ? "" : user;
      uid = uid == null ? "" : uid;
      // What an authenticator said, kept as said, but without nulls (a broken review may hold
      // them; a SubjectAccessReview cannot carry them).
      groups = groups == null ? List.of() : groups.stream().filter(Objects::nonNull).toList();
      TreeMap<String, List<String>> sorted = new TreeMap<>();
      if (extra != null) {
        extra.forEach(
            (k, v) -> {
              if (k != null) {
                sorted.put(k, v == null ? List.of() : v.stream().filter(Objects::nonNull).toList());
              }
            });
      }
      extra = java.util.Collections.unmodifiableMap(sorted);
    }
  }

  /**
   * What a token says.
   *
   * @param source the claim to clone
   * @param sourceUid that claim's uid when the clone was allowed
   * @param target the claim that is the clone
   * @param issued when the webhook signed it
   * @param expires the last moment a claim may be created with it
   * @param basis on what the clone was allowed
   * @param requester who asked
   * @param caller whom the webhook authenticated as the sender of the review (the name in the API
   *     server's client certificate), or empty when it authenticated nobody: then {@code requester}
   *     is only what the review said
   */
  public record Claims(
      ClaimRef source,
      String sourceUid,
      ClaimRef target,
      Instant issued,
      Instant expires,
      Basis basis,
      Principal requester,
      String caller) {

    public Claims {
      caller = caller == null ? "" : caller;
    }

    /** Claims of a review whose sender was not authenticated. */
    public Claims(
        ClaimRef source,
        String sourceUid,
        ClaimRef target,
        Instant issued,
        Instant expires,
        Basis basis,
        Principal requester) {
      this(source, sourceUid, target, issued, expires, basis, requester, "");
    }

    /** Whether the webhook authenticated the review's sender as the API server. */
    public boolean callerAuthenticated() {
      return !caller.isEmpty();
    }
  }

  /**
   * The keys a verifier accepts, by id, and the one a signer uses.
   *
   * @param signing the id of the key new tokens are signed with
   * @param keys every accepted key by its {@link #keyId id}
   */
  public record Keys(String signing, Map<String, byte[]> keys) {

    /** The current key, and a previous one (or null) whose tokens still verify. */
    public static Keys of(byte[] current, byte[] previous) {
      Map<String, byte[]> keys = new LinkedHashMap<>();
      keys.put(keyId(current), current.clone());
      if (previous != null && previous.length > 0) {
        keys.putIfAbsent(keyId(previous), previous.clone());
      }
      return new Keys(keyId(current), java.util.Collections.unmodifiableMap(keys));
    }

    byte[] signingKey() {
      return keys.get(signing);
    }
  }

  /** A token that does not verify; the message says why (never the key). */
  public static final class InvalidTokenException extends Exception {
    public InvalidTokenException(String message) {
      super(message);
    }
  }

  private CloneToken() {}

  /**
   * A key's public id: the first 8 bytes of its SHA-256, in hex. Says which key signed a token
   * without saying anything of the key.
   */
  public static String keyId(byte[] key) {
    try {
      byte[] digest = MessageDigest.getInstance("SHA-256").digest(key);
      return HexFormat.of().formatHex(Arrays.copyOf(digest, 8));
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("SHA-256 is part of every JDK", e);
    }
  }

  /** Signs the claims with the signing key. */
  public static String sign(Claims c, Keys keys) {
    Principal p = c.requester();
    String payload =
        String.join(
            "|",
            VERSION,
            keys.signing(),
            c.source().namespace(),
            c.source().name(),
            c.sourceUid() == null ? "" : c.sourceUid(),
            c.target().namespace(),
            c.target().name(),
            Long.toString(c.issued().getEpochSecond()),
            Long.toString(c.expires().getEpochSecond()),
            c.basis().name(),
            b64(p.user()),
            b64(p.uid()),
            list(p.groups()),
            extra(p.extra()),
            b64(c.caller()));
    byte[] bytes = payload.getBytes(StandardCharsets.UTF_8);
    Base64.Encoder b64 = Base64.getUrlEncoder().withoutPadding();
    return b64.encodeToString(bytes) + "." + b64.encodeToString(mac(keys.signingKey(), bytes));
  }

  /**
   * Verifies the signature (with the key the token names) and that the token is for this source and
   * target, and that the target was created while the token was valid. Whether the source is still
   * the claim of {@link Claims#sourceUid()}, and whether its {@link Claims#basis()} still holds, is
   * for the caller to check against the cluster.
   *
   * @param created the target claim's creationTimestamp
   * @throws InvalidTokenException saying what does not match
   */
  public static Claims verify(
      String token, Keys keys, ClaimRef source, ClaimRef target, Instant created)
      throws InvalidTokenException {
    if (token == null || token.isBlank()) {
      throw new InvalidTokenException("the claim carries no " + ClaimAnnotations.CLONE_TOKEN);
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
      throw new InvalidTokenException(ClaimAnnotations.CLONE_TOKEN + " is not a token");
    }
    String[] f = new String(payload, StandardCharsets.UTF_8).split("\\|", -1);
    boolean v2 = f.length == V2_FIELDS && f[0].equals(V2);
    if (!v2 && (f.length != FIELDS || !f[0].equals(VERSION))) {
      // A v1 token (of a webhook before key ids) lands here too: it bound no source uid.
      throw new InvalidTokenException(
          ClaimAnnotations.CLONE_TOKEN
              + " has an unknown format (not a "
              + VERSION
              + " token of this webhook)");
    }
    byte[] key = keys.keys().get(f[1]);
    if (key == null || !MessageDigest.isEqual(mac(key, payload), signature)) {
      throw new InvalidTokenException(
          ClaimAnnotations.CLONE_TOKEN + " was not signed by the webhook");
    }
    Claims c;
    try {
      c =
          new Claims(
              new ClaimRef(f[2], f[3]),
              f[4],
              new ClaimRef(f[5], f[6]),
              Instant.ofEpochSecond(Long.parseLong(f[7])),
              Instant.ofEpochSecond(Long.parseLong(f[8])),
              Basis.valueOf(f[9]),
              new Principal(unb64(f[10]), unb64(f[11]), unlist(f[12]), unextra(f[13])),
              v2 ? "" : unb64(f[14]));
    } catch (IllegalArgumentException e) {
      // Signed by the key, yet unreadable: a webhook of another version wrote it.
      throw new InvalidTokenException(ClaimAnnotations.CLONE_TOKEN + " has an unknown format");
    }
    if (!c.source().equals(source)) {
      throw new InvalidTokenException(
          ClaimAnnotations.CLONE_TOKEN + " is for source " + c.source() + ", not " + source);
    }
    if (!c.target().equals(target)) {
      throw new InvalidTokenException(
          ClaimAnnotations.CLONE_TOKEN + " is for claim " + c.target() + ", not " + target);
    }
    if (created == null
        || created.isBefore(c.issued().minus(SKEW))
        || created.isAfter(c.expires().plus(SKEW))) {
      throw new InvalidTokenException(
          ClaimAnnotations.CLONE_TOKEN
              + " expired: it was valid until "
              + c.expires()
              + ", the claim was created "
              + created);
    }
    return c;
  }

  private static String b64(String s) {
    return Base64.getUrlEncoder()
        .withoutPadding()
        .encodeToString(s.getBytes(StandardCharsets.UTF_8));
  }

  private static String unb64(String s) {
    return new String(Base64.getUrlDecoder().decode(s), StandardCharsets.UTF_8);
  }

  // base64url has no ',', ';' or '=': they separate list items and map entries.
  private static String list(List<String> items) {
    return String.join(",", items.stream().map(CloneToken::b64).toList());
  }

  private static List<String> unlist(String s) {
    if (s.isEmpty()) {
      return List.of();
    }
    List<String> out = new ArrayList<>();
    for (String item : s.split(",", -1)) {
      out.add(unb64(item));
    }
    return out;
  }

  private static String extra(Map<String, List<String>> extra) {
    List<String> entries = new ArrayList<>();
    extra.forEach((k, v) -> entries.add(b64(k) + "=" + list(v)));
    return String.join(";", entries);
  }

  private static Map<String, List<String>> unextra(String s) {
    Map<String, List<String>> out = new TreeMap<>();
    if (s.isEmpty()) {
      return out;
    }
    for (String entry : s.split(";", -1)) {
      int eq = entry.indexOf('=');
      if (eq < 0) {
        throw new IllegalArgumentException("no = in an extra entry");
      }
      out.put(unb64(entry.substring(0, eq)), unlist(entry.substring(eq + 1)));
    }
    return out;
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
