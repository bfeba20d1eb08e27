package org.standalonecinder.webhook.policy;

import java.util.stream.Stream;
import org.junit.jupiter.params.provider.Arguments;
import org.standalonecinder.webhook.policy.CloneSizeRule.Undersized;

/** A clone at least as large as its source (clone-size): one named row a case. */
class CloneSizeRuleTest extends ClaimRuleTable {

  @Override
  String rule() {
    return CloneSizeRule.NAME;
  }

  static Stream<Arguments> rows() {
    return Stream.of(
            allow(
                    "a larger clone is allowed with a warning",
                    target(clone("apps/src"), "clone", "5Gi", null),
                    null)
                .warns(LARGER),
            allow(
                    "a larger block clone needs no warning",
                    target(clone("apps/src"), "clone", "5Gi", "Block"),
                    null)
                .given(c -> c.claims.put("apps/src", source("apps", "src", "2Gi", "Block"))),
            deny(
                "a clone smaller than its source is denied",
                target(clone("apps/src"), "clone", "1Gi", null),
                "source claim apps/src holds 2Gi, more than this claim requests (1Gi); request at least 2Gi"),
            allow(
                    "a clone smaller than its source is raised when the policy says so",
                    target(clone("apps/src"), "clone", "1Gi", null),
                    RAISED)
                .undersized(Undersized.RAISE)
                .warns(
                    "the request was raised from 1Gi to 2Gi, the size of source claim apps/src: a"
                        + " clone cannot be smaller than its source"),
            allow(
                    "raising and defaulting come in one patch",
                    target(clone("src"), "clone", "1Gi", null),
                    "[" + RAISED.substring(1, RAISED.length() - 1) + "," + DEFAULTED.substring(1))
                .undersized(Undersized.RAISE)
                .warns(
                    "the request was raised from 1Gi to 2Gi, the size of source claim apps/src: a"
                        + " clone cannot be smaller than its source")
                .fired(CloneSizeRule.NAME, DefaultNamespaceRule.NAME),
            deny(
                "a request that is no quantity is denied with the reason, not an internal error",
                target(clone("apps/src"), "clone", "abc", null),
                "spec.resources.requests.storage (abc) is not a quantity"),
            allow(
                    "a capacity a node wrote past the source's request raises the clone to the"
                        + " request only",
                    target(clone("apps/src"), "clone", "1Gi", null),
                    RAISED)
                .undersized(Undersized.RAISE)
                .given(c -> c.claims.put("apps/src", inflated("1000Ti")))
                .warns(
                    "the request was raised from 1Gi to 2Gi, the size of source claim apps/src: a"
                        + " clone cannot be smaller than its source"),
            deny(
                    "a capacity a node wrote past the source's request is not what the clone must"
                        + " hold",
                    target(clone("apps/src"), "clone", "1Gi", null),
                    "source claim apps/src holds 2Gi, more than this claim requests (1Gi); request at"
                        + " least 2Gi")
                .given(c -> c.claims.put("apps/src", inflated("1000Ti"))),
            deny(
                "a native clone smaller than its source is denied",
                nativeClone("src", "clone", "1Gi"),
                "source claim apps/src holds 2Gi, more than this claim requests (1Gi); request at least 2Gi"))
        .map(Arguments::of);
  }

  /** The source of 2Gi whose status capacity a compromised node rewrote. */
  private static io.fabric8.kubernetes.api.model.PersistentVolumeClaim inflated(String capacity) {
    var c = source("apps", "src", "2Gi", null);
    c.getStatus()
        .getCapacity()
        .put("storage", new io.fabric8.kubernetes.api.model.Quantity(capacity));
    return c;
  }
}
