package org.standalonecinder.provisioner.plugin;

import static org.assertj.core.api.Assertions.as;
import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.PersistentVolumeStatusBuilder;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.api.model.TypedLocalObjectReference;
import io.fabric8.kubernetes.api.model.TypedObjectReference;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.assertj.core.api.InstanceOfAssertFactories;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.standalonecinder.api.ClaimAnnotations;
import org.standalonecinder.api.ClaimRef;
import org.standalonecinder.api.CloneToken;
import org.standalonecinder.provisioner.cinder.CinderClient;
import org.standalonecinder.provisioner.cinder.FakeCinderClient;
import org.standalonecinder.provisioner.controller.ClaimController;
import org.standalonecinder.provisioner.controller.Cluster;
import org.standalonecinder.provisioner.controller.Processed;
import org.standalonecinder.provisioner.provision.CopyLimits;
import org.standalonecinder.provisioner.provision.Fixtures;
import org.standalonecinder.provisioner.provision.Names;
import org.standalonecinder.provisioner.provision.ProvisionerSettings;

/**
 * Clones through the controller (fabric8's CRUD mock and the fake Cinder): the Cinder clone, {@code
 * k8s.io/CloneOf}, the source's protection while the clone is made, refusals without a blank
 * volume, and the webhook's token for cross-namespace clones.
 */
class CloningTest {

  private static final byte[] KEY =
      "a key of the webhook, 32 bytes..".getBytes(StandardCharsets.UTF_8);

  private io.fabric8.kubernetes.client.server.mock.KubernetesMockServer server;
  private KubernetesClient client;
  private final FakeCinderClient cinder = new FakeCinderClient();
  private final ProvisionerSettings settings = Fixtures.settings();
  private ClaimController controller;
  private Processed processed;
  private final io.micrometer.core.instrument.simple.SimpleMeterRegistry registry =
      new io.micrometer.core.instrument.simple.SimpleMeterRegistry();

  private void start(CinderClient c) {
    start(c, CopyLimits.DEFAULT);
  }

  private void start(CinderClient c, CopyLimits copies) {
    server = Cluster.newApiServer();
    client = server.createClient();
    controller = Cluster.controller(client, c, settings, registry, copies);
    processed = Processed.by(controller);
    controller.start();
    Cluster.await("informers synced", controller::synced, Duration.ofSeconds(10));
  }

  @AfterEach
  void stop() {
    if (controller != null) {
      controller.close();
      client.close();
      Cluster.destroy(server);
    }
  }

  private static void await(String what, java.util.function.BooleanSupplier c) {
    Cluster.await(what, c, Duration.ofSeconds(10));
  }

  private PersistentVolumeClaim get(String ns, String name) {
    return client.persistentVolumeClaims().inNamespace(ns).withName(name).get();
  }

  private List<String> eventsOf(String name) {
    return client.events().v1().events().inAnyNamespace().list().getItems().stream()
        .filter(e -> e.getRegarding().getName().equals(name))
        .map(e -> e.getReason() + ": " + e.getNote())
        .toList();
  }

  /** A provisioned source, bound as Kubernetes' binder would. */
  private PersistentVolumeClaim boundSource(String ns, String name) {
    PersistentVolumeClaim c = Fixtures.claimOf(null, name, "1Gi", "Filesystem");
    c.getMetadata().setNamespace(ns);
    c.getMetadata()
        .setAnnotations(
            Map.of(ClaimAnnotations.STORAGE_PROVISIONER, ProvisionerSettings.DEFAULT_NAME));
    c.getSpec().setStorageClassName("clones");
    PersistentVolumeClaim created =
        client.persistentVolumeClaims().inNamespace(ns).resource(c).create();
    String pvName = Names.pvName(created.getMetadata().getUid());
    await("source PV", () -> client.persistentVolumes().withName(pvName).get() != null);
    // A merge patch, as the provisioner may be annotating the claim at the same time.
    client
        .persistentVolumeClaims()
        .inNamespace(ns)
        .withName(name)
        .patch(
            io.fabric8.kubernetes.client.dsl.base.PatchContext.of(
                io.fabric8.kubernetes.client.dsl.base.PatchType.JSON_MERGE),
            "{\"spec\":{\"volumeName\":\"" + pvName + "\"}}");
    PersistentVolume pv = client.persistentVolumes().withName(pvName).get();
    pv.setStatus(new PersistentVolumeStatusBuilder().withPhase("Bound").build());
    client.persistentVolumes().resource(pv).updateStatus();
    Cluster.claimBound(client, ns, name, "1Gi");
    return get(ns, name);
  }

  private PersistentVolumeClaim cloneClaim(
      String ns, String name, String className, Map<String, String> ann) {
    Map<String, String> a = new HashMap<>(ann);
    a.put(ClaimAnnotations.STORAGE_PROVISIONER, ProvisionerSettings.DEFAULT_NAME);
    PersistentVolumeClaim c = Fixtures.claimOf(null, name, "1Gi", "Filesystem");
    c.getMetadata().setNamespace(ns);
    c.getMetadata().setAnnotations(a);
    c.getSpec().setStorageClassName(className);
    return c;
  }

  /** Waits until the claim is marked {@code k8s.io/CloneOf: source}. */
  private void awaitCloneOf(String ns, String name, String source) {
    await(
        ns + "/" + name + " CloneOf " + source,
        () ->
            source.equals(
                get(ns, name).getMetadata().getAnnotations().get(ClaimAnnotations.CLONE_OF)));
  }

  private String volumeOf(PersistentVolumeClaim c) {
    PersistentVolume pv =
        client.persistentVolumes().withName(Names.pvName(c.getMetadata().getUid())).get();
    return pv == null ? null : pv.getMetadata().getAnnotations().get(ClaimAnnotations.VOLUME_ID);
  }

  private void classes() {
    Cluster.createClass(client, "clones", Map.of("smartclone", "true"));
    Cluster.createClass(client, "plain", Map.of());
  }

  @Test
  void anAnnotatedCloneIsACinderCloneMarkedCloneOfAndItsSourceIsLeftAsItWas() {
    start(cinder);
    classes();
    PersistentVolumeClaim src = boundSource("apps", "src");
    String srcVolume = volumeOf(src);
    PersistentVolumeClaim copy =
        client
            .persistentVolumeClaims()
            .inNamespace("apps")
            .resource(
                cloneClaim("apps", "copy", "clones", Map.of(ClaimAnnotations.CLONE_REQUEST, "src")))
            .create();
    awaitCloneOf("apps", "copy", "apps/src");
    String copyVolume = volumeOf(copy);
    assertThat(cinder.volumes().get(copyVolume).sourceVolumeId()).isEqualTo(srcVolume);
    assertThat(
            client
                .persistentVolumes()
                .withName(Names.pvName(copy.getMetadata().getUid()))
                .get()
                .getMetadata()
                .getAnnotations())
        .containsEntry(Names.ANN_CLONE_OF, "apps/src");
    assertThat(cinder.volumes().get(copyVolume).metadata())
        .containsEntry(Names.META_CLONE_OF, srcVolume);
    assertThat(get("apps", "src").getMetadata().getFinalizers()).isNullOrEmpty();
    await("counted", () -> provisions("clone", "succeeded") == 1);
    assertThat(provisions("blank", "succeeded")).as("the source").isEqualTo(1);
    assertThat(eventsOf("copy"))
        .singleElement(as(InstanceOfAssertFactories.STRING))
        .startsWith("ProvisioningSucceeded: ")
        .endsWith(", a clone of apps/src");
  }

  @Test
  void aCloneOfLostInACrashIsRepairedFromThePvAndABlankVolumeIsNeverMarked() {
    start(cinder);
    classes();
    boundSource("apps", "src");
    client
        .persistentVolumeClaims()
        .inNamespace("apps")
        .resource(
            cloneClaim("apps", "copy", "clones", Map.of(ClaimAnnotations.CLONE_REQUEST, "src")))
        .create();
    awaitCloneOf("apps", "copy", "apps/src");
    // As if the provisioner had stopped between the PV and the annotation.
    client
        .persistentVolumeClaims()
        .inNamespace("apps")
        .withName("copy")
        .patch(
            io.fabric8.kubernetes.client.dsl.base.PatchContext.of(
                io.fabric8.kubernetes.client.dsl.base.PatchType.JSON),
            "[{\"op\":\"remove\",\"path\":\"/metadata/annotations/k8s.io~1CloneOf\"}]");
    awaitCloneOf("apps", "copy", "apps/src");

    // A claim that got its PV as a blank volume is not a clone, whatever it says later.
    PersistentVolumeClaim blank =
        client
            .persistentVolumeClaims()
            .inNamespace("apps")
            .resource(cloneClaim("apps", "blank", "clones", Map.of()))
            .create();
    await("blank PV", () -> volumeOf(blank) != null);
    client
        .persistentVolumeClaims()
        .inNamespace("apps")
        .withName("blank")
        .patch(
            io.fabric8.kubernetes.client.dsl.base.PatchContext.of(
                io.fabric8.kubernetes.client.dsl.base.PatchType.JSON_MERGE),
            "{\"metadata\":{\"annotations\":{\"k8s.io/CloneRequest\":\"apps/src\"}}}");
    processed.await(
        Processed.claimKey("apps", "blank"),
        c ->
            c != null
                && c.getMetadata().getAnnotations() != null
                && c.getMetadata().getAnnotations().containsKey(ClaimAnnotations.CLONE_REQUEST));
    assertThat(get("apps", "blank").getMetadata().getAnnotations())
        .doesNotContainKey(ClaimAnnotations.CLONE_OF);
  }

  @Test
  void aNativeDataSourceCloneToo() {
    start(cinder);
    classes();
    PersistentVolumeClaim src = boundSource("apps", "src");
    PersistentVolumeClaim c = cloneClaim("apps", "native", "clones", Map.of());
    c.getSpec().setDataSource(new TypedLocalObjectReference(null, "PersistentVolumeClaim", "src"));
    c.getSpec()
        .setDataSourceRef(new TypedObjectReference(null, "PersistentVolumeClaim", "src", null));
    PersistentVolumeClaim created =
        client.persistentVolumeClaims().inNamespace("apps").resource(c).create();
    awaitCloneOf("apps", "native", "apps/src");
    assertThat(cinder.volumes().get(volumeOf(created)).sourceVolumeId()).isEqualTo(volumeOf(src));
  }

  @Test
  void aClassWithoutSmartcloneNeverMakesABlankVolume() {
    start(cinder);
    classes();
    boundSource("apps", "src");
    int volumes = cinder.volumes().size();
    client
        .persistentVolumeClaims()
        .inNamespace("apps")
        .resource(
            cloneClaim(
                "apps", "blank", "plain", Map.of(ClaimAnnotations.CLONE_REQUEST, "apps/src")))
        .create();
    await(
        "refusal",
        () -> eventsOf("blank").stream().anyMatch(e -> e.startsWith("ProvisioningFailed")));
    assertThat(eventsOf("blank"))
        .containsExactly(
            "ProvisioningFailed: the claim asks to clone apps/src, but StorageClass plain does not allow cloning (its smartclone parameter is not \"true\"); no blank volume was made: use a class with smartclone \"true\"");
    assertThat(cinder.volumes()).hasSize(volumes);
    assertThat(provisions("clone", "refused")).isEqualTo(1);
    assertThat(provisions("clone", "succeeded")).isZero();
  }

  private double provisions(String kind, String result) {
    var c =
        registry
            .find("standalone_cinder_provisions")
            .tags("kind", kind, "result", result)
            .counter();
    return c == null ? 0 : c.count();
  }

  @Test
  void aSnapshotDataSourceIsARestoreNeverABlankVolume() {
    start(cinder);
    classes();
    PersistentVolumeClaim c = cloneClaim("apps", "snap", "clones", Map.of());
    c.getSpec()
        .setDataSourceRef(
            new TypedObjectReference("snapshot.storage.k8s.io", "VolumeSnapshot", "s1", null));
    client.persistentVolumeClaims().inNamespace("apps").resource(c).create();
    await(
        "refusal",
        () -> eventsOf("snap").stream().anyMatch(e -> e.startsWith("ProvisioningFailed")));
    assertThat(eventsOf("snap").get(0)).contains("VolumeSnapshot apps/s1 does not exist (yet)");
    assertThat(cinder.volumes()).isEmpty();
  }

  /** The volume Cinder makes for the claim (its PV's name), once it has been asked for. */
  private String volumeMadeFor(PersistentVolumeClaim c) {
    String name = Names.pvName(c.getMetadata().getUid());
    return cinder.volumes().values().stream()
        .filter(v -> name.equals(v.name()))
        .map(org.standalonecinder.provisioner.cinder.Volume::id)
        .findFirst()
        .orElse(null);
  }

  @Test
  void theSourceCannotGoWhileTheCloneIsMade() {
    cinder.slowCopies();
    start(cinder);
    classes();
    PersistentVolumeClaim src = boundSource("apps", "src");
    PersistentVolumeClaim copy =
        client
            .persistentVolumeClaims()
            .inNamespace("apps")
            .resource(
                cloneClaim(
                    "apps", "copy", "clones", Map.of(ClaimAnnotations.CLONE_REQUEST, "apps/src")))
            .create();
    await("the clone's volume", () -> volumeMadeFor(copy) != null);
    String copying = volumeMadeFor(copy);
    // A clone that lasts is told, with what Cinder is doing and for how long, once it has lasted a
    // moment; no worker waits for it meanwhile.
    await(
        "the Provisioning event",
        () ->
            eventsOf("copy")
                .equals(
                    List.of(
                        "Provisioning: External provisioner is provisioning volume for claim"
                            + " apps/copy: Cinder is copying volume "
                            + volumeOf(src)
                            + " (claim apps/src) into volume "
                            + copying
                            + " (status creating); under a minute so far")));
    String finalizer = Names.cloneFinalizer(copy.getMetadata().getUid());
    assertThat(get("apps", "src").getMetadata().getFinalizers()).contains(finalizer);

    client.persistentVolumeClaims().inNamespace("apps").withName("src").delete();
    processed.await(
        Processed.claimKey("apps", "src"),
        c -> c != null && c.getMetadata().getDeletionTimestamp() != null);
    PersistentVolumeClaim deleting = get("apps", "src");
    assertThat(deleting).as("held by the finalizer").isNotNull();
    assertThat(deleting.getMetadata().getDeletionTimestamp()).isNotNull();

    cinder.finishMaking(copying);
    awaitCloneOf("apps", "copy", "apps/src");
    await("the outcome's event", () -> eventsOf("copy").size() == 2);
    assertThat(eventsOf("copy").get(1)).startsWith("ProvisioningSucceeded: ");
    await("the source goes once the clone is made", () -> get("apps", "src") == null);
    assertThat(volumeOf(src)).as("its PV stays until released").isNotNull();
  }

  /**
   * Copies Cinder takes long over hold no worker: with twice as many in flight as the loop has
   * workers, another namespace's claim is provisioned meanwhile, a released PV is deleted, and
   * every copy is bound once Cinder has made it.
   */
  @Test
  void copiesInFlightLeaveTheWorkersToEveryoneElse() {
    cinder.slowCopies();
    start(cinder);
    classes();
    boundSource("apps", "src");
    PersistentVolumeClaim done = boundSource("other", "done");
    List<PersistentVolumeClaim> copies = new java.util.ArrayList<>();
    for (int i = 0; i < 2 * 2; i++) { // Cluster.controller's two workers, twice over
      copies.add(cloneOfSrc("apps", "copy-" + i));
    }
    await("every copy under way", () -> copies.stream().allMatch(c -> volumeMadeFor(c) != null));

    PersistentVolumeClaim plain =
        client
            .persistentVolumeClaims()
            .inNamespace("other")
            .resource(cloneClaim("other", "plain", "plain", Map.of()))
            .create();
    String released = volumeOf(done);
    PersistentVolume pv =
        client.persistentVolumes().withName(Names.pvName(done.getMetadata().getUid())).get();
    pv.setStatus(new PersistentVolumeStatusBuilder().withPhase("Released").build());
    client.persistentVolumes().resource(pv).updateStatus();

    await("the other namespace's claim provisioned", () -> volumeOf(plain) != null);
    await("the released PV's volume deleted", () -> !cinder.volumes().containsKey(released));
    assertThat(copies)
        .as("still being copied meanwhile")
        .allMatch(c -> cinder.volumes().get(volumeMadeFor(c)).status().equals("creating"));

    copies.forEach(c -> cinder.finishMaking(volumeMadeFor(c)));
    copies.forEach(c -> awaitCloneOf("apps", c.getMetadata().getName(), "apps/src"));
  }

  /** A clone of {@code ns/src} in class {@code clones}. */
  private PersistentVolumeClaim cloneOfSrc(String ns, String name) {
    return client
        .persistentVolumeClaims()
        .inNamespace(ns)
        .resource(
            cloneClaim(ns, name, "clones", Map.of(ClaimAnnotations.CLONE_REQUEST, ns + "/src")))
        .create();
  }

  private boolean holdsFinalizer(String ns, String name, String finalizer) {
    List<String> f = get(ns, name).getMetadata().getFinalizers();
    return f != null && f.contains(finalizer);
  }

  /**
   * A clone deleted while Cinder copies: its volume is deleted once Cinder lets it (here the copy
   * fails, as a copy may: an error volume is deleted as it is), and only then is its source let go.
   */
  @Test
  void aCloneDeletedWhileCinderCopiesLeavesNothingAndOnlyThenLetsItsSourceGo() {
    cinder.slowCopies();
    start(cinder);
    classes();
    boundSource("apps", "src");
    PersistentVolumeClaim copy = cloneOfSrc("apps", "copy");
    await("the copy under way", () -> volumeMadeFor(copy) != null);
    String copying = volumeMadeFor(copy);
    String finalizer = Names.cloneFinalizer(copy.getMetadata().getUid());

    client.persistentVolumeClaims().inNamespace("apps").withName("copy").delete();
    await("its volume's deletion asked", () -> cinder.log().contains("deleteVolume " + copying));
    assertThat(holdsFinalizer("apps", "src", finalizer)).as("held while Cinder copies").isTrue();
    assertThat(cinder.volumes()).containsKey(copying);

    cinder.failMaking(copying);
    await("the failed copy deleted", () -> !cinder.volumes().containsKey(copying));
    await("the source let go", () -> !holdsFinalizer("apps", "src", finalizer));
  }

  /**
   * Clones past the copy limits wait in the queue, told why, and cost Cinder nothing until a copy
   * in flight is made: a namespace's burst is held at its own limit while another namespace's clone
   * goes, and the overall limit holds everyone.
   */
  @Test
  void clonesPastTheCopyLimitsWaitWithoutAskingCinder() {
    cinder.slowCopies();
    start(cinder, new CopyLimits(3, 2));
    classes();
    boundSource("apps", "src");
    boundSource("other", "src");
    PersistentVolumeClaim a0 = cloneOfSrc("apps", "a0");
    PersistentVolumeClaim a1 = cloneOfSrc("apps", "a1");
    await(
        "two copies of apps under way",
        () -> volumeMadeFor(a0) != null && volumeMadeFor(a1) != null);
    PersistentVolumeClaim a2 = cloneOfSrc("apps", "a2");
    await(
        "a2 told it waits for its namespace's copies",
        () ->
            eventsOf("a2")
                .contains(
                    "Provisioning: External provisioner is provisioning volume for claim apps/a2:"
                        + " waits to ask Cinder for its copy: 2 copies are in flight in namespace"
                        + " apps (at most 2 at once, --max-copies-per-namespace); asked once one"
                        + " of them is made"));
    PersistentVolumeClaim o0 = cloneOfSrc("other", "o0");
    await("another namespace's copy under way", () -> volumeMadeFor(o0) != null);
    PersistentVolumeClaim o1 = cloneOfSrc("other", "o1");
    await(
        "o1 told it waits for the copies overall",
        () ->
            eventsOf("o1").stream()
                .anyMatch(
                    e ->
                        e.endsWith(
                            "waits to ask Cinder for its copy: 3 copies are in flight (at most 3 at"
                                + " once, --max-copies); asked once one of them is made")));
    String pvA2 = Names.pvName(a2.getMetadata().getUid());
    String pvO1 = Names.pvName(o1.getMetadata().getUid());
    assertThat(cinder.log())
        .as("no volume looked up or asked for the waiting claims")
        .noneMatch(l -> l.endsWith(pvA2) || l.endsWith(pvO1));
    assertThat(get("apps", "src").getMetadata().getFinalizers())
        .as("a waiting clone does not hold its source")
        .doesNotContain(Names.cloneFinalizer(a2.getMetadata().getUid()));

    cinder.finishMaking(volumeMadeFor(a0));
    cinder.finishMaking(volumeMadeFor(o0));
    await(
        "the waiting claims' copies asked for",
        () -> volumeMadeFor(a2) != null && volumeMadeFor(o1) != null);
    List.of(a1, a2, o1).forEach(c -> cinder.finishMaking(volumeMadeFor(c)));
    for (PersistentVolumeClaim c : List.of(a0, a1, a2, o0, o1)) {
      awaitCloneOf(
          c.getMetadata().getNamespace(),
          c.getMetadata().getName(),
          c.getMetadata().getNamespace() + "/src");
    }
  }

  // ------------------------------------------------------------------ the source's ownership

  /**
   * A claim {@code apps/thief} as its author can write it: any volumeName, in its own namespace.
   */
  private void thief(String volumeName, String phase) {
    PersistentVolumeClaim c = Fixtures.claimOf(null, "thief", "1Gi", "Filesystem");
    c.getMetadata().setNamespace("apps");
    // Another provisioner's class: ours would provision it; nothing binds it either way.
    c.getSpec().setStorageClassName("elsewhere");
    c.getSpec().setVolumeName(volumeName);
    client.persistentVolumeClaims().inNamespace("apps").resource(c).create();
    if (phase != null) {
      client
          .persistentVolumeClaims()
          .inNamespace("apps")
          .withName("thief")
          .subresource("status")
          .patch(
              io.fabric8.kubernetes.client.dsl.base.PatchContext.of(
                  io.fabric8.kubernetes.client.dsl.base.PatchType.JSON_MERGE),
              "{\"status\":{\"phase\":\"" + phase + "\"}}");
    }
  }

  private String pvNameOf(String ns, String name) {
    return get(ns, name).getSpec().getVolumeName();
  }

  static Stream<Arguments> sourcesNotOwned() {
    return Stream.of(
        Arguments.of(
            "an unbound source",
            (Consumer<CloningTest>) t -> t.thief(null, "Pending"),
            "source claim apps/thief is not Bound yet (phase Pending)"),
        Arguments.of(
            "a Pending source naming a PV bound to a claim of the same namespace",
            (Consumer<CloningTest>) t -> t.thief(t.pvNameOf("apps", "victim"), "Pending"),
            "source claim apps/thief is not Bound yet (phase Pending)"),
        Arguments.of(
            "a source marked Bound naming a PV bound to a claim of the same namespace",
            (Consumer<CloningTest>) t -> t.thief(t.pvNameOf("apps", "victim"), "Bound"),
            "source claim apps/thief names PV pvc-"),
        Arguments.of(
            "a source marked Bound naming a PV bound to another namespace's claim",
            (Consumer<CloningTest>) t -> t.thief(t.pvNameOf("team-b", "secret"), "Bound"),
            "but that PV is not bound to it: only the claim a PV is bound to can be cloned"),
        Arguments.of(
            "a Pending source naming another namespace's PV",
            (Consumer<CloningTest>) t -> t.thief(t.pvNameOf("team-b", "secret"), null),
            "source claim apps/thief is not Bound yet (phase unknown)"),
        Arguments.of(
            "a PV whose claimRef names the source by name but another uid",
            (Consumer<CloningTest>)
                t -> {
                  t.thief(t.pvNameOf("apps", "victim"), "Bound");
                  PersistentVolume pv =
                      t.client.persistentVolumes().withName(t.pvNameOf("apps", "victim")).get();
                  pv.getSpec().getClaimRef().setName("thief");
                  t.client.persistentVolumes().resource(pv).update();
                },
            "in spec.volumeName, but that PV is not bound to it"));
  }

  /**
   * No webhook: the provisioner alone refuses to clone a volume the source claim does not own,
   * before it asks Cinder anything, and protects nothing.
   */
  @ParameterizedTest(name = "{0}")
  @MethodSource("sourcesNotOwned")
  void aSourceThatDoesNotOwnItsVolumeIsRefusedWithoutACinderCall(
      String name, Consumer<CloningTest> setup, String message) {
    start(cinder);
    classes();
    Cluster.createClass(client, "elsewhere", "example.com/other", Map.of(), "Delete", "Immediate");
    boundSource("apps", "victim");
    boundSource("team-b", "secret");
    setup.accept(this);
    cinder.clearLog();
    PersistentVolumeClaim copy =
        client
            .persistentVolumeClaims()
            .inNamespace("apps")
            .resource(
                cloneClaim(
                    "apps", "copy", "clones", Map.of(ClaimAnnotations.CLONE_REQUEST, "apps/thief")))
            .create();
    await(
        "refusal",
        () -> eventsOf("copy").stream().anyMatch(e -> e.startsWith("ProvisioningFailed")));
    assertThat(eventsOf("copy"))
        .filteredOn(e -> e.startsWith("ProvisioningFailed"))
        .first()
        .asString()
        .contains(message);
    assertThat(Cluster.claimCalls(cinder)).as("Cinder was not asked").isEmpty();
    assertThat(volumeOf(copy)).isNull();
    assertThat(get("apps", "victim").getMetadata().getFinalizers()).isNullOrEmpty();
    assertThat(get("team-b", "secret").getMetadata().getFinalizers()).isNullOrEmpty();
  }

  @Test
  void aCrossNamespaceCloneNeedsTheSourcesGrantOrTheWebhooksToken() {
    start(cinder);
    classes();
    boundSource("team-b", "shared");
    // No grant, no webhook, no key: refused, whatever the claim says.
    client
        .persistentVolumeClaims()
        .inNamespace("apps")
        .resource(
            cloneClaim(
                "apps", "nokey", "clones", Map.of(ClaimAnnotations.CLONE_REQUEST, "team-b/shared")))
        .create();
    await(
        "refusal",
        () -> eventsOf("nokey").stream().anyMatch(e -> e.startsWith("ProvisioningFailed")));
    assertThat(eventsOf("nokey").get(0))
        .contains(
            "the source does not grant the clone to apps (annotation"
                + " standalone-cinder.io/clone-grant, or a ReferenceGrant in team-b); and the claim carries no"
                + " standalone-cinder.io/clone-token");

    client
        .secrets()
        .inNamespace("standalone-cinder")
        .resource(
            new SecretBuilder()
                .withNewMetadata()
                .withName(CloneToken.KEY_SECRET)
                .endMetadata()
                .addToData(CloneToken.KEY_FIELD, Base64.getEncoder().encodeToString(KEY))
                .build())
        .create();
    String sharedUid = get("team-b", "shared").getMetadata().getUid();
    String forged =
        CloneToken.sign(
            new CloneToken.Claims(
                new ClaimRef("team-b", "shared"),
                sharedUid,
                new ClaimRef("apps", "forged"),
                Instant.now(),
                Instant.now().plusSeconds(300),
                CloneToken.Basis.POLICY,
                new CloneToken.Principal("mallory", null, null, null)),
            CloneToken.Keys.of(
                "not the webhook's key, 32 bytes!".getBytes(StandardCharsets.UTF_8), null));
    client
        .persistentVolumeClaims()
        .inNamespace("apps")
        .resource(
            cloneClaim(
                "apps",
                "forged",
                "clones",
                Map.of(
                    ClaimAnnotations.CLONE_REQUEST,
                    "team-b/shared",
                    ClaimAnnotations.CLONE_TOKEN,
                    forged)))
        .create();
    await(
        "refusal",
        () -> eventsOf("forged").stream().anyMatch(e -> e.startsWith("ProvisioningFailed")));
    assertThat(eventsOf("forged").get(0))
        .contains("standalone-cinder.io/clone-token was not signed by the webhook");

    // A token given on the admin's policy holds while the policy still allows every clone.
    client
        .configMaps()
        .inNamespace(settings.secretNamespace())
        .resource(
            new io.fabric8.kubernetes.api.model.ConfigMapBuilder()
                .withNewMetadata()
                .withName(org.standalonecinder.api.ClonePolicyFile.CONFIG_MAP)
                .endMetadata()
                .addToData(org.standalonecinder.api.ClonePolicyFile.KEY, "crossNamespace: allow\n")
                .build())
        .create();
    String valid =
        CloneToken.sign(
            new CloneToken.Claims(
                new ClaimRef("team-b", "shared"),
                sharedUid,
                new ClaimRef("apps", "granted"),
                Instant.now().minusSeconds(5),
                Instant.now().plusSeconds(300),
                CloneToken.Basis.POLICY,
                new CloneToken.Principal("alice", null, null, null)),
            CloneToken.Keys.of(KEY, null));
    client
        .persistentVolumeClaims()
        .inNamespace("apps")
        .resource(
            cloneClaim(
                "apps",
                "granted",
                "clones",
                Map.of(
                    ClaimAnnotations.CLONE_REQUEST,
                    "team-b/shared",
                    ClaimAnnotations.CLONE_TOKEN,
                    valid)))
        .create();
    awaitCloneOf("apps", "granted", "team-b/shared");
    assertThat(
            client
                .persistentVolumes()
                .withName(Names.pvName(get("apps", "forged").getMetadata().getUid()))
                .get())
        .isNull();

    // The source's owner consents: no token needed (the webhook bypassed, removed or let through).
    client
        .persistentVolumeClaims()
        .inNamespace("team-b")
        .withName("shared")
        .edit(
            c -> {
              Map<String, String> a = new java.util.HashMap<>();
              if (c.getMetadata().getAnnotations() != null) {
                a.putAll(c.getMetadata().getAnnotations());
              }
              a.put(ClaimAnnotations.CLONE_GRANT, "apps");
              c.getMetadata().setAnnotations(a);
              return c;
            });
    client
        .persistentVolumeClaims()
        .inNamespace("apps")
        .resource(
            cloneClaim(
                "apps",
                "consented",
                "clones",
                Map.of(ClaimAnnotations.CLONE_REQUEST, "team-b/shared")))
        .create();
    awaitCloneOf("apps", "consented", "team-b/shared");
  }
}
