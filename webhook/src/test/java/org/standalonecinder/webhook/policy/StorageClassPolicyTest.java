package org.standalonecinder.webhook.policy;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.admission.v1.AdmissionRequest;
import io.fabric8.kubernetes.api.model.storage.StorageClassBuilder;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.standalonecinder.webhook.admission.Decision;

/** One named row per case: allowed or denied, the exact patch, the message. */
class StorageClassPolicyTest {

  private static final String OURS = "openstack.org/standalone-cinder";
  private static final ObjectMapper JSON = new ObjectMapper();
  private final StorageClassPolicy policy = new StorageClassPolicy(OURS);

  private static Map<String, String> params(String... kv) {
    Map<String, String> m = new LinkedHashMap<>();
    for (int i = 0; i < kv.length; i += 2) {
      m.put(kv[i], kv[i + 1]);
    }
    return m;
  }

  private static AdmissionRequest request(
      String operation, String provisioner, Map<String, String> params) {
    AdmissionRequest r = new AdmissionRequest();
    r.setUid("u");
    r.setOperation(operation);
    r.setObject(
        new StorageClassBuilder()
            .withNewMetadata()
            .withName("fast")
            .endMetadata()
            .withProvisioner(provisioner)
            .withParameters(params)
            .build());
    return r;
  }

  static Arguments row(
      String name,
      String op,
      String provisioner,
      Map<String, String> params,
      boolean mutating,
      boolean allowed,
      String patchOrMessage) {
    return Arguments.of(name, op, provisioner, params, mutating, allowed, patchOrMessage);
  }

  static Stream<Arguments> cases() {
    return Stream.of(
        row(
            "another provisioner's class passes untouched",
            "CREATE",
            "example.com/other",
            params("smartClne", "x"),
            true,
            true,
            null),
        row("no parameters", "CREATE", OURS, params(), true, true, null),
        row(
            "documented spelling needs no patch",
            "CREATE",
            OURS,
            params("type", "fast", "smartclone", "true"),
            true,
            true,
            null),
        row(
            "smartclone false stays",
            "CREATE",
            OURS,
            params("smartclone", "false"),
            true,
            true,
            null),
        row(
            "SmartClone TRUE is normalised",
            "CREATE",
            OURS,
            params("SmartClone", "TRUE"),
            true,
            true,
            "[{\"op\":\"remove\",\"path\":\"/parameters/SmartClone\"},{\"op\":\"add\",\"path\":\"/parameters/smartclone\",\"value\":\"true\"}]"),
        row(
            "smartClone true is renamed",
            "CREATE",
            OURS,
            params("smartClone", "true"),
            true,
            true,
            "[{\"op\":\"move\",\"from\":\"/parameters/smartClone\",\"path\":\"/parameters/smartclone\"}]"),
        row(
            "smartclone True becomes true",
            "CREATE",
            OURS,
            params("smartclone", "True"),
            true,
            true,
            "[{\"op\":\"replace\",\"path\":\"/parameters/smartclone\",\"value\":\"true\"}]"),
        row(
            "smartclone empty (the Go provisioner's form) becomes true, with why",
            "CREATE",
            OURS,
            params("smartclone", ""),
            true,
            true,
            "[{\"op\":\"replace\",\"path\":\"/parameters/smartclone\",\"value\":\"true\"}]"),
        row(
            "the validating endpoint lets an empty smartclone through unpatched",
            "CREATE",
            OURS,
            params("smartclone", ""),
            false,
            true,
            null),
        row(
            "the validating endpoint never patches",
            "CREATE",
            OURS,
            params("SmartClone", "TRUE"),
            false,
            true,
            null),
        row(
            "smartclone yes is denied",
            "CREATE",
            OURS,
            params("smartclone", "yes"),
            true,
            false,
            "smartclone='yes' must be \"true\" or \"false\""),
        row(
            "misspelt smartclone gets a suggestion",
            "CREATE",
            OURS,
            params("smartClne", "true"),
            true,
            false,
            "unknown parameter 'smartClne'; did you mean 'smartclone'?"),
        row(
            "unknown key lists the known ones",
            "CREATE",
            OURS,
            params("iops", "100"),
            false,
            false,
            "known parameters: [type, availability, fsType, smartclone, rbdForm, cephClusterID,"
                + " cephxSecret, iscsiChap, maxSizeGiB]"),
        row(
            "the Ceph parameters pass untouched",
            "CREATE",
            OURS,
            params("rbdForm", "csi", "cephClusterID", "ceph-a", "cephxSecret", "cephx"),
            true,
            true,
            null),
        row(
            "an RBD form that is none is denied at admission",
            "CREATE",
            OURS,
            params("rbdForm", "krbd"),
            true,
            false,
            "rbdForm='krbd' must be \"rbd\" (the in-tree plugin, Kubernetes up to 1.30) or"
                + " \"csi\""),
        row(
            "every problem at once",
            "CREATE",
            OURS,
            params("iops", "1", "smartclone", "maybe"),
            true,
            false,
            "unknown parameter 'iops'"),
        row(
            "a bad fsType is denied",
            "CREATE",
            OURS,
            params("fsType", "ext4; rm -rf /"),
            true,
            false,
            "is not a filesystem name"),
        row(
            "updates are checked too",
            "UPDATE",
            OURS,
            params("smartclone", "yes"),
            true,
            false,
            "must be \"true\" or \"false\""),
        row("a delete is never blocked", "DELETE", OURS, params("iops", "1"), true, true, null));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("cases")
  void review(
      String name,
      String op,
      String provisioner,
      Map<String, String> params,
      boolean mutating,
      boolean allowed,
      String patchOrMessage)
      throws Exception {
    Decision d = policy.review(LeanRequests.of(request(op, provisioner, params)), mutating);
    assertThat(d.allowed()).isEqualTo(allowed);
    if (allowed) {
      if (patchOrMessage == null) {
        assertThat(d.jsonPatch()).isNull();
        assertThat(d.warnings()).isEmpty();
      } else {
        assertThat(JSON.readTree(d.jsonPatch())).isEqualTo(JSON.readTree(patchOrMessage));
        // Every rewrite is announced: which parameter, as written, and as stored.
        String key =
            params.keySet().stream()
                .filter(k -> k.equalsIgnoreCase("smartclone"))
                .findFirst()
                .get();
        assertThat(d.warnings())
            .containsExactly(
                "parameter "
                    + key
                    + ": \""
                    + params.get(key)
                    + "\" is stored as smartclone: \""
                    + (params.get(key).isEmpty()
                        ? "true\"" + StorageClassPolicy.LEGACY_EMPTY
                        : params.get(key).toLowerCase(java.util.Locale.ROOT) + "\""));
      }
      assertThat(d.message()).isNull();
    } else {
      assertThat(d.code()).isEqualTo(400);
      assertThat(d.message()).contains("StorageClass fast of " + OURS).contains(patchOrMessage);
      assertThat(d.jsonPatch()).isNull();
    }
  }

  /**
   * An admin's class of in-tree rbd volumes that allows expansion, made so or changed so later: its
   * claims could be grown by users into Kubernetes' own expand controller. Denied on both
   * endpoints; the csi form and a class that does not allow expansion pass.
   */
  @ParameterizedTest(name = "{0}")
  @org.junit.jupiter.params.provider.CsvSource(
      delimiter = '|',
      value = {
        "in-tree rbd, expansion allowed at creation: denied | CREATE | rbd | true | false",
        "in-tree rbd, expansion allowed later: denied | UPDATE | rbd | true | false",
        "in-tree rbd, spelled RBD: denied | CREATE | RBD | true | false",
        "in-tree rbd, no expansion: allowed | CREATE | rbd | false | true",
        "the csi form, expansion allowed: allowed | UPDATE | csi | true | true",
      })
  void aClassOfInTreeRbdVolumesDoesNotAllowExpansion(
      String name, String op, String form, boolean expansion, boolean allowed) {
    for (boolean mutating : new boolean[] {true, false}) {
      AdmissionRequest r = request(op, OURS, params("rbdForm", form));
      ((io.fabric8.kubernetes.api.model.storage.StorageClass) r.getObject())
          .setAllowVolumeExpansion(expansion);
      Decision d = policy.review(LeanRequests.of(r), mutating);
      assertThat(d.allowed()).as("mutating %s", mutating).isEqualTo(allowed);
      if (!allowed) {
        assertThat(d.message())
            .contains("StorageClass fast asks for in-tree rbd volumes (rbdForm: rbd)")
            .contains("remove allowVolumeExpansion, or use rbdForm: csi");
      }
    }
  }
}
