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
import java.util.List;
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
import org.standalonecinder.webhook.policy.ClonePolicy.Undersized;

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
    boolean unreachable;

    private void reach() {
      if (unreachable) {
        throw new IllegalStateException("the API server cannot be reached");
      }
    }

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
      reach();
      return Optional.ofNullable(classes.get(name));
    }

    @Override
    public Optional<PersistentVolumeClaim> claim(String namespace, String name) {
      reach();
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

  static PersistentVolumeClaim withDataSource(
      PersistentVolumeClaim c, String apiGroup, String kind, String name, String namespace) {
    if (namespace == null) {
      c.getSpec()
          .setDataSource(
              new io.fabric8.kubernetes.api.model.TypedLocalObjectReference(apiGroup, kind, name));
    }
    // The API server copies dataSource into dataSourceRef before admission.
    c.getSpec()
        .setDataSourceRef(
            new io.fabric8.kubernetes.api.model.TypedObjectReference(
                apiGroup, kind, name, namespace));
    return c;
  }

  static PersistentVolumeClaim nativeClone(String name, String className, String size) {
    return withDataSource(
        target(Map.of(), className, size, null), null, "PersistentVolumeClaim", name, null);
  }

  /**
   * One case: the cluster and settings it runs with, the request, and the exact outcome (allowed
   * with this patch and these warnings, or denied with a message containing this text).
   */
  record Row(
      String name,
      Consumer<Cluster> setup,
      PersistentVolumeClaim object,
      PersistentVolumeClaim old,
      String user,
      CrossNamespace mode,
      Undersized undersized,
      boolean allowed,
      String patchOrMessage,
      List<String> warnings) {
    @Override
    public String toString() {
      return name;
    }

    Row given(Consumer<Cluster> s) {
      return new Row(
          name, s, object, old, user, mode, undersized, allowed, patchOrMessage, warnings);
    }

    Row updating(PersistentVolumeClaim o) {
      return new Row(
          name, setup, object, o, user, mode, undersized, allowed, patchOrMessage, warnings);
    }

    Row by(String u) {
      return new Row(
          name, setup, object, old, u, mode, undersized, allowed, patchOrMessage, warnings);
    }

    Row crossNamespace(CrossNamespace m) {
      return new Row(
          name, setup, object, old, user, m, undersized, allowed, patchOrMessage, warnings);
    }

    Row undersized(Undersized u) {
      return new Row(name, setup, object, old, user, mode, u, allowed, patchOrMessage, warnings);
    }

    Row warns(String... w) {
      return new Row(
          name, setup, object, old, user, mode, undersized, allowed, patchOrMessage, List.of(w));
    }
  }

  static Row allow(String name, PersistentVolumeClaim object, String patch) {
    return new Row(
        name,
        c -> {},
        object,
        null,
        "alice",
        CrossNamespace.AUTHORIZED,
        Undersized.DENY,
        true,
        patch,
        List.of());
  }

  static Row deny(String name, PersistentVolumeClaim object, String message) {
    return new Row(
        name,
        c -> {},
        object,
        null,
        "alice",
        CrossNamespace.AUTHORIZED,
        Undersized.DENY,
        false,
        message,
        List.of());
  }

  static final String DEFAULTED =
      "[{\"op\":\"replace\",\"path\":\"/metadata/annotations/k8s.io~1CloneRequest\",\"value\":\"apps/src\"}]";
  static final String RAISED =
      "[{\"op\":\"replace\",\"path\":\"/spec/resources/requests/storage\",\"value\":\"2Gi\"}]";
  static final String LARGER =
      "this claim (5Gi) is larger than its source claim apps/src (2Gi): the cloned filesystem"
          + " keeps the source's size until it is grown";

  static Stream<Arguments> rows() {
    return Stream.of(
            allow(
                "a claim without clone annotations passes",
                target(Map.of(), "plain", "1Gi", null),
                null),
            allow(
                    "a plain claim needs no lookup (an API server hiccup blocks no claim)",
                    target(Map.of(), "plain", "1Gi", null),
                    null)
                .given(c -> c.unreachable = true),
            allow(
                "same-namespace clone by name is defaulted to namespace/name",
                target(clone("src"), "clone", "2Gi", null),
                DEFAULTED),
            allow(
                "same-namespace clone with namespace needs no patch",
                target(clone("apps/src"), "clone", "2Gi", null),
                null),
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
                        + " clone cannot be smaller than its source"),
            deny(
                    "a raise never hides another violation",
                    target(clone("apps/src"), "plain", "1Gi", null),
                    "StorageClass plain does not allow cloning")
                .undersized(Undersized.RAISE),
            deny(
                "an empty CloneRequest is denied",
                target(clone(""), "clone", "2Gi", null),
                "must be <claim> or <namespace>/<claim>"),
            deny(
                "three parts are denied",
                target(clone("a/b/c"), "clone", "2Gi", null),
                "must be <claim> or <namespace>/<claim>"),
            deny(
                "upper case names are denied",
                target(clone("apps/Src"), "clone", "2Gi", null),
                "each a valid Kubernetes name"),
            deny(
                "a class without smartclone is denied",
                target(clone("apps/src"), "plain", "2Gi", null),
                "StorageClass plain does not allow cloning: its smartclone parameter is not \"true\""),
            deny(
                "another provisioner's class is denied",
                target(clone("apps/src"), "other", "2Gi", null),
                "StorageClass other belongs to example.com/other, which cannot clone Cinder volumes"),
            deny(
                "a missing class is denied",
                target(clone("apps/src"), "nope", "2Gi", null),
                "StorageClass nope does not exist"),
            deny(
                "no class at all is denied",
                target(clone("apps/src"), null, "2Gi", null),
                "the claim names none"),
            deny(
                "a missing source is denied",
                target(clone("apps/ghost"), "clone", "2Gi", null),
                "source claim apps/ghost does not exist"),
            deny(
                "a different volumeMode is denied",
                target(clone("apps/src"), "clone", "2Gi", "Block"),
                "source claim apps/src has volumeMode Filesystem and this claim Block; they must match"),
            deny(
                    "an unbound source is denied",
                    target(clone("apps/src"), "clone", "2Gi", null),
                    "source claim apps/src is not Bound yet")
                .given(c -> c.claims.get("apps/src").getStatus().setPhase("Pending")),
            deny(
                    "a deleting source is denied",
                    target(clone("apps/src"), "clone", "2Gi", null),
                    "source claim apps/src is being deleted")
                .given(
                    c ->
                        c.claims
                            .get("apps/src")
                            .getMetadata()
                            .setDeletionTimestamp("2026-11-22T00:00:00Z")),
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
                            .remove(ClonePolicy.VOLUME_ID)),
            deny(
                "cross-namespace without authorization is denied",
                target(clone("team-b/shared"), "clone", "1Gi", null),
                "cloning team-b/shared into namespace apps is not allowed: you may not create pods in team-b and the source grants no clone to apps"),
            allow(
                    "cross-namespace by someone who may create pods there",
                    target(clone("team-b/shared"), "clone", "1Gi", null),
                    null)
                .by("bob"),
            allow(
                    "cross-namespace with a grant on the source",
                    target(clone("team-b/shared"), "clone", "1Gi", null),
                    null)
                .given(
                    c ->
                        c.claims
                            .get("team-b/shared")
                            .getMetadata()
                            .getAnnotations()
                            .put(ClonePolicy.CLONE_GRANT, "ops, apps")),
            deny(
                    "a grant to another namespace does not count",
                    target(clone("team-b/shared"), "clone", "1Gi", null),
                    "grants no clone to apps")
                .given(
                    c ->
                        c.claims
                            .get("team-b/shared")
                            .getMetadata()
                            .getAnnotations()
                            .put(ClonePolicy.CLONE_GRANT, "ops")),
            deny(
                    "cross-namespace denied by policy even for bob",
                    target(clone("team-b/shared"), "clone", "1Gi", null),
                    "cloning team-b/shared into namespace apps is not allowed: the cluster's policy forbids clones across namespaces")
                .by("bob")
                .crossNamespace(CrossNamespace.DENY),
            allow(
                    "cross-namespace allowed by policy, with a warning",
                    target(clone("team-b/shared"), "clone", "1Gi", null),
                    null)
                .crossNamespace(CrossNamespace.ALLOW)
                .warns(
                    "cloning team-b/shared into namespace apps without an authorization check: the"
                        + " cluster's policy allows every clone across namespaces"),
            deny(
                "a missing cross-namespace source looks like a forbidden one",
                target(clone("team-b/ghost"), "clone", "1Gi", null),
                "is not allowed: you may not create pods in team-b"),
            deny(
                    "an authorized user learns that a cross-namespace source is missing",
                    target(clone("team-b/ghost"), "clone", "1Gi", null),
                    "source claim team-b/ghost does not exist")
                .by("bob"),
            allow("a native clone of a claim is allowed", nativeClone("src", "clone", "2Gi"), null),
            deny(
                "a native clone into a class without smartclone is denied",
                nativeClone("src", "plain", "2Gi"),
                "StorageClass plain does not allow cloning"),
            allow(
                "a native clone into another provisioner's class is not ours to judge",
                nativeClone("ghost", "other", "1Gi"),
                null),
            deny(
                "a native clone of a missing claim is denied",
                nativeClone("ghost", "clone", "2Gi"),
                "source claim apps/ghost does not exist"),
            deny(
                "a native clone smaller than its source is denied",
                nativeClone("src", "clone", "1Gi"),
                "source claim apps/src holds 2Gi"),
            deny(
                    "a native clone of an unbound claim is denied",
                    nativeClone("src", "clone", "2Gi"),
                    "source claim apps/src is not Bound yet")
                .given(c -> c.claims.get("apps/src").getStatus().setPhase("Pending")),
            deny(
                "a native clone from another namespace is checked like an annotated one",
                withDataSource(
                    target(Map.of(), "clone", "1Gi", null),
                    null,
                    "PersistentVolumeClaim",
                    "shared",
                    "team-b"),
                "cloning team-b/shared into namespace apps is not allowed"),
            allow(
                    "a native clone from another namespace by an authorized user",
                    withDataSource(
                        target(Map.of(), "clone", "1Gi", null),
                        null,
                        "PersistentVolumeClaim",
                        "shared",
                        "team-b"),
                    null)
                .by("bob"),
            deny(
                "a snapshot data source cannot fill our volume",
                withDataSource(
                    target(Map.of(), "plain", "1Gi", null),
                    "snapshot.storage.k8s.io",
                    "VolumeSnapshot",
                    "snap",
                    null),
                "StorageClass plain cannot fill a volume from snapshot.storage.k8s.io/VolumeSnapshot snap: only a PersistentVolumeClaim can be the data source"),
            deny(
                "a populator data source cannot fill our volume",
                withDataSource(
                    target(Map.of(), "plain", "1Gi", null), "example.com", "Seed", "s", null),
                "cannot fill a volume from example.com/Seed s"),
            allow(
                "a snapshot into another provisioner's class is not ours to judge",
                withDataSource(
                    target(Map.of(), "other", "1Gi", null),
                    "snapshot.storage.k8s.io",
                    "VolumeSnapshot",
                    "snap",
                    null),
                null),
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
                "CloneOf set by a user is denied",
                target(Map.of(ClonePolicy.CLONE_OF, "apps/src"), "clone", "2Gi", null),
                "k8s.io/CloneOf is set by the provisioner only; remove it"),
            allow(
                    "CloneOf set by the provisioner is allowed",
                    target(Map.of(ClonePolicy.CLONE_OF, "apps/src"), "clone", "2Gi", null),
                    null)
                .by(SA),
            deny(
                    "CloneOf added by a user on update is denied",
                    target(Map.of(ClonePolicy.CLONE_OF, "x"), "clone", "2Gi", null),
                    "k8s.io/CloneOf is set by the provisioner only; do not change it")
                .updating(target(Map.of(), "clone", "2Gi", null)),
            deny(
                    "CloneOf removed by a user on update is denied",
                    target(clone("apps/src"), "clone", "2Gi", null),
                    "do not change it")
                .updating(
                    target(
                        Map.of(
                            ClonePolicy.CLONE_REQUEST,
                            "apps/src",
                            ClonePolicy.CLONE_OF,
                            "apps/src"),
                        "clone",
                        "2Gi",
                        null)),
            allow(
                    "CloneOf added by the provisioner on update is allowed",
                    target(
                        Map.of(
                            ClonePolicy.CLONE_REQUEST,
                            "apps/src",
                            ClonePolicy.CLONE_OF,
                            "apps/src"),
                        "clone",
                        "2Gi",
                        null),
                    null)
                .updating(target(clone("apps/src"), "clone", "2Gi", null))
                .by(SA),
            deny(
                    "CloneRequest changed on update is denied",
                    target(clone("apps/other"), "clone", "2Gi", null),
                    "k8s.io/CloneRequest cannot change after the claim is created")
                .updating(target(clone("apps/src"), "clone", "2Gi", null)),
            deny(
                    "CloneRequest added on update is denied",
                    target(clone("apps/src"), "clone", "2Gi", null),
                    "k8s.io/CloneRequest cannot change after the claim is created")
                .updating(target(Map.of(), "clone", "2Gi", null)),
            deny(
                    "CloneRequest removed on update is denied",
                    target(Map.of(), "clone", "2Gi", null),
                    "k8s.io/CloneRequest cannot change after the claim is created")
                .updating(target(clone("apps/src"), "clone", "2Gi", null)),
            allow(
                    "other updates of a clone pass, even after its source is gone",
                    target(clone("apps/src"), "clone", "2Gi", null),
                    null)
                .updating(target(clone("apps/src"), "clone", "2Gi", null))
                .given(c -> c.claims.remove("apps/src")),
            deny(
                "every violation is reported at once",
                target(
                    Map.of(ClonePolicy.CLONE_REQUEST, "apps/src", ClonePolicy.CLONE_OF, "y"),
                    "plain",
                    "1Gi",
                    "Block"),
                "k8s.io/CloneOf is set by the provisioner only; remove it; StorageClass plain does not allow cloning: its smartclone parameter is not \"true\"; source claim apps/src has volumeMode Filesystem and this claim Block; they must match; source claim apps/src holds 2Gi, more than this claim requests (1Gi); request at least 2Gi"))
        .map(Arguments::of);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("rows")
  void review(Row row) throws Exception {
    Cluster cluster = new Cluster();
    row.setup().accept(cluster);
    ClonePolicy policy =
        new ClonePolicy(new ClonePolicy.Settings(OURS, SA, row.mode(), row.undersized()), cluster);
    AdmissionRequest r = new AdmissionRequest();
    r.setUid("u");
    r.setNamespace("apps");
    r.setOperation(row.old() == null ? "CREATE" : "UPDATE");
    r.setObject(row.object());
    r.setOldObject(row.old());
    r.setUserInfo(new UserInfoBuilder().withUsername(row.user()).build());
    Decision d = policy.review(r, true);
    assertThat(d.allowed()).as(String.valueOf(d.message())).isEqualTo(row.allowed());
    assertThat(d.warnings()).isEqualTo(row.warnings());
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
    // The validating endpoint never patches; it sees the object after mutation, so an undersized
    // clone that the mutating endpoint would raise is still denied there.
    Decision v = policy.review(r, false);
    boolean raised = row.warnings().stream().anyMatch(w -> w.contains("was raised"));
    assertThat(v.allowed()).isEqualTo(row.allowed() && !raised);
    assertThat(v.jsonPatch()).isNull();
  }
}
