package org.standalonecinder.webhook.admission;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.DeserializationContext;
import com.fasterxml.jackson.databind.JsonDeserializer;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.annotation.JsonDeserialize;
import com.fasterxml.jackson.databind.deser.ResolvableDeserializer;
import com.fasterxml.jackson.databind.util.TokenBuffer;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.authentication.UserInfo;
import io.fabric8.kubernetes.api.model.storage.StorageClass;
import java.io.IOException;

/**
 * The request of an AdmissionReview (v1 and v1beta1 have the same shape), holding what the webhook
 * reads. Its objects are told apart by their own {@code apiVersion} and {@code kind}, as fabric8
 * tells them apart: a v1 claim is read into the lean {@link Claim}; a {@code storage.k8s.io/v1}
 * StorageClass and an {@code apps/v1} StatefulSet, which the policy also judges, into fabric8's
 * classes; anything else (what a misconfigured registration sends) is not read at all.
 *
 * @param name the object's name; null or empty when the API server is to generate it
 * @param object the object as it is to be stored: a {@link Claim}, a fabric8 {@link StorageClass}
 *     or {@link StatefulSet}, an {@link Unread}, or null (on DELETE)
 * @param oldObject the object before an update or delete, of the same types; null on CREATE
 */
@JsonIgnoreProperties(ignoreUnknown = true)
public record ReviewRequest(
    String uid,
    Kind kind,
    String name,
    String namespace,
    String operation,
    UserInfo userInfo,
    @JsonDeserialize(using = ObjectReader.class) Object object,
    @JsonDeserialize(using = ObjectReader.class) Object oldObject) {

  /** The kind of the object, as the API server names it. */
  @JsonIgnoreProperties(ignoreUnknown = true)
  public record Kind(String group, String version, String kind) {}

  /** The request's claim, or null when its object is no claim. */
  public Claim claim() {
    return object instanceof Claim c ? c : null;
  }

  /** The claim before an update, or null. */
  public Claim oldClaim() {
    return oldObject instanceof Claim c ? c : null;
  }

  /** The request with another object (rules judge a copy, e.g. without an annotation). */
  public ReviewRequest withObject(Object other) {
    return new ReviewRequest(uid, kind, name, namespace, operation, userInfo, other, oldObject);
  }

  /**
   * An object of a kind no rule judges, skipped unread.
   *
   * @param apiVersion its apiVersion when it says one as a string, else null
   * @param kind its kind when it says one as a string, else null
   */
  public record Unread(String apiVersion, String kind) {}

  /**
   * Reads an object by its own {@code apiVersion} and {@code kind}. The API server writes those two
   * first (Go's TypeMeta): then a claim is read straight from the stream, its other fields skipped,
   * and an object of a kind no rule judges is skipped whole. Otherwise (those two later in the
   * object, or a StorageClass or StatefulSet) the object's tokens are copied once and read from the
   * copy.
   */
  static final class ObjectReader extends JsonDeserializer<Object>
      implements ResolvableDeserializer {

    private static final String API_VERSION = "apiVersion";
    private static final String KIND = "kind";

    /** Found once, when Jackson builds the request's reader. */
    private JsonDeserializer<Object> claims;

    /**
     * Found at the first object of their kind: a StatefulSet's reader loads fabric8's whole pod
     * model (some 350 classes), which a webhook that sees only claims never needs.
     */
    private volatile JsonDeserializer<Object> storageClasses;

    private volatile JsonDeserializer<Object> statefulSets;

    @Override
    public void resolve(DeserializationContext ctxt) throws JsonMappingException {
      claims = ctxt.findRootValueDeserializer(ctxt.constructType(Claim.class));
    }

    /** Which reader reads an object of this apiVersion and kind; null: none (skip it). */
    private JsonDeserializer<Object> readerOf(
        String apiVersion, String kind, DeserializationContext ctxt) throws JsonMappingException {
      if ("v1".equals(apiVersion) && "PersistentVolumeClaim".equals(kind)) {
        return claims;
      }
      if ("storage.k8s.io/v1".equals(apiVersion) && "StorageClass".equals(kind)) {
        if (storageClasses == null) {
          // Jackson caches the reader it builds: a race finds the same one twice.
          storageClasses = ctxt.findRootValueDeserializer(ctxt.constructType(StorageClass.class));
        }
        return storageClasses;
      }
      if ("apps/v1".equals(apiVersion) && "StatefulSet".equals(kind)) {
        if (statefulSets == null) {
          statefulSets = ctxt.findRootValueDeserializer(ctxt.constructType(StatefulSet.class));
        }
        return statefulSets;
      }
      return null;
    }

    @Override
    public Object deserialize(JsonParser p, DeserializationContext ctxt) throws IOException {
      if (p.currentToken() != JsonToken.START_OBJECT) {
        p.skipChildren();
        return new Unread(null, null);
      }
      String apiVersion = null;
      String kind = null;
      String pending = null; // a leading apiVersion or kind whose value is no string
      JsonToken t = p.nextToken();
      while (t == JsonToken.FIELD_NAME && (apiVersion == null || kind == null)) {
        String field = p.currentName();
        boolean typeField =
            API_VERSION.equals(field) && apiVersion == null || KIND.equals(field) && kind == null;
        if (!typeField) {
          break;
        }
        if (p.nextToken() != JsonToken.VALUE_STRING) {
          pending = field;
          break;
        }
        if (API_VERSION.equals(field)) {
          apiVersion = p.getText();
        } else {
          kind = p.getText();
        }
        t = p.nextToken();
      }
      if (pending == null && apiVersion != null && kind != null) {
        JsonDeserializer<Object> reader = readerOf(apiVersion, kind, ctxt);
        if (reader == claims) {
          // At the next field (or the end): the record reads the rest of the object.
          Claim rest = (Claim) claims.deserialize(p, ctxt);
          return new Claim(apiVersion, kind, rest.metadata(), rest.spec());
        }
        if (reader == null) {
          while (p.currentToken() == JsonToken.FIELD_NAME) {
            p.nextToken();
            p.skipChildren();
            p.nextToken();
          }
          return new Unread(apiVersion, kind);
        }
      }
      // The rest is copied as it comes, its apiVersion and kind noted on the way (a key given
      // twice is refused by the parser, so each is met at most once).
      TokenBuffer buffer = ctxt.bufferForInputBuffering(p);
      buffer.writeStartObject();
      if (apiVersion != null) {
        buffer.writeStringField(API_VERSION, apiVersion);
      }
      if (kind != null) {
        buffer.writeStringField(KIND, kind);
      }
      if (pending != null) {
        buffer.writeFieldName(pending);
        buffer.copyCurrentStructure(p);
        p.nextToken();
      }
      while (p.currentToken() == JsonToken.FIELD_NAME) {
        String field = p.currentName();
        if (p.nextToken() == JsonToken.VALUE_STRING) {
          if (API_VERSION.equals(field)) {
            apiVersion = p.getText();
          } else if (KIND.equals(field)) {
            kind = p.getText();
          }
        }
        buffer.writeFieldName(field);
        buffer.copyCurrentStructure(p);
        p.nextToken();
      }
      buffer.writeEndObject();
      JsonDeserializer<Object> reader = readerOf(apiVersion, kind, ctxt);
      if (reader == null) {
        return new Unread(apiVersion, kind);
      }
      try (JsonParser copy = buffer.asParserOnFirstToken()) {
        return reader.deserialize(copy, ctxt);
      }
    }
  }
}
