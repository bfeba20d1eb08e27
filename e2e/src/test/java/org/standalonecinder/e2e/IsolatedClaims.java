package org.standalonecinder.e2e;

import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Secret;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.stream.Collectors;
import org.standalonecinder.api.ClaimAnnotations;
import org.standalonecinder.demo.Claims;
import org.standalonecinder.demo.LocalInstall;
import org.standalonecinder.provisioner.cinder.Attachment;
import org.standalonecinder.provisioner.cinder.CinderClient;
import org.standalonecinder.provisioner.cinder.Volume;
import org.standalonecinder.provisioner.provision.Names;
import org.standalonecinder.provisioner.provision.ProvisionerSettings;

/**
 * Claims of a namespace, a StorageClass, a provisioner name and a cluster id of their own, served
 * by in-process provisioners ({@link MortalProvisioner}) on the real API server and the real
 * Cinder, so that tests that break provisioners run side by side and the installed provisioner
 * leaves them alone; and the check of everything made for them ({@link #problems}).
 */
final class IsolatedClaims {

  final LocalInstall it;
  final String tag;
  final String ns;
  final String className;
  final ProvisionerSettings settings;

  /**
   * Makes the namespace and the class (which lets claims grow).
   *
   * @param prefix the start of the namespace's name
   * @param parameters the class's parameters ({@code smartclone: "true"} is added)
   */
  IsolatedClaims(LocalInstall it, String prefix, Map<String, String> parameters) {
    this.it = it;
    ns = it.namespace(prefix);
    tag = ns;
    className = "class-" + ns;
    settings =
        new ProvisionerSettings(
            "e2e.standalone-cinder.test/" + tag,
            tag,
            tag + "-" + UUID.randomUUID().toString().substring(0, 6),
            "iqn.2026-11.org.standalonecinder:" + tag,
            tag,
            "127.0.0.1",
            ns,
            false);
    Map<String, String> params = new LinkedHashMap<>(parameters);
    params.put("smartclone", "true");
    StringBuilder yaml =
        new StringBuilder(
            """
            apiVersion: storage.k8s.io/v1
            kind: StorageClass
            metadata: {name: %s}
            provisioner: %s
            reclaimPolicy: Delete
            allowVolumeExpansion: true
            parameters:
            """
                .formatted(className, settings.provisionerName()));
    params.forEach((k, v) -> yaml.append("  ").append(k).append(": \"").append(v).append("\"\n"));
    it.kubectl.ok(yaml.toString(), "apply", "-f", "-");
  }

  /**
   * A provisioner for these claims over the installation's Cinder; see {@link MortalProvisioner}.
   */
  MortalProvisioner provisioner(int dieAfter) {
    return provisioner(dieAfter, it.cinder);
  }

  MortalProvisioner provisioner(int dieAfter, CinderClient cinder) {
    return new MortalProvisioner(it.admin.getConfiguration(), cinder, settings, dieAfter);
  }

  /** A provisioner that replaces volumes no scheduler took after {@code schedulingGrace}. */
  MortalProvisioner provisioner(int dieAfter, Duration schedulingGrace) {
    return new MortalProvisioner(
        it.admin.getConfiguration(), it.cinder, settings, dieAfter, schedulingGrace);
  }

  /** Applies a claim of 1 GiB of the class ({@code annotations}: YAML flow-map entries). */
  void claim(String name, String annotations) {
    it.kubectl.ok(Claims.yaml(ns, name, className, annotations), "apply", "-f", "-");
  }

  /** Applies the claims at once, as one {@code kubectl apply} of a burst. */
  void claims(Set<String> names, String annotations) {
    StringBuilder burst = new StringBuilder();
    for (String n : new TreeSet<>(names)) {
      burst.append(Claims.yaml(ns, n, className, annotations)).append("---\n");
    }
    it.kubectl.ok(burst.toString(), "apply", "-f", "-");
  }

  /** How many of the namespace's claims are Bound. */
  int bound() {
    return (int)
        it.admin.persistentVolumeClaims().inNamespace(ns).list().getItems().stream()
            .filter(c -> c.getStatus() != null && "Bound".equals(c.getStatus().getPhase()))
            .count();
  }

  /**
   * What is wrong with the claims, which must be exactly {@code expected}, and with everything made
   * for them; empty when every claim is bound to one PV of its own, every Cinder volume of these
   * claims is in exactly one PV and attached once (the attachment the PV names), every CHAP Secret
   * belongs to a PV, and no clone finalizer is left.
   */
  List<String> problems(Set<String> expected) {
    List<String> p = new ArrayList<>();
    List<PersistentVolumeClaim> claims =
        it.admin.persistentVolumeClaims().inNamespace(ns).list().getItems();
    List<PersistentVolume> pvs =
        it.admin.persistentVolumes().list().getItems().stream()
            .filter(pv -> pv.getSpec().getClaimRef() != null)
            .filter(pv -> ns.equals(pv.getSpec().getClaimRef().getNamespace()))
            .toList();
    List<Volume> volumes =
        it.cinder.findVolumes(null, Map.of(Names.META_CLUSTER, settings.clusterId()));
    List<Secret> secrets =
        it.admin
            .secrets()
            .inNamespace(ns)
            .withLabel(Names.LABEL_MANAGED_BY, Names.MANAGED_BY)
            .list()
            .getItems();

    Set<String> names =
        claims.stream().map(c -> c.getMetadata().getName()).collect(Collectors.toSet());
    if (!names.equals(expected)) {
      p.add("claims " + new TreeSet<>(names) + ", want " + new TreeSet<>(expected));
    }
    for (PersistentVolumeClaim c : claims) {
      String name = c.getMetadata().getName();
      if (c.getStatus() == null || !"Bound".equals(c.getStatus().getPhase())) {
        p.add(name + " is not Bound");
      }
      List<String> finalizers =
          c.getMetadata().getFinalizers() == null ? List.of() : c.getMetadata().getFinalizers();
      finalizers.stream()
          .filter(f -> f.startsWith(Names.CLONE_FINALIZER_PREFIX))
          .forEach(f -> p.add(name + " still has " + f));
    }
    if (pvs.size() != expected.size()) {
      p.add(pvs.size() + " PVs for " + expected.size() + " claims");
    }
    Set<String> pvVolumes = new TreeSet<>();
    for (PersistentVolume pv : pvs) {
      String pvName = pv.getMetadata().getName();
      Map<String, String> ann = pv.getMetadata().getAnnotations();
      String volumeId = ann.get(ClaimAnnotations.VOLUME_ID);
      if (!pvVolumes.add(volumeId)) {
        p.add("volume " + volumeId + " is in two PVs");
      }
      if (pv.getStatus() == null || !"Bound".equals(pv.getStatus().getPhase())) {
        p.add(pvName + " is not Bound");
      }
      String secret = pv.getSpec().getIscsi().getSecretRef().getName();
      if (secrets.stream().noneMatch(s -> s.getMetadata().getName().equals(secret))) {
        p.add(pvName + " names Secret " + secret + ", which is missing");
      }
      List<String> attachments =
          it.cinder.listAttachments(volumeId).stream().map(Attachment::id).toList();
      if (!attachments.equals(List.of(ann.get(Names.ANN_ATTACHMENT)))) {
        p.add(
            "volume "
                + volumeId
                + " has attachments "
                + attachments
                + ", its PV "
                + ann.get(Names.ANN_ATTACHMENT));
      }
    }
    Set<String> cinderVolumes =
        volumes.stream().map(Volume::id).collect(Collectors.toCollection(TreeSet::new));
    if (!cinderVolumes.equals(pvVolumes)) {
      p.add("Cinder has volumes " + cinderVolumes + ", the PVs " + pvVolumes);
    }
    volumes.stream()
        .filter(v -> !v.status().equals("in-use"))
        .forEach(v -> p.add("volume " + v.id() + " is " + v.status()));
    Set<String> pvNames =
        pvs.stream().map(pv -> pv.getMetadata().getName()).collect(Collectors.toSet());
    for (Secret s : secrets) {
      String owner = s.getMetadata().getLabels().get(Names.LABEL_PV);
      if (!pvNames.contains(owner)) {
        p.add("Secret " + s.getMetadata().getName() + " belongs to no PV (" + owner + ")");
      }
    }
    return p;
  }

  /** Waits until {@link #problems} finds none; fails with the last ones it found. */
  void settle(Set<String> expected, Duration timeout) throws InterruptedException {
    long end = System.nanoTime() + timeout.toNanos();
    List<String> last = look(expected);
    while (!last.isEmpty()) {
      if (System.nanoTime() > end) {
        throw new AssertionError(
            tag + ": still wrong after " + timeout.toSeconds() + " s: " + last);
      }
      Thread.sleep(250);
      last = look(expected);
    }
  }

  /** {@link #problems}, or why it could not look (a Cinder that just restarted, say). */
  private List<String> look(Set<String> expected) {
    try {
      return problems(expected);
    } catch (RuntimeException e) {
      return List.of("cannot look: " + e.getMessage());
    }
  }

  /**
   * Whether the claim {@code ns/name}'s Cinder volume and PV have grown to {@code gib} GiB and the
   * claim waits for its filesystem (what the provisioner's part of an expansion ends with).
   */
  boolean grown(String ns, String name, int gib) {
    PersistentVolumeClaim c =
        it.admin.persistentVolumeClaims().inNamespace(ns).withName(name).get();
    PersistentVolume pv = it.admin.persistentVolumes().withName(c.getSpec().getVolumeName()).get();
    String volumeId = pv.getMetadata().getAnnotations().get(ClaimAnnotations.VOLUME_ID);
    return (gib + "Gi").equals(pv.getSpec().getCapacity().get("storage").toString())
        && it.cinder.getVolume(volumeId).map(v -> v.sizeGib() == gib).orElse(false)
        && c.getStatus().getConditions() != null
        && c.getStatus().getConditions().stream()
            .anyMatch(x -> "FileSystemResizePending".equals(x.getType()));
  }

  /** The messages of the Events of this reason about the namespace's claims. */
  List<String> events(String reason) {
    return it.admin.events().v1().events().inNamespace(ns).list().getItems().stream()
        .filter(e -> reason.equals(e.getReason()))
        .map(e -> e.getNote())
        .toList();
  }

  /**
   * Deletes every claim, then has a provisioner that does not die clean up after them, checks that
   * nothing is left in Cinder or the cluster, and removes the class and the namespace. The claims
   * go first: a provisioner started while one still lives may ask Cinder for its volume (no worker
   * waits for Cinder to make it), and closed at once, leave that volume to the next one.
   */
  void cleanUp(Duration timeout) throws InterruptedException {
    it.admin.persistentVolumeClaims().inNamespace(ns).delete();
    try (MortalProvisioner healthy = provisioner(0)) {
      settle(Set.of(), timeout);
    }
    it.admin.storage().v1().storageClasses().withName(className).delete();
    it.admin.namespaces().withName(ns).delete();
  }
}
