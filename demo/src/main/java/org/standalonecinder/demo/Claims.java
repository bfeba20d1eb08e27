package org.standalonecinder.demo;

import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import org.standalonecinder.provisioner.diagnostics.IscsiProbe;

/**
 * What a user does with claims on the local cluster, and what a node sees of their PVs: the
 * fixtures the demo and the e2e suite share, apart from the installation they run on.
 */
public final class Claims {

  private final KubernetesClient admin;

  /** Claims seen through the admin's client. */
  public Claims(KubernetesClient admin) {
    this.admin = admin;
  }

  /** A claim of 1Gi, ReadWriteOnce, as a user writes it for kubectl ({@code annotations}: YAML). */
  public static String yaml(String ns, String name, String className, String annotations) {
    return """
        apiVersion: v1
        kind: PersistentVolumeClaim
        metadata:
          name: %s
          namespace: %s
          annotations: {%s}
        spec:
          storageClassName: %s
          accessModes: [ReadWriteOnce]
          resources: {requests: {storage: 1Gi}}
        """
        .formatted(name, ns, annotations, className);
  }

  /** A claim of the class for a raw block device ({@code volumeMode: Block}), 1 GiB. */
  public static String blockYaml(String ns, String name, String className) {
    return yaml(ns, name, className, "")
        .replace(
            "  accessModes: [ReadWriteOnce]",
            "  volumeMode: Block\n  accessModes: [ReadWriteOnce]");
  }

  /**
   * How long a claim may take to be bound. Generous: on a loaded two-core machine running two
   * user-mode kernels beside Cinder, an attachment alone took 22 s (cinder-api's log) while the
   * node suite ran; speed is the bench's to measure, not a test's.
   */
  private static final Duration BOUND_WITHIN = Duration.ofSeconds(180);

  /** Waits until Kubernetes' PV controller has bound the claim, and returns its PV. */
  public PersistentVolume bound(String ns, String name) {
    try {
      Waits.await(
          ns + "/" + name + " Bound",
          () -> {
            var c = admin.persistentVolumeClaims().inNamespace(ns).withName(name).get();
            return c != null && c.getStatus() != null && "Bound".equals(c.getStatus().getPhase());
          },
          BOUND_WITHIN);
    } catch (IllegalStateException timedOut) {
      // What the claim was told, and whether Kubernetes ever handed it to a provisioner, is what
      // a failed run needs to be understood by.
      throw new IllegalStateException(
          timedOut.getMessage() + "; " + handedTo(ns, name) + "; its events: " + events(ns, name));
    }
    String pv =
        admin
            .persistentVolumeClaims()
            .inNamespace(ns)
            .withName(name)
            .get()
            .getSpec()
            .getVolumeName();
    return admin.persistentVolumes().withName(pv).get();
  }

  /**
   * Whom kube-controller-manager's PV binder named as the claim's provisioner: no external
   * provisioner acts before it does, and a binder slowed by thousands of pending claims looks from
   * outside like a provisioner that does nothing.
   */
  private String handedTo(String ns, String name) {
    var c = admin.persistentVolumeClaims().inNamespace(ns).withName(name).get();
    if (c == null) {
      return "the claim is gone";
    }
    var annotations = c.getMetadata().getAnnotations();
    String named =
        annotations == null
            ? null
            : annotations.getOrDefault(
                "volume.kubernetes.io/storage-provisioner",
                annotations.get("volume.beta.kubernetes.io/storage-provisioner"));
    return named == null
        ? "kube-controller-manager has not named a provisioner for it yet"
        : "named for " + named + " by kube-controller-manager";
  }

  /** The claim's last few events, oldest first, as {@code reason: message} (cut short). */
  private String events(String ns, String name) {
    List<String> told =
        admin.v1().events().inNamespace(ns).list().getItems().stream()
            .filter(e -> name.equals(e.getInvolvedObject().getName()))
            .sorted(Comparator.comparing(e -> String.valueOf(e.getLastTimestamp())))
            .map(e -> e.getReason() + ": " + e.getMessage())
            .map(m -> m.length() > 160 ? m.substring(0, 160) + "…" : m)
            .toList();
    return told.isEmpty()
        ? "none"
        : String.join(" | ", told.subList(Math.max(0, told.size() - 3), told.size()));
  }

  /** The node's view of an iSCSI PV: its portal, target and initiator, and its CHAP Secret. */
  public IscsiProbe.Target node(PersistentVolume pv) {
    var iscsi = pv.getSpec().getIscsi();
    Secret chap =
        admin
            .secrets()
            .inNamespace(iscsi.getSecretRef().getNamespace())
            .withName(iscsi.getSecretRef().getName())
            .get();
    return IscsiProbe.Target.of(iscsi, chap);
  }
}
