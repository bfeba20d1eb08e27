package org.standalonecinder.webhook.policy;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.admission.v1.AdmissionRequest;
import io.fabric8.kubernetes.api.model.authentication.UserInfo;
import io.fabric8.kubernetes.api.model.authentication.UserInfoBuilder;
import java.time.Clock;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.standalonecinder.api.ClaimRef;
import org.standalonecinder.webhook.admission.Claim;
import org.standalonecinder.webhook.admission.Decision;
import org.standalonecinder.webhook.policy.ClaimRuleTable.Cluster;

/**
 * The attack: any pod that reaches a webhook started without {@code --client-ca} writes reviews
 * naming a claim of some namespace as the source, as whoever it likes, and compares the answers.
 * Whatever that namespace holds, the answer is the same to the byte, and nothing about claims,
 * grants or anyone's rights is looked up (nor Cinder asked) to give it.
 */
class ForgedReviewTest {

  /** The source as the forger's target namespace may hold it; the first row is "no such claim". */
  static Stream<Arguments> states() {
    return Stream.of(
        state("it does not exist", c -> c.claims.clear()),
        state("it is Bound, 1Gi", c -> {}),
        state("it is Pending", c -> each(c, s -> s.getStatus().setPhase("Pending"))),
        state(
            "it is being deleted",
            c -> each(c, s -> s.getMetadata().setDeletionTimestamp("2026-11-22T09:00:00Z"))),
        state(
            "it is another provisioner's",
            c ->
                each(
                    c,
                    s ->
                        s.getMetadata()
                            .getAnnotations()
                            .put(ClonePolicy.STORAGE_PROVISIONER, "example.com/other"))),
        state("it is a Block volume", c -> each(c, s -> s.getSpec().setVolumeMode("Block"))),
        state(
            "it holds 50Gi",
            c -> each(c, s -> s.getStatus().getCapacity().put("storage", new Quantity("50Gi")))),
        state(
            "it grants clones to the forger's namespace",
            c ->
                each(
                    c, s -> s.getMetadata().getAnnotations().put(ClonePolicy.CLONE_GRANT, "apps"))),
        state(
            "a ReferenceGrant in its namespace lets the forger's namespace use it",
            c ->
                c.referenceGrants.put(
                    "team-b", List.of(CrossNamespaceRuleTest.referenceGrant("apps", null)))),
        state(
            "the forger names an admin, who may create pods there",
            c -> c.podCreators.put("team-b", java.util.Set.of("bob"))));
  }

  private static Arguments state(String name, Consumer<Cluster> setup) {
    return Arguments.of(org.junit.jupiter.api.Named.of(name, setup));
  }

  private static void each(Cluster c, Consumer<PersistentVolumeClaim> change) {
    c.claims.values().forEach(change);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("states")
  void aForgedReviewLearnsNothingOfTheSource(Consumer<Cluster> state) throws Exception {
    for (String source : List.of("apps/src", "team-b/shared")) {
      Asked asked = new Asked();
      String answer = answer(source, state, null, asked);
      assertThat(answer)
          .as("the answer about %s", source)
          .isEqualTo(answer(source, c -> c.claims.clear(), null, new Asked()));
      assertThat(asked.lookups).as("claims, grants and rights looked up").isZero();
      assertThat(asked.cinder).as("Cinder checks").isZero();
    }
  }

  /** Not a test that cannot fail: where the API server is authenticated, the webhook does look. */
  @ParameterizedTest(name = "{0}")
  @MethodSource("states")
  void withCallerAuthenticationTheWebhookLooks(Consumer<Cluster> state) throws Exception {
    Asked asked = new Asked();
    answer("apps/src", state, ClaimRuleTable.API_SERVER, asked);
    assertThat(asked.lookups).isPositive();
  }

  /** What the forger sees: mutating, its patch applied, then validating, as the API server does. */
  private static String answer(String source, Consumer<Cluster> state, String caller, Asked asked)
      throws Exception {
    Cluster cluster = new Cluster();
    state.accept(cluster);
    cluster.caller = caller;
    ClonePolicy policy =
        new ClonePolicy(
            new ClonePolicy.Settings(
                ClaimRuleTable.OURS,
                ClaimRuleTable.SA,
                CrossNamespaceRule.CrossNamespace.AUTHORIZED,
                CloneSizeRule.Undersized.RAISE,
                CinderCheckRule.CheckUnavailable.DENY,
                null,
                caller),
            asked.counting(cluster),
            asked.counting(),
            ClaimRuleTable.KEYS,
            Clock.fixed(ClaimRuleTable.NOW, ZoneOffset.UTC));
    AdmissionRequest r = new AdmissionRequest();
    r.setUid("u");
    r.setNamespace("apps");
    r.setOperation("CREATE");
    r.setObject(ClaimRuleTable.target(ClaimRuleTable.clone(source), "clone", "1Gi", null));
    r.setUserInfo(new UserInfoBuilder().withUsername("bob").withGroups("system:masters").build());
    List<String> seen = new ArrayList<>();
    Decision m = policy.review(LeanRequests.of(r), true);
    seen.add(m.allowed() + " " + m.code() + " " + m.message() + " " + m.jsonPatch());
    seen.addAll(m.warnings());
    if (m.allowed()) {
      Decision v = policy.review(LeanRequests.of(r), false);
      seen.add(v.allowed() + " " + v.code() + " " + v.message());
      seen.addAll(v.warnings());
    }
    return String.join("\n", seen);
  }

  /** Counts what the policy asks of the cluster (but the StorageClass) and of Cinder. */
  private static final class Asked {
    int lookups;
    int cinder;

    ClusterView counting(Cluster c) {
      AtomicInteger n = new AtomicInteger();
      return new ClusterView() {
        @Override
        public Optional<io.fabric8.kubernetes.api.model.storage.StorageClass> storageClass(
            String name) {
          return c.storageClass(name);
        }

        @Override
        public Optional<io.fabric8.kubernetes.api.model.PersistentVolume> volume(String name) {
          lookups++;
          return c.volume(name);
        }

        @Override
        public Optional<PersistentVolumeClaim> claim(String namespace, String name) {
          lookups++;
          return c.claim(namespace, name);
        }

        @Override
        public Map<String, String> namespaceLabels(String namespace) {
          return c.namespaceLabels(namespace);
        }

        @Override
        public boolean canCreatePods(UserInfo user, String namespace) {
          lookups++;
          return c.canCreatePods(user, namespace);
        }

        @Override
        public org.standalonecinder.api.ReferenceGrants.Page referenceGrants(
            String namespace, String next) {
          lookups++;
          return c.referenceGrants(namespace, next);
        }
      };
    }

    CloneCheck counting() {
      return (ClaimRef source, Claim claim) -> {
        cinder++;
        return Optional.empty();
      };
    }
  }
}
