package org.standalonecinder.certs;

import java.io.IOException;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.X509Certificate;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * The CAs a client should trust, for a webhook configuration's {@code caBundle}. During a CA
 * rotation it holds the old and the new CA, so that serving certificates of either are accepted
 * until every server has switched; expired CAs drop out.
 */
public final class CaBundle {

  private final List<X509Certificate> cas;

  private CaBundle(List<X509Certificate> cas) {
    this.cas = List.copyOf(cas);
  }

  public static CaBundle of(List<X509Certificate> cas) {
    return new CaBundle(dedupe(cas));
  }

  /** Reads a bundle, e.g. a webhook configuration's caBundle. */
  public static CaBundle fromPem(String pem) {
    return of(Pem.certificates(pem));
  }

  /** This bundle plus {@code ca} (first), without CAs expired at {@code now}. */
  public CaBundle with(X509Certificate ca, Instant now) {
    List<X509Certificate> all = new ArrayList<>();
    all.add(ca);
    all.addAll(cas);
    return of(all).withoutExpired(now);
  }

  public CaBundle withoutExpired(Instant now) {
    return new CaBundle(
        cas.stream().filter(c -> c.getNotAfter().toInstant().isAfter(now)).toList());
  }

  public List<X509Certificate> certificates() {
    return cas;
  }

  public String pem() {
    return Pem.encode(cas.toArray());
  }

  /**
   * A TLS client context that trusts exactly these CAs, as the API server does with a caBundle (for
   * tests, the demo and diagnostics that talk to the webhook).
   */
  public SSLContext clientContext() {
    return clientContext(null);
  }

  /**
   * The same, presenting {@code identity} as its client certificate, as an API server configured to
   * authenticate to webhooks does (for tests and the local set-up); null presents none.
   */
  public SSLContext clientContext(IssuedCertificate identity) {
    try {
      KeyStore store = KeyStore.getInstance("PKCS12");
      store.load(null, null);
      int i = 0;
      for (X509Certificate ca : cas) {
        store.setCertificateEntry("ca-" + i++, ca);
      }
      TrustManagerFactory tmf =
          TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
      tmf.init(store);
      javax.net.ssl.KeyManager[] keys = null;
      if (identity != null) {
        KeyStore mine = KeyStore.getInstance("PKCS12");
        mine.load(null, null);
        mine.setKeyEntry(
            "me",
            identity.key(),
            new char[0],
            identity.chain().toArray(java.security.cert.Certificate[]::new));
        javax.net.ssl.KeyManagerFactory kmf =
            javax.net.ssl.KeyManagerFactory.getInstance(
                javax.net.ssl.KeyManagerFactory.getDefaultAlgorithm());
        kmf.init(mine, new char[0]);
        keys = kmf.getKeyManagers();
      }
      SSLContext ctx = SSLContext.getInstance("TLS");
      ctx.init(keys, tmf.getTrustManagers(), null);
      return ctx;
    } catch (GeneralSecurityException | IOException e) {
      throw new CertificateException(
          "cannot build a TLS context trusting " + cas.size() + " CAs", e);
    }
  }

  private static List<X509Certificate> dedupe(List<X509Certificate> in) {
    Map<String, X509Certificate> bySerialAndIssuer = new LinkedHashMap<>();
    for (X509Certificate c : in) {
      bySerialAndIssuer.putIfAbsent(c.getIssuerX500Principal() + "#" + c.getSerialNumber(), c);
    }
    return new ArrayList<>(bySerialAndIssuer.values());
  }
}
