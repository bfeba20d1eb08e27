package org.standalonecinder.webhook.policy;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaimBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.admission.v1.AdmissionRequest;
import io.fabric8.kubernetes.api.model.authentication.UserInfo;
import io.fabric8.kubernetes.api.model.authentication.UserInfoBuilder;
import io.fabric8.kubernetes.api.model.storage.StorageClass;
import io.fabric8.kubernetes.api.model.storage.StorageClassBuilder;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.standalonecinder.webhook.admission.Decision;
import org.standalonecinder.webhook.policy.ClonePolicy.CrossNamespace;

/** The clone rules, one named row a case: allowed or denied, the exact patch, the message. */
class ClonePolicyTest {

  private static final String OURS = "openstack.org/standalone-cinder";
  private static final String SA =
      "system:serviceaccount:standalone-cinder:standalone-cinder-provisioner";
  private static final ObjectMapper JSON = new ObjectMapper();

  /** The cluster a row sees: classes, claims, and who may create pods where. */
  static final class Cluster implements ClusterView {
    final Map<String, StorageClass> classes = new HashMap<>();
    final Map<String, PersistentVolumeClaim> claims = new HashMap<>();
    final Map<String, Set<String>> podCreators = new HashMap<>();

    Cluster() {
      classes.put("clone", sc("clone", OURS, Map.of("smartclone", "true")));
      classes.put("plain", sc("plain", OURS, Map.of()));
      classes.put("other", sc("other", "example.com/other", Map.of("smartclone", "true")));
      claims.put("apps/src", source("apps", "src", "2Gi", null));
      claims.put("team-b/shared", source("team-b", "shared", "1Gi", null));
      podCreators.put("team-b", Set.of("bob"));
    }

    @Override
    public Optional<StorageClass> storageClass(String name) {
      return Optional.ofNullable(classes.get(name));
    }

    @Override
    public Optional<PersistentVolumeClaim> claim(String namespace, String name) {
      return Optional.ofNullable(claims.get(namespace + "/" + name));
    }

    @Override
    public Map<String, String> namespaceLabels(String namespace) {
      return namespace.equals("sandbox") ? Map.of("exempt", "true") : Map.of();
    }

    @Override
    public boolean canCreatePods(UserInfo user, String namespace) {
      return podCreators.getOrDefault(namespace, Set.of()).contains(user.getUsername());
    }
  }

  static StorageClass sc(String name, String provisioner, Map<String, String> params) {
    return new StorageClassBuilder()
        .withNewMetadata()
        .withName(name)
        .endMetadata()
        .withProvisioner(provisioner)
        .withParameters(params)
        .build();
  }

  static PersistentVolumeClaim source(String ns, String name, String size, String mode) {
    return new PersistentVolumeClaimBuilder()
        .withNewMetadata()
        .withNamespace(ns)
        .withName(name)
        .addToAnnotations(ClonePolicy.STORAGE_PROVISIONER, OURS)
        .addToAnnotations(ClonePolicy.VOLUME_ID, "vol-" + name)
        .endMetadata()
        .withNewSpec()
        .withStorageClassName("clone")
        .withVolumeMode(mode)
        .withNewResources()
        .addToRequests("storage", new Quantity(size))
        .endResources()
        .endSpec()
        .withNewStatus()
        .withPhase("Bound")
        .addToCapacity("storage", new Quantity(size))
        .endStatus()
        .build();
  }

  static PersistentVolumeClaim target(
      Map<String, String> annotations, String className, String size, String mode) {
    return new PersistentVolumeClaimBuilder()
        .withNewMetadata()
        .withNamespace("apps")
        .withName("copy")
        .withAnnotations(annotations)
        .endMetadata()
        .withNewSpec()
        .withStorageClassName(className)
        .withVolumeMode(mode)
        .withAccessModes("ReadWriteOnce")
        .withNewResources()
        .addToRequests("storage", new Quantity(size))
        .endResources()
        .endSpec()
        .build();
  }

  static Map<String, String> clone(String value) {
    return Map.of(ClonePolicy.CLONE_REQUEST, value);
  }

  record Row(
      String name,
      Consumer<Cluster> setup,
      PersistentVolumeClaim object,
      PersistentVolumeClaim old,
      String user,
      CrossNamespace mode,
      boolean allowed,
      String patchOrMessage) {
    @Override
    public String toString() {
      return name;
    }
  }

  static Row create(
      String name, PersistentVolumeClaim object, boolean allowed, String patchOrMessage) {
    return new Row(
        name, c -> {}, object, null, "alice", CrossNamespace.AUTHORIZED, allowed, patchOrMessage);
  }

  static final String DEFAULTED =
      "[{\"op\":\"replace\",\"path\":\"/metadata/annotations/k8s.io~1CloneRequest\",\"value\":\"apps/src\"}]";

  static Stream<Arguments> rows() {
    return Stream.of(
            create(
                "a claim without clone annotations passes",
                target(Map.of(), "plain", "1Gi", null),
                true,
                null),
            create(
                "same-namespace clone by name is defaulted to namespace/name",
                target(clone("src"), "clone", "2Gi", null),
                true,
                DEFAULTED),
            create(
                "same-namespace clone with namespace needs no patch",
                target(clone("apps/src"), "clone", "2Gi", null),
                true,
                null),
            create(
                "a larger clone is fine",
                target(clone("apps/src"), "clone", "5Gi", null),
                true,
                null),
            create(
                "a clone smaller than its source is denied",
                target(clone("apps/src"), "clone", "1Gi", null),
                false,
                "holds 2Gi, more than this claim requests"),
            create(
                "an empty CloneRequest is denied",
                target(clone(""), "clone", "2Gi", null),
                false,
                "must be <claim> or <namespace>/<claim>"),
            create(
                "three parts are denied",
                target(clone("a/b/c"), "clone", "2Gi", null),
                false,
                "must be <claim> or <namespace>/<claim>"),
            create(
                "upper case names are denied",
                target(clone("apps/Src"), "clone", "2Gi", null),
                false,
                "each a valid Kubernetes name"),
            create(
                "a class without smartclone is denied",
                target(clone("apps/src"), "plain", "2Gi", null),
                false,
                "does not allow cloning"),
            create(
                "another provisioner's class is denied",
                target(clone("apps/src"), "other", "2Gi", null),
                false,
                "belongs to example.com/other"),
            create(
                "a missing class is denied",
                target(clone("apps/src"), "nope", "2Gi", null),
                false,
                "StorageClass nope does not exist"),
            create(
                "no class at all is denied",
                target(clone("apps/src"), null, "2Gi", null),
                false,
                "the claim names none"),
            create(
                "a missing source is denied",
                target(clone("apps/ghost"), "clone", "2Gi", null),
                false,
                "source claim apps/ghost does not exist"),
            create(
                "a different volumeMode is denied",
                target(clone("apps/src"), "clone", "2Gi", "Block"),
                false,
                "has volumeMode Filesystem and this claim Block"),
            new Row(
                "an unbound source is denied",
                c -> c.claims.get("apps/src").getStatus().setPhase("Pending"),
                target(clone("apps/src"), "clone", "2Gi", null),
                null,
                "alice",
                CrossNamespace.AUTHORIZED,
                false,
                "is not Bound yet"),
            new Row(
                "a deleting source is denied",
                c ->
                    c.claims
                        .get("apps/src")
                        .getMetadata()
                        .setDeletionTimestamp("2026-11-22T00:00:00Z"),
                target(clone("apps/src"), "clone", "2Gi", null),
                null,
                "alice",
                CrossNamespace.AUTHORIZED,
                false,
                "is being deleted"),
            new Row(
                "a source of another provisioner is denied",
                c ->
                    c.claims
                        .get("apps/src")
                        .getMetadata()
                        .getAnnotations()
                        .put(ClonePolicy.STORAGE_PROVISIONER, "example.com/other"),
                target(clone("apps/src"), "clone", "2Gi", null),
                null,
                "alice",
                CrossNamespace.AUTHORIZED,
                false,
                "was not provisioned by " + OURS),
            create(
                "cross-namespace without authorization is denied",
                target(clone("team-b/shared"), "clone", "1Gi", null),
                false,
                "you may not create pods in team-b"),
            new Row(
                "cross-namespace by someone who may create pods there",
                c -> {},
                target(clone("team-b/shared"), "clone", "1Gi", null),
                null,
                "bob",
                CrossNamespace.AUTHORIZED,
                true,
                null),
            new Row(
                "cross-namespace with a grant on the source",
                c ->
                    c.claims
                        .get("team-b/shared")
                        .getMetadata()
                        .getAnnotations()
                        .put(ClonePolicy.CLONE_GRANT, "ops, apps"),
                target(clone("team-b/shared"), "clone", "1Gi", null),
                null,
                "alice",
                CrossNamespace.AUTHORIZED,
                true,
                null),
            new Row(
                "a grant to another namespace does not count",
                c ->
                    c.claims
                        .get("team-b/shared")
                        .getMetadata()
                        .getAnnotations()
                        .put(ClonePolicy.CLONE_GRANT, "ops"),
                target(clone("team-b/shared"), "clone", "1Gi", null),
                null,
                "alice",
                CrossNamespace.AUTHORIZED,
                false,
                "grants no clone to apps"),
            new Row(
                "cross-namespace denied by policy even for bob",
                c -> {},
                target(clone("team-b/shared"), "clone", "1Gi", null),
                null,
                "bob",
                CrossNamespace.DENY,
                false,
                "is not allowed"),
            new Row(
                "cross-namespace allowed by policy",
                c -> {},
                target(clone("team-b/shared"), "clone", "1Gi", null),
                null,
                "alice",
                CrossNamespace.ALLOW,
                true,
                null),
            create(
                "a missing cross-namespace source looks like a forbidden one",
                target(clone("team-b/ghost"), "clone", "1Gi", null),
                false,
                "is not allowed"),
            new Row(
                "an authorized user learns that a cross-namespace source is missing",
                c -> {},
                target(clone("team-b/ghost"), "clone", "1Gi", null),
                null,
                "bob",
                CrossNamespace.AUTHORIZED,
                false,
                "source claim team-b/ghost does not exist"),
            create(
                "CloneOf set by a user is denied",
                target(Map.of(ClonePolicy.CLONE_OF, "apps/src"), "clone", "2Gi", null),
                false,
                "k8s.io/CloneOf is set by the provisioner only"),
            new Row(
                "CloneOf set by the provisioner is allowed",
                c -> {},
                target(Map.of(ClonePolicy.CLONE_OF, "apps/src"), "clone", "2Gi", null),
                null,
                SA,
                CrossNamespace.AUTHORIZED,
                true,
                null),
            new Row(
                "CloneOf added by a user on update is denied",
                c -> {},
                target(Map.of(ClonePolicy.CLONE_OF, "x"), "clone", "2Gi", null),
                target(Map.of(), "clone", "2Gi", null),
                "alice",
                CrossNamespace.AUTHORIZED,
                false,
                "do not change it"),
            new Row(
                "CloneOf added by the provisioner on update is allowed",
                c -> {},
                target(
                    Map.of(ClonePolicy.CLONE_REQUEST, "apps/src", ClonePolicy.CLONE_OF, "apps/src"),
                    "clone",
                    "2Gi",
                    null),
                target(clone("apps/src"), "clone", "2Gi", null),
                SA,
                CrossNamespace.AUTHORIZED,
                true,
                null),
            new Row(
                "CloneRequest changed on update is denied",
                c -> {},
                target(clone("apps/other"), "clone", "2Gi", null),
                target(clone("apps/src"), "clone", "2Gi", null),
                "alice",
                CrossNamespace.AUTHORIZED,
                false,
                "cannot change after the claim is created"),
            new Row(
                "CloneRequest added on update is denied",
                c -> {},
                target(clone("apps/src"), "clone", "2Gi", null),
                target(Map.of(), "clone", "2Gi", null),
                "alice",
                CrossNamespace.AUTHORIZED,
                false,
                "cannot change after the claim is created"),
            new Row(
                "other updates of a clone pass",
                c -> {},
                target(clone("apps/src"), "clone", "2Gi", null),
                target(clone("apps/src"), "clone", "2Gi", null),
                "alice",
                CrossNamespace.AUTHORIZED,
                true,
                null),
            create(
                "every violation is reported at once",
                target(
                    Map.of(ClonePolicy.CLONE_REQUEST, "apps/src", ClonePolicy.CLONE_OF, "y"),
                    "plain",
                    "1Gi",
                    "Block"),
                false,
                "k8s.io/CloneOf is set by the provisioner only; remove it; StorageClass plain does not allow cloning: its smartclone parameter is not \"true\"; source claim apps/src has volumeMode Filesystem and this claim Block; they must match; source claim apps/src holds 2Gi, more than this claim requests; request at least that much"))
        .map(Arguments::of);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("rows")
  void review(Row row) throws Exception {
    Cluster cluster = new Cluster();
    row.setup().accept(cluster);
    ClonePolicy policy = new ClonePolicy(new ClonePolicy.Settings(OURS, SA, row.mode()), cluster);
    AdmissionRequest r = new AdmissionRequest();
    r.setUid("u");
    r.setNamespace("apps");
    r.setOperation(row.old() == null ? "CREATE" : "UPDATE");
    r.setObject(row.object());
    r.setOldObject(row.old());
    r.setUserInfo(new UserInfoBuilder().withUsername(row.user()).build());
    Decision d = policy.review(r, true);
    assertThat(d.allowed()).as(String.valueOf(d.message())).isEqualTo(row.allowed());
    if (row.allowed()) {
      if (row.patchOrMessage() == null) {
        assertThat(d.jsonPatch()).isNull();
      } else {
        assertThat(JSON.readTree(d.jsonPatch())).isEqualTo(JSON.readTree(row.patchOrMessage()));
      }
    } else {
      assertThat(d.code()).isEqualTo(403);
      assertThat(d.message()).contains(row.patchOrMessage());
      assertThat(d.jsonPatch()).isNull();
    }
    // The validating endpoint decides the same and never patches.
    Decision v = policy.review(r, false);
    assertThat(v.allowed()).isEqualTo(row.allowed());
    assertThat(v.jsonPatch()).isNull();
  }
}
