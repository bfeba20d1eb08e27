package org.standalonecinder.webhook.cli;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.concurrent.Callable;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManager;
import javax.net.ssl.X509ExtendedTrustManager;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code exposure}: run from a Pod (any namespace), it tells whether that Pod can send the webhook
 * reviews of its own making: not at all (a NetworkPolicy keeps it out), only to be refused (the
 * webhook takes reviews from the API server's client certificate alone), or answered (any pod can
 * then name any requester in a review; docs/install.md says how to close it). It sends one review
 * of a kind no rule judges, which changes nothing, and does not check the webhook's certificate: it
 * only probes, and sends nothing secret.
 *
 * <p>Exit 0 when a pod's reviews are kept out or refused, 1 when they are answered, 2 for a bad
 * address.
 */
@Command(
    name = "exposure",
    mixinStandardHelpOptions = true,
    description = {
      "From a Pod: can a pod send the webhook reviews? (exit 0: no; 1: yes; 2: bad --url)",
      "e.g. kubectl run exposure --rm -i --restart=Never --image=<the webhook image> -- exposure"
    })
final class ExposureCommand implements Callable<Integer> {

  @Option(
      names = "--url",
      description = "the webhook as a pod reaches it (default: ${DEFAULT-VALUE})",
      defaultValue = "https://standalone-cinder-webhook.standalone-cinder.svc:443")
  String url;

  @Option(
      names = "--timeout-seconds",
      description = "how long to wait for a connection and an answer (default: ${DEFAULT-VALUE})",
      defaultValue = "5")
  int timeoutSeconds;

  @Spec CommandSpec spec;

  /** A review of a kind no rule judges: answered without a lookup, and it changes nothing. */
  static final String REVIEW =
      "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{"
          + "\"uid\":\"exposure-check\",\"kind\":{\"group\":\"\",\"version\":\"v1\","
          + "\"kind\":\"ConfigMap\"},\"namespace\":\"default\",\"operation\":\"CREATE\","
          + "\"userInfo\":{\"username\":\"exposure-check\"},\"object\":{\"apiVersion\":\"v1\","
          + "\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"exposure-check\"}}}}";

  @Override
  public Integer call() throws Exception {
    URI target;
    try {
      target = URI.create(url.replaceAll("/+$", "") + "/validate");
      if (!"https".equals(target.getScheme()) || target.getHost() == null) {
        throw new IllegalArgumentException("not an https:// URL");
      }
    } catch (IllegalArgumentException e) {
      spec.commandLine().getErr().println("exposure: --url " + url + ": " + e.getMessage());
      return 2;
    }
    var out = spec.commandLine().getOut();
    HttpResponse<String> r;
    try {
      r =
          HttpClient.newBuilder()
              .sslContext(probing())
              .connectTimeout(Duration.ofSeconds(timeoutSeconds))
              .build()
              .send(
                  HttpRequest.newBuilder(target)
                      .timeout(Duration.ofSeconds(timeoutSeconds))
                      .header("Content-Type", "application/json")
                      .POST(HttpRequest.BodyPublishers.ofString(REVIEW))
                      .build(),
                  HttpResponse.BodyHandlers.ofString());
    } catch (IOException e) {
      out.printf(
          "not reachable from this pod (%s): a pod here cannot send the webhook reviews%n",
          e.getClass().getSimpleName() + (e.getMessage() == null ? "" : ": " + e.getMessage()));
      return 0;
    }
    if (r.statusCode() == 401 || r.statusCode() == 403) {
      out.printf(
          "reachable, and it refused this pod's review (%d): it takes reviews from the API"
              + " server's client certificate only%n",
          r.statusCode());
      return 0;
    }
    if (r.statusCode() == 200 && r.body().contains("\"uid\":\"exposure-check\"")) {
      out.println(
          "reachable, and it answered this pod's review: any pod here can send the webhook"
              + " reviews naming any user, so clones on a requester's own rights are off;"
              + " authenticate the API server (serve --client-ca) or keep pods out with the"
              + " NetworkPolicy (docs/install.md, \"Who can send the webhook reviews\")");
      return 1;
    }
    out.printf(
        "reachable, and it answered %d: not the webhook's answer to a review; check --url%n",
        r.statusCode());
    return 1;
  }

  /** TLS that asks nothing of the server's certificate: a probe sends nothing it must protect. */
  private static SSLContext probing() throws java.security.GeneralSecurityException {
    // Extended, so that no hostname is checked either: the probe asks where it got, not to whom.
    TrustManager any =
        new X509ExtendedTrustManager() {
          @Override
          public void checkClientTrusted(X509Certificate[] chain, String authType) {}

          @Override
          public void checkServerTrusted(X509Certificate[] chain, String authType) {}

          @Override
          public void checkClientTrusted(
              X509Certificate[] chain, String authType, java.net.Socket socket) {}

          @Override
          public void checkServerTrusted(
              X509Certificate[] chain, String authType, java.net.Socket socket) {}

          @Override
          public void checkClientTrusted(
              X509Certificate[] chain, String authType, javax.net.ssl.SSLEngine engine) {}

          @Override
          public void checkServerTrusted(
              X509Certificate[] chain, String authType, javax.net.ssl.SSLEngine engine) {}

          @Override
          public X509Certificate[] getAcceptedIssuers() {
            return new X509Certificate[0];
          }
        };
    SSLContext tls = SSLContext.getInstance("TLS");
    tls.init(null, new TrustManager[] {any}, new SecureRandom());
    return tls;
  }
}
