package org.standalonecinder.webhook.policy;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.admission.v1.AdmissionRequest;
import org.standalonecinder.webhook.admission.ReviewRequest;

/**
 * The tables build their requests with fabric8's builders; the policy reads the lean request the
 * webhook reads from the wire, made here from the request's JSON as the reader makes it.
 */
final class LeanRequests {

  private static final ObjectMapper JSON = new ObjectMapper();

  private LeanRequests() {}

  static ReviewRequest of(AdmissionRequest request) {
    return JSON.convertValue(request, ReviewRequest.class);
  }
}
