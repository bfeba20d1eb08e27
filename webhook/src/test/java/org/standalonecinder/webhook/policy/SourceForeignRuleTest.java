package org.standalonecinder.webhook.policy;

import java.util.stream.Stream;
import org.junit.jupiter.params.provider.Arguments;

/** Only our own volumes as sources (clone-source-foreign): one named row a case. */
class SourceForeignRuleTest extends ClaimRuleTable {

  @Override
  String rule() {
    return SourceForeignRule.NAME;
  }

  static Stream<Arguments> rows() {
    return Stream.of(
            allow(
                    "a source as Kubernetes 1.20-1.22 annotates it (beta provisioner only) is ours",
                    target(clone("apps/src"), "clone", "2Gi", null),
                    null)
                .given(
                    c -> {
                      var ann = c.claims.get("apps/src").getMetadata().getAnnotations();
                      ann.put(
                          "volume.beta.kubernetes.io/storage-provisioner",
                          ann.remove(ClonePolicy.STORAGE_PROVISIONER));
                    }),
            deny(
                    "a source of another provisioner is denied",
                    target(clone("apps/src"), "clone", "2Gi", null),
                    "source claim apps/src was not provisioned by " + OURS)
                .given(
                    c ->
                        c.claims
                            .get("apps/src")
                            .getMetadata()
                            .getAnnotations()
                            .put(ClonePolicy.STORAGE_PROVISIONER, "example.com/other")),
            deny(
                    "a source without a Cinder volume is denied",
                    target(clone("apps/src"), "clone", "2Gi", null),
                    "source claim apps/src was not provisioned by " + OURS)
                .given(
                    c ->
                        c.claims
                            .get("apps/src")
                            .getMetadata()
                            .getAnnotations()
                            .remove(ClonePolicy.VOLUME_ID)))
        .map(Arguments::of);
  }
}
