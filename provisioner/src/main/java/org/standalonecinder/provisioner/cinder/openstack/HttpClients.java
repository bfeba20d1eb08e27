package org.standalonecinder.provisioner.cinder.openstack;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509TrustManager;
import okhttp3.ConnectionPool;
import okhttp3.OkHttpClient;
import org.standalonecinder.provisioner.cinder.CinderException;
import org.standalonecinder.provisioner.cinder.openstack.config.CloudConfig;

/** The OkHttp client of a cloud: its timeouts, its connection pool and whom it trusts. */
final class HttpClients {

  private HttpClients() {}

  /** Timeouts, a pool sized to the call workers, and the configured TLS trust. */
  static OkHttpClient forCloud(CloudConfig cfg) {
    OkHttpClient.Builder b =
        new OkHttpClient.Builder()
            .connectTimeout(cfg.requestTimeout())
            .readTimeout(cfg.requestTimeout())
            .writeTimeout(cfg.requestTimeout())
            .callTimeout(cfg.requestTimeout())
            .retryOnConnectionFailure(false)
            .connectionPool(new ConnectionPool(cfg.maxConcurrentRequests(), 30, TimeUnit.SECONDS));
    if (cfg.caFile() != null) {
      trust(b, trustManager(cfg));
    } else if (cfg.tlsInsecure()) {
      trust(b, InsecureTrust.TRUST_ALL).hostnameVerifier((host, session) -> true);
    }
    return b.build();
  }

  private static OkHttpClient.Builder trust(OkHttpClient.Builder b, X509TrustManager tm) {
    try {
      SSLContext ctx = SSLContext.getInstance("TLS");
      ctx.init(null, new TrustManager[] {tm}, null);
      return b.sslSocketFactory(ctx.getSocketFactory(), tm);
    } catch (GeneralSecurityException e) {
      throw new CinderException.Misconfigured("cannot set up TLS: " + e.getMessage(), e);
    }
  }

  /** Trusts exactly the CAs of the configured PEM file, not the JVM's defaults. */
  private static X509TrustManager trustManager(CloudConfig cfg) {
    try (InputStream in = Files.newInputStream(cfg.caFile())) {
      KeyStore ks = KeyStore.getInstance(KeyStore.getDefaultType());
      ks.load(null, null);
      int i = 0;
      for (Certificate c : CertificateFactory.getInstance("X.509").generateCertificates(in)) {
        ks.setCertificateEntry("ca-" + i++, c);
      }
      if (i == 0) {
        throw new CinderException.Misconfigured(
            "[Global] ca-file " + cfg.caFile() + " holds no PEM certificate", null);
      }
      TrustManagerFactory tmf =
          TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
      tmf.init(ks);
      for (TrustManager tm : tmf.getTrustManagers()) {
        if (tm instanceof X509TrustManager x) {
          return x;
        }
      }
      throw new CinderException.Misconfigured("no X.509 trust manager available", null);
    } catch (IOException | GeneralSecurityException e) {
      throw new CinderException.Misconfigured(
          "[Global] ca-file " + cfg.caFile() + " cannot be read as PEM: " + e.getMessage(), e);
    }
  }
}
