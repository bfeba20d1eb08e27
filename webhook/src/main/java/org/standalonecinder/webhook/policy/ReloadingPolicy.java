package org.standalonecinder.webhook.policy;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.standalonecinder.webhook.admission.AdmissionController;
import org.standalonecinder.webhook.admission.Decision;
import org.standalonecinder.webhook.admission.ReviewRequest;

/**
 * The rules as the policy file says now. {@link #reload()} re-reads the file (a mounted ConfigMap:
 * the kubelet replaces it through a symlink, which file watchers miss, so the owner polls) and
 * swaps the rules when its text changed. A file that does not parse at start is an error for the
 * caller; later, the rules in force stay and the failure is logged once and counted, so a typo in
 * the ConfigMap never opens the gate. No file means the safe defaults.
 */
public final class ReloadingPolicy implements AdmissionController {

  private static final Logger LOG = LoggerFactory.getLogger(ReloadingPolicy.class);

  private final Path file;
  private final Function<PolicyConfig, AdmissionController> build;
  private final Counter failures;
  private volatile AdmissionController rules;
  private volatile PolicyConfig config;
  private volatile boolean valid = true;
  private String text;

  /**
   * @param file the policy file, or null for the defaults
   * @param build makes the rules for a policy
   * @throws IllegalArgumentException when the file does not parse, naming what is wrong
   */
  public ReloadingPolicy(
      Path file, Function<PolicyConfig, AdmissionController> build, MeterRegistry registry) {
    this.file = file;
    this.build = build;
    this.failures =
        Counter.builder("standalone_cinder_webhook_policy_reload_failures")
            .description("policy files that could not be read or parsed; the previous policy stays")
            .register(registry);
    Gauge.builder("standalone_cinder_webhook_policy_valid", this, p -> p.valid ? 1 : 0)
        .description("1 when the policy file in force is the one on disk, 0 when that one is bad")
        .register(registry);
    this.text = read();
    this.config = PolicyConfig.parse(text);
    this.rules = build.apply(config);
    LOG.info("policy {}: {}", file == null ? "defaults" : file, config);
  }

  /** The policy in force. */
  public PolicyConfig config() {
    return config;
  }

  /** Whether the file on disk is the policy in force (false while a bad edit is pending). */
  public boolean valid() {
    return valid;
  }

  /**
   * @return whether the rules changed
   */
  public synchronized boolean reload() {
    String next;
    try {
      next = read();
    } catch (IllegalArgumentException e) {
      return fail(null, e.getMessage());
    }
    if (next.equals(text)) {
      return false;
    }
    PolicyConfig parsed;
    try {
      parsed = PolicyConfig.parse(next);
    } catch (IllegalArgumentException e) {
      return fail(next, e.getMessage());
    }
    text = next;
    config = parsed;
    rules = build.apply(parsed);
    valid = true;
    LOG.info("policy reloaded from {}: {}", file, parsed);
    return true;
  }

  private boolean fail(String badText, String reason) {
    // Once per bad edit, not at every poll.
    if (valid || (badText != null && !badText.equals(text))) {
      LOG.warn("policy file {} is not usable, keeping the policy in force: {}", file, reason);
      failures.increment();
    }
    valid = false;
    if (badText != null) {
      text = badText;
    }
    return false;
  }

  private String read() {
    if (file == null) {
      return "";
    }
    try {
      return Files.readString(file);
    } catch (NoSuchFileException e) {
      return "";
    } catch (IOException e) {
      throw new IllegalArgumentException("cannot read " + file + ": " + e.getMessage(), e);
    }
  }

  @Override
  public Decision review(ReviewRequest request, boolean mutating) {
    return rules.review(request, mutating);
  }
}
