package org.standalonecinder.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** StorageClass parameters: accepted spellings and every rejection, one row each. */
class ClassParametersTest {

  static Stream<Arguments> accepted() {
    return Stream.of(
        Arguments.of("none", Map.of(), new ClassParameters(null, null, null, false)),
        Arguments.of(
            "all, documented spelling",
            Map.of("type", "fast", "availability", "az1", "fsType", "xfs", "smartclone", "true"),
            new ClassParameters("fast", "az1", "xfs", true)),
        Arguments.of(
            "keys in any case",
            Map.of("TYPE", "fast", "Availability", "az1", "fstype", "ext4", "SmartClone", "FALSE"),
            new ClassParameters("fast", "az1", "ext4", false)),
        Arguments.of(
            "values trimmed",
            Map.of("type", " fast ", "smartclone", " True"),
            new ClassParameters("fast", null, null, true)),
        Arguments.of(
            "smartclone empty: the Go provisioner's form, enabled by the key's presence",
            Map.of("smartclone", ""),
            new ClassParameters(null, null, null, true)),
        Arguments.of(
            "smartclone blank is empty",
            Map.of("SmartClone", "  "),
            new ClassParameters(null, null, null, true)),
        Arguments.of(
            "ceph, documented spelling",
            Map.of("rbdForm", "csi", "cephClusterID", "b2f1-ceph.1", "cephxSecret", "cephx"),
            new ClassParameters(null, null, null, false, "csi", "b2f1-ceph.1", "cephx")),
        Arguments.of(
            "ceph, keys and form in any case",
            Map.of("RBDFORM", " RBD ", "cephclusterid", "c1"),
            new ClassParameters(null, null, null, false, "rbd", "c1", null)),
        Arguments.of(
            "iSCSI without CHAP allowed by the class",
            Map.of("iscsiChap", "Optional"),
            new ClassParameters(null, null, null, false, null, null, null, "optional")),
        Arguments.of(
            "CHAP required, said out loud",
            Map.of("iscsichap", "required"),
            new ClassParameters(null, null, null, false, null, null, null, "required")),
        Arguments.of(
            "a bound on volume size",
            Map.of("maxSizeGiB", " 500 "),
            new ClassParameters(null, null, null, false, null, null, null, null, 500)),
        Arguments.of(
            "the provisioner's own bound, said out loud",
            Map.of("maxsizegib", "65536"),
            new ClassParameters(null, null, null, false, null, null, null, null, 65536)));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("accepted")
  void accepted(String name, Map<String, String> params, ClassParameters expected) {
    assertThat(ClassParameters.parse(params)).isEqualTo(expected);
  }

  static Stream<Arguments> rejected() {
    Map<String, String> two = new LinkedHashMap<>();
    two.put("smartclone", "yes");
    two.put("iops", "100");
    return Stream.of(
        Arguments.of(
            "smartclone yes",
            Map.of("smartclone", "yes"),
            "smartclone='yes' must be \"true\" or \"false\""),
        Arguments.of("misspelt key", Map.of("smartClne", "true"), "did you mean 'smartclone'?"),
        Arguments.of(
            "a key in two spellings",
            Map.of("SmartClone", "false", "smartclone", "true"),
            "parameter smartclone is given twice (SmartClone, smartclone)"),
        Arguments.of("fs_type", Map.of("fs_type", "xfs"), "did you mean 'fsType'?"),
        Arguments.of(
            "availabilityZone", Map.of("availabilityZone", "az"), "did you mean 'availability'?"),
        Arguments.of("unknown key", Map.of("iops", "100"), "unknown parameter 'iops' (known:"),
        Arguments.of("empty type", Map.of("type", " "), "parameter type is empty"),
        Arguments.of("bad fsType", Map.of("fsType", "ext4; rm -rf"), "is not a filesystem name"),
        Arguments.of("every problem at once", two, "smartclone='yes' must be"),
        Arguments.of(
            "rbdForm krbd", Map.of("rbdForm", "krbd"), "must be \"rbd\" (the in-tree plugin"),
        Arguments.of("rbdForm empty", Map.of("rbdForm", ""), "parameter rbdForm is empty"),
        Arguments.of(
            "iscsiChap neither required nor optional",
            Map.of("iscsiChap", "none"),
            "parameter iscsiChap='none' must be \"required\" (the default) or \"optional\""),
        Arguments.of(
            "cephClusterID with a space",
            Map.of("cephClusterID", "my cluster"),
            "is not a ceph-csi clusterID"),
        Arguments.of(
            "cephxSecret not a name",
            Map.of("cephxSecret", "../admin"),
            "is not a Secret name (a DNS subdomain)"),
        Arguments.of(
            "cephxSecret in upper case",
            Map.of("cephxSecret", "Cephx"),
            "is not a Secret name (a DNS subdomain)"),
        Arguments.of(
            "misspelt ceph key", Map.of("cephxSecrets", "x"), "did you mean 'cephxSecret'?"),
        Arguments.of(
            "maxSizeGiB as a quantity",
            Map.of("maxSizeGiB", "500Gi"),
            "parameter maxSizeGiB='500Gi' must be a whole number of GiB from 1 to 65536"),
        Arguments.of("maxSizeGiB of zero", Map.of("maxSizeGiB", "0"), "from 1 to 65536"),
        Arguments.of("maxSizeGiB past 64 TiB", Map.of("maxSizeGiB", "65537"), "from 1 to 65536"),
        Arguments.of(
            "a value of 100,000 characters is quoted short",
            Map.of("maxSizeGiB", "9".repeat(100_000)),
            "='99999999999999999999999999999999999999999999999999999999999999999999999999999999"
                + "... (100000 characters)' must be"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("rejected")
  void rejected(String name, Map<String, String> params, String message) {
    assertThatThrownBy(() -> ClassParameters.parse(params))
        .isInstanceOf(InvalidClassParametersException.class)
        .hasMessageContaining(message)
        .satisfies(
            e -> {
              if (name.equals("every problem at once")) {
                assertThat(e).hasMessageContaining("unknown parameter 'iops'");
              }
            });
  }
}
