package org.standalonecinder.bench;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManager;
import javax.net.ssl.X509TrustManager;

/** Ports and TLS for the bench's loopback servers. */
final class BenchNet {

  private BenchNet() {}

  /** A port free on loopback now. */
  static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }

  static SSLContext trustAll() throws Exception {
    SSLContext ctx = SSLContext.getInstance("TLSv1.3");
    ctx.init(
        null,
        new TrustManager[] {
          new X509TrustManager() {
            @Override
            public void checkClientTrusted(X509Certificate[] c, String a) {}

            @Override
            public void checkServerTrusted(X509Certificate[] c, String a) {}

            @Override
            public X509Certificate[] getAcceptedIssuers() {
              return new X509Certificate[0];
            }
          }
        },
        new SecureRandom());
    return ctx;
  }

  /** Whether a TLS handshake with 127.0.0.1:port succeeds now. */
  static boolean handshake(SSLContext tls, int port) {
    try (Socket raw = new Socket()) {
      raw.connect(new InetSocketAddress("127.0.0.1", port), 200);
      try (SSLSocket s =
          (SSLSocket) tls.getSocketFactory().createSocket(raw, "127.0.0.1", port, false)) {
        s.setSoTimeout(1000);
        s.startHandshake();
        return true;
      }
    } catch (IOException e) {
      return false;
    }
  }
}
