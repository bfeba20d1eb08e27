package org.standalonecinder.webhook.policy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import org.standalonecinder.api.ClaimRef;
import org.standalonecinder.webhook.admission.Claim;

/**
 * {@link CloneCheck} through the provisioner's resolver sidecar ({@code POST /v1/clone-check} on
 * loopback, with the token the sidecar wrote into a shared file). The whole call has a deadline
 * shorter than the API server's webhook timeout; nothing is cached, so no stale answer can let a
 * clone through.
 */
public final class ResolverCloneCheck implements CloneCheck {

  private static final ObjectMapper JSON = new ObjectMapper();

  private final URI endpoint;
  private final Path tokenFile;
  private final Duration deadline;
  private final HttpClient http;

  /**
   * @param base the resolver, e.g. {@code http://127.0.0.1:8090}
   * @param tokenFile the file the resolver keeps its token in (read at each call: it may be written
   *     after the webhook started)
   * @param deadline for the whole call
   */
  public ResolverCloneCheck(URI base, Path tokenFile, Duration deadline) {
    this.endpoint = base.resolve("/v1/clone-check");
    this.tokenFile = tokenFile;
    this.deadline = deadline;
    this.http = HttpClient.newBuilder().connectTimeout(deadline).build();
  }

  /** Whether the resolver answers its health check within the deadline. Blocking. */
  public boolean reachable() {
    try {
      return http.send(
                  HttpRequest.newBuilder(endpoint.resolve("/healthz")).timeout(deadline).build(),
                  HttpResponse.BodyHandlers.discarding())
              .statusCode()
          == 200;
    } catch (IOException e) {
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  @Override
  public Optional<String> refusal(ClaimRef source, Claim claim) {
    String token;
    try {
      token = Files.readString(tokenFile).trim();
    } catch (IOException e) {
      throw new Unavailable("the resolver's token file " + tokenFile + " cannot be read", e);
    }
    ObjectNode body = JSON.createObjectNode();
    body.put("source", source.toString());
    body.set("claim", JSON.valueToTree(claim));
    HttpResponse<String> r;
    try {
      r =
          http.send(
              HttpRequest.newBuilder(endpoint)
                  .timeout(deadline)
                  .header("Content-Type", "application/json")
                  .header("Authorization", "Bearer " + token)
                  .POST(HttpRequest.BodyPublishers.ofString(body.toString()))
                  .build(),
              HttpResponse.BodyHandlers.ofString());
    } catch (HttpTimeoutException e) {
      throw new Unavailable("the resolver did not answer within " + deadline.toMillis() + " ms", e);
    } catch (IOException e) {
      throw new Unavailable("the resolver at " + endpoint + " cannot be reached", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new Unavailable("interrupted", e);
    }
    if (r.statusCode() != 200) {
      throw new Unavailable(
          "the resolver answered " + r.statusCode() + ": " + r.body().strip(), null);
    }
    try {
      JsonNode a = JSON.readTree(r.body());
      if (a.path("allowed").asBoolean(false)) {
        return Optional.empty();
      }
      return Optional.of(a.path("reason").asText("the resolver refused the clone"));
    } catch (IOException e) {
      throw new Unavailable("the resolver's answer is not JSON", e);
    }
  }
}
