package org.standalonecinder.webhook.admission;

/**
 * Decides one admission request. Implementations carry no transport. They may block (API lookups)
 * only through calls that throw {@link WouldBlock} on an event loop: the HTTP layer asks there
 * first, and again on a worker when that is thrown, so a review that needs no lookup never waits
 * for a worker. A decision must not depend on which of the two made it.
 */
public interface AdmissionController {

  /**
   * @param request the review's request (v1beta1 requests arrive converted; the shape is the same)
   * @param mutating whether this is the mutating endpoint (patches allowed) or the validating one
   */
  Decision review(ReviewRequest request, boolean mutating);
}
