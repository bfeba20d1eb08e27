package org.standalonecinder.webhook.policy;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.flipkart.zjsonpatch.JsonPatch;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaimBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.admission.v1.AdmissionRequest;
import io.fabric8.kubernetes.api.model.authentication.UserInfo;
import io.fabric8.kubernetes.api.model.authentication.UserInfoBuilder;
import io.fabric8.kubernetes.api.model.storage.StorageClass;
import io.fabric8.kubernetes.api.model.storage.StorageClassBuilder;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
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
import org.standalonecinder.api.ClaimRef;
import org.standalonecinder.api.CloneToken;
import org.standalonecinder.webhook.admission.Decision;
import org.standalonecinder.webhook.policy.ClonePolicy.CheckUnavailable;
import org.standalonecinder.webhook.policy.ClonePolicy.CrossNamespace;
import org.standalonecinder.webhook.policy.ClonePolicy.Undersized;

/** The clone rules, one named row a case: allowed or denied, the exact patch, the message. */
class ClonePolicyTest {

  private static final String OURS = "openstack.org/standalone-cinder";
  private static final String SA =
      "system:serviceaccount:standalone-cinder:standalone-cinder-provisioner";
  private static final ObjectMapper JSON = new ObjectMapper();
  static final byte[] KEY =
      "the webhook's clone token key 32".getBytes(java.nio.charset.StandardCharsets.UTF_8);
  static final Instant NOW = Instant.parse("2026-11-22T10:00:00Z");

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

  static PersistentVolumeClaim modes(PersistentVolumeClaim c, String... modes) {
    c.getSpec().setAccessModes(List.of(modes));
    return c;
  }

  static PersistentVolumeClaim created(PersistentVolumeClaim c, Instant at) {
    c.getMetadata().setCreationTimestamp(at.toString());
    return c;
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
      CloneCheck cinder,
      CheckUnavailable unavailable,
      boolean validatingOnly,
      boolean allowed,
      String patchOrMessage,
      List<String> warnings) {
    @Override
    public String toString() {
      return name;
    }

    Row given(Consumer<Cluster> s) {
      return new Row(
          name,
          s,
          object,
          old,
          user,
          mode,
          undersized,
          cinder,
          unavailable,
          validatingOnly,
          allowed,
          patchOrMessage,
          warnings);
    }

    Row updating(PersistentVolumeClaim o) {
      return new Row(
          name,
          setup,
          object,
          o,
          user,
          mode,
          undersized,
          cinder,
          unavailable,
          validatingOnly,
          allowed,
          patchOrMessage,
          warnings);
    }

    Row by(String u) {
      return new Row(
          name,
          setup,
          object,
          old,
          u,
          mode,
          undersized,
          cinder,
          unavailable,
          validatingOnly,
          allowed,
          patchOrMessage,
          warnings);
    }

    Row crossNamespace(CrossNamespace m) {
      return new Row(
          name,
          setup,
          object,
          old,
          user,
          m,
          undersized,
          cinder,
          unavailable,
          validatingOnly,
          allowed,
          patchOrMessage,
          warnings);
    }

    Row undersized(Undersized u) {
      return new Row(
          name,
          setup,
          object,
          old,
          user,
          mode,
          u,
          cinder,
          unavailable,
          validatingOnly,
          allowed,
          patchOrMessage,
          warnings);
    }

    /** What the resolver answers (by default: the clone can be made). */
    Row cinder(CloneCheck c) {
      return new Row(
          name,
          setup,
          object,
          old,
          user,
          mode,
          undersized,
          c,
          unavailable,
          validatingOnly,
          allowed,
          patchOrMessage,
          warnings);
    }

    Row whenCinderCannotBeAsked(CheckUnavailable u) {
      return new Row(
          name,
          setup,
          object,
          old,
          user,
          mode,
          undersized,
          cinder,
          u,
          validatingOnly,
          allowed,
          patchOrMessage,
          warnings);
    }

    /** Only the validating endpoint: as when the mutating webhook is not installed. */
    Row withoutMutatingWebhook() {
      return new Row(
          name,
          setup,
          object,
          old,
          user,
          mode,
          undersized,
          cinder,
          unavailable,
          true,
          allowed,
          patchOrMessage,
          warnings);
    }

    Row warns(String... w) {
      return new Row(
          name,
          setup,
          object,
          old,
          user,
          mode,
          undersized,
          cinder,
          unavailable,
          validatingOnly,
          allowed,
          patchOrMessage,
          List.of(w));
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
        CloneCheck.NONE,
        CheckUnavailable.DENY,
        false,
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
        CloneCheck.NONE,
        CheckUnavailable.DENY,
        false,
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
                "a missing class is denied",
                target(clone("apps/src"), "nope", "2Gi", null),
                "StorageClass nope does not exist"),
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
                    stamped("team-b/shared"))
                .by("bob"),
            allow(
                    "cross-namespace with a grant on the source",
                    target(clone("team-b/shared"), "clone", "1Gi", null),
                    stamped("team-b/shared"))
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
                    stamped("team-b/shared"))
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
                    stampedIntoNoAnnotations("team-b/shared"))
                .by("bob"),
            deny(
                "a snapshot data source cannot fill our volume",
                withDataSource(
                    target(Map.of(), "plain", "1Gi", null),
                    "snapshot.storage.k8s.io",
                    "VolumeSnapshot",
                    "snap",
                    null),
                "StorageClass plain: the data source snapshot.storage.k8s.io/VolumeSnapshot snap cannot fill a Cinder volume: only a PersistentVolumeClaim can be the data source (a clone); remove the data source or use another class"),
            deny(
                "a populator data source cannot fill our volume",
                withDataSource(
                    target(Map.of(), "plain", "1Gi", null), "example.com", "Seed", "s", null),
                "the data source example.com/Seed s cannot fill a Cinder volume"),
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
                    "Cinder cannot clone it: the resolver's reason is the answer",
                    target(clone("apps/src"), "clone", "2Gi", null),
                    "the Cinder volume vol-src of source claim apps/src is error")
                .cinder(
                    (src, c) ->
                        Optional.of(
                            "the Cinder volume vol-src of source claim " + src + " is error")),
            deny(
                    "Cinder is asked last: a rule that denies first needs no resolver",
                    target(clone("apps/ghost"), "clone", "2Gi", null),
                    "source claim apps/ghost does not exist")
                .cinder(
                    (src, c) -> {
                      throw new AssertionError("asked although another rule denied");
                    }),
            deny(
                    "the resolver cannot be asked: denied (fail closed)",
                    target(clone("apps/src"), "clone", "2Gi", null),
                    "the clone of apps/src could not be checked against Cinder: the resolver did not answer within 3000 ms; try again")
                .cinder(
                    (src, c) -> {
                      throw new CloneCheck.Unavailable(
                          "the resolver did not answer within 3000 ms", null);
                    }),
            allow(
                    "the resolver cannot be asked and the policy admits unchecked, with a warning",
                    target(clone("apps/src"), "clone", "2Gi", null),
                    null)
                .cinder(
                    (src, c) -> {
                      throw new CloneCheck.Unavailable(
                          "the resolver at http://127.0.0.1:8090/v1/clone-check cannot be reached",
                          null);
                    })
                .whenCinderCannotBeAsked(CheckUnavailable.ALLOW)
                .warns(
                    "the clone of apps/src could not be checked against Cinder: the resolver at"
                        + " http://127.0.0.1:8090/v1/clone-check cannot be reached; admitted"
                        + " unchecked by the cluster's policy"),
            deny(
                "a token on a same-namespace clone is denied",
                target(
                    Map.of(ClonePolicy.CLONE_REQUEST, "apps/src", CloneToken.ANNOTATION, "x.y"),
                    "clone",
                    "2Gi",
                    null),
                "standalone-cinder.io/clone-token is set by the webhook only, for clones across namespaces; remove it"),
            allow(
                    "a token the user brings is replaced by the webhook's",
                    target(
                        Map.of(
                            ClonePolicy.CLONE_REQUEST,
                            "team-b/shared",
                            CloneToken.ANNOTATION,
                            "forged.token"),
                        "clone",
                        "1Gi",
                        null),
                    stamped("team-b/shared"))
                .by("bob"),
            deny(
                    "without the mutating webhook a cross-namespace clone has no token",
                    target(clone("team-b/shared"), "clone", "1Gi", null),
                    "cloning team-b/shared across namespaces needs the webhook's token: the claim carries no standalone-cinder.io/clone-token (is the mutating webhook installed?)")
                .by("bob")
                .withoutMutatingWebhook(),
            deny(
                    "a forged token is denied",
                    target(
                        Map.of(
                            ClonePolicy.CLONE_REQUEST,
                            "team-b/shared",
                            CloneToken.ANNOTATION,
                            CloneToken.sign(
                                new CloneToken.Claims(
                                    new ClaimRef("team-b", "shared"),
                                    new ClaimRef("apps", "copy"),
                                    NOW,
                                    NOW.plusSeconds(300)),
                                "not the key of this webhook, 32b"
                                    .getBytes(java.nio.charset.StandardCharsets.UTF_8))),
                        "clone",
                        "1Gi",
                        null),
                    "standalone-cinder.io/clone-token was not signed by the webhook")
                .by("bob")
                .withoutMutatingWebhook(),
            deny(
                    "an expired token is denied",
                    created(
                        target(
                            Map.of(
                                ClonePolicy.CLONE_REQUEST,
                                "team-b/shared",
                                CloneToken.ANNOTATION,
                                token("team-b/shared", "apps/copy")),
                            "clone",
                            "1Gi",
                            null),
                        NOW.plusSeconds(3600)),
                    "standalone-cinder.io/clone-token expired")
                .by("bob")
                .withoutMutatingWebhook(),
            deny(
                    "the token cannot change after creation",
                    target(
                        Map.of(
                            ClonePolicy.CLONE_REQUEST,
                            "team-b/shared",
                            CloneToken.ANNOTATION,
                            "new"),
                        "clone",
                        "1Gi",
                        null),
                    "standalone-cinder.io/clone-token cannot change after the claim is created")
                .updating(
                    target(
                        Map.of(
                            ClonePolicy.CLONE_REQUEST,
                            "team-b/shared",
                            CloneToken.ANNOTATION,
                            "old"),
                        "clone",
                        "1Gi",
                        null))
                .by(SA),
            // Claims of other provisioners (KubeVirt's CDI marks its own clones with the same
            // annotations) pass untouched: no denial, no patch, no warning.
            allow(
                "another provisioner's clone request passes untouched",
                target(clone("apps/src"), "other", "2Gi", null),
                null),
            allow(
                "another provisioner's clone request by name only is not defaulted",
                target(clone("src"), "other", "1Gi", null),
                null),
            allow(
                "another provisioner's clone request of a missing source passes",
                target(clone("apps/ghost"), "other", "1Gi", null),
                null),
            allow(
                "another provisioner's malformed clone request passes",
                target(clone("a/src/x"), "other", "1Gi", null),
                null),
            allow(
                "another provisioner's cross-namespace clone request passes, with no token",
                target(clone("team-b/shared"), "other", "1Gi", null),
                null),
            allow(
                "another provisioner's CloneOf at creation passes",
                target(Map.of(ClonePolicy.CLONE_OF, "apps/src"), "other", "1Gi", null),
                null),
            allow(
                "another provisioner's token annotation passes",
                target(
                    Map.of(ClonePolicy.CLONE_REQUEST, "apps/src", CloneToken.ANNOTATION, "x.y"),
                    "other",
                    "2Gi",
                    null),
                null),
            allow(
                    "another provisioner's smaller clone passes (no raise, no warning)",
                    target(clone("apps/src"), "other", "1Gi", null),
                    null)
                .undersized(Undersized.RAISE),
            allow(
                "another provisioner's native clone with a clone request passes",
                withDataSource(
                    target(clone("apps/src"), "other", "1Gi", "Block"),
                    null,
                    "PersistentVolumeClaim",
                    "elsewhere",
                    null),
                null),
            allow(
                "another provisioner's populator data source passes",
                withDataSource(
                    target(Map.of(), "other", "1Gi", null),
                    "cdi.kubevirt.io",
                    "VolumeImportSource",
                    "img",
                    null),
                null),
            allow(
                    "another provisioner's CloneOf set by its controller on update passes",
                    target(
                        Map.of(
                            ClonePolicy.CLONE_REQUEST,
                            "apps/src",
                            ClonePolicy.CLONE_OF,
                            "apps/src"),
                        "other",
                        "2Gi",
                        null),
                    null)
                .updating(target(clone("apps/src"), "other", "2Gi", null))
                .by("system:serviceaccount:cdi:cdi-sa"),
            allow(
                    "another provisioner's clone request changed on update passes",
                    target(clone("apps/other"), "other", "2Gi", null),
                    null)
                .updating(target(clone("apps/src"), "other", "2Gi", null)),
            allow(
                "a clone request without any class (static binding) passes untouched",
                target(clone("apps/src"), null, "2Gi", null),
                null),
            allow(
                "a clone request with the empty class (static binding) passes untouched",
                target(clone("apps/ghost"), "", "2Gi", null),
                null),
            // ReadWriteMany: raw blocks only; a shared ext4/xfs corrupts.
            deny(
                "ReadWriteMany Filesystem in our class is denied",
                modes(target(Map.of(), "plain", "1Gi", "Filesystem"), "ReadWriteMany"),
                "ReadWriteMany needs volumeMode Block: a Filesystem volume (ext4, xfs) mounted read-write on several nodes at once is corrupted"),
            deny(
                "ReadWriteMany without volumeMode (Filesystem) is denied",
                modes(target(Map.of(), "plain", "1Gi", null), "ReadWriteOnce", "ReadWriteMany"),
                "use volumeMode Block for software that coordinates its own writes, or ReadOnlyMany to share a filesystem read-only"),
            deny(
                "a ReadWriteMany Filesystem clone into a class without smartclone: both said",
                modes(target(clone("apps/src"), "plain", "2Gi", null), "ReadWriteMany"),
                "share a filesystem read-only; StorageClass plain does not allow cloning"),
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
                null),
            allow(
                    "ReadWriteOnce Filesystem needs no lookup",
                    target(Map.of(), "plain", "1Gi", "Filesystem"),
                    null)
                .given(c -> c.unreachable = true),
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

  /** The token the webhook signs at {@link #NOW} with {@link #KEY}. */
  static String token(String source, String target) {
    String[] src = source.split("/");
    String[] dst = target.split("/");
    return CloneToken.sign(
        new CloneToken.Claims(
            new ClaimRef(src[0], src[1]),
            new ClaimRef(dst[0], dst[1]),
            NOW,
            NOW.plus(CloneToken.VALIDITY)),
        KEY);
  }

  /** The patch that stamps an accepted cross-namespace clone with its token. */
  static String stamped(String source) {
    return "[{\"op\":\"add\",\"path\":\"/metadata/annotations/standalone-cinder.io~1clone-token\",\"value\":\""
        + token(source, "apps/copy")
        + "\"}]";
  }

  /** The same for a claim without annotations: the whole map is added. */
  static String stampedIntoNoAnnotations(String source) {
    return "[{\"op\":\"add\",\"path\":\"/metadata/annotations\",\"value\":{\"standalone-cinder.io/clone-token\":\""
        + token(source, "apps/copy")
        + "\"}}]";
  }

  /**
   * As the API server does it: the mutating endpoint, its patch applied, then the validating
   * endpoint on the result. The row states the outcome: allowed (with the mutating patch) or the
   * first denial, and the warnings of both endpoints, as kubectl shows them.
   */
  @ParameterizedTest(name = "{0}")
  @MethodSource("rows")
  void review(Row row) throws Exception {
    Cluster cluster = new Cluster();
    row.setup().accept(cluster);
    ClonePolicy policy =
        new ClonePolicy(
            new ClonePolicy.Settings(OURS, SA, row.mode(), row.undersized(), row.unavailable()),
            cluster,
            row.cinder(),
            KEY,
            Clock.fixed(NOW, ZoneOffset.UTC));
    AdmissionRequest r = new AdmissionRequest();
    r.setUid("u");
    r.setNamespace("apps");
    r.setOperation(row.old() == null ? "CREATE" : "UPDATE");
    r.setObject(row.object());
    r.setOldObject(row.old());
    r.setUserInfo(new UserInfoBuilder().withUsername(row.user()).build());
    Decision m = row.validatingOnly() ? Decision.allow() : policy.review(r, true);
    List<String> warnings = new java.util.ArrayList<>(m.warnings());
    Decision outcome = m;
    if (m.allowed()) {
      if (row.allowed()) {
        if (row.patchOrMessage() == null) {
          assertThat(m.jsonPatch()).isNull();
        } else {
          assertThat(JSON.readTree(m.jsonPatch())).isEqualTo(JSON.readTree(row.patchOrMessage()));
        }
      }
      if (m.jsonPatch() != null) {
        r.setObject(
            JSON.treeToValue(
                JsonPatch.apply(JSON.readTree(m.jsonPatch()), JSON.valueToTree(row.object())),
                PersistentVolumeClaim.class));
      }
      Decision v = policy.review(r, false);
      assertThat(v.jsonPatch()).as("the validating endpoint never patches").isNull();
      warnings.addAll(v.warnings());
      outcome = v;
    } else {
      assertThat(m.jsonPatch()).isNull();
    }
    assertThat(outcome.allowed()).as(String.valueOf(outcome.message())).isEqualTo(row.allowed());
    if (!row.allowed()) {
      assertThat(outcome.code()).isEqualTo(403);
      assertThat(outcome.message()).contains(row.patchOrMessage());
    }
    assertThat(warnings).isEqualTo(row.warnings());
  }
}
