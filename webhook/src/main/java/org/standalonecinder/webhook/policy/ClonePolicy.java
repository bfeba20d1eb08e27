package org.standalonecinder.webhook.policy;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.admission.v1.AdmissionRequest;
import io.fabric8.kubernetes.api.model.storage.StorageClass;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.regex.Pattern;
import org.standalonecinder.api.ClassParameters;
import org.standalonecinder.api.InvalidClassParametersException;
import org.standalonecinder.webhook.admission.AdmissionController;
import org.standalonecinder.webhook.admission.Decision;

/**
 * The rules for claims that ask to be clones ({@code k8s.io/CloneRequest}) or claim to be one
 * ({@code k8s.io/CloneOf}). Every rule runs and every violation is reported in one answer; the
 * message says what to change. Default-deny where data could cross namespaces: a cross-namespace
 * source needs the requester to be allowed to create pods there (or an explicit grant on the
 * source), unless the admin chose otherwise.
 */
public final class ClonePolicy implements AdmissionController {

  public static final String CLONE_REQUEST = "k8s.io/CloneRequest";
  public static final String CLONE_OF = "k8s.io/CloneOf";

  /** On a source claim: namespaces (comma-separated) that may clone it. */
  public static final String CLONE_GRANT = "standalone-cinder.io/clone-grant";

  static final String VOLUME_ID = "cinderVolumeId";
  static final String STORAGE_PROVISIONER = "volume.kubernetes.io/storage-provisioner";

  private static final Pattern NAME =
      Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");
  private static final Pattern NAMESPACE = Pattern.compile("[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?");
  private static final ObjectMapper JSON = new ObjectMapper();

  /** Who may clone across namespaces. */
  public enum CrossNamespace {
    /** Only a requester who may create pods in the source namespace, or a granted namespace. */
    AUTHORIZED,
    /** Never. */
    DENY,
    /** Anyone who may create claims (the Go provisioner's behaviour; unsafe). */
    ALLOW
  }

  /**
   * @param provisionerName our provisioner's name
   * @param provisionerUser the provisioner's service account user, the only one who may set {@code
   *     k8s.io/CloneOf}
   * @param crossNamespace who may clone across namespaces
   */
  public record Settings(
      String provisionerName, String provisionerUser, CrossNamespace crossNamespace) {}

  private final Settings settings;
  private final ClusterView cluster;

  public ClonePolicy(Settings settings, ClusterView cluster) {
    this.settings = settings;
    this.cluster = cluster;
  }

  @Override
  public Decision review(AdmissionRequest request, boolean mutating) {
    if (!(request.getObject() instanceof PersistentVolumeClaim claim)) {
      return Decision.allow();
    }
    PersistentVolumeClaim old =
        request.getOldObject() instanceof PersistentVolumeClaim o ? o : null;
    String user = request.getUserInfo() == null ? null : request.getUserInfo().getUsername();
    List<String> violations = new ArrayList<>();
    String cloneOf = annotation(claim, CLONE_OF);
    String request0 = annotation(claim, CLONE_REQUEST);

    boolean byProvisioner = settings.provisionerUser().equals(user);
    if (old == null) {
      if (cloneOf != null && !byProvisioner) {
        violations.add(CLONE_OF + " is set by the provisioner only; remove it");
      }
    } else {
      if (!Objects.equals(cloneOf, annotation(old, CLONE_OF)) && !byProvisioner) {
        violations.add(CLONE_OF + " is set by the provisioner only; do not change it");
      }
      if (!Objects.equals(request0, annotation(old, CLONE_REQUEST))) {
        violations.add(CLONE_REQUEST + " cannot change after the claim is created");
      }
    }
    String patch = null;
    if (request0 != null && old == null) {
      String ns =
          request.getNamespace() != null
              ? request.getNamespace()
              : claim.getMetadata().getNamespace();
      Source src = parse(request0, ns, violations);
      if (src != null) {
        checkTargetClass(claim, violations);
        checkSource(claim, ns, src, request, violations);
        if (mutating && !request0.contains("/") && violations.isEmpty()) {
          patch = defaultPatch(src);
        }
      }
    }
    if (!violations.isEmpty()) {
      return Decision.deny(403, String.join("; ", violations));
    }
    return patch == null ? Decision.allow() : new Decision(true, 200, null, List.of(), patch);
  }

  private record Source(String namespace, String name) {}

  private static Source parse(String value, String targetNamespace, List<String> violations) {
    String[] parts = value.split("/", -1);
    String ns = parts.length == 2 ? parts[0] : targetNamespace;
    String name = parts.length == 2 ? parts[1] : parts[0];
    if (parts.length > 2
        || !NAMESPACE.matcher(ns).matches()
        || !NAME.matcher(name).matches()
        || name.length() > 253) {
      violations.add(
          CLONE_REQUEST
              + " '"
              + value
              + "' must be <claim> or <namespace>/<claim>, each a valid Kubernetes name");
      return null;
    }
    return new Source(ns, name);
  }

  private void checkTargetClass(PersistentVolumeClaim claim, List<String> violations) {
    String className = claim.getSpec() == null ? null : claim.getSpec().getStorageClassName();
    Optional<StorageClass> sc =
        className == null ? Optional.empty() : cluster.storageClass(className);
    if (sc.isEmpty()) {
      violations.add(
          "a clone needs a StorageClass of "
              + settings.provisionerName()
              + " with smartclone \"true\"; "
              + (className == null
                  ? "the claim names none"
                  : "StorageClass " + className + " does not exist"));
      return;
    }
    if (!settings.provisionerName().equals(sc.get().getProvisioner())) {
      violations.add(
          "StorageClass "
              + className
              + " belongs to "
              + sc.get().getProvisioner()
              + ", which cannot clone Cinder volumes; use a class of "
              + settings.provisionerName());
      return;
    }
    boolean smartclone;
    try {
      smartclone = ClassParameters.parse(sc.get().getParameters()).smartclone();
    } catch (InvalidClassParametersException e) {
      smartclone = false;
    }
    if (!smartclone) {
      violations.add(
          "StorageClass "
              + className
              + " does not allow cloning: its smartclone parameter is not \"true\"");
    }
  }

  private void checkSource(
      PersistentVolumeClaim target,
      String targetNs,
      Source src,
      AdmissionRequest request,
      List<String> violations) {
    Optional<PersistentVolumeClaim> found = cluster.claim(src.namespace(), src.name());
    String id = src.namespace() + "/" + src.name();
    if (!src.namespace().equals(targetNs)
        && !crossNamespaceAllowed(found, src.namespace(), targetNs, request)) {
      // The same answer whether the source exists or not: no probing of other namespaces.
      violations.add(
          "cloning "
              + id
              + " into namespace "
              + targetNs
              + " is not allowed: you may not create pods in "
              + src.namespace()
              + " and the source grants no clone to "
              + targetNs);
      return;
    }
    if (found.isEmpty()) {
      violations.add("source claim " + id + " does not exist");
      return;
    }
    PersistentVolumeClaim source = found.get();
    if (source.getMetadata().getDeletionTimestamp() != null) {
      violations.add("source claim " + id + " is being deleted");
    }
    if (source.getStatus() == null || !"Bound".equals(source.getStatus().getPhase())) {
      violations.add("source claim " + id + " is not Bound yet");
    }
    Map<String, String> ann = source.getMetadata().getAnnotations();
    if (ann == null
        || !settings.provisionerName().equals(ann.get(STORAGE_PROVISIONER))
        || ann.get(VOLUME_ID) == null) {
      violations.add(
          "source claim " + id + " was not provisioned by " + settings.provisionerName());
    }
    String sourceMode = mode(source);
    String targetMode = mode(target);
    if (!sourceMode.equals(targetMode)) {
      violations.add(
          "source claim "
              + id
              + " has volumeMode "
              + sourceMode
              + " and this claim "
              + targetMode
              + "; they must match");
    }
    BigDecimal sourceSize =
        size(source.getStatus() == null ? null : source.getStatus().getCapacity());
    BigDecimal wanted =
        size(
            target.getSpec() == null || target.getSpec().getResources() == null
                ? null
                : target.getSpec().getResources().getRequests());
    if (sourceSize != null && wanted != null && sourceSize.compareTo(wanted) > 0) {
      violations.add(
          "source claim "
              + id
              + " holds "
              + source.getStatus().getCapacity().get("storage")
              + ", more than this claim requests; request at least that much");
    }
  }

  private boolean crossNamespaceAllowed(
      Optional<PersistentVolumeClaim> source,
      String sourceNs,
      String targetNs,
      AdmissionRequest request) {
    return switch (settings.crossNamespace()) {
      case ALLOW -> true;
      case DENY -> false;
      case AUTHORIZED ->
          source.map(s -> granted(s, targetNs)).orElse(false)
              || (request.getUserInfo() != null
                  && cluster.canCreatePods(request.getUserInfo(), sourceNs));
    };
  }

  private static boolean granted(PersistentVolumeClaim source, String targetNs) {
    String grant = annotation(source, CLONE_GRANT);
    return grant != null
        && Arrays.stream(grant.split(",")).map(String::trim).anyMatch(targetNs::equals);
  }

  private static String mode(PersistentVolumeClaim c) {
    return c.getSpec() == null || c.getSpec().getVolumeMode() == null
        ? "Filesystem"
        : c.getSpec().getVolumeMode();
  }

  private static BigDecimal size(Map<String, Quantity> m) {
    Quantity q = m == null ? null : m.get("storage");
    return q == null ? null : Quantity.getAmountInBytes(q);
  }

  private static String annotation(PersistentVolumeClaim c, String key) {
    Map<String, String> a = c.getMetadata() == null ? null : c.getMetadata().getAnnotations();
    return a == null ? null : a.get(key);
  }

  /** Replaces {@code name} with {@code namespace/name}, so the provisioner sees no ambiguity. */
  private static String defaultPatch(Source src) {
    ArrayNode patch = JSON.createArrayNode();
    ObjectNode op = patch.addObject();
    op.put("op", "replace");
    op.put("path", "/metadata/annotations/" + CLONE_REQUEST.replace("~", "~0").replace("/", "~1"));
    op.put("value", src.namespace() + "/" + src.name());
    return patch.toString();
  }
}
