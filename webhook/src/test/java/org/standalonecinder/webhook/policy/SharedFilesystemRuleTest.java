package org.standalonecinder.webhook.policy;

import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.params.provider.Arguments;

/** Access modes our volumes can serve (shared-filesystem): one named row a case. */
class SharedFilesystemRuleTest extends ClaimRuleTable {

  @Override
  String rule() {
    return SharedFilesystemRule.NAME;
  }

  static Stream<Arguments> rows() {
    return Stream.of(
            // ReadWriteMany: raw blocks only; a shared ext4/xfs corrupts.
            deny(
                "ReadWriteMany Filesystem in our class is denied",
                modes(target(Map.of(), "plain", "1Gi", "Filesystem"), "ReadWriteMany"),
                "ReadWriteMany needs volumeMode Block: a Filesystem volume (ext4, xfs) mounted read-write on several nodes at once is corrupted, since neither filesystem is cluster-aware; use volumeMode Block for software that coordinates its own writes, or ReadOnlyMany to share a filesystem read-only"),
            deny(
                "ReadWriteMany without volumeMode (Filesystem) is denied",
                modes(target(Map.of(), "plain", "1Gi", null), "ReadWriteOnce", "ReadWriteMany"),
                "ReadWriteMany needs volumeMode Block: a Filesystem volume (ext4, xfs) mounted read-write on several nodes at once is corrupted, since neither filesystem is cluster-aware; use volumeMode Block for software that coordinates its own writes, or ReadOnlyMany to share a filesystem read-only"),
            allow(
                "ReadWriteMany Block in our class is allowed",
                modes(target(Map.of(), "plain", "1Gi", "Block"), "ReadWriteMany"),
                null),
            allow(
                "ReadOnlyMany Filesystem in our class is allowed",
                modes(target(Map.of(), "plain", "1Gi", "Filesystem"), "ReadOnlyMany"),
                null),
            allow(
                "ReadWriteMany Filesystem in another provisioner's class is theirs",
                modes(target(Map.of(), "other", "1Gi", "Filesystem"), "ReadWriteMany"),
                null))
        .map(Arguments::of);
  }
}
