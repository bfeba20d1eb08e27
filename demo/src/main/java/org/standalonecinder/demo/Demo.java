package org.standalonecinder.demo;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaimBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolumeStatusBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.storage.StorageClassBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.server.mock.KubernetesCrudDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import java.io.IOException;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.BooleanSupplier;
import org.standalonecinder.provisioner.cinder.CinderClient;
import org.standalonecinder.provisioner.cinder.Volume;
import org.standalonecinder.provisioner.cinder.openstack.OpenStackCinderClient;
import org.standalonecinder.provisioner.config.CloudConfig;
import org.standalonecinder.provisioner.config.CloudConfigLoader;
import org.standalonecinder.provisioner.controller.ProvisionerApp;
import org.standalonecinder.provisioner.controller.RetryPolicy;
import org.standalonecinder.provisioner.diagnostics.IscsiProbe;
import org.standalonecinder.provisioner.provision.Names;
import org.standalonecinder.provisioner.provision.ProvisionerSettings;

/**
 * The main job on one machine: a claim becomes a Cinder volume and an iSCSI PV, a "node" writes and
 * reads data through it, the admission webhook judges clone requests and StorageClasses, and the
 * release leaves nothing behind. Kubernetes is fabric8's mock API server (no kube-apiserver runs
 * here); Cinder is the real local one (dev/cinder-local); the node is libiscsi in user space.
 */
public final class Demo {

  private static final String CLASS = "cinder";
  private static final String NS = "default";
  private static final String INITIATOR = "iqn.2026-11.org.standalonecinder:demo-node";

  // fabric8's mock server logs every request through java.util.logging; held so it stays set.
  private static final java.util.logging.Logger MOCK_LOG =
      java.util.logging.Logger.getLogger("io.fabric8.mockwebserver");

  private Demo() {}

  public static void main(String[] args) throws Exception {
    MOCK_LOG.setLevel(java.util.logging.Level.WARNING);
    Path env = Path.of(args.length > 0 ? args[0] : "/tmp/cinder-local/cinder-local.env");
    int code;
    try {
      code = run(env) ? 0 : 1;
    } catch (DemoFailed e) {
      System.out.println("\nFAILED: " + e.getMessage());
      code = 1;
    }
    System.exit(code);
  }

  /** Runs the demo against the local Cinder that {@code envFile} describes. */
  static boolean run(Path envFile) throws Exception {
    Map<String, String> local = readEnv(envFile);
    Map<String, String> os = new HashMap<>();
    os.put("OS_CINDER_ENDPOINT", local.get("CINDER_ENDPOINT"));
    os.put("OS_PROJECT_ID", local.get("CINDER_PROJECT_ID"));
    os.put("OS_USERNAME", "demo");
    CloudConfig cloud = CloudConfigLoader.load(null, os);

    say("standalone-cinder demo: a claim, a real Cinder, a stand-in Kubernetes and node\n");
    KubernetesMockServer kube =
        new KubernetesMockServer(
            new Context(),
            new MockWebServer(),
            new HashMap<>(),
            // alice works in default, mallory in team-m (only SubjectAccessReviews ask this).
            new Authorizer(
                new KubernetesCrudDispatcher(),
                Map.of("default", Set.of("alice"), "team-m", Set.of("mallory"))),
            false);
    kube.init(InetAddress.getLoopbackAddress(), 0);
    KubernetesClient k = kube.createClient();
    step(
        1,
        "Kubernetes API: fabric8's mock server at "
            + k.getMasterUrl()
            + " (no real one can run here)");

    ProvisionerSettings settings =
        new ProvisionerSettings(
            ProvisionerSettings.DEFAULT_NAME,
            "demo",
            "demo",
            INITIATOR,
            "demo-cluster",
            "127.0.0.1",
            "standalone-cinder",
            false);
    CinderClient cinder = OpenStackCinderClient.create(cloud);
    long t0 = System.nanoTime();
    ProvisionerApp app =
        ProvisionerApp.start(
            k.getConfiguration(),
            OpenStackCinderClient.create(cloud),
            new ProvisionerApp.Options(
                settings, "demo-0", 2, Duration.ofMinutes(5), RetryPolicy.DEFAULT, "127.0.0.1", 0));
    try {
      await("the provisioner's caches", app::ready, Duration.ofSeconds(30));
      step(
          2,
          "provisioner started in "
              + ms(t0)
              + ": Cinder "
              + cloud.cinderEndpoint()
              + " (noauth, project "
              + cloud.projectId()
              + "), initiator "
              + INITIATOR
              + ", health on :"
              + app.healthPort());

      k.storage()
          .v1()
          .storageClasses()
          .resource(
              new StorageClassBuilder()
                  .withNewMetadata()
                  .withName(CLASS)
                  .endMetadata()
                  .withProvisioner(ProvisionerSettings.DEFAULT_NAME)
                  .withParameters(Map.of("fsType", "ext4", "smartclone", "true"))
                  .withReclaimPolicy("Delete")
                  .build())
          .create();
      k.resource(storageClass("plain", Map.of())).create();
      PersistentVolumeClaim claim =
          k.persistentVolumeClaims()
              .inNamespace(NS)
              .resource(
                  new PersistentVolumeClaimBuilder()
                      .withNewMetadata()
                      .withName("data")
                      // Set by Kubernetes from the class; the mock has no controller to do it.
                      .withAnnotations(
                          Map.of(Names.ANN_STORAGE_PROVISIONER, ProvisionerSettings.DEFAULT_NAME))
                      .endMetadata()
                      .withNewSpec()
                      .withStorageClassName(CLASS)
                      .withAccessModes("ReadWriteOnce")
                      .withNewResources()
                      .withRequests(Map.of("storage", new Quantity("1Gi")))
                      .endResources()
                      .endSpec()
                      .build())
              .create();
      step(
          3,
          "kubectl apply: StorageClasses '"
              + CLASS
              + "' (fsType ext4, smartclone \"true\") and 'plain', claim default/data of 1Gi");

      String pvName = Names.pvName(claim.getMetadata().getUid());
      long t1 = System.nanoTime();
      await(
          "the PV",
          () -> k.persistentVolumes().withName(pvName).get() != null,
          Duration.ofSeconds(60));
      PersistentVolume pv = k.persistentVolumes().withName(pvName).get();
      bind(k, "data", pvName);
      String volumeId = pv.getMetadata().getAnnotations().get(Names.ANN_VOLUME_ID);
      step(4, "PV " + pvName + " created " + ms(t1) + " after the claim:");
      for (String line : new KubernetesSerialization().asYaml(pv.getSpec()).split("\n")) {
        if (!line.startsWith("---")) {
          say("        " + line);
        }
      }
      Volume v = cinder.getVolume(volumeId).orElseThrow(() -> new DemoFailed("volume missing"));
      say(
          "      Cinder volume "
              + v.id()
              + ": "
              + v.status()
              + ", "
              + v.sizeGib()
              + " GiB, metadata "
              + v.metadata());
      var ref = pv.getSpec().getIscsi().getSecretRef();
      Secret chap = k.secrets().inNamespace(ref.getNamespace()).withName(ref.getName()).get();
      say(
          "      CHAP Secret "
              + ref.getNamespace()
              + "/"
              + ref.getName()
              + " (type "
              + chap.getType()
              + ", keys "
              + keys(chap)
              + "; values not shown)");
      List<String> events =
          k.events().v1().events().inNamespace(NS).list().getItems().stream()
              .map(e -> "        " + e.getType() + "  " + e.getReason() + ": " + e.getNote())
              .toList();
      say("      events on the claim:");
      events.forEach(Demo::say);

      var iscsi = pv.getSpec().getIscsi();
      IscsiProbe.Target node = IscsiProbe.Target.of(iscsi, chap);
      IscsiProbe.Result rw = node.io("write -P 0x5a 0 1M", "read -P 0x5a 0 1M");
      check(rw.ok(), "the node's write and read: " + rw.output());
      IscsiProbe.Result wrong = node.withPassword("wrong-secret").io("read 0 4k");
      check(!wrong.ok(), "a wrong CHAP secret was accepted");
      step(
          5,
          "a node logs in to "
              + iscsi.getTargetPortal()
              + " as "
              + iscsi.getInitiatorName()
              + " with the Secret's CHAP credentials: wrote 1 MiB of 0x5a and read it back; a wrong secret is refused");

      PersistentVolumeClaim admitted = webhook(k, cinder);

      // The admitted clone, as the API server stores it after the webhook's patch.
      long t3 = System.nanoTime();
      PersistentVolumeClaim copy = k.resource(admitted).create();
      String copyPvName = Names.pvName(copy.getMetadata().getUid());
      await(
          "the clone's PV",
          () -> k.persistentVolumes().withName(copyPvName).get() != null,
          Duration.ofSeconds(60));
      bind(k, "copy", copyPvName);
      PersistentVolume copyPv = k.persistentVolumes().withName(copyPvName).get();
      String copyVolumeId = copyPv.getMetadata().getAnnotations().get(Names.ANN_VOLUME_ID);
      await(
          "k8s.io/CloneOf",
          () ->
              k.persistentVolumeClaims()
                      .inNamespace(NS)
                      .withName("copy")
                      .get()
                      .getMetadata()
                      .getAnnotations()
                      .get("k8s.io/CloneOf")
                  != null,
          Duration.ofSeconds(10));
      String cloneOf =
          k.persistentVolumeClaims()
              .inNamespace(NS)
              .withName("copy")
              .get()
              .getMetadata()
              .getAnnotations()
              .get("k8s.io/CloneOf");
      var copyIscsi = copyPv.getSpec().getIscsi();
      Secret copyChap =
          k.secrets()
              .inNamespace(copyIscsi.getSecretRef().getNamespace())
              .withName(copyIscsi.getSecretRef().getName())
              .get();
      IscsiProbe.Target copyNode = IscsiProbe.Target.of(copyIscsi, copyChap);
      IscsiProbe.Result read = copyNode.io("read -P 0x5a 0 1M");
      check(read.ok(), "the clone does not hold the source's data: " + read.output());
      Volume copyVolume =
          cinder.getVolume(copyVolumeId).orElseThrow(() -> new DemoFailed("clone volume missing"));
      step(
          7,
          "kubectl apply the admitted clone: PV "
              + copyPvName
              + " in "
              + ms(t3)
              + ", Cinder volume "
              + copyVolumeId
              + " cloned from "
              + copyVolume.sourceVolumeId()
              + ", k8s.io/CloneOf: "
              + cloneOf
              + "; the node logs in to the clone with its own CHAP Secret and reads the 1 MiB of"
              + " 0x5a back");

      long t2 = System.nanoTime();
      k.persistentVolumeClaims().inNamespace(NS).withName("copy").delete();
      k.persistentVolumeClaims().inNamespace(NS).withName("data").delete();
      // Kubernetes' binder marks a PV Released when its claim goes; the mock has none.
      for (PersistentVolume released : List.of(copyPv, pv)) {
        released.setStatus(new PersistentVolumeStatusBuilder().withPhase("Released").build());
        k.persistentVolumes().resource(released).updateStatus();
      }
      await(
          "the PVs' deletion",
          () ->
              k.persistentVolumes().withName(pvName).get() == null
                  && k.persistentVolumes().withName(copyPvName).get() == null,
          Duration.ofSeconds(60));
      boolean volumeGone =
          cinder.getVolume(volumeId).isEmpty() && cinder.getVolume(copyVolumeId).isEmpty();
      boolean secretGone =
          k.secrets().inNamespace(ref.getNamespace()).list().getItems().stream()
              .noneMatch(x -> "kubernetes.io/iscsi-chap".equals(x.getType()));
      IscsiProbe.Result after = node.io("read 0 4k");
      IscsiProbe.Result afterCopy = copyNode.io("read 0 4k");
      check(volumeGone, "a Cinder volume is still there");
      check(secretGone, "a CHAP Secret is still there");
      check(!after.ok() && !afterCopy.ok(), "a target still accepts the login");
      step(
          8,
          "kubectl delete pvc copy data: both released PVs were torn down in "
              + ms(t2)
              + ": Cinder volumes gone, CHAP Secrets gone, the targets refuse the login");
      say(
          "\ndone: claim -> Cinder volume -> iSCSI PV -> data -> admitted clone -> the same data"
              + " -> release -> nothing left.");
      return true;
    } finally {
      app.close();
      cinder.close();
      k.close();
      kube.destroy();
    }
  }

  /**
   * The webhook, with the provisioner's resolver next to it, judges what users apply next to the
   * bound claim. Each answer is checked, so the demo fails if the webhook misbehaves.
   *
   * @return the clone request it admitted, as the API server would store it
   */
  private static PersistentVolumeClaim webhook(KubernetesClient k, CinderClient cinder)
      throws Exception {
    try (WebhookDemo webhook =
        WebhookDemo.start(k.getConfiguration(), ProvisionerSettings.DEFAULT_NAME, k, cinder)) {
      step(
          6,
          "admission webhook on https://127.0.0.1:"
              + webhook.port()
              + " (serve --local, CA written to "
              + webhook.caFile
              + ") with the resolver on http://127.0.0.1:"
              + webhook.resolverPort()
              + "; what it answers:");
      WebhookDemo.Answer admitted =
          judge(
              webhook,
              "alice creates claim default/copy with k8s.io/CloneRequest: data in class cinder",
              "alice",
              cloneClaim(NS, "copy", "data", CLASS),
              true);
      judge(
          webhook,
          "alice creates claim default/blank with k8s.io/CloneRequest: data in class plain",
          "alice",
          cloneClaim(NS, "blank", "data", "plain"),
          false);
      judge(
          webhook,
          "mallory creates claim team-m/steal with k8s.io/CloneRequest: default/data",
          "mallory",
          cloneClaim("team-m", "steal", "default/data", CLASS),
          false);
      PersistentVolumeClaim forged = cloneClaim(NS, "fake", null, CLASS);
      forged.getMetadata().setAnnotations(Map.of("k8s.io/CloneOf", "default/data"));
      judge(webhook, "alice writes k8s.io/CloneOf herself", "alice", forged, false);
      judge(
          webhook,
          "the admin creates StorageClass fast with tpye: ssd",
          "admin",
          storageClass("fast", Map.of("tpye", "ssd")),
          false);
      PersistentVolumeClaim claim =
          new KubernetesSerialization()
              .unmarshal(admitted.object().toString(), PersistentVolumeClaim.class);
      // Set by Kubernetes from the class; the mock has no controller to do it.
      claim
          .getMetadata()
          .getAnnotations()
          .put(Names.ANN_STORAGE_PROVISIONER, ProvisionerSettings.DEFAULT_NAME);
      return claim;
    }
  }

  private static WebhookDemo.Answer judge(
      WebhookDemo webhook, String what, String user, HasMetadata object, boolean expectAllowed)
      throws Exception {
    WebhookDemo.Answer a = webhook.create(user, object);
    check(
        a.allowed() == expectAllowed,
        what + ": expected " + (expectAllowed ? "allowed" : "denied") + ", got " + a);
    say("      " + what);
    say("        -> " + (a.allowed() ? "allowed" : "denied: " + a.message()));
    if (a.patch() != null) {
      say("           patch " + a.patch());
    }
    a.warnings().forEach(w -> say("           warning: " + w));
    return a;
  }

  /**
   * What Kubernetes' binder does: the claim names its PV and is Bound. Merge patches carry no
   * resourceVersion: the provisioner may be writing the claim at the same time.
   */
  private static void bind(KubernetesClient k, String claim, String pvName) {
    var bound = k.persistentVolumeClaims().inNamespace(NS).withName(claim);
    bound.patch(
        PatchContext.of(PatchType.JSON_MERGE), "{\"spec\":{\"volumeName\":\"" + pvName + "\"}}");
    bound
        .subresource("status")
        .patch(
            PatchContext.of(PatchType.JSON_MERGE),
            "{\"status\":{\"phase\":\"Bound\",\"accessModes\":[\"ReadWriteOnce\"],"
                + "\"capacity\":{\"storage\":\"1Gi\"}}}");
  }

  private static PersistentVolumeClaim cloneClaim(
      String ns, String name, String source, String className) {
    return new PersistentVolumeClaimBuilder()
        .withNewMetadata()
        .withNamespace(ns)
        .withName(name)
        .withAnnotations(source == null ? Map.of() : Map.of("k8s.io/CloneRequest", source))
        .endMetadata()
        .withNewSpec()
        .withStorageClassName(className)
        .withAccessModes("ReadWriteOnce")
        .withNewResources()
        .withRequests(Map.of("storage", new Quantity("1Gi")))
        .endResources()
        .endSpec()
        .build();
  }

  private static HasMetadata storageClass(String name, Map<String, String> parameters) {
    return new StorageClassBuilder()
        .withNewMetadata()
        .withName(name)
        .endMetadata()
        .withProvisioner(ProvisionerSettings.DEFAULT_NAME)
        .withParameters(parameters)
        .build();
  }

  private static String keys(Secret s) {
    java.util.Set<String> keys = new java.util.TreeSet<>();
    if (s.getData() != null) {
      keys.addAll(s.getData().keySet());
    }
    if (s.getStringData() != null) {
      keys.addAll(s.getStringData().keySet());
    }
    return keys.toString();
  }

  static Map<String, String> readEnv(Path file) throws IOException {
    if (!Files.isReadable(file)) {
      throw new DemoFailed(
          file + " not found: start the local Cinder first (dev/cinder-local/start.sh)");
    }
    Map<String, String> m = new HashMap<>();
    for (String line : Files.readAllLines(file)) {
      int eq = line.indexOf('=');
      if (!line.startsWith("#") && eq > 0) {
        m.put(line.substring(0, eq), line.substring(eq + 1));
      }
    }
    return m;
  }

  private static void await(String what, BooleanSupplier c, Duration timeout)
      throws InterruptedException {
    long end = System.nanoTime() + timeout.toNanos();
    while (!c.getAsBoolean()) {
      if (System.nanoTime() > end) {
        throw new DemoFailed("timed out waiting for " + what);
      }
      Thread.sleep(20);
    }
  }

  private static void check(boolean ok, String failure) {
    if (!ok) {
      throw new DemoFailed(failure);
    }
  }

  private static String ms(long since) {
    return String.format("%.1f s", (System.nanoTime() - since) / 1e9);
  }

  private static void step(int n, String text) {
    say("[" + n + "/8] " + text);
  }

  private static void say(String text) {
    System.out.println(text);
  }

  private static final class DemoFailed extends RuntimeException {
    DemoFailed(String message) {
      super(message);
    }
  }
}
