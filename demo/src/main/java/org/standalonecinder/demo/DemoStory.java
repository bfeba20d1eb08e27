package org.standalonecinder.demo;

import static org.standalonecinder.demo.DemoConsole.NS;
import static org.standalonecinder.demo.DemoConsole.annotations;
import static org.standalonecinder.demo.DemoConsole.await;
import static org.standalonecinder.demo.DemoConsole.check;
import static org.standalonecinder.demo.DemoConsole.inAPod;
import static org.standalonecinder.demo.DemoConsole.kubectl;
import static org.standalonecinder.demo.DemoConsole.letGo;
import static org.standalonecinder.demo.DemoConsole.ms;
import static org.standalonecinder.demo.DemoConsole.say;
import static org.standalonecinder.demo.DemoConsole.step;

import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.time.Duration;
import java.util.List;
import java.util.TreeSet;
import org.standalonecinder.api.ClaimAnnotations;
import org.standalonecinder.provisioner.cinder.Volume;
import org.standalonecinder.provisioner.diagnostics.IscsiProbe;

/**
 * The demo's steps 3 to 8 on an installation, host processes or Pods: a claim applied with kubectl
 * provisioned and bound, used by a Pod on the node (or libiscsi where no node runs), the webhook's
 * judgments of what users create, the admitted clone read, and everything released; each step
 * checked, and what it showed printed as a user would see it.
 */
public final class DemoStory {

  private static final String WORDS = "hello from a pod";

  private final LocalInstall it;
  private final LocalNode node;

  private DemoStory(LocalInstall it, LocalNode node) {
    this.it = it;
    this.node = node;
  }

  /**
   * Runs steps 3 to 8 on {@code it}, in the namespace {@code default} with the classes {@code
   * cinder} and {@code plain}; {@code node} (may be null) is the node whose kubelet runs the Pods.
   */
  public static void run(LocalInstall it, LocalNode node) throws Exception {
    DemoStory story = new DemoStory(it, node);
    PersistentVolume pv = story.provisioned();
    IscsiProbe.Target probe = story.used(pv);
    long t3 = story.judged();
    PersistentVolume copyPv = story.cloneRead(t3);
    story.released(pv, probe, copyPv);
  }

  /** Steps 3 and 4: the classes and a claim applied, bound, and what that made. */
  private PersistentVolume provisioned() throws Exception {
    kubectl(
        it,
        """
        apiVersion: storage.k8s.io/v1
        kind: StorageClass
        metadata: {name: cinder}
        provisioner: openstack.org/standalone-cinder
        parameters: {fsType: ext4, smartclone: "true"}
        reclaimPolicy: Delete
        ---
        apiVersion: storage.k8s.io/v1
        kind: StorageClass
        metadata: {name: plain}
        provisioner: openstack.org/standalone-cinder
        reclaimPolicy: Delete
        ---
        apiVersion: v1
        kind: PersistentVolumeClaim
        metadata: {name: data, namespace: default}
        spec:
          storageClassName: cinder
          accessModes: [ReadWriteOnce]
          resources: {requests: {storage: 1Gi}}
        """,
        true,
        3,
        "classes 'cinder' (fsType ext4, smartclone) and 'plain', and a claim of 1Gi",
        "apply",
        "-f",
        "-");
    long t1 = System.nanoTime();
    PersistentVolume pv = it.claims.bound(NS, "data");
    step(4, "claim default/data Bound by the PV controller " + ms(t1) + " after kubectl apply:");
    // Its claim and its PV by name: PVs are cluster-wide, and a cluster may hold others'.
    it.kubectl
        .ok(null, "get", "pvc/data", "pv/" + pv.getMetadata().getName(), "-n", NS)
        .out()
        .lines()
        .forEach(l -> say("      " + l));
    say("      the PV's source:");
    for (String line : new KubernetesSerialization().asYaml(pv.getSpec().getIscsi()).split("\n")) {
      if (!line.startsWith("---")) {
        say("        " + line);
      }
    }
    String volumeId = pv.getMetadata().getAnnotations().get(ClaimAnnotations.VOLUME_ID);
    Volume v =
        it.cinder
            .getVolume(volumeId)
            .orElseThrow(() -> new DemoConsole.DemoFailed("volume missing"));
    say(
        "      Cinder volume "
            + v.id()
            + ": "
            + v.status()
            + ", "
            + v.sizeGib()
            + " GiB, metadata "
            + new java.util.TreeMap<>(v.metadata()));
    var ref = pv.getSpec().getIscsi().getSecretRef();
    Secret chap = it.admin.secrets().inNamespace(ref.getNamespace()).withName(ref.getName()).get();
    say(
        "      CHAP Secret "
            + ref.getNamespace()
            + "/"
            + ref.getName()
            + " (type "
            + chap.getType()
            + ", keys "
            + new TreeSet<>(chap.getData().keySet())
            + "; values not shown)");
    // This claim's events only: a claim of the same name from an earlier run keeps its events
    // for an hour.
    String claimUid = pv.getSpec().getClaimRef().getUid();
    await(
        "the provisioner's events",
        () ->
            it.admin.events().v1().events().inNamespace(NS).list().getItems().stream()
                .anyMatch(
                    e ->
                        "ProvisioningSucceeded".equals(e.getReason())
                            && claimUid.equals(e.getRegarding().getUid())),
        Duration.ofSeconds(10));
    String selector = "involvedObject.name=data,involvedObject.uid=" + claimUid;
    say("      $ kubectl get events -n default --field-selector " + selector);
    it.kubectl
        .ok(
            null,
            "get",
            "events",
            "-n",
            NS,
            "--field-selector",
            selector,
            "-o",
            "custom-columns=TYPE:.type,REASON:.reason,BY:.reportingComponent,MESSAGE:.message")
        .out()
        .lines()
        .forEach(l -> say("        " + l));

    return pv;
  }

  /**
   * Step 5: a Pod on the node writes a file to the claim (libiscsi writes bytes where no node
   * runs); a wrong CHAP secret is refused.
   */
  private IscsiProbe.Target used(PersistentVolume pv) throws Exception {
    IscsiProbe.Target probe = it.claims.node(pv);
    if (node == null) {
      IscsiProbe.Result rw = probe.io("write -P 0x5a 0 1M", "read -P 0x5a 0 1M");
      check(rw.ok(), "the node's write and read: " + rw.output());
      check(
          !probe.withPassword("wrong-secret").io("read 0 4k").ok(), "a wrong secret was accepted");
      step(
          5,
          "a node logs in to "
              + pv.getSpec().getIscsi().getTargetPortal()
              + " as "
              + pv.getSpec().getIscsi().getInitiatorName()
              + " with the Secret's CHAP credentials: wrote 1 MiB of 0x5a and read it back; a"
              + " wrong secret is refused");
    } else {
      long t5 = System.nanoTime();
      Pods.Ended wrote =
          inAPod(
              it,
              node,
              "writer",
              "data",
              "echo '"
                  + WORDS
                  + "' > /data/hello && sync"
                  + " && awk '$2 == \"/data\" {print $3}' /proc/mounts > /dev/termination-log",
              5,
              "a Pod on " + node.name() + " writes /data/hello to the claim");
      check(wrote.succeeded(), "the writer Pod: " + wrote + "; " + it.pods.story(NS, "writer"));
      say(
          "      the kubelet's iSCSI plugin logged in to "
              + pv.getSpec().getIscsi().getTargetPortal()
              + " as "
              + pv.getSpec().getIscsi().getInitiatorName()
              + " with the CHAP Secret (read through the Node authorizer), made the filesystem"
              + " (the Pod saw "
              + wrote.message()
              + " at /data) and mounted it; the Pod wrote its file and ended "
              + ms(t5)
              + " after kubectl create");
      letGo(it, node, pv, "writer");
      check(
          !probe.withPassword("wrong-secret").io("read 0 4k").ok(), "a wrong secret was accepted");
      say("      a login with a wrong CHAP secret is refused");
    }
    return probe;
  }

  /** Step 6: what the webhook answers the API server about what users create. */
  private long judged() throws Exception {
    step(
        6,
        "the API server asks the webhook (and its resolver asks Cinder) about what users create:");
    // As docs/install.md advises: without it the webhook could not tell the API server's reviews
    // from any pod's, and would leave the sources to the provisioner (its events).
    it.webhookAuthenticatesCallers(true);
    say(
        "      the webhook takes reviews from the API server's client certificate only (serve"
            + " --client-ca), so it judges the sources and the requesters' rights");
    it.kubectl.ok(null, "create", "namespace", "team-m");
    it.kubectl.ok(
        null,
        "create",
        "rolebinding",
        "mallory-edits",
        "-n",
        "team-m",
        "--clusterrole=edit",
        "--user=mallory");
    long t3 = System.nanoTime();
    // As a user would: the webhook says "try again" when its clone check (the provisioner's
    // resolver, which asks Cinder) did not answer in time, as the first one may not on a slow
    // node (seen in a Pod on the user-mode-linux node: 3 s passed at the provisioner's start).
    for (int attempt = 1; ; attempt++) {
      try {
        kubectl(
            it,
            Claims.yaml(NS, "copy", "cinder", "k8s.io/CloneRequest: data"),
            true,
            0,
            "a clone of data in class cinder",
            "create",
            "-f",
            "-");
        break;
      } catch (DemoConsole.DemoFailed e) {
        if (attempt == 3 || !String.valueOf(e.getMessage()).contains("try again")) {
          throw e;
        }
        say("      the webhook said to try again (its clone check was slow): trying again");
        Thread.sleep(2_000);
      }
    }
    kubectl(
        it,
        Claims.yaml(NS, "blank", "plain", "k8s.io/CloneRequest: data"),
        false,
        0,
        "a clone into a class without smartclone",
        "create",
        "-f",
        "-");
    kubectl(
        it,
        Claims.yaml("team-m", "steal", "cinder", "k8s.io/CloneRequest: default/data"),
        false,
        0,
        "mallory, who may create claims in team-m only, clones default/data",
        "--as=mallory",
        "create",
        "-f",
        "-");
    kubectl(
        it,
        Claims.yaml(NS, "fake", "cinder", "k8s.io/CloneOf: default/data"),
        false,
        0,
        "a user writes k8s.io/CloneOf",
        "create",
        "-f",
        "-");
    kubectl(
        it,
        Claims.yaml(NS, "shared", "cinder", "").replace("[ReadWriteOnce]", "[ReadWriteMany]"),
        false,
        0,
        "ReadWriteMany with a filesystem",
        "create",
        "-f",
        "-");
    kubectl(
        it,
        """
        apiVersion: storage.k8s.io/v1
        kind: StorageClass
        metadata: {name: fast}
        provisioner: openstack.org/standalone-cinder
        parameters: {tpye: ssd}
        """,
        false,
        0,
        "a StorageClass with a misspelt parameter",
        "create",
        "-f",
        "-");

    return t3;
  }

  /** Step 7: the admitted clone, bound, marked, and read. */
  private PersistentVolume cloneRead(long t3) throws Exception {
    PersistentVolume copyPv = it.claims.bound(NS, "copy");
    await(
        ClaimAnnotations.CLONE_OF,
        () -> "default/data".equals(annotations(it, "copy").get(ClaimAnnotations.CLONE_OF)),
        Duration.ofSeconds(30));
    String copyVolumeId = copyPv.getMetadata().getAnnotations().get(ClaimAnnotations.VOLUME_ID);
    Volume copy =
        it.cinder
            .getVolume(copyVolumeId)
            .orElseThrow(() -> new DemoConsole.DemoFailed("the clone's volume is missing"));
    IscsiProbe.Target copyProbe = it.claims.node(copyPv);
    String seen;
    if (node == null) {
      IscsiProbe.Result read = copyProbe.io("read -P 0x5a 0 1M");
      check(read.ok(), "the clone does not hold the source's data: " + read.output());
      seen = "; the node logs in with the clone's own CHAP Secret and reads the 1 MiB of 0x5a";
    } else {
      seen = "; a Pod reads the clone:";
    }
    step(
        7,
        "the admitted clone: Bound to "
            + copyPv.getMetadata().getName()
            + " "
            + ms(t3)
            + " after kubectl create, Cinder volume "
            + copyVolumeId
            + " cloned from "
            + copy.sourceVolumeId()
            + ", k8s.io/CloneRequest: "
            + annotations(it, "copy").get(ClaimAnnotations.CLONE_REQUEST)
            + " (the webhook's patch), k8s.io/CloneOf: "
            + annotations(it, "copy").get(ClaimAnnotations.CLONE_OF)
            + seen);
    if (node != null) {
      Pods.Ended read =
          inAPod(
              it,
              node,
              "reader",
              "copy",
              "cat /data/hello > /dev/termination-log",
              0,
              "a Pod on " + node.name() + " prints the clone's /data/hello");
      check(
          read.succeeded() && WORDS.equals(read.message()),
          "the reader Pod on the clone: " + read + "; " + it.pods.story(NS, "reader"));
      say(
          "      its message: \""
              + read.message()
              + "\" (through the clone's own target and CHAP Secret)");
      letGo(it, node, copyPv, "reader");
    }

    return copyPv;
  }

  /** Step 8: both claims deleted, and nothing of them left. */
  private void released(PersistentVolume pv, IscsiProbe.Target probe, PersistentVolume copyPv)
      throws Exception {
    String volumeId = pv.getMetadata().getAnnotations().get(ClaimAnnotations.VOLUME_ID);
    String copyVolumeId = copyPv.getMetadata().getAnnotations().get(ClaimAnnotations.VOLUME_ID);
    IscsiProbe.Target copyProbe = it.claims.node(copyPv);
    long t2 = System.nanoTime();
    kubectl(it, null, true, 0, "", "delete", "pvc", "copy", "data", "-n", NS, "--timeout=60s");
    await(
        "the released PVs torn down",
        () ->
            it.admin.persistentVolumes().withName(pv.getMetadata().getName()).get() == null
                && it.admin.persistentVolumes().withName(copyPv.getMetadata().getName()).get()
                    == null,
        Duration.ofSeconds(90));
    check(
        it.cinder.getVolume(volumeId).isEmpty() && it.cinder.getVolume(copyVolumeId).isEmpty(),
        "a Cinder volume is still there");
    // These two PVs' Secrets: the cluster may hold other claims of the same installation.
    for (PersistentVolume gone : List.of(pv, copyPv)) {
      var secretRef = gone.getSpec().getIscsi().getSecretRef();
      check(
          it.admin
                  .secrets()
                  .inNamespace(secretRef.getNamespace())
                  .withName(secretRef.getName())
                  .get()
              == null,
          "the CHAP Secret " + secretRef.getName() + " is still there");
    }
    check(
        !probe.io("read 0 4k").ok() && !copyProbe.io("read 0 4k").ok(),
        "a target still accepts the login");
    step(
        8,
        "the PV controller released both PVs and the provisioner tore them down "
            + ms(t2)
            + " after kubectl delete: Cinder volumes gone, CHAP Secrets gone, the targets"
            + " refuse the login");
    it.kubectl.ok(null, "delete", "namespace", "team-m", "--wait=false");
    it.kubectl.ok(null, "delete", "storageclass", "cinder", "plain");
    say(
        "\ndone: kubectl apply -> Cinder volume -> iSCSI PV bound by Kubernetes -> "
            + (node == null ? "data" : "a Pod's file")
            + " -> clone judged by the webhook -> the same "
            + (node == null ? "data" : "file in a Pod")
            + " -> kubectl delete -> nothing left.");
  }
}
