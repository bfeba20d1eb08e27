package org.standalonecinder.webhook.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import picocli.CommandLine;

class CdsTrainingCommandTest {

  /**
   * The archive holds what the reviews made the webhook load: a kind of review missing from the
   * training is read from the jar in every Pod (and the reader of a StatefulSet is ~350 classes).
   */
  @ParameterizedTest(name = "{0}")
  @CsvSource({
    "a claim created by kubectl apply, PersistentVolumeClaim, CREATE, /object/metadata/annotations/kubectl.kubernetes.io~1last-applied-configuration",
    "a claim resized, PersistentVolumeClaim, UPDATE, /oldObject/spec/resources/requests/storage",
    "a clone by annotation, PersistentVolumeClaim, CREATE, /object/metadata/annotations/k8s.io~1CloneRequest",
    "a clone by dataSource, PersistentVolumeClaim, CREATE, /object/spec/dataSource",
    "a StorageClass, StorageClass, CREATE, /object/parameters/smartclone",
    "a StatefulSet's claim templates, StatefulSet, CREATE, /object/spec/volumeClaimTemplates"
  })
  void theTrainingSendsEachKindOfReviewTheWebhookJudges(
      String name, String kind, String operation, String pointer) throws Exception {
    List<JsonNode> reviews = CdsTrainingCommand.reviews();
    assertThat(reviews)
        .as(name)
        .anyMatch(
            r -> {
              JsonNode q = r.path("request");
              return q.path("kind").path("kind").asText().equals(kind)
                  && q.path("object").path("kind").asText().equals(kind)
                  && q.path("operation").asText().equals(operation)
                  && !q.at(pointer).isMissingNode();
            });
  }

  @Test
  void everyReviewIsAnsweredWithItsOwnUidAndTheCommandExitsZero() {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    int exit =
        new CommandLine(new WebhookMain())
            .setOut(new PrintWriter(out))
            .setErr(new PrintWriter(err))
            .execute("cds-training");
    assertThat(exit).as(err.toString()).isZero();
    // Six reviews, two endpoints, two protocols, three rounds.
    assertThat(out.toString()).contains("cds-training: 72 reviews answered, each with its own uid");
  }
}
