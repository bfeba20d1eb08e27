package org.standalonecinder.demo;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fabric8.mockwebserver.http.Dispatcher;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.util.Map;
import java.util.Set;

/**
 * The demo cluster's authorizer: the CRUD mock API server stores objects but cannot answer a
 * SubjectAccessReview, so this answers them from a table of who may create pods where, and hands
 * everything else to the CRUD dispatcher.
 */
final class Authorizer extends Dispatcher {

  private static final String SAR = "/apis/authorization.k8s.io/v1/subjectaccessreviews";
  private static final ObjectMapper JSON = new ObjectMapper();

  private final Dispatcher crud;
  private final Map<String, Set<String>> podCreators;

  Authorizer(Dispatcher crud, Map<String, Set<String>> podCreators) {
    this.crud = crud;
    this.podCreators = podCreators;
  }

  @Override
  public MockResponse dispatch(RecordedRequest request) {
    if (!("POST".equals(request.getMethod()) && request.getPath().startsWith(SAR))) {
      return crud.dispatch(request);
    }
    try {
      JsonNode spec = JSON.readTree(request.getUtf8Body()).path("spec");
      JsonNode attrs = spec.path("resourceAttributes");
      boolean allowed =
          "create".equals(attrs.path("verb").asText())
              && "pods".equals(attrs.path("resource").asText())
              && podCreators
                  .getOrDefault(attrs.path("namespace").asText(), Set.of())
                  .contains(spec.path("user").asText());
      ObjectNode answer = JSON.createObjectNode();
      answer.put("apiVersion", "authorization.k8s.io/v1");
      answer.put("kind", "SubjectAccessReview");
      answer.set("spec", spec);
      answer.putObject("status").put("allowed", allowed);
      return new MockResponse().setResponseCode(201).setBody(answer.toString());
    } catch (Exception e) {
      return new MockResponse().setResponseCode(400).setBody(e.toString());
    }
  }

  @Override
  public void shutdown() {
    crud.shutdown();
  }
}
