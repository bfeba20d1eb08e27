package org.standalonecinder.certs;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Clock;
import java.util.Arrays;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Certificates from files, as cert-manager's Secret mounts them ({@code tls.crt}, {@code tls.key},
 * {@code ca.crt}). The kubelet replaces the files by swapping a symlink, which file watchers miss;
 * {@link #refresh()} compares the contents instead. A replacement that does not parse (half
 * written, key and certificate not matching) is ignored and the previous certificate stays in use.
 */
public final class FileCertificateSource extends AbstractCertificateSource {

  private static final Logger LOG = LoggerFactory.getLogger(FileCertificateSource.class);

  private final Path certFile;
  private final Path keyFile;
  private final Path caFile;
  private byte[] digest;

  /**
   * @param caFile the CA bundle, or null to trust the last certificate of the chain
   * @throws CertificateException when the files cannot be read at start
   */
  public FileCertificateSource(Path certFile, Path keyFile, Path caFile, Clock clock) {
    super(clock);
    this.certFile = certFile;
    this.keyFile = keyFile;
    this.caFile = caFile;
    Loaded l = load();
    digest = l.digest();
    publish(l.cert(), l.trust());
  }

  private record Loaded(IssuedCertificate cert, CaBundle trust, byte[] digest) {}

  private Loaded load() {
    try {
      String certPem = Files.readString(certFile);
      String keyPem = Files.readString(keyFile);
      String caPem = caFile == null ? null : Files.readString(caFile);
      var chain = Pem.certificates(certPem);
      var key = Pem.privateKey(keyPem);
      if (!matches(chain.get(0), key)) {
        throw new CertificateException(
            certFile + " and " + keyFile + " do not belong together (different public keys)", null);
      }
      CaBundle trust =
          caPem == null
              ? CaBundle.of(List.of(chain.get(chain.size() - 1)))
              : CaBundle.fromPem(caPem);
      MessageDigest md = MessageDigest.getInstance("SHA-256");
      md.update(certPem.getBytes(java.nio.charset.StandardCharsets.UTF_8));
      md.update(keyPem.getBytes(java.nio.charset.StandardCharsets.UTF_8));
      if (caPem != null) {
        md.update(caPem.getBytes(java.nio.charset.StandardCharsets.UTF_8));
      }
      return new Loaded(new IssuedCertificate(chain.get(0), key, chain), trust, md.digest());
    } catch (IOException e) {
      throw new CertificateException("cannot read certificate files: " + e.getMessage(), e);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  /** Whether the key is the certificate's: signs a probe and verifies it with the public key. */
  private static boolean matches(
      java.security.cert.X509Certificate cert, java.security.PrivateKey key) {
    try {
      String alg = key.getAlgorithm().equals("EC") ? "SHA256withECDSA" : "SHA256withRSA";
      java.security.Signature s = java.security.Signature.getInstance(alg);
      s.initSign(key);
      byte[] probe = "standalone-cinder".getBytes(java.nio.charset.StandardCharsets.UTF_8);
      s.update(probe);
      byte[] sig = s.sign();
      s.initVerify(cert.getPublicKey());
      s.update(probe);
      return s.verify(sig);
    } catch (java.security.GeneralSecurityException e) {
      return false;
    }
  }

  @Override
  public synchronized void refresh() {
    Loaded l;
    try {
      l = load();
    } catch (CertificateException e) {
      LOG.warn("keeping the current certificate: {}", e.getMessage());
      return;
    }
    if (!Arrays.equals(l.digest(), digest)) {
      digest = l.digest();
      LOG.info("reloaded the serving certificate from {}", certFile);
      publish(l.cert(), l.trust());
    }
  }

  @Override
  public void close() {}
}
