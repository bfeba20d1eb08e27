package org.standalonecinder.webhook.policy;

import java.util.stream.Stream;
import org.junit.jupiter.params.provider.Arguments;

/** The annotation and dataSource together (clone-two-sources): one named row a case. */
class TwoSourcesRuleTest extends ClaimRuleTable {

  @Override
  String rule() {
    return TwoSourcesRule.NAME;
  }

  static Stream<Arguments> rows() {
    return Stream.of(
            allow(
                    "the annotation and dataSource naming one source warn",
                    withDataSource(
                        target(clone("apps/src"), "clone", "2Gi", null),
                        null,
                        "PersistentVolumeClaim",
                        "src",
                        null),
                    null)
                .warns("k8s.io/CloneRequest repeats spec.dataSource; one of them is enough"),
            deny(
                "the annotation and dataSource naming two sources are denied",
                withDataSource(
                    target(clone("apps/other"), "clone", "2Gi", null),
                    null,
                    "PersistentVolumeClaim",
                    "src",
                    null),
                "k8s.io/CloneRequest names apps/other but spec.dataSource names apps/src; name one source"),
            deny(
                "the annotation and a snapshot to restore are two sources",
                withDataSource(
                    target(clone("apps/src"), "clone", "2Gi", null),
                    "snapshot.storage.k8s.io",
                    "VolumeSnapshot",
                    "snap",
                    null),
                "k8s.io/CloneRequest names apps/src but spec.dataSource names VolumeSnapshot apps/snap; name one source"))
        .map(Arguments::of);
  }
}
