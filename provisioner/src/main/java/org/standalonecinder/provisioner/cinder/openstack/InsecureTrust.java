package org.standalonecinder.provisioner.cinder.openstack;

import java.security.cert.X509Certificate;
import javax.net.ssl.X509TrustManager;

/** For {@code tls-insecure = true}: trusts every certificate. Test clouds only. */
final class InsecureTrust {
  static final X509TrustManager TRUST_ALL =
      new X509TrustManager() {
        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType) {}

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType) {}

        @Override
        public X509Certificate[] getAcceptedIssuers() {
          return new X509Certificate[0];
        }
      };

  private InsecureTrust() {}
}
