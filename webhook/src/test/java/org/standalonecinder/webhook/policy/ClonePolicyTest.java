package org.standalonecinder.webhook.policy;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.admission.v1.AdmissionRequest;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.provider.Arguments;
import org.standalonecinder.api.ClaimAnnotations;
import org.standalonecinder.webhook.policy.CloneSizeRule.Undersized;
import org.standalonecinder.webhook.policy.CrossNamespaceRule.CrossNamespace;

/** The chain of claim rules as a whole: scope, lookups, every violation at once. */
class ClonePolicyTest extends ClaimRuleTable {

  /** The chain as a whole: a lookup that fails; rows where other rules speak say which. */
  @Override
  String rule() {
    return PolicyChain.RULE_LOOKUP_FAILED;
  }

  static Stream<Arguments> rows() {
    return Stream.of(
            deny(
                    "a well-formed clone while the API server is unreachable fails closed",
                    target(clone("apps/src"), "clone", "2Gi", null),
                    LOOKUP_FAILED + "cannot look up storageclass clone: Connection refused")
                .given(c -> c.unreachable = true),
            deny(
                    "a source lookup that fails denies, and no token is signed meanwhile",
                    target(clone("team-b/shared"), "clone", "1Gi", null),
                    LOOKUP_FAILED
                        + "cannot look up persistentvolumeclaim team-b/shared: Connection refused")
                .given(
                    c -> {
                      c.claims.remove("team-b/shared");
                      c.failingClaims = true;
                    })
                .by("bob"),
            deny(
                    "an update that would be denied is denied with its violation when unreachable",
                    target(clone("apps/other"), "clone", "2Gi", null),
                    "k8s.io/CloneRequest cannot change after the claim is created"
                        + REST_UNCHECKED
                        + "clone: Connection refused")
                .given(c -> c.unreachable = true)
                .updating(target(clone("apps/src"), "clone", "2Gi", null))
                .fired(CloneRequestImmutableRule.NAME, PolicyChain.RULE_LOOKUP_FAILED),
            allow(
                    "an update that changes nothing of ours needs no lookup",
                    boundTo(target(clone("apps/src"), "clone", "2Gi", null), "pv-copy"),
                    null)
                .given(c -> c.unreachable = true)
                .updating(target(clone("apps/src"), "clone", "2Gi", null)),
            allow(
                "a claim without clone annotations passes",
                target(Map.of(), "plain", "1Gi", null),
                null),
            allow(
                    "a plain claim needs no lookup (an API server hiccup blocks no claim)",
                    target(Map.of(), "plain", "1Gi", null),
                    null)
                .given(c -> c.unreachable = true),
            deny(
                    "a raise never hides another violation",
                    target(clone("apps/src"), "plain", "1Gi", null),
                    "StorageClass plain does not allow cloning: its smartclone parameter is not \"true\"")
                .undersized(Undersized.RAISE)
                .fired(CloneClassRule.NAME, CloneSizeRule.NAME),
            // Claims of other provisioners (KubeVirt's CDI marks its own clones with the same
            // annotations) pass untouched: no denial, no patch, no warning.
            allow(
                "another provisioner's clone request passes untouched",
                target(clone("apps/src"), "other", "2Gi", null),
                null),
            allow(
                "another provisioner's clone request by name only is not defaulted",
                target(clone("src"), "other", "1Gi", null),
                null),
            allow(
                "another provisioner's clone request of a missing source passes",
                target(clone("apps/ghost"), "other", "1Gi", null),
                null),
            allow(
                "another provisioner's malformed clone request passes",
                target(clone("a/src/x"), "other", "1Gi", null),
                null),
            allow(
                "another provisioner's cross-namespace clone request passes, with no token",
                target(clone("team-b/shared"), "other", "1Gi", null),
                null),
            allow(
                "another provisioner's CloneOf at creation passes",
                target(Map.of(ClonePolicy.CLONE_OF, "apps/src"), "other", "1Gi", null),
                null),
            allow(
                "another provisioner's token annotation passes",
                target(
                    Map.of(
                        ClonePolicy.CLONE_REQUEST, "apps/src", ClaimAnnotations.CLONE_TOKEN, "x.y"),
                    "other",
                    "2Gi",
                    null),
                null),
            allow(
                    "another provisioner's smaller clone passes (no raise, no warning)",
                    target(clone("apps/src"), "other", "1Gi", null),
                    null)
                .undersized(Undersized.RAISE),
            allow(
                "another provisioner's native clone with a clone request passes",
                withDataSource(
                    target(clone("apps/src"), "other", "1Gi", "Block"),
                    null,
                    "PersistentVolumeClaim",
                    "elsewhere",
                    null),
                null),
            allow(
                "another provisioner's populator data source passes",
                withDataSource(
                    target(Map.of(), "other", "1Gi", null),
                    "cdi.kubevirt.io",
                    "VolumeImportSource",
                    "img",
                    null),
                null),
            allow(
                    "another provisioner's CloneOf set by its controller on update passes",
                    target(
                        Map.of(
                            ClonePolicy.CLONE_REQUEST,
                            "apps/src",
                            ClonePolicy.CLONE_OF,
                            "apps/src"),
                        "other",
                        "2Gi",
                        null),
                    null)
                .updating(target(clone("apps/src"), "other", "2Gi", null))
                .by("system:serviceaccount:cdi:cdi-sa"),
            allow(
                    "another provisioner's clone request changed on update passes",
                    target(clone("apps/other"), "other", "2Gi", null),
                    null)
                .updating(target(clone("apps/src"), "other", "2Gi", null)),
            allow(
                "a clone request without any class (static binding) passes untouched",
                target(clone("apps/src"), null, "2Gi", null),
                null),
            allow(
                "a clone request with the empty class (static binding) passes untouched",
                target(clone("apps/ghost"), "", "2Gi", null),
                null),
            deny(
                    "a ReadWriteMany Filesystem clone into a class without smartclone: both said",
                    modes(target(clone("apps/src"), "plain", "2Gi", null), "ReadWriteMany"),
                    "ReadWriteMany needs volumeMode Block: a Filesystem volume (ext4, xfs) mounted read-write on several nodes at once is corrupted, since neither filesystem is cluster-aware; use volumeMode Block for software that coordinates its own writes, or ReadOnlyMany to share a filesystem read-only; StorageClass plain does not allow cloning: its smartclone parameter is not \"true\"")
                .fired(CloneClassRule.NAME, SharedFilesystemRule.NAME),
            allow(
                    "ReadWriteOnce Filesystem needs no lookup",
                    target(Map.of(), "plain", "1Gi", "Filesystem"),
                    null)
                .given(c -> c.unreachable = true),
            deny(
                    "every violation is reported at once",
                    target(
                        Map.of(ClonePolicy.CLONE_REQUEST, "apps/src", ClonePolicy.CLONE_OF, "y"),
                        "plain",
                        "1Gi",
                        "Block"),
                    "k8s.io/CloneOf is set by the provisioner only; remove it; StorageClass plain does not allow cloning: its smartclone parameter is not \"true\"; source claim apps/src has volumeMode Filesystem and this claim Block; they must match; source claim apps/src holds 2Gi, more than this claim requests (1Gi); request at least 2Gi")
                .fired(
                    CloneClassRule.NAME, CloneOfRule.NAME, CloneSizeRule.NAME, VolumeModeRule.NAME))
        .map(Arguments::of);
  }

  /** Found by the fuzzer: a review whose claim has no namespace anywhere. */
  @Test
  void aClaimWithoutANamespaceIsRefusedNotCrashedOn() {
    PersistentVolumeClaim claim = target(clone("src"), "clone", "2Gi", null);
    claim.getMetadata().setNamespace(null);
    AdmissionRequest r = new AdmissionRequest();
    r.setUid("u");
    r.setOperation("CREATE");
    r.setObject(claim);
    var d =
        new ClonePolicy(
                new ClonePolicy.Settings(OURS, SA, CrossNamespace.AUTHORIZED), new Cluster())
            .review(LeanRequests.of(r), true);
    assertThat(d.allowed()).isFalse();
    assertThat(d.code()).isEqualTo(400);
    assertThat(d.message())
        .isEqualTo("the request names no namespace for this claim; it cannot be judged");
  }
}
