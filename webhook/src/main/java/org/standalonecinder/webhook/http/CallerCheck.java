package org.standalonecinder.webhook.http;

import io.vertx.core.http.HttpConnection;
import io.vertx.core.http.HttpVersion;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.PlatformHandler;
import java.security.GeneralSecurityException;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import javax.naming.InvalidNameException;
import javax.naming.ldap.LdapName;
import javax.naming.ldap.Rdn;
import javax.net.ssl.SSLPeerUnverifiedException;

/**
 * Takes reviews only from the API server, when the admin has it present a client certificate (its
 * AdmissionConfiguration's {@code kubeConfigFile}): the certificate must be issued by one of the
 * given CAs and, when names are given, name one of them (its common name or a DNS name). A review
 * from anyone else (a pod that reaches the port) is refused before its body is read: its {@code
 * userInfo} could say anything. Probes and metrics stay open: the kubelet presents no certificate.
 */
final class CallerCheck implements PlatformHandler {

  private final List<X509Certificate> cas;
  private final Set<String> names;

  /**
   * @param cas the CAs whose client certificates are the API server's
   * @param names the names such a certificate may carry; empty for any
   */
  CallerCheck(List<X509Certificate> cas, Set<String> names) {
    this.cas = List.copyOf(cas);
    this.names = Set.copyOf(names);
  }

  /** Whether the connection's client certificate is the API server's, as the checks below say. */
  boolean isCaller(HttpConnection connection) {
    List<Certificate> peer = peer(connection);
    return !peer.isEmpty()
        && peer.get(0) instanceof X509Certificate leaf
        && issuedByOurCa(leaf)
        && (names.isEmpty() || names(leaf).stream().anyMatch(names::contains));
  }

  private static List<Certificate> peer(HttpConnection connection) {
    try {
      List<Certificate> peer = connection.peerCertificates();
      return peer == null ? List.of() : peer;
    } catch (SSLPeerUnverifiedException e) {
      return List.of();
    }
  }

  @Override
  public void handle(RoutingContext ctx) {
    List<Certificate> peer = peer(ctx.request().connection());
    if (peer.isEmpty() || !(peer.get(0) instanceof X509Certificate leaf)) {
      refuse(
          ctx,
          401,
          "reviews are taken from the API server only, which presents a client certificate:"
              + " this connection presented none");
      return;
    }
    if (!issuedByOurCa(leaf)) {
      refuse(
          ctx,
          401,
          "reviews are taken from the API server only: this client certificate was not issued by"
              + " the CA the webhook trusts for it (--client-ca), is not for client authentication, or is"
              + " not valid now");
      return;
    }
    if (!names.isEmpty()) {
      List<String> carried = names(leaf);
      if (carried.stream().noneMatch(names::contains)) {
        refuse(
            ctx,
            403,
            "reviews are taken from the API server only: this client certificate names "
                + carried
                + ", none of "
                + new java.util.TreeSet<>(names)
                + " (--client-name)");
        return;
      }
    }
    ctx.next();
  }

  /** TLS client authentication (RFC 5280, id-kp-clientAuth). */
  private static final String CLIENT_AUTH = "1.3.6.1.5.5.7.3.2";

  private boolean issuedByOurCa(X509Certificate leaf) {
    try {
      leaf.checkValidity();
      // A serving certificate of the same CA (a CA often issues both) is no client's identity.
      List<String> usages = leaf.getExtendedKeyUsage();
      if (usages == null || !usages.contains(CLIENT_AUTH)) {
        return false;
      }
    } catch (GeneralSecurityException e) {
      return false;
    }
    for (X509Certificate ca : cas) {
      try {
        leaf.verify(ca.getPublicKey());
        return true;
      } catch (GeneralSecurityException e) {
        // another CA of the bundle may have issued it
      }
    }
    return false;
  }

  /** The certificate's common names and DNS subject alternative names. */
  static List<String> names(X509Certificate c) {
    List<String> out = new ArrayList<>();
    try {
      for (Rdn rdn : new LdapName(c.getSubjectX500Principal().getName()).getRdns()) {
        if (rdn.getType().equalsIgnoreCase("CN")) {
          out.add(String.valueOf(rdn.getValue()));
        }
      }
    } catch (InvalidNameException e) {
      // no common name to offer
    }
    try {
      if (c.getSubjectAlternativeNames() != null) {
        for (List<?> san : c.getSubjectAlternativeNames()) {
          if (Integer.valueOf(2).equals(san.get(0))) {
            out.add(String.valueOf(san.get(1)));
          }
        }
      }
    } catch (java.security.cert.CertificateParsingException e) {
      // no DNS names to offer
    }
    return out;
  }

  private static void refuse(RoutingContext ctx, int status, String reason) {
    var response = ctx.response().setStatusCode(status).putHeader("Content-Type", "text/plain");
    if (ctx.request().version() == HttpVersion.HTTP_2) {
      response.end(reason + "\n").onComplete(done -> response.reset());
    } else {
      response
          .putHeader("Connection", "close")
          .end(reason + "\n")
          .onComplete(done -> ctx.request().connection().close());
    }
  }

  /** A certificate as PEM, for the server's trust options. */
  static String pem(java.security.cert.X509Certificate c) {
    try {
      return "-----BEGIN CERTIFICATE-----\n"
          + java.util.Base64.getMimeEncoder(
                  64, "\n".getBytes(java.nio.charset.StandardCharsets.US_ASCII))
              .encodeToString(c.getEncoded())
          + "\n-----END CERTIFICATE-----\n";
    } catch (java.security.cert.CertificateEncodingException e) {
      throw new IllegalArgumentException("a CA certificate that cannot be encoded", e);
    }
  }
}
