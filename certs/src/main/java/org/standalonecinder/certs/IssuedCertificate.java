package org.standalonecinder.certs;

import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.util.List;

/**
 * A certificate with its key and the chain up to its CA.
 *
 * @param certificate the leaf
 * @param key its private key
 * @param chain the leaf first, then the issuing CA
 */
public record IssuedCertificate(
    X509Certificate certificate, PrivateKey key, List<X509Certificate> chain) {

  public IssuedCertificate {
    chain = List.copyOf(chain);
  }

  /** The chain as PEM, leaf first: what a TLS server presents. */
  public String chainPem() {
    return Pem.encode(chain.toArray());
  }

  /** The private key as PKCS#8 PEM. */
  public String keyPem() {
    return Pem.privateKeyPem(key);
  }

  @Override
  public String toString() {
    return "IssuedCertificate[" + certificate.getSubjectX500Principal() + ", key hidden]";
  }
}
