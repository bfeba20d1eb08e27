package org.standalonecinder.certs;

import java.io.IOException;
import java.io.StringReader;
import java.io.StringWriter;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.List;
import org.bouncycastle.asn1.pkcs.PrivateKeyInfo;
import org.bouncycastle.cert.X509CertificateHolder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.openssl.PEMKeyPair;
import org.bouncycastle.openssl.PEMParser;
import org.bouncycastle.openssl.jcajce.JcaPEMKeyConverter;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;

/** PEM in and out: certificates (one or a bundle) and private keys (PKCS#8 or SEC1/PKCS#1). */
public final class Pem {

  private Pem() {}

  /** One or more objects (certificates, keys) as PEM text. */
  public static String encode(Object... objects) {
    StringWriter out = new StringWriter();
    try (JcaPEMWriter w = new JcaPEMWriter(out)) {
      for (Object o : objects) {
        w.writeObject(o);
      }
    } catch (IOException e) {
      throw new CertificateException("cannot write PEM: " + e.getMessage(), e);
    }
    return out.toString();
  }

  /** A private key as unencrypted PKCS#8 PEM ({@code BEGIN PRIVATE KEY}). */
  public static String privateKeyPem(PrivateKey key) {
    try {
      return encode(new org.bouncycastle.openssl.jcajce.JcaPKCS8Generator(key, null));
    } catch (org.bouncycastle.util.io.pem.PemGenerationException e) {
      throw new CertificateException("cannot write the key as PEM: " + e.getMessage(), e);
    }
  }

  /** Every certificate in the text, in order; an error if there is none. */
  public static List<X509Certificate> certificates(String pem) {
    List<X509Certificate> out = new ArrayList<>();
    try (PEMParser p = new PEMParser(new StringReader(pem))) {
      JcaX509CertificateConverter conv = new JcaX509CertificateConverter();
      for (Object o = p.readObject(); o != null; o = p.readObject()) {
        if (o instanceof X509CertificateHolder h) {
          out.add(conv.getCertificate(h));
        }
      }
    } catch (IOException | java.security.cert.CertificateException e) {
      throw new CertificateException("not a PEM certificate: " + e.getMessage(), e);
    }
    if (out.isEmpty()) {
      throw new CertificateException("no PEM certificate found", null);
    }
    return out;
  }

  /** The first private key in the text. */
  public static PrivateKey privateKey(String pem) {
    try (PEMParser p = new PEMParser(new StringReader(pem))) {
      JcaPEMKeyConverter conv = new JcaPEMKeyConverter();
      for (Object o = p.readObject(); o != null; o = p.readObject()) {
        if (o instanceof PEMKeyPair kp) {
          return conv.getKeyPair(kp).getPrivate();
        }
        if (o instanceof PrivateKeyInfo info) {
          return conv.getPrivateKey(info);
        }
      }
    } catch (IOException e) {
      throw new CertificateException("not a PEM private key: " + e.getMessage(), e);
    }
    throw new CertificateException("no PEM private key found", null);
  }
}
