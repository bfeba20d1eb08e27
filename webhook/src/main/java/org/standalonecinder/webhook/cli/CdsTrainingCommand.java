package org.standalonecinder.webhook.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpVersion;
import io.vertx.core.net.PemTrustOptions;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * {@code cds-training}: the image's build runs it once under {@code -XX:ArchiveClassesAtExit}, so
 * that the JVM archives what a webhook loads to start and to answer each kind of review, and the
 * webhook in a Pod starts from that archive (images/Dockerfile; measured in docs/benchmarks.md).
 *
 * <p>It runs the webhook as {@code serve --local} does, with the lookups pointed at a closed port
 * (a build has no cluster: they fail at once, as the API server's outage would), and sends it the
 * reviews of {@code cds-training-reviews.json} on both endpoints over HTTP/2 (as kube-apiserver
 * calls a webhook) and HTTP/1.1, through a TLS client that trusts only the webhook's CA. Every
 * review must be answered with its own uid: a webhook that cannot answer fails the image's build.
 */
@Command(
    name = "cds-training",
    mixinStandardHelpOptions = true,
    description = {
      "Start a local webhook, send it a review of each kind, check every answer, stop.",
      "The image's build runs it under -XX:ArchiveClassesAtExit to make the class-data-sharing"
          + " archive the webhook starts from."
    })
final class CdsTrainingCommand implements Callable<Integer> {

  static final String REVIEWS = "cds-training-reviews.json";

  private static final ObjectMapper JSON = new ObjectMapper();

  /** A review of each kind, sent this many times over each protocol and endpoint. */
  private static final int ROUNDS = 3;

  @Spec CommandSpec spec;

  @Override
  public Integer call() throws Exception {
    // Where the local webhook writes its CA, which the client trusts.
    Path ca = Files.createTempFile("standalone-cinder-cds-training", ".crt");
    try {
      int answered = train(ca);
      spec.commandLine()
          .getOut()
          .printf("cds-training: %d reviews answered, each with its own uid%n", answered);
      return 0;
    } catch (TrainingFailed e) {
      spec.commandLine()
          .getErr()
          .println("standalone-cinder-webhook cds-training: " + e.getMessage());
      return 1;
    } finally {
      Files.deleteIfExists(ca);
    }
  }

  /** The number of reviews answered. */
  private static int train(Path ca) throws Exception {
    WebhookApp.Options options =
        ServeSettings.options(
            ServeSettings.TABLE.read(
                Map.of("--local", "true", "--port", "0", "--ca-out", ca.toString()), Map.of()));
    // Port 1 on loopback: refused at once, so each lookup fails fast instead of waiting out its
    // timeout.
    Config unreachable =
        new ConfigBuilder(Config.empty())
            .withMasterUrl("https://127.0.0.1:1/")
            .withNamespace(options.namespace())
            .build();
    List<JsonNode> reviews = reviews();
    WebhookApp app = WebhookApp.start(unreachable, options);
    Vertx vertx = Vertx.vertx();
    try {
      int answered = 0;
      for (HttpVersion version : List.of(HttpVersion.HTTP_2, HttpVersion.HTTP_1_1)) {
        HttpClient client =
            vertx.createHttpClient(
                new HttpClientOptions()
                    .setSsl(true)
                    .setUseAlpn(true)
                    .setProtocolVersion(version)
                    .setTrustOptions(new PemTrustOptions().addCertPath(ca.toString()))
                    .setDefaultHost("127.0.0.1")
                    .setDefaultPort(app.port()));
        try {
          for (int round = 0; round < ROUNDS; round++) {
            for (String path : List.of("/mutate", "/validate")) {
              for (JsonNode review : reviews) {
                answered += send(client, path, review, version);
              }
            }
          }
          for (String path : List.of("/readyz", "/healthz", "/metrics")) {
            int status = get(client, path);
            if (status != 200) {
              throw new TrainingFailed(path + " answered " + status);
            }
          }
        } finally {
          client.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        }
      }
      return answered;
    } finally {
      vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
      app.close();
    }
  }

  static List<JsonNode> reviews() throws IOException {
    try (InputStream in = CdsTrainingCommand.class.getResourceAsStream(REVIEWS)) {
      if (in == null) {
        throw new IOException(REVIEWS + " is missing from the jar");
      }
      List<JsonNode> out = new ArrayList<>();
      JSON.readTree(in).forEach(out::add);
      return out;
    }
  }

  private static int send(HttpClient client, String path, JsonNode review, HttpVersion version)
      throws Exception {
    String uid = review.path("request").path("uid").asText();
    Buffer body = Buffer.buffer(review.toString());
    Answer answer =
        await(
            client
                .request(HttpMethod.POST, path)
                .compose(
                    req ->
                        req.putHeader("content-type", "application/json")
                            .send(body)
                            .compose(
                                resp ->
                                    resp.body()
                                        .map(
                                            b ->
                                                new Answer(
                                                    resp.statusCode(), resp.version(), b)))));
    String what =
        path + " " + review.path("request").path("kind").path("kind").asText() + " " + uid;
    if (answer.status != 200) {
      throw new TrainingFailed(what + ": HTTP " + answer.status + " " + answer.body);
    }
    if (answer.version != version) {
      throw new TrainingFailed(what + ": answered over " + answer.version + ", not " + version);
    }
    JsonNode response = JSON.readTree(answer.body.getBytes()).path("response");
    if (!uid.equals(response.path("uid").asText())) {
      throw new TrainingFailed(what + ": answered " + answer.body);
    }
    return 1;
  }

  private static int get(HttpClient client, String path) throws Exception {
    return await(
        client
            .request(HttpMethod.GET, path)
            .compose(req -> req.send().compose(resp -> resp.body().map(b -> resp.statusCode()))));
  }

  private static <T> T await(Future<T> f) throws Exception {
    return f.toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
  }

  private record Answer(int status, HttpVersion version, Buffer body) {}

  /** A review the webhook did not answer as a webhook must. */
  static final class TrainingFailed extends Exception {
    TrainingFailed(String message) {
      super(message);
    }
  }
}
