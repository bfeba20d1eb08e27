package org.standalonecinder.webhook.policy;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.flipkart.zjsonpatch.JsonPatch;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.admission.v1.AdmissionRequest;
import io.fabric8.kubernetes.api.model.authentication.UserInfoBuilder;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.standalonecinder.api.ClaimAnnotations;
import org.standalonecinder.webhook.admission.AdmissionController;
import org.standalonecinder.webhook.admission.Decision;

/**
 * The attack of a forged review: mallory, who may create claims in {@code apps} only, sends a
 * hand-written AdmissionReview claiming {@code system:masters} to the webhook's port and gets a
 * valid token for {@code team-b/shared -> apps/copy}. Then she creates {@code apps/copy} with it,
 * through the real admission chain as the policy file builds it, in every setting that lets her
 * claim through without a denial: audit mode, an exempt namespace, a claim that is not ours (yet).
 * Her token must not survive the mutating endpoint, and an update must not add it later.
 */
class CloneTokenGuardTest {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String MALLORY = "mallory";

  record Row(String name, String policy, String namespace, String className) {
    @Override
    public String toString() {
      return name;
    }
  }

  static Stream<Arguments> rows() {
    return Stream.of(
            new Row("enforce mode", "", "apps", "clone"),
            new Row("audit mode", "mode: audit", "apps", "clone"),
            new Row(
                "an exempt namespace",
                "exemptNamespaces: {matchLabels: {exempt: \"true\"}}",
                "sandbox",
                "clone"),
            new Row("a claim of another provisioner's class", "", "apps", "other"),
            new Row("a class that is not ours yet", "mode: audit", "apps", "later"))
        .map(Arguments::of);
  }

  private static AdmissionController chain(String policy, ClaimRuleTable.Cluster cluster) {
    return ClaimRuleTable.chain(policy, cluster);
  }

  /** What mallory gets from the webhook's port with a review she wrote herself. */
  private static String forgedToken(String namespace) throws Exception {
    PersistentVolumeClaim wanted =
        ClaimRuleTable.target(ClaimRuleTable.clone("team-b/shared"), "clone", "1Gi", null);
    wanted.getMetadata().setNamespace(namespace);
    AdmissionRequest forged = request("CREATE", namespace, wanted, null);
    forged.setUserInfo(
        new UserInfoBuilder().withUsername("admin").withGroups("system:masters").build());
    // The fixture's authorizer: whoever the review says, "admin" may create pods in team-b.
    ClaimRuleTable.Cluster cluster = new ClaimRuleTable.Cluster();
    cluster.podCreators.put("team-b", java.util.Set.of("admin"));
    Decision d = chain("", cluster).review(LeanRequests.of(forged), true);
    assertThat(d.allowed()).as("the forged review is answered").isTrue();
    String token = JSON.readTree(d.jsonPatch()).get(0).path("value").asText();
    assertThat(token).as("a token came out of the forged review").contains(".");
    return token;
  }

  private static AdmissionRequest request(
      String op, String namespace, PersistentVolumeClaim object, PersistentVolumeClaim old) {
    AdmissionRequest r = new AdmissionRequest();
    r.setUid("u");
    r.setNamespace(namespace);
    r.setOperation(op);
    r.setObject(object);
    r.setOldObject(old);
    r.setUserInfo(new UserInfoBuilder().withUsername(MALLORY).build());
    return r;
  }

  private static PersistentVolumeClaim claim(String namespace, String className, String token) {
    PersistentVolumeClaim c =
        ClaimRuleTable.target(
            token == null
                ? ClaimRuleTable.clone("team-b/shared")
                : Map.of(
                    ClonePolicy.CLONE_REQUEST,
                    "team-b/shared",
                    ClaimAnnotations.CLONE_TOKEN,
                    token),
            className,
            "1Gi",
            null);
    c.getMetadata().setNamespace(namespace);
    return c;
  }

  @ParameterizedTest(name = "{0}: a token brought at creation is removed")
  @MethodSource("rows")
  void aForgedTokenDoesNotSurviveCreation(Row row) throws Exception {
    String token = forgedToken(row.namespace());
    AdmissionController chain = chain(row.policy(), new ClaimRuleTable.Cluster());
    PersistentVolumeClaim object = claim(row.namespace(), row.className(), token);
    AdmissionRequest create = request("CREATE", row.namespace(), object, null);

    Decision mutated = chain.review(LeanRequests.of(create), true);
    PersistentVolumeClaim stored = object;
    if (mutated.allowed()) {
      assertThat(mutated.jsonPatch()).as("the token is taken off").isNotNull();
      stored =
          JSON.treeToValue(
              JsonPatch.apply(JSON.readTree(mutated.jsonPatch()), JSON.valueToTree(object)),
              PersistentVolumeClaim.class);
      create.setObject(stored);
      Decision validated = chain.review(LeanRequests.of(create), false);
      if (validated.allowed()) {
        assertThat(stored.getMetadata().getAnnotations())
            .as("what the API server would store")
            .doesNotContainKey(ClaimAnnotations.CLONE_TOKEN);
        assertThat(mutated.warnings())
            .anyMatch(w -> w.contains(ClaimAnnotations.CLONE_TOKEN + " given was removed"));
      }
    } else {
      assertThat(mutated.message()).contains("is not allowed: you may not create pods in team-b");
    }
  }

  @ParameterizedTest(name = "{0}: a token cannot be added by an update")
  @MethodSource("rows")
  void aForgedTokenCannotBeAddedLater(Row row) throws Exception {
    String token = forgedToken(row.namespace());
    AdmissionController chain = chain(row.policy(), new ClaimRuleTable.Cluster());
    AdmissionRequest update =
        request(
            "UPDATE",
            row.namespace(),
            claim(row.namespace(), row.className(), token),
            claim(row.namespace(), row.className(), null));
    Decision validated = chain.review(LeanRequests.of(update), false);
    assertThat(validated.allowed()).isFalse();
    assertThat(validated.rules()).isEqualTo(List.of(CloneTokenRule.NAME));
    assertThat(validated.message())
        .isEqualTo(
            "standalone-cinder.io/clone-token cannot be added, changed or removed after the claim"
                + " is created");
  }
}
