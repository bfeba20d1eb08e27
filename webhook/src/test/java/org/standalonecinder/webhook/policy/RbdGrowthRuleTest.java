package org.standalonecinder.webhook.policy;

import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.params.provider.Arguments;

/**
 * Claims on our Ceph RBD volumes are not grown (rbd-growth): the attack is a user raising the
 * request of such a claim, which Kubernetes' expand controller would then act on. One named row a
 * case.
 */
class RbdGrowthRuleTest extends ClaimRuleTable {

  @Override
  String rule() {
    return RbdGrowthRule.NAME;
  }

  static final String IN_TREE =
      "claims on Ceph RBD volumes are not grown: PV pv-copy is an in-tree rbd volume, which"
          + " Kubernetes' own expand controller would act on too, and on Kubernetes 1.20 that can"
          + " crash the controller-manager; keep the request, or copy the data to a larger claim"
          + " (docs/provisioner.md, Expansion)";

  static final String CSI =
      "claims on Ceph RBD volumes are not grown: PV pv-copy is a ceph-csi volume, whose filesystem"
          + " only ceph-csi's node plugin could grow; keep the request, or copy the data to a larger"
          + " claim (docs/provisioner.md, Expansion)";

  /** The user's claim on PV pv-copy, asking for {@code size}. */
  static io.fabric8.kubernetes.api.model.PersistentVolumeClaim claim(
      Map<String, String> annotations, String className, String size) {
    return boundTo(target(annotations, className, size, null), "pv-copy");
  }

  static Stream<Arguments> rows() {
    return Stream.of(
            deny(
                    "growing a claim on an in-tree rbd PV of ours is denied",
                    claim(Map.of(), "plain", "3Gi"),
                    IN_TREE)
                .updating(claim(Map.of(), "plain", "1Gi"))
                .given(c -> c.volumes.put("pv-copy", pv("pv-copy", OURS, "rbd"))),
            deny(
                    "growing by a single byte is a growth too",
                    claim(Map.of(), "plain", "1073741825"),
                    IN_TREE)
                .updating(claim(Map.of(), "plain", "1Gi"))
                .given(c -> c.volumes.put("pv-copy", pv("pv-copy", OURS, "rbd"))),
            deny(
                    "growing a claim on a ceph-csi PV of ours is denied",
                    claim(Map.of(), "plain", "3Gi"),
                    CSI)
                .updating(claim(Map.of(), "plain", "1Gi"))
                .given(c -> c.volumes.put("pv-copy", pv("pv-copy", OURS, "csi"))),
            deny(
                    "a growth whose PV cannot be looked up is denied (fail closed)",
                    claim(Map.of(), "plain", "3Gi"),
                    LOOKUP_FAILED + "cannot look up persistentvolume pv-copy: Connection refused")
                .updating(claim(Map.of(), "plain", "1Gi"))
                .given(c -> c.unreachableButClasses = true)
                .fired(PolicyChain.RULE_LOOKUP_FAILED),
            allow(
                    "without the API server authenticated the PV is not looked at, the same answer"
                        + " for every volume",
                    claim(Map.of(), "plain", "3Gi"),
                    null)
                .updating(claim(Map.of(), "plain", "1Gi"))
                .given(
                    c -> {
                      c.caller = null;
                      c.volumes.put("pv-copy", pv("pv-copy", OURS, "rbd"));
                    })
                .warns(RbdGrowthRule.UNCHECKED),
            allow("growing a claim on an iSCSI PV passes", claim(Map.of(), "plain", "3Gi"), null)
                .updating(claim(Map.of(), "plain", "1Gi"))
                .given(c -> c.volumes.put("pv-copy", pv("pv-copy", OURS, "iscsi"))),
            allow(
                    "growing a clone whose source is gone passes: the clone rules judged it at"
                        + " creation",
                    claim(clone("apps/src"), "clone", "3Gi"),
                    null)
                .updating(claim(clone("apps/src"), "clone", "2Gi"))
                .given(
                    c -> {
                      c.claims.remove("apps/src");
                      c.volumes.put("pv-copy", pv("pv-copy", OURS, "iscsi"));
                    }),
            allow(
                    "an rbd claim's other updates need no lookup",
                    claim(Map.of("team", "b"), "plain", "1Gi"),
                    null)
                .updating(claim(Map.of(), "plain", "1Gi"))
                .given(
                    c -> {
                      c.volumes.put("pv-copy", pv("pv-copy", OURS, "rbd"));
                      c.unreachable = true;
                    }),
            allow(
                    "shrinking is the API server's to refuse, and needs no lookup",
                    claim(Map.of(), "plain", "1Gi"),
                    null)
                .updating(claim(Map.of(), "plain", "3Gi"))
                .given(
                    c -> {
                      c.volumes.put("pv-copy", pv("pv-copy", OURS, "rbd"));
                      c.unreachable = true;
                    }),
            allow(
                    "an unbound claim's growth passes (the API server refuses it anyway)",
                    target(Map.of(), "plain", "3Gi", null),
                    null)
                .updating(target(Map.of(), "plain", "1Gi", null)),
            allow(
                    "an rbd PV another provisioner made is theirs",
                    claim(Map.of(), "plain", "3Gi"),
                    null)
                .updating(claim(Map.of(), "plain", "1Gi"))
                .given(c -> c.volumes.put("pv-copy", pv("pv-copy", "kubernetes.io/rbd", "rbd"))),
            allow(
                    "a claim of another provisioner's class is theirs",
                    claim(Map.of(), "other", "3Gi"),
                    null)
                .updating(claim(Map.of(), "other", "1Gi"))
                .given(c -> c.volumes.put("pv-copy", pv("pv-copy", OURS, "rbd"))),
            allow("the created claim is not a growth", claim(Map.of(), "plain", "3Gi"), null)
                .given(c -> c.volumes.put("pv-copy", pv("pv-copy", OURS, "rbd"))))
        .map(Arguments::of);
  }
}
