package org.standalonecinder.e2e;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.standalonecinder.demo.LocalInstall;

/**
 * The real API server's audit log (dev/kube-local keeps one, rotated files included): every call
 * made since the installation started, with who made it and the authorizer's decision.
 */
final class AuditLog {

  private static final ObjectMapper JSON = new ObjectMapper();

  private AuditLog() {}

  /** One call as the audit log has it. */
  record Call(
      String user,
      String verb,
      String group,
      String resource,
      String namespace,
      String name,
      boolean allowed,
      Instant at) {

    String describe() {
      return verb
          + " "
          + (group.isEmpty() ? "" : group + "/")
          + resource
          + (namespace == null ? "" : " in " + namespace)
          + (name == null ? "" : " named " + name);
    }
  }

  /** The calls of this installation's run, oldest first. */
  static List<Call> calls(LocalInstall it) throws Exception {
    return calls(Path.of(it.kubeEnv.get("KUBE_LOCAL_AUDIT_LOG")), it.startedAt);
  }

  /** The calls in dev/kube-local's audit log since {@code since}, oldest first. */
  static List<Call> calls(Path log, Instant since) throws Exception {
    // The log and any file the API server rotated it into (audit-<time>.log), oldest first.
    List<Path> files;
    try (var siblings = Files.list(log.getParent())) {
      files =
          siblings
              .filter(f -> f.getFileName().toString().matches("audit-.*\\.log"))
              .sorted()
              .collect(java.util.stream.Collectors.toCollection(ArrayList::new));
    }
    files.add(log);
    List<String> lines = new ArrayList<>();
    for (Path f : files) {
      lines.addAll(Files.readAllLines(f));
    }
    List<Call> calls = new ArrayList<>();
    for (String line : lines) {
      JsonNode e = JSON.readTree(line);
      JsonNode ref = e.get("objectRef");
      if (ref == null
          || !"ResponseComplete".equals(e.path("stage").asText())
          || Instant.parse(e.path("requestReceivedTimestamp").asText()).isBefore(since)) {
        continue;
      }
      String resource = ref.path("resource").asText();
      if (ref.hasNonNull("subresource")) {
        resource += "/" + ref.get("subresource").asText();
      }
      calls.add(
          new Call(
              e.path("user").path("username").asText(),
              e.path("verb").asText(),
              ref.path("apiGroup").asText(""),
              resource,
              ref.hasNonNull("namespace") ? ref.get("namespace").asText() : null,
              ref.hasNonNull("name") ? ref.get("name").asText() : null,
              "allow".equals(e.path("annotations").path("authorization.k8s.io/decision").asText()),
              Instant.parse(e.path("requestReceivedTimestamp").asText())));
    }
    return calls;
  }
}
