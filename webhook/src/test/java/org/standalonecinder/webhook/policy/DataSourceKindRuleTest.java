package org.standalonecinder.webhook.policy;

import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.params.provider.Arguments;

/** Native data sources (clone-data-source-kind): one named row a case. */
class DataSourceKindRuleTest extends ClaimRuleTable {

  @Override
  String rule() {
    return DataSourceKindRule.NAME;
  }

  static Stream<Arguments> rows() {
    return Stream.of(
            deny(
                "a claim data source without a name is denied",
                withDataSource(
                    target(Map.of(), "clone", "2Gi", null),
                    null,
                    "PersistentVolumeClaim",
                    null,
                    null),
                "StorageClass clone: the data source PersistentVolumeClaim apps/null does not name a claim: each must be a valid Kubernetes name; remove the data source or use another class"),
            allow("a native clone of a claim is allowed", nativeClone("src", "clone", "2Gi"), null),
            allow(
                "a native clone into another provisioner's class is not ours to judge",
                nativeClone("ghost", "other", "1Gi"),
                null),
            allow(
                "a snapshot of the claim's namespace: a restore, the provisioner checks the"
                    + " snapshot",
                withDataSource(
                    target(Map.of(), "plain", "1Gi", null),
                    "snapshot.storage.k8s.io",
                    "VolumeSnapshot",
                    "snap",
                    null),
                null),
            deny(
                "a snapshot of another namespace is denied",
                withDataSource(
                    target(Map.of(), "plain", "1Gi", null),
                    "snapshot.storage.k8s.io",
                    "VolumeSnapshot",
                    "snap",
                    "team-b"),
                "StorageClass plain: the data source VolumeSnapshot team-b/snap is in another namespace: a claim is restored only from a VolumeSnapshot of its own namespace; remove the data source or use another class"),
            allow(
                "another kind is its populator's to fill: allowed, and left alone",
                withDataSource(
                    target(Map.of(), "plain", "1Gi", null), "example.com", "Seed", "s", null),
                null),
            allow(
                "a snapshot into another provisioner's class is not ours to judge",
                withDataSource(
                    target(Map.of(), "other", "1Gi", null),
                    "snapshot.storage.k8s.io",
                    "VolumeSnapshot",
                    "snap",
                    null),
                null))
        .map(Arguments::of);
  }
}
