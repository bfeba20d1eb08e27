package org.standalonecinder.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.net.JdkSSLEngineOptions;
import io.vertx.core.net.OpenSSLEngineOptions;
import io.vertx.core.net.PemKeyCertOptions;
import java.util.Set;

/**
 * A baseline: the least a Vert.x server can do for an AdmissionReview over the same TLS as the
 * webhook (parse the body, echo the uid, allow). What the webhook costs on top of it is its policy,
 * its lookups and its bookkeeping. Run as its own process: {@code java -cp
 * standalone-cinder-bench.jar org.standalonecinder.bench.MinimalServer PORT CERT KEY [openssl|jdk]}
 * (the TLS engine; the webhook's is BoringSSL where it loads).
 */
public final class MinimalServer {

  private MinimalServer() {}

  public static void main(String[] args) {
    ObjectMapper json = new ObjectMapper();
    Vertx vertx = Vertx.vertx();
    HttpServerOptions options =
        new HttpServerOptions()
            .setSsl(true)
            .setEnabledSecureTransportProtocols(Set.of("TLSv1.3"))
            .setKeyCertOptions(new PemKeyCertOptions().setCertPath(args[1]).setKeyPath(args[2]))
            .setSslEngineOptions(
                args.length > 3 && args[3].equals("jdk")
                    ? new JdkSSLEngineOptions()
                    : new OpenSSLEngineOptions());
    vertx
        .createHttpServer(options)
        .requestHandler(
            req ->
                req.body()
                    .onSuccess(
                        body -> {
                          String uid;
                          try {
                            JsonNode review = json.readTree(body.getBytes());
                            uid = review.path("request").path("uid").asText();
                          } catch (java.io.IOException e) {
                            req.response().setStatusCode(400).end();
                            return;
                          }
                          req.response()
                              .putHeader("Content-Type", "application/json")
                              .end(
                                  "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
                                      + "\"response\":{\"uid\":\""
                                      + uid
                                      + "\",\"allowed\":true}}");
                        }))
        .listen(Integer.parseInt(args[0]), "127.0.0.1")
        .onSuccess(s -> System.out.println("listening on " + s.actualPort()))
        .onFailure(
            e -> {
              e.printStackTrace();
              System.exit(1);
            });
  }
}
