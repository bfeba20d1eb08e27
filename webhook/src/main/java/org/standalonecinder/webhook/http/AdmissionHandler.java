package org.standalonecinder.webhook.http;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.exc.StreamReadException;
import com.fasterxml.jackson.databind.DatabindException;
import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.ext.web.RoutingContext;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.standalonecinder.api.ClaimRef;
import org.standalonecinder.webhook.admission.AdmissionController;
import org.standalonecinder.webhook.admission.Decision;
import org.standalonecinder.webhook.admission.ReviewRequest;
import org.standalonecinder.webhook.admission.WouldBlock;

/**
 * AdmissionReview JSON in, AdmissionReview JSON out, for v1 and v1beta1 (answered in the version
 * asked). Bad input gets a plain HTTP error with the reason: 415 for another content type, 400 for
 * JSON that is not an AdmissionReview with a request uid. The decision is made on the event loop
 * when it needs no lookup, else on a worker, and there cancelled when the client leaves ({@link
 * Judging}).
 */
final class AdmissionHandler implements Handler<RoutingContext> {

  /** How deep a review's JSON may nest (documented in docs/webhook.md). */
  static final int MAX_NESTING = ReviewReader.MAX_NESTING;

  private static final Logger LOG = LoggerFactory.getLogger(AdmissionHandler.class);

  private static String rootMessage(Exception e) {
    return e instanceof DatabindException d ? d.getOriginalMessage() : e.getMessage();
  }

  private final Vertx vertx;
  private final AdmissionController controller;
  private final boolean mutating;

  AdmissionHandler(Vertx vertx, AdmissionController controller, boolean mutating) {
    this.vertx = vertx;
    this.controller = controller;
    this.mutating = mutating;
  }

  @Override
  public void handle(RoutingContext ctx) {
    String type = ctx.request().getHeader("Content-Type");
    if (type == null || !type.toLowerCase().startsWith("application/json")) {
      fail(ctx, 415, "expected Content-Type application/json, got " + type);
      return;
    }
    ReviewReader.Envelope review;
    try {
      review = ReviewReader.read(ctx.body().buffer().getBytes());
    } catch (StreamReadException e) {
      fail(ctx, 400, "the body is not JSON: " + e.getOriginalMessage());
      return;
    } catch (Exception e) {
      fail(ctx, 400, "not an AdmissionReview whose request can be read: " + rootMessage(e));
      return;
    }
    String apiVersion = review == null ? null : review.apiVersion();
    if (review == null
        || !"AdmissionReview".equals(review.kind())
        || !("admission.k8s.io/v1".equals(apiVersion)
            || "admission.k8s.io/v1beta1".equals(apiVersion))) {
      fail(ctx, 400, "not an AdmissionReview of admission.k8s.io/v1 or v1beta1");
      return;
    }
    ReviewRequest request = review.request();
    String uid = request == null || request.uid() == null ? "" : request.uid();
    if (uid.isEmpty()) {
      fail(ctx, 400, "the AdmissionReview has no request.uid");
      return;
    }
    // Decided here when no lookup is needed (most reviews); the lookups refuse to block an event
    // loop (WouldBlock), and then the review is decided again on a worker.
    Decision here;
    try {
      here = controller.review(request, mutating);
    } catch (WouldBlock e) {
      here = null;
    } catch (OutOfMemoryError e) {
      throw e;
    } catch (RuntimeException | Error e) {
      // An Error too (a StackOverflowError on a hostile object): the review is answered, denied,
      // rather than left to a 500 that an Ignore entry would turn into "allowed".
      failed(ctx, apiVersion, uid, e);
      return;
    }
    if (here != null) {
      answer(ctx, apiVersion, uid, here);
      return;
    }
    Judging<Decision> judging = new Judging<>(() -> controller.review(request, mutating));
    Departures.onLeave(ctx, judging::cancel);
    vertx
        .executeBlocking(judging::run, false)
        .onComplete(
            r -> {
              if (judging.cancelled()) {
                // Nobody to answer: what it did or failed at is of no one's concern.
                LOG.debug("review {} abandoned: its client left", ClaimRef.quote(uid));
              } else if (r.succeeded()) {
                answer(ctx, apiVersion, uid, r.result());
              } else {
                failed(ctx, apiVersion, uid, r.cause());
              }
            });
  }

  private static void answer(RoutingContext ctx, String apiVersion, String uid, Decision d) {
    ctx.response().putHeader("Content-Type", "application/json").end(answer(apiVersion, uid, d));
  }

  private static void failed(RoutingContext ctx, String apiVersion, String uid, Throwable e) {
    // Quoted short: what failed may carry what a hostile review wrote.
    LOG.warn("admission of {} failed: {}", ClaimRef.quote(uid), ClaimRef.quote(e.toString()));
    // The review still gets an answer, so the API server applies its failurePolicy with our
    // reason rather than a transport error.
    answer(
        ctx,
        apiVersion,
        uid,
        Decision.deny(500, "internal-error", "internal error: " + ClaimRef.quote(e.toString())));
  }

  /**
   * The AdmissionReview answer, written field by field (a tree built first and then printed cost
   * about 6% of a review's CPU under load).
   */
  static Buffer answer(String apiVersion, String uid, Decision d) {
    ByteArrayOutputStream out = new ByteArrayOutputStream(d.jsonPatch() == null ? 160 : 512);
    try (JsonGenerator g = ReviewReader.JSON.getFactory().createGenerator(out)) {
      g.writeStartObject();
      g.writeStringField("apiVersion", apiVersion);
      g.writeStringField("kind", "AdmissionReview");
      g.writeObjectFieldStart("response");
      g.writeStringField("uid", uid);
      g.writeBooleanField("allowed", d.allowed());
      if (!d.allowed()) {
        g.writeObjectFieldStart("status");
        g.writeNumberField("code", d.code());
        g.writeStringField("message", d.message());
        g.writeEndObject();
      }
      if (!d.warnings().isEmpty()) {
        g.writeArrayFieldStart("warnings");
        for (String w : d.warnings()) {
          g.writeString(w);
        }
        g.writeEndArray();
      }
      if (d.jsonPatch() != null) {
        g.writeStringField("patchType", "JSONPatch");
        g.writeStringField(
            "patch",
            Base64.getEncoder().encodeToString(d.jsonPatch().getBytes(StandardCharsets.UTF_8)));
      }
      g.writeEndObject();
      g.writeEndObject();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write an answer in memory", e);
    }
    return Buffer.buffer(out.toByteArray());
  }

  private static void fail(RoutingContext ctx, int status, String reason) {
    ctx.response().setStatusCode(status).putHeader("Content-Type", "text/plain").end(reason + "\n");
  }
}
