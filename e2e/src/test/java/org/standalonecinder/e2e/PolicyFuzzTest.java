package org.standalonecinder.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaimBuilder;
import io.fabric8.kubernetes.api.model.authentication.UserInfo;
import io.fabric8.kubernetes.api.model.storage.StorageClass;
import io.fabric8.kubernetes.api.model.storage.StorageClassBuilder;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.standalonecinder.webhook.admission.AdmissionController;
import org.standalonecinder.webhook.admission.Decision;
import org.standalonecinder.webhook.http.ReviewReader;
import org.standalonecinder.webhook.policy.CloneCheck;
import org.standalonecinder.webhook.policy.ClusterView;
import org.standalonecinder.webhook.policy.PolicyChain;
import org.standalonecinder.webhook.policy.PolicyConfig;

/**
 * The policy on the fuzzer's hostile corpus, in a cluster where every class is ours and every
 * source claim exists: every review the webhook can read is decided, on either endpoint, without an
 * internal error. The end-to-end fuzzer (WebhookFuzzE2EIT) sends the same corpus through the
 * server, but against a real cluster where most sources do not exist, so the rules behind a lookup
 * see little of it; here they see all of it.
 */
class PolicyFuzzTest {

  static final int CASES = Integer.getInteger("policy.fuzz.cases", 20_000);
  static final long SEED = Long.getLong("policy.fuzz.seed", System.currentTimeMillis());

  private static final String OURS = "openstack.org/standalone-cinder";

  /** A cluster where every class is ours and every source claim exists, bound, of 1Gi. */
  static final ClusterView CLUSTER =
      new ClusterView() {
        @Override
        public Optional<StorageClass> storageClass(String name) {
          return Optional.of(
              new StorageClassBuilder()
                  .withNewMetadata()
                  .withName(name)
                  .endMetadata()
                  .withProvisioner(OURS)
                  .withParameters(Map.of("smartclone", "true"))
                  .build());
        }

        @Override
        public org.standalonecinder.api.ReferenceGrants.Page referenceGrants(
            String namespace, String next) {
          return org.standalonecinder.api.ReferenceGrants.Page.of(List.of());
        }

        @Override
        public Optional<io.fabric8.kubernetes.api.model.PersistentVolume> volume(String name) {
          return Optional.empty();
        }

        @Override
        public Optional<PersistentVolumeClaim> claim(String namespace, String name) {
          return Optional.of(
              new PersistentVolumeClaimBuilder()
                  .withMetadata(
                      new ObjectMetaBuilder()
                          .withName(name)
                          .withNamespace(namespace)
                          .withAnnotations(Map.of("cinder.openstack.org/volume-id", "v-1"))
                          .build())
                  .withNewSpec()
                  .withStorageClassName("e2e-cinder")
                  .withVolumeName("pv-1")
                  .withNewResources()
                  .addToRequests("storage", new io.fabric8.kubernetes.api.model.Quantity("1Gi"))
                  .endResources()
                  .endSpec()
                  .withNewStatus()
                  .withPhase("Bound")
                  .addToCapacity("storage", new io.fabric8.kubernetes.api.model.Quantity("1Gi"))
                  .endStatus()
                  .build());
        }

        @Override
        public Map<String, String> namespaceLabels(String namespace) {
          return Map.of();
        }

        @Override
        public boolean canCreatePods(UserInfo user, String namespace) {
          return "alice".equals(user.getUsername());
        }
      };

  static final AdmissionController POLICY =
      PolicyChain.build(
          PolicyConfig.DEFAULTS,
          OURS,
          "system:serviceaccount:standalone-cinder:standalone-cinder",
          CLUSTER,
          CloneCheck.NONE,
          null,
          Clock.fixed(Instant.parse("2026-11-26T00:00:00Z"), ZoneOffset.UTC),
          new SimpleMeterRegistry(),
          // Senders authenticated: the requester's rights are asked, so that path is fuzzed too.
          "client certificate [kube-apiserver]");

  @Test
  void everyReadableReviewIsDecidedWithoutAnInternalError() {
    HostileReviews corpus = new HostileReviews(SEED);
    List<String> failures = new ArrayList<>();
    int decided = 0;
    for (int n = 0; n < CASES && failures.size() < 20; n++) {
      HostileReviews.Case c = corpus.next(n);
      ReviewReader.Envelope review;
      try {
        review = ReviewReader.read(c.body() == null ? new byte[0] : c.body());
      } catch (Exception e) {
        continue; // refused with 400 before any rule
      }
      if (review == null || review.request() == null || review.request().uid() == null) {
        continue;
      }
      for (boolean mutating : new boolean[] {true, false}) {
        Decision d = decide(review, mutating);
        if (d.code() >= 500) {
          failures.add("case " + n + " (" + c.what() + ", seed " + SEED + "): " + d);
        }
      }
      decided++;
    }
    assertThat(failures).as("internal errors").isEmpty();
    // The corpus reaches the policy, not only the parser's refusals.
    assertThat(decided).isGreaterThan(CASES / 10);
  }

  private static Decision decide(ReviewReader.Envelope review, boolean mutating) {
    try {
      return POLICY.review(review.request(), mutating);
    } catch (RuntimeException e) {
      return Decision.deny(500, "exception", e.toString());
    }
  }
}
