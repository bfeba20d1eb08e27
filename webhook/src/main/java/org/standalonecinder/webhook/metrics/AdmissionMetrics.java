package org.standalonecinder.webhook.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import org.standalonecinder.webhook.admission.AdmissionController;
import org.standalonecinder.webhook.admission.Decision;
import org.standalonecinder.webhook.admission.ReviewRequest;

/**
 * Counts decisions by kind, endpoint, result and rule, and times them. It sits inside audit mode,
 * so a denial that audit mode turns into a warning is still counted as {@code denied} with {@code
 * mode="audit"}: that is the metric an admin watches before switching to enforce.
 *
 * <p>Metrics ({@code standalone_cinder_webhook_} prefix): {@code decisions_total{kind, endpoint,
 * result, rule, mode}} (result: allowed, warned, patched, denied; rule: the rule that had something
 * to say, or {@code none}; a decision with two rules counts once for each) and {@code
 * review_seconds{kind, endpoint}}.
 *
 * <p>A label never takes a value from a review as it is: whoever reaches the port writes the
 * review, and a series for each kind named would fill the heap. {@code kind} is one of the kinds
 * the rules judge, else {@code other}.
 */
public final class AdmissionMetrics implements AdmissionController {

  static final String DECISIONS = "standalone_cinder_webhook_decisions";
  static final String LATENCY = "standalone_cinder_webhook_review_seconds";

  /** The kinds the rules judge: each has its series, every other kind shares {@code other}. */
  static final java.util.Set<String> KINDS =
      java.util.Set.of("PersistentVolumeClaim", "StorageClass", "StatefulSet");

  private final AdmissionController rules;
  private final MeterRegistry registry;
  private final String mode;

  /**
   * @param mode {@code enforce} or {@code audit}, as the policy says
   */
  public AdmissionMetrics(AdmissionController rules, MeterRegistry registry, String mode) {
    this.rules = rules;
    this.registry = registry;
    this.mode = mode;
  }

  @Override
  public Decision review(ReviewRequest request, boolean mutating) {
    String kind = kindLabel(request);
    String endpoint = mutating ? "mutate" : "validate";
    Timer.Sample sample = Timer.start(registry);
    Decision d = rules.review(request, mutating);
    sample.stop(
        Timer.builder(LATENCY)
            .description("time to decide one admission review")
            .tags("kind", kind, "endpoint", endpoint)
            .publishPercentileHistogram()
            .register(registry));
    String result =
        !d.allowed()
            ? "denied"
            : d.jsonPatch() != null ? "patched" : d.warnings().isEmpty() ? "allowed" : "warned";
    if (d.rules().isEmpty()) {
      count(kind, endpoint, result, "none");
    } else {
      d.rules().forEach(rule -> count(kind, endpoint, result, rule));
    }
    return d;
  }

  static String kindLabel(ReviewRequest request) {
    String kind = request.kind() == null ? null : request.kind().kind();
    return kind != null && KINDS.contains(kind) ? kind : "other";
  }

  private void count(String kind, String endpoint, String result, String rule) {
    Counter.builder(DECISIONS)
        .description("admission decisions by kind, endpoint, result and rule")
        .tags("kind", kind, "endpoint", endpoint, "result", result, "rule", rule, "mode", mode)
        .register(registry)
        .increment();
  }
}
