package org.standalonecinder.webhook.policy;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.admission.v1.AdmissionRequest;
import io.fabric8.kubernetes.api.model.apps.StatefulSetBuilder;
import io.fabric8.kubernetes.api.model.authentication.UserInfoBuilder;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.standalonecinder.webhook.admission.Decision;

/**
 * A StatefulSet whose claim templates ask for clones, judged at its own admission as the claim
 * rules will judge the claims the statefulset controller makes of them: one named row a case.
 */
class StatefulSetPolicyTest {

  record Row(
      String name,
      String operation,
      PersistentVolumeClaim template,
      Consumer<ClaimRuleTable.Cluster> setup,
      String refusal) {
    @Override
    public String toString() {
      return name;
    }
  }

  static PersistentVolumeClaim template(Map<String, String> annotations, String className) {
    return template(annotations, className, "1Gi");
  }

  static PersistentVolumeClaim template(
      Map<String, String> annotations, String className, String size) {
    PersistentVolumeClaim t = ClaimRuleTable.target(annotations, className, size, null);
    t.getMetadata().setName("data");
    t.getMetadata().setNamespace(null);
    return t;
  }

  static Stream<Arguments> rows() {
    Consumer<ClaimRuleTable.Cluster> nothing = c -> {};
    Consumer<ClaimRuleTable.Cluster> controllerMayCreatePods =
        c -> c.podCreators.put("team-b", Set.of(StatefulSetPolicy.CONTROLLER));
    return Stream.of(
            new Row(
                "a template that clones another namespace: the controller's rights do not count",
                "CREATE",
                template(ClaimRuleTable.clone("team-b/shared"), "clone"),
                controllerMayCreatePods,
                "volumeClaimTemplates data: the statefulset controller's claims would be refused:"
                    + " cloning team-b/shared into namespace apps is not allowed: the claim is"
                    + " created by system:serviceaccount:kube-system:statefulset-controller, a"
                    + " controller acting for someone else"),
            new Row(
                "a template that clones what the source grants to the namespace",
                "CREATE",
                template(ClaimRuleTable.clone("team-b/shared"), "clone"),
                c ->
                    c.claims
                        .get("team-b/shared")
                        .getMetadata()
                        .getAnnotations()
                        .put(ClonePolicy.CLONE_GRANT, "apps"),
                null),
            new Row(
                "a template that clones within the namespace",
                "CREATE",
                template(ClaimRuleTable.clone("src"), "clone", "2Gi"),
                nothing,
                null),
            new Row(
                "a template into a class without smartclone",
                "CREATE",
                template(ClaimRuleTable.clone("src"), "plain"),
                nothing,
                "StorageClass plain does not allow cloning: its smartclone parameter is not \"true\""),
            new Row(
                "a template that clones nothing",
                "CREATE",
                template(Map.of(), "plain"),
                nothing,
                null),
            new Row(
                "an update: the templates cannot change",
                "UPDATE",
                template(ClaimRuleTable.clone("team-b/shared"), "clone"),
                nothing,
                null))
        .map(Arguments::of);
  }

  /** The StatefulSet db in apps with these claim templates, created by bob (lean request). */
  static org.standalonecinder.webhook.admission.ReviewRequest statefulSet(
      String operation, java.util.List<PersistentVolumeClaim> templates) {
    AdmissionRequest r = new AdmissionRequest();
    r.setUid("u");
    r.setNamespace("apps");
    r.setOperation(operation);
    r.setObject(
        new StatefulSetBuilder()
            .withNewMetadata()
            .withName("db")
            .withNamespace("apps")
            .endMetadata()
            .withNewSpec()
            .withVolumeClaimTemplates(templates)
            .endSpec()
            .build());
    // Whoever the user: the claims are the controller's to create.
    r.setUserInfo(new UserInfoBuilder().withUsername("bob").build());
    return LeanRequests.of(r);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("rows")
  void review(Row row) {
    ClaimRuleTable.Cluster cluster = new ClaimRuleTable.Cluster();
    row.setup().accept(cluster);
    var chain = ClaimRuleTable.chain("", cluster);
    var r = statefulSet(row.operation(), java.util.List.of(row.template()));

    assertThat(chain.review(r, true).allowed()).as("the mutating endpoint never judges").isTrue();
    Decision d = chain.review(r, false);
    assertThat(d.allowed()).as(String.valueOf(d.message())).isEqualTo(row.refusal() == null);
    if (row.refusal() != null) {
      assertThat(d.rules()).containsExactly(StatefulSetPolicy.RULE);
      assertThat(d.message()).contains(row.refusal());
    }
  }

  /**
   * The amplification: one review (a dry run, or a forged review) with hundreds of templates. Those
   * that make the same claim are judged once; at most {@link StatefulSetPolicy#MAX_JUDGED} distinct
   * ones are, the rest left to the claim rules with a warning; a denial names a few templates.
   */
  @org.junit.jupiter.params.ParameterizedTest(name = "{0}")
  @org.junit.jupiter.params.provider.CsvSource(
      delimiter = '|',
      value = {
        "500 templates that clone the same source: judged once | 500 | 1 | 1 | 1 |"
            + " volumeClaimTemplates t0, t1, t2 and 497 more: the statefulset controller's",
        "40 distinct templates: 16 judged, 24 left with a warning | 40 | 40 | 16 | 16 |"
            + " volumeClaimTemplates t0:",
        "5 distinct templates: each judged | 5 | 5 | 5 | 5 | volumeClaimTemplates t4:",
      })
  void theWorkOfOneStatefulSetIsBounded(
      String name, int templates, int distinct, int judged, int refused, String says) {
    ClaimRuleTable.Cluster cluster = new ClaimRuleTable.Cluster();
    java.util.concurrent.atomic.AtomicInteger calls =
        new java.util.concurrent.atomic.AtomicInteger();
    var chain = ClaimRuleTable.chain("", cluster);
    StatefulSetPolicy policy =
        new StatefulSetPolicy(
            (request, mutating) -> {
              calls.incrementAndGet();
              return chain.review(request, mutating);
            });
    java.util.List<PersistentVolumeClaim> list = new java.util.ArrayList<>();
    for (int i = 0; i < templates; i++) {
      // Distinct by size: a clone across namespaces the controller may not make, each refused.
      PersistentVolumeClaim t =
          template(ClaimRuleTable.clone("team-b/shared"), "clone", (1 + i % distinct) + "Gi");
      t.getMetadata().setName("t" + i);
      list.add(t);
    }
    Decision d = policy.review(statefulSet("CREATE", list), false);
    assertThat(calls.get()).as("templates judged").isEqualTo(judged);
    assertThat(d.allowed()).isFalse();
    assertThat(d.message().split("volumeClaimTemplates ").length - 1).isEqualTo(refused);
    assertThat(d.message()).contains(says);
    assertThat(d.message().length()).as("the denial's length").isLessThan(16 * 600);
  }

  /** Past the cap, an otherwise allowed StatefulSet is allowed with a warning saying so. */
  @org.junit.jupiter.api.Test
  void templatesPastTheCapAreLeftToTheClaimRulesWithAWarning() {
    java.util.List<PersistentVolumeClaim> list = new java.util.ArrayList<>();
    for (int i = 0; i < 20; i++) {
      PersistentVolumeClaim t = template(ClaimRuleTable.clone("src"), "clone", (2 + i) + "Gi");
      t.getMetadata().setName("t" + i);
      list.add(t);
    }
    Decision d =
        ClaimRuleTable.chain("", new ClaimRuleTable.Cluster())
            .review(statefulSet("CREATE", list), false);
    assertThat(d.allowed()).as(String.valueOf(d.message())).isTrue();
    assertThat(d.warnings())
        .containsExactly(
            "4 volumeClaimTemplates past the first 16 distinct ones were not checked here; their"
                + " claims are judged when the statefulset controller creates them");
  }
}
