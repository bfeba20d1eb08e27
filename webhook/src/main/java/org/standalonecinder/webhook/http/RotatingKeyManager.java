package org.standalonecinder.webhook.http;

import java.net.Socket;
import java.security.Principal;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.X509ExtendedKeyManager;
import org.standalonecinder.certs.IssuedCertificate;

/**
 * A key manager whose certificate can be replaced at any time; each TLS handshake asks it for the
 * current one. The server's SSL context is built once and never swapped.
 *
 * <p>Why not Vert.x's {@code updateSSLOptions}: in Vert.x 4.5 a connection accepted while the new
 * context is being built dereferences a not yet completed future and is dropped (NPE in
 * TCPServerBase), so requests failed during every rotation under load (seen in WebhookServerTest).
 * Asking the key manager per handshake has no such window.
 *
 * <p>A handshake asks three times: for an alias, then for that alias's chain and its key. Each
 * alias names one certificate (a generation), and the one before the current is still answered, so
 * a rotation between those calls cannot pair the old chain with the new key: the server then failed
 * the handshake with {@code internal_error} (seen in CI under load).
 */
final class RotatingKeyManager extends X509ExtendedKeyManager {

  private record Generation(String alias, IssuedCertificate certificate) {}

  private volatile Generation current;
  private volatile Generation previous;
  private long generations;

  RotatingKeyManager(IssuedCertificate initial) {
    this.current = new Generation("g0", initial);
    this.previous = current;
  }

  synchronized void update(IssuedCertificate next) {
    previous = current;
    current = new Generation("g" + ++generations, next);
  }

  private IssuedCertificate named(String alias) {
    Generation now = current;
    if (now.alias().equals(alias)) {
      return now.certificate();
    }
    Generation before = previous;
    return before.alias().equals(alias) ? before.certificate() : null;
  }

  private String aliasFor(String keyType) {
    Generation now = current;
    String alg = now.certificate().key().getAlgorithm();
    // JDK key types: "EC", "RSA", "RSASSA-PSS", or TLS 1.2 pairs such as "EC_EC".
    return keyType != null && (keyType.equals(alg) || keyType.startsWith(alg + "_"))
        ? now.alias()
        : null;
  }

  @Override
  public String chooseEngineServerAlias(String keyType, Principal[] issuers, SSLEngine engine) {
    return aliasFor(keyType);
  }

  @Override
  public String chooseServerAlias(String keyType, Principal[] issuers, Socket socket) {
    return aliasFor(keyType);
  }

  @Override
  public String[] getServerAliases(String keyType, Principal[] issuers) {
    String a = aliasFor(keyType);
    return a == null ? null : new String[] {a};
  }

  @Override
  public X509Certificate[] getCertificateChain(String alias) {
    IssuedCertificate c = alias == null ? null : named(alias);
    return c == null ? null : c.chain().toArray(X509Certificate[]::new);
  }

  @Override
  public PrivateKey getPrivateKey(String alias) {
    IssuedCertificate c = alias == null ? null : named(alias);
    return c == null ? null : c.key();
  }

  @Override
  public String[] getClientAliases(String keyType, Principal[] issuers) {
    return null;
  }

  @Override
  public String chooseClientAlias(String[] keyType, Principal[] issuers, Socket socket) {
    return null;
  }
}
