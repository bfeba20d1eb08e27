package org.standalonecinder.webhook.policy;

import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.params.provider.Arguments;

/** A class of ours that allows cloning (clone-class): one named row a case. */
class CloneClassRuleTest extends ClaimRuleTable {

  @Override
  String rule() {
    return CloneClassRule.NAME;
  }

  static Stream<Arguments> rows() {
    return Stream.of(
            allow(
                    "a class with the Go provisioner's empty smartclone allows cloning",
                    target(clone("apps/src"), "legacy", "2Gi", null),
                    null)
                .given(c -> c.classes.put("legacy", sc("legacy", OURS, Map.of("smartclone", "")))),
            deny(
                "a class without smartclone is denied",
                target(clone("apps/src"), "plain", "2Gi", null),
                "StorageClass plain does not allow cloning: its smartclone parameter is not \"true\""),
            deny(
                "a missing class is denied",
                target(clone("apps/src"), "nope", "2Gi", null),
                "a clone needs a StorageClass of openstack.org/standalone-cinder with smartclone \"true\"; StorageClass nope does not exist"),
            deny(
                "a native clone into a class without smartclone is denied",
                nativeClone("src", "plain", "2Gi"),
                "StorageClass plain does not allow cloning: its smartclone parameter is not \"true\""))
        .map(Arguments::of);
  }
}
