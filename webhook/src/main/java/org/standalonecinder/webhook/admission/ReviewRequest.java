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
import io.fabric8.kubernetes.api.model.KubernetesResource;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.authentication.UserInfo;
import java.io.IOException;

/**
 * The request of an AdmissionReview (v1 and v1beta1 have the same shape), holding what the webhook
 * reads. A claim is read into the lean {@link Claim}; any other object (StorageClass, StatefulSet,
 * what a misconfigured registration sends) into fabric8's type for its kind, as fabric8 reads it.
 *
 * @param name the object's name; null or empty when the API server is to generate it
 * @param object the object as it is to be stored: a {@link Claim}, a fabric8 {@link
 *     KubernetesResource}, or null (on DELETE)
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
   * Reads an object as fabric8 would choose its type (by its own {@code apiVersion} and {@code
   * kind}), but a claim into {@link Claim}. The API server writes those two first (Go's TypeMeta):
   * then a claim is read straight from the stream, its other fields skipped. Otherwise (another
   * kind, or those two later in the object) the object's tokens are copied once and read from the
   * copy.
   */
  static final class ObjectReader extends JsonDeserializer<Object>
      implements ResolvableDeserializer {

    /**
     * Found once: fabric8's deserializer of its resources is not cached by Jackson, and a new one
     * copies fabric8's table of every kind (a StorageClass review took 20% longer looking it up).
     */
    private JsonDeserializer<Object> claims;

    private JsonDeserializer<Object> resources;

    @Override
    public void resolve(DeserializationContext ctxt) throws JsonMappingException {
      claims = ctxt.findRootValueDeserializer(ctxt.constructType(Claim.class));
      resources = ctxt.findRootValueDeserializer(ctxt.constructType(KubernetesResource.class));
    }

    private static final String API_VERSION = "apiVersion";
    private static final String KIND = "kind";

    @Override
    public Object deserialize(JsonParser p, DeserializationContext ctxt) throws IOException {
      if (p.currentToken() != JsonToken.START_OBJECT) {
        return read(ctxt.bufferAsCopyOfValue(p), ctxt);
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
      if (pending == null && isClaim(apiVersion, kind)) {
        // At the next field (or the end): the record reads the rest of the object.
        Claim rest = (Claim) claims.deserialize(p, ctxt);
        return new Claim(apiVersion, kind, rest.metadata(), rest.spec());
      }
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
        buffer.copyCurrentStructure(p);
        p.nextToken();
      }
      buffer.writeEndObject();
      return read(buffer, ctxt);
    }

    private Object read(TokenBuffer buffer, DeserializationContext ctxt) throws IOException {
      if (isClaim(buffer)) {
        try (JsonParser claim = buffer.asParserOnFirstToken()) {
          return claims.deserialize(claim, ctxt);
        }
      }
      Object other;
      try (JsonParser any = buffer.asParserOnFirstToken()) {
        other = resources.deserialize(any, ctxt);
      }
      // An object fabric8 takes for a claim that the test above did not is read as the lean claim
      // too: the rules must never see a claim they do not recognise as one.
      return other instanceof PersistentVolumeClaim c ? Claim.of(c) : other;
    }

    private static boolean isClaim(String apiVersion, String kind) {
      return "v1".equals(apiVersion) && "PersistentVolumeClaim".equals(kind);
    }

    /** Whether the object says it is a v1 PersistentVolumeClaim at its top level. */
    private static boolean isClaim(TokenBuffer buffer) throws IOException {
      String apiVersion = null;
      String kind = null;
      try (JsonParser p = buffer.asParserOnFirstToken()) {
        if (p.currentToken() != JsonToken.START_OBJECT) {
          return false;
        }
        while (p.nextToken() == JsonToken.FIELD_NAME) {
          String field = p.currentName();
          JsonToken value = p.nextToken();
          if (value == JsonToken.VALUE_STRING && API_VERSION.equals(field)) {
            apiVersion = p.getText();
          } else if (value == JsonToken.VALUE_STRING && KIND.equals(field)) {
            kind = p.getText();
          } else {
            p.skipChildren();
          }
        }
      }
      return isClaim(apiVersion, kind);
    }
  }
}
