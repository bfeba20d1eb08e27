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
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.standalonecinder.api.ClaimRef;
import org.standalonecinder.api.CloneToken;
import org.standalonecinder.webhook.admission.Decision;
import org.standalonecinder.webhook.policy.CinderCheckRule.CheckUnavailable;
import org.standalonecinder.webhook.policy.CloneSizeRule.Undersized;
import org.standalonecinder.webhook.policy.CrossNamespaceRule.CrossNamespace;

/**
 * The tables of the claim rules: one class a rule, each with its {@code rows()}, all run through
 * {@link ClonePolicy} as the API server calls it (mutating, the patch applied, then validating).
 */
abstract class ClaimRuleTable {

  /**
   * The rule this table is about ({@code ClonePolicy.RULE_*}): a row it denies, patches or warns
   * must be this rule's doing, so that no row passes on another rule's message.
   */
  abstract String rule();

  static final String OURS = "openstack.org/standalone-cinder";
  static final String SA = "system:serviceaccount:standalone-cinder:standalone-cinder-provisioner";
  private static final ObjectMapper JSON = new ObjectMapper();
  static final byte[] KEY =
      "the webhook's clone token key 32".getBytes(java.nio.charset.StandardCharsets.UTF_8);
  static final CloneToken.Keys KEYS = CloneToken.Keys.of(KEY, null);
  static final Instant NOW = Instant.parse("2026-11-22T10:00:00Z");

  /** The cluster a row sees: classes, claims, and who may create pods where. */
  static final class Cluster implements ClusterView {
    final Map<String, StorageClass> classes = new HashMap<>();
    final Map<String, PersistentVolumeClaim> claims = new HashMap<>();
    final Map<String, io.fabric8.kubernetes.api.model.PersistentVolume> volumes = new HashMap<>();
    final Map<String, Set<String>> podCreators = new HashMap<>();

    /**
     * The policy's deputies and trustedDeputies (settings, kept here so that rows can set them).
     */
    final Set<String> deputies = new java.util.HashSet<>();

    final Set<String> trusted = new java.util.HashSet<>();

    /**
     * Whom the server authenticates as every review's sender (settings, kept here so that rows can
     * set it): the API server's client certificate, as a webhook started with --client-ca; null for
     * a webhook that takes reviews from anyone.
     */
    String caller = API_SERVER;

    /** The review's userInfo.groups holds a null (the fuzzer found one crash by it). */
    boolean nullGroup;

    boolean unreachable;

    /**
     * Every lookup but the StorageClass's fails: a row that sets it shows that the webhook decided
     * without asking about claims, grants or anyone's rights.
     */
    boolean unreachableButClasses;

    /** Only claim lookups fail (an API server that times out on some calls). */
    boolean failingClaims;

    /** As {@link KubernetesClusterView} fails: one typed error that names the lookup. */
    private void reach(String what) {
      if (unreachable || unreachableButClasses) {
        throw new LookupFailedException(what, new java.net.ConnectException("Connection refused"));
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

    /** ReferenceGrant specs by namespace. */
    final Map<String, java.util.List<Map<String, Object>>> referenceGrants = new HashMap<>();

    @Override
    public org.standalonecinder.api.ReferenceGrants.Page referenceGrants(
        String namespace, String next) {
      reach("referencegrants of " + namespace);
      return org.standalonecinder.api.ReferenceGrants.Page.of(
          referenceGrants.getOrDefault(namespace, java.util.List.of()));
    }

    @Override
    public Optional<StorageClass> storageClass(String name) {
      if (!unreachableButClasses) {
        reach("storageclass " + name);
      }
      return Optional.ofNullable(classes.get(name));
    }

    @Override
    public Optional<io.fabric8.kubernetes.api.model.PersistentVolume> volume(String name) {
      reach("persistentvolume " + name);
      return Optional.ofNullable(volumes.get(name));
    }

    @Override
    public Optional<PersistentVolumeClaim> claim(String namespace, String name) {
      if (failingClaims) {
        unreachable = true;
      }
      reach("persistentvolumeclaim " + namespace + "/" + name);
      return Optional.ofNullable(claims.get(namespace + "/" + name));
    }

    @Override
    public Map<String, String> namespaceLabels(String namespace) {
      return namespace.equals("sandbox") ? Map.of("exempt", "true") : Map.of();
    }

    @Override
    public boolean canCreatePods(UserInfo user, String namespace) {
      reach("whether " + user.getUsername() + " may create pods in " + namespace);
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
        .withUid("uid-" + ns + "-" + name)
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

  /** The claim bound to that PV ({@code spec.volumeName}), as the PV controller binds it. */
  static PersistentVolumeClaim boundTo(PersistentVolumeClaim c, String pv) {
    c.getSpec().setVolumeName(pv);
    return c;
  }

  /**
   * A PV of that provisioner ({@code pv.kubernetes.io/provisioned-by}): {@code rbd} (in-tree),
   * {@code csi} (ceph-csi) or {@code iscsi}.
   */
  static io.fabric8.kubernetes.api.model.PersistentVolume pv(
      String name, String provisioner, String form) {
    var spec = new io.fabric8.kubernetes.api.model.PersistentVolumeSpecBuilder();
    switch (form) {
      case "rbd" -> spec.withNewRbd().withImage("volume-" + name).endRbd();
      case "csi" ->
          spec.withNewCsi().withDriver("rbd.csi.ceph.com").withVolumeHandle(name).endCsi();
      default -> spec.withNewIscsi().withIqn("iqn.2010-10.org.openstack:" + name).endIscsi();
    }
    return new io.fabric8.kubernetes.api.model.PersistentVolumeBuilder()
        .withNewMetadata()
        .withName(name)
        .addToAnnotations(org.standalonecinder.api.ClaimAnnotations.PROVISIONED_BY, provisioner)
        .endMetadata()
        .withSpec(spec.build())
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
      List<String> warnings,
      List<String> fired) {
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
          warnings,
          fired);
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
          warnings,
          fired);
    }

    /** The admin trusts these deputies (policy trustedDeputies). */
    Row trusting(String... names) {
      Consumer<Cluster> before = setup;
      return given(c -> before.andThen(x -> x.trusted.addAll(List.of(names))).accept(c));
    }

    /** The admin names these requesters deputies (policy deputies). */
    Row deputies(String... names) {
      Consumer<Cluster> before = setup;
      return given(c -> before.andThen(x -> x.deputies.addAll(List.of(names))).accept(c));
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
          warnings,
          fired);
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
          warnings,
          fired);
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
          warnings,
          fired);
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
          warnings,
          fired);
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
          warnings,
          fired);
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
          warnings,
          fired);
    }

    /**
     * The rules that have something to say about this row, over both endpoints; by default the
     * table's own {@link ClaimRuleTable#rule()} for a row that is denied, patched or warned, and
     * none for one that is simply allowed.
     */
    Row fired(String... rules) {
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
          warnings,
          List.of(rules));
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
          List.of(w),
          fired);
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
        List.of(),
        null);
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
        List.of(),
        null);
  }

  /** What a webhook started with --client-ca signs as the sender of its reviews. */
  static final String API_SERVER = "client certificate [kube-apiserver] of CN=front-proxy-ca";

  /** The whole chain as the policy file builds it, on the fixture's cluster, keys and clock. */
  static org.standalonecinder.webhook.admission.AdmissionController chain(
      String policy, Cluster cluster) {
    return PolicyChain.build(
        PolicyConfig.parse(policy),
        OURS,
        SA,
        cluster,
        CloneCheck.NONE,
        KEYS,
        Clock.fixed(NOW, ZoneOffset.UTC),
        new io.micrometer.core.instrument.simple.SimpleMeterRegistry(),
        cluster.caller);
  }

  /** The start of a denial that says only that a lookup failed. */
  static final String LOOKUP_FAILED = "the webhook could not check this request, try again: ";

  /** What a violation found while the API server is unreachable is followed by. */
  static final String REST_UNCHECKED =
      "; the webhook could not check the rest of this request: cannot look up storageclass ";

  static final String DEFAULTED =
      "[{\"op\":\"replace\",\"path\":\"/metadata/annotations/k8s.io~1CloneRequest\",\"value\":\"apps/src\"}]";
  static final String RAISED =
      "[{\"op\":\"replace\",\"path\":\"/spec/resources/requests/storage\",\"value\":\"2Gi\"}]";
  static final String LARGER =
      "this claim (5Gi) is larger than its source claim apps/src (2Gi): the cloned filesystem"
          + " keeps the source's size until it is grown";

  /**
   * The token the webhook signs at {@link #NOW} with {@link #KEYS}, for a source of the fixture
   * (whose uid is {@code uid-<namespace>-<name>}), allowed on {@code basis} for {@code user}.
   */
  static String token(String source, String target, CloneToken.Basis basis, String user) {
    return token(source, target, basis, user, API_SERVER);
  }

  /** The same, signed by a webhook that authenticated {@code caller} (null: nobody). */
  static String token(
      String source, String target, CloneToken.Basis basis, String user, String caller) {
    String[] src = source.split("/");
    String[] dst = target.split("/");
    return CloneToken.sign(
        new CloneToken.Claims(
            new ClaimRef(src[0], src[1]),
            "uid-" + src[0] + "-" + src[1],
            new ClaimRef(dst[0], dst[1]),
            NOW,
            NOW.plus(CloneToken.VALIDITY),
            basis,
            new CloneToken.Principal(user, null, null, null),
            caller),
        KEYS);
  }

  /** The patch that stamps an accepted cross-namespace clone with its token. */
  static String stamped(String source, CloneToken.Basis basis, String user) {
    return stampedBy(source, basis, user, API_SERVER);
  }

  /** The same, by a webhook that authenticated {@code caller} (null: nobody). */
  static String stampedBy(String source, CloneToken.Basis basis, String user, String caller) {
    return "[{\"op\":\"add\",\"path\":\"/metadata/annotations/standalone-cinder.io~1clone-token\",\"value\":\""
        + token(source, "apps/copy", basis, user, caller)
        + "\"}]";
  }

  /** The same for a claim without annotations: the whole map is added. */
  static String stampedIntoNoAnnotations(String source, CloneToken.Basis basis, String user) {
    return "[{\"op\":\"add\",\"path\":\"/metadata/annotations\",\"value\":{\"standalone-cinder.io/clone-token\":\""
        + token(source, "apps/copy", basis, user)
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
            new ClonePolicy.Settings(
                OURS,
                SA,
                row.mode(),
                row.undersized(),
                row.unavailable(),
                new Requesters(cluster.deputies, cluster.trusted),
                cluster.caller),
            cluster,
            row.cinder(),
            KEYS,
            Clock.fixed(NOW, ZoneOffset.UTC));
    AdmissionRequest r = new AdmissionRequest();
    r.setUid("u");
    r.setNamespace("apps");
    r.setOperation(row.old() == null ? "CREATE" : "UPDATE");
    r.setObject(row.object());
    r.setOldObject(row.old());
    r.setUserInfo(new UserInfoBuilder().withUsername(row.user()).build());
    if (cluster.nullGroup) {
      r.getUserInfo()
          .setGroups(new java.util.ArrayList<>(java.util.Collections.singletonList(null)));
    }
    Decision m = row.validatingOnly() ? Decision.allow() : policy.review(LeanRequests.of(r), true);
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
      Decision v = policy.review(LeanRequests.of(r), false);
      assertThat(v.jsonPatch()).as("the validating endpoint never patches").isNull();
      warnings.addAll(v.warnings());
      outcome = v;
    } else {
      assertThat(m.jsonPatch()).isNull();
    }
    assertThat(outcome.allowed()).as(String.valueOf(outcome.message())).isEqualTo(row.allowed());
    if (!row.allowed()) {
      // A denial that says only that a lookup failed is the webhook's fault (500); one that has
      // violations to report is the user's (403), whatever else could not be checked.
      assertThat(outcome.code())
          .isEqualTo(row.patchOrMessage().startsWith(LOOKUP_FAILED) ? 500 : 403);
      assertThat(outcome.message()).isEqualTo(row.patchOrMessage());
    }
    assertThat(warnings).isEqualTo(row.warnings());
    java.util.Set<String> fired = new java.util.TreeSet<>(m.rules());
    if (outcome != m) {
      fired.addAll(outcome.rules());
    }
    boolean plain = outcome.allowed() && m.jsonPatch() == null && warnings.isEmpty();
    List<String> expected = row.fired() != null ? row.fired() : plain ? List.of() : List.of(rule());
    assertThat(fired).as("the rules that fired").isEqualTo(new java.util.TreeSet<>(expected));
  }
}
