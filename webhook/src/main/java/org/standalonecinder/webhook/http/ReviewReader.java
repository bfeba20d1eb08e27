package org.standalonecinder.webhook.http;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import java.io.IOException;
import org.standalonecinder.webhook.admission.ReviewRequest;

/**
 * Reads an AdmissionReview (v1 or v1beta1) in one pass from the bytes, with the limits a review's
 * JSON is held to: a claim into the lean {@link org.standalonecinder.webhook.admission.Claim} (the
 * rest of it skipped unread), a StorageClass or StatefulSet into fabric8's class, any other object
 * not at all ({@link ReviewRequest}).
 */
public final class ReviewReader {

  /** How deep a review's JSON may nest (documented in docs/webhook.md). */
  static final int MAX_NESTING = 64;

  /**
   * Reads reviews without the objects' managedFields (no rule reads them, and they are a third of
   * what kubectl sends; a claim's are skipped with the rest of what the lean model does not hold);
   * the handler writes its answers with its factory.
   */
  static final ObjectMapper JSON =
      new ObjectMapper(
              JsonFactory.builder()
                  // A claim or a class nests about ten deep; deeper is an attack on the parser.
                  .streamReadConstraints(
                      StreamReadConstraints.builder().maxNestingDepth(MAX_NESTING).build())
                  // A key given twice means what each reader chooses (Jackson and Go keep the
                  // last, others the first): a review that reads two ways is refused, not judged.
                  .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
                  .build())
          .addMixIn(ObjectMeta.class, WithoutManagedFields.class);

  /** What an AdmissionReview of v1 or v1beta1 holds for us; the rest is skipped. */
  @JsonIgnoreProperties(ignoreUnknown = true)
  public record Envelope(String apiVersion, String kind, ReviewRequest request) {}

  @JsonIgnoreProperties({"managedFields"})
  private abstract static class WithoutManagedFields {}

  private ReviewReader() {}

  /** The review, or an exception saying why it cannot be read. */
  public static Envelope read(byte[] body) throws IOException {
    return JSON.readValue(body, Envelope.class);
  }
}
