package org.standalonecinder.provisioner.clone;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaimBuilder;
import io.fabric8.kubernetes.api.model.storage.StorageClass;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.standalonecinder.api.ClaimAnnotations;
import org.standalonecinder.api.ClaimRef;
import org.standalonecinder.api.CloneToken;
import org.standalonecinder.api.CloneToken.Basis;
import org.standalonecinder.provisioner.controller.ProvisioningException;
import org.standalonecinder.provisioner.provision.ProvisionerSettings;

/**
 * The provisioner's check, when it is about to clone across namespaces, that the clone may be made:
 * the source's grant as it is now, or else the webhook's token, the source still the claim the
 * webhook judged, and the right it was allowed on still there (a requester's only from a review
 * whose sender the webhook authenticated). Each row is what an owner or an attacker did between the
 * admission of a WaitForFirstConsumer clone and the moment a node was selected.
 */
class CloneAuthorizationTest {

  private static final byte[] KEY =
      "the webhook's clone token key 32".getBytes(StandardCharsets.UTF_8);
  private static final byte[] NEW_KEY =
      "a key after a rotation, 32 bytes".getBytes(StandardCharsets.UTF_8);
  private static final ClaimRef SOURCE = new ClaimRef("victim", "db");
  private static final String SOURCE_UID = "uid-of-db";
  private static final Instant CREATED = Instant.parse("2026-11-25T10:00:00Z");

  /** The cluster as the provisioner reads it when it clones. */
  static final class Cluster implements ClusterReader {
    final Map<String, PersistentVolumeClaim> claims = new HashMap<>();
    final Set<String> podCreators = new HashSet<>();
    CloneToken.Keys keys = CloneToken.Keys.of(KEY, null);
    int accessReviews;

    /** The admin's policy file as its ConfigMap holds it; null when there is none. */
    String policy;

    @Override
    public Optional<String> clonePolicy() {
      return Optional.ofNullable(policy);
    }

    Cluster() {
      claims.put("victim/db", source(SOURCE_UID, "attacker"));
      podCreators.add("bob@victim");
    }

    @Override
    public Optional<PersistentVolumeClaim> claim(String namespace, String name) {
      return Optional.ofNullable(claims.get(namespace + "/" + name));
    }

    @Override
    public Optional<PersistentVolume> volume(String name) {
      return Optional.empty();
    }

    @Override
    public Optional<StorageClass> storageClass(String name) {
      return Optional.empty();
    }

    @Override
    public Optional<CloneToken.Keys> cloneTokenKeys() {
      return Optional.ofNullable(keys);
    }

    @Override
    public boolean canCreatePods(CloneToken.Principal who, String namespace) {
      accessReviews++;
      return podCreators.contains(who.user() + "@" + namespace);
    }

    /** ReferenceGrant specs by namespace. */
    final Map<String, List<Map<String, Object>>> referenceGrants = new HashMap<>();

    @Override
    public org.standalonecinder.api.ReferenceGrants.Page referenceGrants(
        String namespace, String next) {
      return org.standalonecinder.api.ReferenceGrants.Page.of(
          referenceGrants.getOrDefault(namespace, List.of()));
    }
  }

  /** The clone of {@link #SOURCE} the attacker's namespace asks for, made at {@link #CREATED}. */
  static PersistentVolumeClaim target() {
    return new PersistentVolumeClaimBuilder()
        .withNewMetadata()
        .withNamespace("attacker")
        .withName("copy")
        .withCreationTimestamp(CREATED.toString())
        .addToAnnotations(ClaimAnnotations.CLONE_REQUEST, SOURCE.toString())
        .endMetadata()
        .build();
  }

  static PersistentVolumeClaim source(String uid, String grant) {
    return new PersistentVolumeClaimBuilder()
        .withNewMetadata()
        .withNamespace("victim")
        .withName("db")
        .withUid(uid)
        .withAnnotations(
            grant == null ? Map.of() : new HashMap<>(Map.of(ClaimAnnotations.CLONE_GRANT, grant)))
        .endMetadata()
        .build();
  }

  /** A ReferenceGrant's spec: claims of {@code from} may use claim {@code to} (all when null). */
  static Map<String, Object> referenceGrant(String from, String to) {
    Map<String, Object> target =
        new HashMap<>(Map.of("group", "", "kind", "PersistentVolumeClaim"));
    if (to != null) {
      target.put("name", to);
    }
    return Map.of(
        "from",
        List.of(Map.of("group", "", "kind", "PersistentVolumeClaim", "namespace", from)),
        "to",
        List.of(target));
  }

  /** The name a webhook started with --client-ca signs as the sender of its reviews. */
  static final String API_SERVER = "client certificate [kube-apiserver] of CN=front-proxy-ca";

  static String token(Basis basis, String user, String sourceUid, byte[] key) {
    return token(basis, user, sourceUid, key, API_SERVER);
  }

  static String token(Basis basis, String user, String sourceUid, byte[] key, String caller) {
    return CloneToken.sign(
        new CloneToken.Claims(
            SOURCE,
            sourceUid,
            new ClaimRef("attacker", "copy"),
            CREATED.minusSeconds(1),
            CREATED.plus(CloneToken.VALIDITY),
            basis,
            new CloneToken.Principal(user, null, null, null),
            caller),
        CloneToken.Keys.of(key, null));
  }

  record Row(String name, String token, Consumer<Cluster> meanwhile, String refusal) {
    @Override
    public String toString() {
      return name;
    }
  }

  static Stream<Arguments> rows() {
    String granted =
        token(
            Basis.GRANT,
            "system:serviceaccount:kube-system:statefulset-controller",
            SOURCE_UID,
            KEY);
    String byBob = token(Basis.REQUESTER, "bob", SOURCE_UID, KEY);
    String noGrant =
        "the source does not grant the clone to attacker (annotation"
            + " standalone-cinder.io/clone-grant, or a ReferenceGrant in victim)";
    Consumer<Cluster> ungranted = c -> c.claims.put("victim/db", source(SOURCE_UID, null));
    Consumer<Cluster> referenceGranted =
        ungranted.andThen(
            c -> c.referenceGrants.put("victim", List.of(referenceGrant("attacker", null))));
    return Stream.of(
            new Row("the grant still holds", granted, c -> {}, null),
            new Row(
                "the source grants it, no token at all (webhook bypassed)", null, c -> {}, null),
            new Row(
                "no grant and no token",
                null,
                ungranted,
                noGrant + "; and the claim carries no standalone-cinder.io/clone-token"),
            new Row(
                "the owner took the grant back",
                granted,
                ungranted,
                "the source no longer grants the clone to attacker (annotation"
                    + " standalone-cinder.io/clone-grant, or a ReferenceGrant in victim)"),
            new Row(
                "a ReferenceGrant in the source's namespace, no token at all",
                null,
                referenceGranted,
                null),
            new Row(
                "a ReferenceGrant for db by name",
                null,
                ungranted.andThen(
                    c ->
                        c.referenceGrants.put("victim", List.of(referenceGrant("attacker", "db")))),
                null),
            new Row(
                "a ReferenceGrant for another claim of victim",
                null,
                ungranted.andThen(
                    c ->
                        c.referenceGrants.put(
                            "victim", List.of(referenceGrant("attacker", "logs")))),
                noGrant),
            new Row(
                "a ReferenceGrant for another namespace",
                null,
                ungranted.andThen(
                    c -> c.referenceGrants.put("victim", List.of(referenceGrant("ops", null)))),
                noGrant),
            new Row(
                "the attack: a ReferenceGrant the attacker made in its own namespace",
                null,
                ungranted.andThen(
                    c ->
                        c.referenceGrants.put(
                            "attacker", List.of(referenceGrant("attacker", null)))),
                noGrant),
            new Row(
                "the ReferenceGrant a token was given on was deleted",
                granted,
                ungranted,
                "the source no longer grants the clone to attacker"),
            new Row(
                "the owner narrowed the grant to another namespace",
                granted,
                c -> c.claims.put("victim/db", source(SOURCE_UID, "ops")),
                "the source no longer grants the clone to attacker"),
            new Row(
                "the source was deleted and created again under its name, without the grant",
                granted,
                c -> c.claims.put("victim/db", source("uid-of-the-new-db", null)),
                "the source claim is not the one admitted (deleted, or deleted and created again"
                    + " under its name, since)"),
            new Row(
                "the source was created again with a grant: its owner consents to the new one",
                granted,
                c -> c.claims.put("victim/db", source("uid-of-the-new-db", "attacker")),
                null),
            new Row(
                "the source is gone",
                granted,
                c -> c.claims.remove("victim/db"),
                "the source claim is not the one admitted"),
            new Row("the requester may still create pods there", byBob, ungranted, null),
            new Row(
                "the requester lost the right",
                byBob,
                ungranted.andThen(c -> c.podCreators.clear()),
                "bob, who asked for it, may no longer create pods in victim"),
            new Row(
                "the attack: a token the webhook gave a review nobody authenticated, naming an"
                    + " admin",
                token(Basis.REQUESTER, "admin", SOURCE_UID, KEY, ""),
                ungranted.andThen(c -> c.podCreators.add("admin@victim")),
                "a review whose sender the webhook did not authenticate (no --client-ca)"),
            new Row(
                "the admin's policy allows every clone, as when the token was given",
                token(Basis.POLICY, "mallory", SOURCE_UID, KEY),
                ungranted.andThen(c -> c.policy = "crossNamespace: allow"),
                null),
            new Row(
                "the attack on a policy since tightened: a token given when it allowed every"
                    + " clone",
                token(Basis.POLICY, "mallory", SOURCE_UID, KEY),
                ungranted.andThen(c -> c.policy = "crossNamespace: authorized"),
                "which the cluster's policy no longer does (crossNamespace: authorized)"),
            new Row(
                "a token given on the policy, the policy's ConfigMap deleted since (defaults)",
                token(Basis.POLICY, "mallory", SOURCE_UID, KEY),
                ungranted,
                "which the cluster's policy no longer does (crossNamespace: authorized)"),
            new Row(
                "the admin forbade clones across namespaces: the source's grant does not do",
                null,
                c -> c.policy = "crossNamespace: deny",
                "the cluster's policy forbids clones across namespaces (crossNamespace: deny)"),
            new Row(
                "the admin forbade them: a token given on the requester's rights does not do",
                byBob,
                ungranted.andThen(c -> c.policy = "crossNamespace: deny"),
                "the cluster's policy forbids clones across namespaces"),
            new Row(
                "forbidden in audit mode only: the source's grant does",
                null,
                c -> c.policy = "mode: audit\ncrossNamespace: deny",
                null),
            new Row(
                "forbidden, but the policy exempts namespaces (by labels not read here): the"
                    + " grant does",
                null,
                c ->
                    c.policy =
                        "crossNamespace: deny\nexemptNamespaces: {matchLabels: {sandbox: \"true\"}}",
                null),
            new Row(
                "the token key was rotated; the previous key still verifies",
                byBob,
                ungranted.andThen(c -> c.keys = CloneToken.Keys.of(NEW_KEY, KEY)),
                null),
            new Row(
                "the token key was rotated twice: its key is gone",
                byBob,
                ungranted.andThen(c -> c.keys = CloneToken.Keys.of(NEW_KEY, null)),
                noGrant + "; and standalone-cinder.io/clone-token was not signed by the webhook"),
            new Row(
                "no webhook ever made a key",
                byBob,
                ungranted.andThen(c -> c.keys = null),
                "no webhook has created the key of its tokens"),
            new Row(
                "no webhook ever made a key, and the source grants it",
                null,
                c -> c.keys = null,
                null),
            new Row(
                "a token for the old source's uid on a claim of the same name",
                token(Basis.REQUESTER, "bob", "uid-from-long-ago", KEY),
                ungranted,
                "the source claim is not the one admitted"))
        .map(Arguments::of);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("rows")
  void atCloneTime(Row row) {
    Cluster cluster = new Cluster();
    row.meanwhile().accept(cluster);
    CloneResolver resolver = new CloneResolver(cluster, null, ProvisionerSettings.DEFAULT_NAME);
    PersistentVolumeClaim target = target();
    if (row.token() != null) {
      target.getMetadata().getAnnotations().put(ClaimAnnotations.CLONE_TOKEN, row.token());
    }
    if (row.refusal() == null) {
      assertThatCode(() -> resolver.verifyToken(target, SOURCE)).doesNotThrowAnyException();
    } else {
      ProvisioningException e =
          org.junit.jupiter.api.Assertions.assertThrows(
              ProvisioningException.class, () -> resolver.verifyToken(target, SOURCE));
      assertThat(e.isFinal()).as("waiting does not make it allowed").isTrue();
      assertThat(e.getMessage()).contains(row.refusal());
    }
  }

  /**
   * The attack between the two reads of the source: its consent is read of the claim that grants
   * the clone, and by the time its data is read the claim was deleted and another one created under
   * its name, which grants nothing. The data is never read of the second one.
   */
  @org.junit.jupiter.api.Test
  void theDataIsReadOfTheClaimWhoseConsentWasRead() {
    Cluster cluster = new Cluster();
    CloneResolver resolver = new CloneResolver(cluster, null, ProvisionerSettings.DEFAULT_NAME);
    PersistentVolumeClaim target = target();
    target.setSpec(
        new io.fabric8.kubernetes.api.model.PersistentVolumeClaimSpecBuilder()
            .withAccessModes("ReadWriteOnce")
            .withNewResources()
            .addToRequests("storage", new io.fabric8.kubernetes.api.model.Quantity("1Gi"))
            .endResources()
            .build());
    StorageClass smartclone =
        new io.fabric8.kubernetes.api.model.storage.StorageClassBuilder()
            .withNewMetadata()
            .withName("smartclone")
            .endMetadata()
            .withProvisioner(ProvisionerSettings.DEFAULT_NAME)
            .addToParameters("smartclone", "true")
            .build();

    String judged = resolver.verifyToken(target, SOURCE);
    cluster.claims.put("victim/db", source("uid-of-another-db", null));
    ProvisioningException e =
        org.junit.jupiter.api.Assertions.assertThrows(
            ProvisioningException.class,
            () -> resolver.resolve(SOURCE, target, smartclone, judged));

    assertThat(judged).isEqualTo(SOURCE_UID);
    assertThat(e.getMessage()).contains("deleted and created again");
    assertThat(e.isFinal()).as("the next look reads both again").isFalse();
  }

  /**
   * A policy the admin broke (the webhook keeps its last good one, which the provisioner cannot
   * know): no clone across namespaces until it is fixed, and the look is tried again.
   */
  @ParameterizedTest(name = "{0}")
  @org.junit.jupiter.params.provider.CsvSource(
      delimiter = '|',
      value = {
        "not YAML | 'crossNamespace: [' ",
        "a value the webhook does not know | crossNamespace: everyone",
        "no map | just a string",
        "allow, with a key the webhook does not know (it keeps its last good policy) |"
            + " '{crossNamespace: allow, smartcloneClass: [fast]}'",
        "allow, with a value the webhook refuses | '{crossNamespace: allow, undersizedClone: grow}'",
        "a boolean for a word | crossNamespace: true",
      })
  void aPolicyThatIsNoPolicyClonesNothingAcrossNamespacesUntilFixed(String name, String text) {
    Cluster cluster = new Cluster();
    cluster.policy = text;
    CloneResolver resolver = new CloneResolver(cluster, null, ProvisionerSettings.DEFAULT_NAME);
    PersistentVolumeClaim target = target();
    ProvisioningException e =
        org.junit.jupiter.api.Assertions.assertThrows(
            ProvisioningException.class, () -> resolver.verifyToken(target, SOURCE));
    assertThat(e.isFinal()).as("fixed, it clones").isFalse();
    assertThat(e.getMessage())
        .contains("the admin's clone policy (ConfigMap standalone-cinder-webhook-policy)");
  }
}
