package org.standalonecinder.webhook.admission;

import io.fabric8.kubernetes.api.model.admission.v1.AdmissionRequest;

/**
 * Decides one admission request. Implementations carry no transport: they may block (API lookups),
 * so the HTTP layer calls them on a worker, never on an event loop.
 */
public interface AdmissionController {

  /**
   * @param request the review's request (v1beta1 requests arrive converted; the shape is the same)
   * @param mutating whether this is the mutating endpoint (patches allowed) or the validating one
   */
  Decision review(AdmissionRequest request, boolean mutating);
}
