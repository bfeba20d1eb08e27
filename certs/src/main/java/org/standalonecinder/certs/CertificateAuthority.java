package org.standalonecinder.certs;

import java.math.BigInteger;
import java.net.InetAddress;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.ExtendedKeyUsage;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.CertIOException;
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509ExtensionUtils;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.operator.OperatorCreationException;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/**
 * A private CA for the webhook: ECDSA P-256 keys, SHA-256 signatures, serving certificates with the
 * Service's DNS names. Certificates start one minute in the past, so that a clock slightly behind
 * on the API server does not reject a certificate issued a moment ago.
 */
public final class CertificateAuthority {

  static final Duration BACKDATE = Duration.ofMinutes(1);
  private static final SecureRandom RANDOM = new SecureRandom();

  private final X509Certificate certificate;
  private final PrivateKey key;

  private CertificateAuthority(X509Certificate certificate, PrivateKey key) {
    this.certificate = certificate;
    this.key = key;
  }

  /** A new self-signed CA. */
  public static CertificateAuthority generate(String commonName, Duration validity, Clock clock) {
    KeyPair kp = newKeyPair();
    Instant now = clock.instant();
    X500Name name = new X500Name("CN=" + commonName);
    try {
      JcaX509ExtensionUtils ext = new JcaX509ExtensionUtils();
      X509v3CertificateBuilder b =
          new JcaX509v3CertificateBuilder(
                  name,
                  serial(),
                  Date.from(now.minus(BACKDATE)),
                  Date.from(now.plus(validity)),
                  name,
                  kp.getPublic())
              .addExtension(Extension.basicConstraints, true, new BasicConstraints(0))
              .addExtension(
                  Extension.keyUsage, true, new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign))
              .addExtension(
                  Extension.subjectKeyIdentifier,
                  false,
                  ext.createSubjectKeyIdentifier(kp.getPublic()));
      return new CertificateAuthority(sign(b, kp.getPrivate()), kp.getPrivate());
    } catch (GeneralSecurityException | CertIOException e) {
      throw new CertificateException("cannot create a CA: " + e.getMessage(), e);
    }
  }

  /** A CA kept earlier (e.g. in a Secret) as PEM. */
  public static CertificateAuthority fromPem(String certificatePem, String keyPem) {
    X509Certificate cert = Pem.certificates(certificatePem).get(0);
    PrivateKey key = Pem.privateKey(keyPem);
    if (cert.getBasicConstraints() < 0) {
      throw new CertificateException(
          "the certificate for " + cert.getSubjectX500Principal() + " is not a CA", null);
    }
    return new CertificateAuthority(cert, key);
  }

  public X509Certificate certificate() {
    return certificate;
  }

  public String certificatePem() {
    return Pem.encode(certificate);
  }

  /** The CA's key as PKCS#8 PEM, for keeping the CA in a Secret. */
  public String keyPem() {
    return Pem.privateKeyPem(key);
  }

  /**
   * A serving certificate for the given names.
   *
   * @param dnsNames DNS subject alternative names, the first also the common name
   * @param ipAddresses IP subject alternative names (e.g. 127.0.0.1 to run locally)
   */
  public IssuedCertificate issueServing(
      List<String> dnsNames, List<String> ipAddresses, Duration validity, Clock clock) {
    if (dnsNames.isEmpty() && ipAddresses.isEmpty()) {
      throw new IllegalArgumentException("a serving certificate needs at least one name");
    }
    List<GeneralName> sans = new ArrayList<>();
    dnsNames.forEach(n -> sans.add(new GeneralName(GeneralName.dNSName, n)));
    for (String ip : ipAddresses) {
      requireIp(ip);
      sans.add(new GeneralName(GeneralName.iPAddress, ip));
    }
    String cn = dnsNames.isEmpty() ? ipAddresses.get(0) : dnsNames.get(0);
    return issue(cn, sans, KeyPurposeId.id_kp_serverAuth, validity, clock);
  }

  /**
   * A client certificate (TLS client authentication) whose subject is {@code CN=commonName}: what
   * an API server presents to a webhook that asks who calls it (for tests and local set-ups; a
   * cluster's API server has its own).
   */
  public IssuedCertificate issueClient(String commonName, Duration validity, Clock clock) {
    return issue(commonName, List.of(), KeyPurposeId.id_kp_clientAuth, validity, clock);
  }

  private IssuedCertificate issue(
      String cn, List<GeneralName> sans, KeyPurposeId purpose, Duration validity, Clock clock) {
    KeyPair kp = newKeyPair();
    Instant now = clock.instant();
    Instant notAfter = now.plus(validity);
    if (notAfter.isAfter(certificate.getNotAfter().toInstant())) {
      // A leaf must not outlive its CA: clients would reject it at the CA's end anyway.
      notAfter = certificate.getNotAfter().toInstant();
    }
    try {
      JcaX509ExtensionUtils ext = new JcaX509ExtensionUtils();
      X509v3CertificateBuilder b =
          new JcaX509v3CertificateBuilder(
                  certificate,
                  serial(),
                  Date.from(now.minus(BACKDATE)),
                  Date.from(notAfter),
                  new X500Name("CN=" + cn),
                  kp.getPublic())
              .addExtension(Extension.basicConstraints, true, new BasicConstraints(false))
              .addExtension(
                  Extension.keyUsage,
                  true,
                  new KeyUsage(KeyUsage.digitalSignature | KeyUsage.keyEncipherment))
              .addExtension(Extension.extendedKeyUsage, false, new ExtendedKeyUsage(purpose));
      if (!sans.isEmpty()) {
        b.addExtension(
            Extension.subjectAlternativeName,
            false,
            new GeneralNames(sans.toArray(GeneralName[]::new)));
      }
      b.addExtension(
              Extension.subjectKeyIdentifier, false, ext.createSubjectKeyIdentifier(kp.getPublic()))
          .addExtension(
              Extension.authorityKeyIdentifier,
              false,
              ext.createAuthorityKeyIdentifier(certificate));
      X509Certificate leaf = sign(b, key);
      return new IssuedCertificate(leaf, kp.getPrivate(), List.of(leaf, certificate));
    } catch (GeneralSecurityException | CertIOException e) {
      throw new CertificateException(
          "cannot issue a certificate for " + cn + ": " + e.getMessage(), e);
    }
  }

  private static void requireIp(String ip) {
    if (!ip.matches("[0-9.]+|[0-9a-fA-F:]+")) {
      throw new IllegalArgumentException("'" + ip + "' is not an IP address");
    }
    try {
      InetAddress.getByName(ip);
    } catch (java.net.UnknownHostException e) {
      throw new IllegalArgumentException("'" + ip + "' is not an IP address", e);
    }
  }

  private static X509Certificate sign(X509v3CertificateBuilder b, PrivateKey signer)
      throws GeneralSecurityException {
    try {
      return new JcaX509CertificateConverter()
          .getCertificate(b.build(new JcaContentSignerBuilder("SHA256withECDSA").build(signer)));
    } catch (OperatorCreationException e) {
      throw new GeneralSecurityException(e);
    }
  }

  private static KeyPair newKeyPair() {
    try {
      KeyPairGenerator g = KeyPairGenerator.getInstance("EC");
      g.initialize(new ECGenParameterSpec("secp256r1"), RANDOM);
      return g.generateKeyPair();
    } catch (GeneralSecurityException e) {
      throw new CertificateException("cannot create an ECDSA P-256 key: " + e.getMessage(), e);
    }
  }

  private static BigInteger serial() {
    return new BigInteger(127, RANDOM).add(BigInteger.ONE);
  }

  /** Whether {@code cert} was signed by this CA's key. */
  public boolean signed(X509Certificate cert) {
    try {
      PublicKey pk = certificate.getPublicKey();
      cert.verify(pk);
      return true;
    } catch (GeneralSecurityException e) {
      return false;
    }
  }

  @Override
  public String toString() {
    return "CertificateAuthority[" + certificate.getSubjectX500Principal() + ", key hidden]";
  }
}
