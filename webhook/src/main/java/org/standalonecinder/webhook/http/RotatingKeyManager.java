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
 */
final class RotatingKeyManager extends X509ExtendedKeyManager {

  private static final String ALIAS = "current";

  private volatile IssuedCertificate current;

  RotatingKeyManager(IssuedCertificate initial) {
    this.current = initial;
  }

  void update(IssuedCertificate next) {
    current = next;
  }

  private String aliasFor(String keyType) {
    String alg = current.key().getAlgorithm();
    // JDK key types: "EC", "RSA", "RSASSA-PSS", or TLS 1.2 pairs such as "EC_EC".
    return keyType != null && (keyType.equals(alg) || keyType.startsWith(alg + "_")) ? ALIAS : null;
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
    return ALIAS.equals(alias) ? current.chain().toArray(X509Certificate[]::new) : null;
  }

  @Override
  public PrivateKey getPrivateKey(String alias) {
    return ALIAS.equals(alias) ? current.key() : null;
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
