package org.standalonecinder.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaimSpec;
import io.fabric8.kubernetes.api.model.admission.v1.AdmissionRequest;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.storage.StorageClass;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.standalonecinder.webhook.admission.Claim;
import org.standalonecinder.webhook.admission.Decision;
import org.standalonecinder.webhook.admission.ReviewRequest;
import org.standalonecinder.webhook.http.ReviewReader;

/**
 * The webhook's lean reader against fabric8's, on the fuzzer's hostile corpus. fabric8's reader
 * reads the whole review into its typed model (as the webhook did before the lean one); its claims
 * are handed to the rules as lean claims made field by field with fabric8's getters. For every
 * body:
 *
 * <ul>
 *   <li>both refuse it (the handler's 400), or
 *   <li>both read it: the same request (as JSON), and the same decisions on both endpoints, or
 *   <li>only fabric8 refuses it, for a field the rules never read (a forged review; the API server
 *       sends none): then fabric8 reads the same body cut down to the fields the lean reader reads,
 *       and that reads and decides as the lean reader did.
 * </ul>
 *
 * An object of a kind no rule judges (fabric8 reads it into some class, the lean reader skips it)
 * counts as read alike either way, and is emptied by the cut. Each case is checked as made and with
 * its fields shuffled (the lean reader reads a claim from the stream when its kind and apiVersion
 * come first, else from a copy). The lean reader never reads what fabric8 cannot, and a field
 * outside the lean model never changes a decision.
 */
class ReviewReaderDifferentialTest {

  static final int CASES = Integer.getInteger("differential.cases", 20_000);
  static final long SEED = Long.getLong("differential.seed", System.currentTimeMillis());

  /** fabric8's reader, with the limits the webhook's reader holds a review to. */
  private static final ObjectMapper TYPED =
      new ObjectMapper(
              JsonFactory.builder()
                  .streamReadConstraints(
                      StreamReadConstraints.builder().maxNestingDepth(64).build())
                  .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
                  .build())
          .addMixIn(ObjectMeta.class, WithoutManagedFields.class);

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final com.fasterxml.jackson.core.JsonFactory FACTORY = JSON.getFactory();

  @JsonIgnoreProperties({"managedFields"})
  private abstract static class WithoutManagedFields {}

  @JsonIgnoreProperties(ignoreUnknown = true)
  record TypedEnvelope(String apiVersion, String kind, AdmissionRequest request) {}

  /** What a reader made of a body: the request as the rules get it, or why it was refused. */
  record Read(String apiVersion, String kind, ReviewRequest request, String refusal) {
    boolean refused() {
      return refusal != null;
    }
  }

  static Read lean(byte[] body) {
    try {
      ReviewReader.Envelope e = ReviewReader.read(body);
      return e == null
          ? new Read(null, null, null, null)
          : new Read(e.apiVersion(), e.kind(), e.request(), null);
    } catch (Exception e) {
      return new Read(null, null, null, e.toString());
    }
  }

  static Read typed(byte[] body) {
    try {
      TypedEnvelope e = TYPED.readValue(body, TypedEnvelope.class);
      return e == null
          ? new Read(null, null, null, null)
          : new Read(
              e.apiVersion(), e.kind(), e.request() == null ? null : byHand(e.request()), null);
    } catch (Exception e) {
      return new Read(null, null, null, e.toString());
    }
  }

  /**
   * fabric8's request as the lean one, field by field through fabric8's getters (not through JSON,
   * so that a field the lean model names wrongly or lacks reads differently).
   */
  static ReviewRequest byHand(AdmissionRequest r) {
    return new ReviewRequest(
        r.getUid(),
        r.getKind() == null
            ? null
            : new ReviewRequest.Kind(
                r.getKind().getGroup(), r.getKind().getVersion(), r.getKind().getKind()),
        r.getName(),
        r.getNamespace(),
        r.getOperation(),
        r.getUserInfo(),
        byHand(r.getObject()),
        byHand(r.getOldObject()));
  }

  private static Object byHand(Object o) {
    if (!(o instanceof PersistentVolumeClaim c)) {
      return o;
    }
    ObjectMeta m = c.getMetadata();
    PersistentVolumeClaimSpec s = c.getSpec();
    return new Claim(
        c.getApiVersion(),
        c.getKind(),
        m == null
            ? null
            : new Claim.Meta(
                m.getName(),
                m.getNamespace(),
                m.getUid(),
                m.getCreationTimestamp(),
                m.getDeletionTimestamp(),
                m.getAnnotations()),
        s == null
            ? null
            : new Claim.Spec(
                s.getAccessModes(),
                s.getStorageClassName(),
                s.getVolumeMode(),
                s.getVolumeName(),
                s.getResources() == null
                    ? null
                    : new Claim.Resources(
                        s.getResources().getRequests(), s.getResources().getLimits()),
                s.getDataSource() == null
                    ? null
                    : new Claim.Source(
                        s.getDataSource().getApiGroup(),
                        s.getDataSource().getKind(),
                        s.getDataSource().getName(),
                        null),
                s.getDataSourceRef() == null
                    ? null
                    : new Claim.Source(
                        s.getDataSourceRef().getApiGroup(),
                        s.getDataSourceRef().getKind(),
                        s.getDataSourceRef().getName(),
                        s.getDataSourceRef().getNamespace())));
  }

  @Test
  void bothReadersReadAndDecideTheHostileCorpusAlike() throws Exception {
    HostileReviews corpus = new HostileReviews(SEED);
    Tally tally = new Tally();
    for (int n = 0; n < CASES && tally.differences.size() < 20; n++) {
      HostileReviews.Case c = corpus.next(n);
      String where = "case " + n + " (" + c.what() + ", seed " + SEED + ")";
      tally.check(c.body() == null ? new byte[0] : c.body(), where + ": ");
      if (c.tree() != null) {
        // The API server writes kind and apiVersion first, which the lean reader reads straight
        // from the stream; in another order it reads the object from a copy of its tokens.
        tally.check(HostileReviews.bytes(corpus.shuffled(c.tree())), where + ", shuffled: ");
      }
    }
    assertThat(tally.differences).as("differences between the readers").isEmpty();
    // The corpus reaches the policy, not only the parsers' refusals, and both ways of agreeing.
    assertThat(tally.decided).as("decided").isGreaterThan(CASES / 10);
    assertThat(tally.same).as("read alike").isGreaterThan(CASES / 10);
    assertThat(tally.cut).as("read after cutting").isPositive();
  }

  /** What the bodies checked so far came to. */
  private static final class Tally {
    final List<String> differences = new ArrayList<>();
    int same;
    int cut;
    int decided;

    void check(byte[] body, String where) {
      Read lean = lean(body);
      Read typed = typed(body);
      if (lean.refused()) {
        if (!typed.refused()) {
          differences.add(where + "only the lean reader refuses it: " + lean.refusal());
        }
        return;
      }
      if (typed.refused()) {
        // fabric8 refused a field the lean reader skips: the body cut down to what it reads.
        Read reduced;
        try {
          reduced = typed(cut(body));
        } catch (java.io.IOException e) {
          differences.add(where + "the lean reader read what is no JSON: " + e.getMessage());
          return;
        }
        if (reduced.refused()) {
          differences.add(
              where + "fabric8 refuses even the fields the lean reader read: " + reduced.refusal());
          return;
        }
        typed = reduced;
        cut++;
      } else {
        same++;
      }
      String difference = compare(lean, typed);
      if (difference != null) {
        differences.add(where + difference);
      } else if (lean.request() != null && lean.request().uid() != null) {
        decided++;
      }
    }
  }

  /** Null when both read the same and decide alike, else what differs. */
  private static String compare(Read lean, Read typed) {
    JsonNode a = view(lean);
    JsonNode b = view(typed);
    if (!a.equals(b)) {
      return "read differently:\n  lean  " + a + "\n  typed " + b;
    }
    if (lean.request() == null || lean.request().uid() == null) {
      return null;
    }
    for (boolean mutating : new boolean[] {true, false}) {
      Decision x = decide(lean.request(), mutating);
      Decision y = decide(typed.request(), mutating);
      if (!x.equals(y)) {
        return "decided differently: " + x + " / " + y;
      }
      if (x.code() >= 500) {
        return "an internal error: " + x;
      }
    }
    return null;
  }

  /**
   * What a reader read, as JSON; a StorageClass or StatefulSet by its type only (both readers read
   * it with fabric8's model, and its JSON after a trip through fabric8 is fabric8's business), and
   * any other object as "unjudged": fabric8 reads it into some class, the lean reader not at all.
   */
  private static JsonNode view(Read r) {
    ObjectNode v = JSON.valueToTree(r);
    if (r.request() != null && v.get("request") instanceof ObjectNode q) {
      for (String field : new String[] {"object", "oldObject"}) {
        Object o = field.equals("object") ? r.request().object() : r.request().oldObject();
        if (o instanceof StorageClass || o instanceof StatefulSet) {
          q.put(field, o.getClass().getName());
        } else if (o != null && !(o instanceof Claim)) {
          q.put(field, "unjudged");
        }
      }
    }
    return v;
  }

  private static Decision decide(ReviewRequest request, boolean mutating) {
    try {
      return PolicyFuzzTest.POLICY.review(request, mutating);
    } catch (RuntimeException e) {
      return Decision.deny(500, "exception", e.toString());
    }
  }

  // ---- the fields the lean reader reads (ReviewRequest and Claim), as a body ----

  /** Which fields of an object to keep: null keeps the whole value. */
  private static Map<String, Object> fields(Object... nameThenFields) {
    Map<String, Object> m = new java.util.HashMap<>();
    for (int i = 0; i < nameThenFields.length; i += 2) {
      m.put((String) nameThenFields[i], nameThenFields[i + 1]);
    }
    return m;
  }

  private static final Map<String, Object> SOURCE =
      fields("apiGroup", null, "kind", null, "name", null, "namespace", null);

  private static final Map<String, Object> CLAIM =
      fields(
          "apiVersion",
          null,
          "kind",
          null,
          "metadata",
          fields(
              "name",
              null,
              "namespace",
              null,
              "uid",
              null,
              "creationTimestamp",
              null,
              "deletionTimestamp",
              null,
              "annotations",
              null),
          "spec",
          fields(
              "accessModes",
              null,
              "storageClassName",
              null,
              "volumeMode",
              null,
              "volumeName",
              null,
              "resources",
              fields("requests", null, "limits", null),
              "dataSource",
              SOURCE,
              "dataSourceRef",
              SOURCE));

  /** In place of an object the lean reader skips: an empty one, which fabric8 reads too. */
  private static final Map<String, Object> UNJUDGED = new java.util.HashMap<>();

  /**
   * The review without the fields the lean reader skips, cut as a stream that never decodes what it
   * skips (as the lean reader skips it: a forged review may hide bytes that are no UTF-8 there). A
   * StorageClass or StatefulSet is kept whole (both readers read it with fabric8's model), an
   * object of any other kind is emptied.
   */
  static byte[] cut(byte[] body) throws java.io.IOException {
    Map<String, Object> request =
        fields(
            "uid",
            null,
            "kind",
            fields("group", null, "version", null, "kind", null),
            "name",
            null,
            "namespace",
            null,
            "operation",
            null,
            "userInfo",
            null,
            "object",
            kept(body, "object"),
            "oldObject",
            kept(body, "oldObject"));
    Map<String, Object> review = fields("apiVersion", null, "kind", null, "request", request);
    java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
    try (JsonParser p = FACTORY.createParser(body);
        JsonGenerator g = FACTORY.createGenerator(out)) {
      p.nextToken();
      copy(p, g, review);
    }
    return out.toByteArray();
  }

  @SuppressWarnings("unchecked")
  private static void copy(JsonParser p, JsonGenerator g, Map<String, Object> keep)
      throws java.io.IOException {
    if (keep == UNJUDGED && p.currentToken() != JsonToken.VALUE_NULL) {
      p.skipChildren();
      g.writeStartObject();
      g.writeEndObject();
      return;
    }
    if (keep == null || p.currentToken() != JsonToken.START_OBJECT) {
      copyExactly(p, g);
      return;
    }
    g.writeStartObject();
    while (p.nextToken() == JsonToken.FIELD_NAME) {
      String field = p.currentName();
      p.nextToken();
      if (keep.containsKey(field)) {
        g.writeFieldName(field);
        copy(p, g, (Map<String, Object>) keep.get(field));
      } else {
        p.skipChildren();
      }
    }
    g.writeEndObject();
  }

  /**
   * The value as it is written: a number keeps its digits (a copy would write 529.53 for 529.530).
   */
  private static void copyExactly(JsonParser p, JsonGenerator g) throws java.io.IOException {
    JsonToken t = p.currentToken();
    if (t == JsonToken.START_OBJECT || t == JsonToken.START_ARRAY) {
      g.copyCurrentEvent(p);
      while (p.nextToken()
          != (t == JsonToken.START_OBJECT ? JsonToken.END_OBJECT : JsonToken.END_ARRAY)) {
        if (p.currentToken() == JsonToken.FIELD_NAME) {
          g.writeFieldName(p.currentName());
          p.nextToken();
        }
        copyExactly(p, g);
      }
      g.copyCurrentEvent(p);
    } else if (t == JsonToken.VALUE_NUMBER_INT || t == JsonToken.VALUE_NUMBER_FLOAT) {
      g.writeNumber(p.getText());
    } else {
      g.copyCurrentEvent(p);
    }
  }

  /** What of request.{field} the lean reader reads, by the apiVersion and kind it says. */
  private static Map<String, Object> kept(byte[] body, String field) throws java.io.IOException {
    try (JsonParser p = FACTORY.createParser(body)) {
      if (p.nextToken() != JsonToken.START_OBJECT || !enter(p, "request") || !enter(p, field)) {
        return UNJUDGED;
      }
      String apiVersion = null;
      String kind = null;
      while (p.nextToken() == JsonToken.FIELD_NAME) {
        String name = p.currentName();
        if (p.nextToken() == JsonToken.VALUE_STRING && name.equals("apiVersion")) {
          apiVersion = p.getText();
        } else if (p.currentToken() == JsonToken.VALUE_STRING && name.equals("kind")) {
          kind = p.getText();
        } else {
          p.skipChildren();
        }
      }
      String type = apiVersion + " " + kind;
      if (type.equals("v1 PersistentVolumeClaim")) {
        return CLAIM;
      }
      return type.equals("storage.k8s.io/v1 StorageClass") || type.equals("apps/v1 StatefulSet")
          ? null
          : UNJUDGED;
    }
  }

  /** Moves into the object value of {@code field} of the object the parser is in. */
  private static boolean enter(JsonParser p, String field) throws java.io.IOException {
    while (p.nextToken() == JsonToken.FIELD_NAME) {
      String name = p.currentName();
      if (p.nextToken() == JsonToken.START_OBJECT && name.equals(field)) {
        return true;
      }
      p.skipChildren();
    }
    return false;
  }
}
