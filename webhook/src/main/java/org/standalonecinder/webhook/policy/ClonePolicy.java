package org.standalonecinder.webhook.policy;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaimSpec;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.admission.v1.AdmissionRequest;
import io.fabric8.kubernetes.api.model.storage.StorageClass;
import java.math.BigDecimal;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import org.standalonecinder.api.AccessModes;
import org.standalonecinder.api.ClaimAnnotations;
import org.standalonecinder.api.ClaimRef;
import org.standalonecinder.api.ClassParameters;
import org.standalonecinder.api.CloneToken;
import org.standalonecinder.api.InvalidClassParametersException;
import org.standalonecinder.webhook.admission.AdmissionController;
import org.standalonecinder.webhook.admission.Decision;

/**
 * The rules for claims that ask to be clones ({@code k8s.io/CloneRequest}, or a native {@code
 * spec.dataSource}/{@code dataSourceRef} naming a claim, into one of our classes) or claim to be
 * one ({@code k8s.io/CloneOf}). Every rule runs and every violation is reported in one answer; the
 * message says what to change. Default-deny where data could cross namespaces: a cross-namespace
 * source needs the requester to be allowed to create pods there (or an explicit grant on the
 * source), unless the admin chose otherwise.
 */
public final class ClonePolicy implements AdmissionController {

  public static final String CLONE_REQUEST = ClaimRef.CLONE_REQUEST;
  public static final String CLONE_OF = ClaimRef.CLONE_OF;

  /** On a source claim: namespaces (comma-separated) that may clone it. */
  public static final String CLONE_GRANT = ClaimRef.CLONE_GRANT;

  /** Rule names: they label the metrics and are listed in docs/webhook.md. */
  public static final String RULE_SYNTAX = "clone-request-syntax";

  public static final String RULE_CLASS = "clone-class";
  public static final String RULE_DATA_SOURCE_KIND = "clone-data-source-kind";
  public static final String RULE_TWO_SOURCES = "clone-two-sources";
  public static final String RULE_SOURCE_MISSING = "clone-source-missing";
  public static final String RULE_SOURCE_DELETING = "clone-source-deleting";
  public static final String RULE_SOURCE_UNBOUND = "clone-source-unbound";
  public static final String RULE_SOURCE_FOREIGN = "clone-source-foreign";
  public static final String RULE_VOLUME_MODE = "clone-volume-mode";
  public static final String RULE_SIZE = "clone-size";
  public static final String RULE_CROSS_NAMESPACE = "clone-cross-namespace";
  public static final String RULE_CLONE_OF = "clone-of-provisioner-only";
  public static final String RULE_IMMUTABLE = "clone-request-immutable";
  public static final String RULE_DEFAULT_NAMESPACE = "clone-request-namespace";
  public static final String RULE_CINDER = "clone-cinder";
  public static final String RULE_CHECK_UNAVAILABLE = "clone-check-unavailable";
  public static final String RULE_TOKEN = "clone-token";
  public static final String RULE_ACCESS_MODE = "shared-filesystem";

  static final String VOLUME_ID = ClaimAnnotations.VOLUME_ID;
  static final String STORAGE_PROVISIONER = ClaimAnnotations.STORAGE_PROVISIONER;

  private static final ObjectMapper JSON = new ObjectMapper();

  /** Who may clone across namespaces. */
  public enum CrossNamespace {
    /** Only a requester who may create pods in the source namespace, or a granted namespace. */
    AUTHORIZED,
    /** Never. */
    DENY,
    /** Anyone who may create claims (the Go provisioner's behaviour; unsafe, so it warns). */
    ALLOW
  }

  /** What to do when the clone cannot be checked against Cinder (the resolver is down). */
  public enum CheckUnavailable {
    /** Deny: the webhook fails closed. */
    DENY,
    /** Allow with a warning: the provisioner still checks when it clones. */
    ALLOW
  }

  /** What to do with a clone that requests less than its source holds. */
  public enum Undersized {
    /** Deny it: the user says how much. */
    DENY,
    /** The mutating endpoint raises the request to the source's size, with a warning. */
    RAISE
  }

  /**
   * @param provisionerName our provisioner's name
   * @param provisionerUser the provisioner's service account user, the only one who may set {@code
   *     k8s.io/CloneOf}
   * @param crossNamespace who may clone across namespaces
   * @param undersized what to do with a clone smaller than its source
   * @param checkUnavailable what to do when Cinder cannot be asked
   */
  public record Settings(
      String provisionerName,
      String provisionerUser,
      CrossNamespace crossNamespace,
      Undersized undersized,
      CheckUnavailable checkUnavailable) {

    public Settings(String provisionerName, String provisionerUser, CrossNamespace cross) {
      this(provisionerName, provisionerUser, cross, Undersized.DENY, CheckUnavailable.DENY);
    }

    public Settings(
        String provisionerName,
        String provisionerUser,
        CrossNamespace cross,
        Undersized undersized) {
      this(provisionerName, provisionerUser, cross, undersized, CheckUnavailable.DENY);
    }
  }

  private final Settings settings;
  private final ClusterView cluster;
  private final CloneCheck check;
  private final byte[] tokenKey;
  private final Clock clock;

  /** Without a Cinder check and without clone tokens. */
  public ClonePolicy(Settings settings, ClusterView cluster) {
    this(settings, cluster, CloneCheck.NONE, null, Clock.systemUTC());
  }

  /**
   * @param check asked by the validating endpoint once every other rule passed
   * @param tokenKey signs the token of accepted cross-namespace clones ({@link CloneToken}); null
   *     for none (the provisioner then refuses cross-namespace clones)
   */
  public ClonePolicy(
      Settings settings, ClusterView cluster, CloneCheck check, byte[] tokenKey, Clock clock) {
    this.settings = settings;
    this.cluster = cluster;
    this.check = check;
    this.tokenKey = tokenKey == null ? null : tokenKey.clone();
    this.clock = clock;
  }

  /** What the rules found for one request, in the order they ran. */
  private static final class Findings {
    final List<String> violations = new ArrayList<>();
    final List<String> warnings = new ArrayList<>();
    final Set<String> rules = new LinkedHashSet<>();
    final ArrayNode patch = JSON.createArrayNode();
    final boolean mutating;

    Findings(boolean mutating) {
      this.mutating = mutating;
    }

    void deny(String rule, String message) {
      violations.add(message);
      rules.add(rule);
    }

    /**
     * A warning for what is allowed but suspicious. The API server shows the warnings of both
     * endpoints, so these come from the validating one only, which sees the final object.
     */
    void warn(String rule, String message) {
      if (!mutating) {
        warnings.add(message);
      }
      rules.add(rule);
    }

    /** A warning that explains a patch: from the mutating endpoint, which makes the patch. */
    void warnPatched(String rule, String message) {
      warnings.add(message);
      rules.add(rule);
    }

    void replace(String rule, String path, String value) {
      ObjectNode op = patch.addObject();
      op.put("op", "replace");
      op.put("path", path);
      op.put("value", value);
      rules.add(rule);
    }

    /** Sets an annotation whether or not it (or any annotation) exists yet. */
    void annotate(String rule, PersistentVolumeClaim claim, String key, String value) {
      ObjectNode op = patch.addObject();
      op.put("op", "add");
      // An empty map is not sent at all (omitempty): then the whole map is added; "add" over an
      // empty one replaces it, which is as good.
      if (claim.getMetadata().getAnnotations() == null
          || claim.getMetadata().getAnnotations().isEmpty()) {
        op.put("path", "/metadata/annotations");
        op.putObject("value").put(key, value);
      } else {
        op.put("path", "/metadata/annotations/" + pointer(key));
        op.put("value", value);
      }
      rules.add(rule);
    }

    Decision decision() {
      if (!violations.isEmpty()) {
        return new Decision(
            false, 403, String.join("; ", violations), List.of(), null, List.copyOf(rules));
      }
      return Decision.allow(
          warnings, patch.isEmpty() ? null : patch.toString(), List.copyOf(rules));
    }
  }

  @Override
  public Decision review(AdmissionRequest request, boolean mutating) {
    if (!(request.getObject() instanceof PersistentVolumeClaim claim)
        || "DELETE".equals(request.getOperation())) {
      return Decision.allow();
    }
    PersistentVolumeClaim old =
        request.getOldObject() instanceof PersistentVolumeClaim o ? o : null;
    String user = request.getUserInfo() == null ? null : request.getUserInfo().getUsername();
    Findings f = new Findings(mutating);
    String cloneOf = annotation(claim, CLONE_OF);
    String cloneRequest = annotation(claim, CLONE_REQUEST);
    String className = claim.getSpec() == null ? null : claim.getSpec().getStorageClassName();

    boolean byProvisioner = settings.provisionerUser().equals(user);
    if (old != null) {
      if (!Objects.equals(cloneOf, annotation(old, CLONE_OF)) && !byProvisioner) {
        f.deny(RULE_CLONE_OF, CLONE_OF + " is set by the provisioner only; do not change it");
      }
      if (!Objects.equals(cloneRequest, annotation(old, CLONE_REQUEST))) {
        f.deny(RULE_IMMUTABLE, CLONE_REQUEST + " cannot change after the claim is created");
      }
      if (!Objects.equals(
          annotation(claim, CloneToken.ANNOTATION), annotation(old, CloneToken.ANNOTATION))) {
        f.deny(RULE_IMMUTABLE, CloneToken.ANNOTATION + " cannot change after the claim is created");
      }
      // spec.dataSource is immutable in the API server already; the rest was checked at create.
      // Only a would-be denial costs a lookup: most updates of a claim touch none of this.
      if (!f.violations.isEmpty() && !ours(className)) {
        return Decision.allow();
      }
      return f.decision();
    }
    boolean hasDataSource =
        claim.getSpec() != null
            && (claim.getSpec().getDataSource() != null
                || claim.getSpec().getDataSourceRef() != null);
    Optional<String> sharedFilesystem =
        AccessModes.refusal(
            claim.getSpec() == null ? null : claim.getSpec().getAccessModes(),
            claim.getSpec() == null ? null : claim.getSpec().getVolumeMode());
    if (cloneRequest == null
        && cloneOf == null
        && annotation(claim, CloneToken.ANNOTATION) == null
        && !hasDataSource
        && sharedFilesystem.isEmpty()) {
      // A plain claim needs no lookup: an API server hiccup must not block ordinary claims.
      return f.decision();
    }
    String ns =
        request.getNamespace() != null
            ? request.getNamespace()
            : claim.getMetadata().getNamespace();
    Optional<StorageClass> sc =
        className == null || className.isEmpty()
            ? Optional.empty()
            : cluster.storageClass(className);
    if (sc.isPresent() ? !ours(sc.get()) : className == null || className.isEmpty()) {
      // Another provisioner's claim (KubeVirt's CDI uses the same clone annotations for its own
      // clones), or one bound statically without a class: not ours to judge, touch or warn about.
      return Decision.allow();
    }
    boolean ourClass = sc.isPresent();
    if (cloneOf != null && !byProvisioner) {
      f.deny(RULE_CLONE_OF, CLONE_OF + " is set by the provisioner only; remove it");
    }
    if (ourClass) {
      sharedFilesystem.ifPresent(reason -> f.deny(RULE_ACCESS_MODE, reason));
    }

    ClaimRef annotated = cloneRequest == null ? null : parse(cloneRequest, ns, f);
    // Native clones into other provisioners' classes are theirs to judge.
    ClaimRef nativeSource = ourClass ? nativeSource(claim.getSpec(), ns, className, f) : null;
    if (annotated != null && nativeSource != null) {
      if (annotated.equals(nativeSource)) {
        f.warn(RULE_TWO_SOURCES, CLONE_REQUEST + " repeats spec.dataSource; one of them is enough");
      } else {
        f.deny(
            RULE_TWO_SOURCES,
            CLONE_REQUEST
                + " names "
                + annotated
                + " but spec.dataSource names "
                + nativeSource
                + "; name one source");
      }
    }
    ClaimRef src = nativeSource != null ? nativeSource : annotated;
    if (src != null && (cloneRequest == null || annotated != null)) {
      checkTargetClass(className, sc, f);
      checkSource(claim, ns, src, request, mutating, f);
    }
    if (mutating && annotated != null && !cloneRequest.contains("/") && f.violations.isEmpty()) {
      f.replace(
          RULE_DEFAULT_NAMESPACE,
          "/metadata/annotations/" + pointer(CLONE_REQUEST),
          annotated.toString());
    }
    boolean crossNamespace = src != null && !src.namespace().equals(ns);
    if (!crossNamespace && annotation(claim, CloneToken.ANNOTATION) != null) {
      f.deny(
          RULE_TOKEN,
          CloneToken.ANNOTATION
              + " is set by the webhook only, for clones across namespaces; remove it");
    }
    if (src != null && f.violations.isEmpty()) {
      ClaimRef self = new ClaimRef(ns, claim.getMetadata().getName());
      if (crossNamespace && tokenKey != null) {
        if (mutating) {
          Instant now = clock.instant();
          f.annotate(
              RULE_TOKEN,
              claim,
              CloneToken.ANNOTATION,
              CloneToken.sign(
                  new CloneToken.Claims(src, self, now, now.plus(CloneToken.VALIDITY)), tokenKey));
        } else {
          verifyToken(claim, src, self, f);
        }
      }
      if (!mutating && f.violations.isEmpty()) {
        // Last, and only once per request: the one rule that asks Cinder.
        askCinder(src, claim, f);
      }
    }
    return f.decision();
  }

  /** The validating endpoint sees the claim as the mutating one left it: with our token. */
  private void verifyToken(PersistentVolumeClaim claim, ClaimRef src, ClaimRef self, Findings f) {
    String created = claim.getMetadata().getCreationTimestamp();
    try {
      CloneToken.verify(
          annotation(claim, CloneToken.ANNOTATION),
          tokenKey,
          src,
          self,
          created == null ? clock.instant() : Instant.parse(created));
    } catch (CloneToken.InvalidTokenException e) {
      f.deny(
          RULE_TOKEN,
          "cloning "
              + src
              + " across namespaces needs the webhook's token: "
              + e.getMessage()
              + " (is the mutating webhook installed?)");
    }
  }

  private void askCinder(ClaimRef src, PersistentVolumeClaim claim, Findings f) {
    try {
      check.refusal(src, claim).ifPresent(reason -> f.deny(RULE_CINDER, reason));
    } catch (CloneCheck.Unavailable e) {
      String message =
          "the clone of " + src + " could not be checked against Cinder: " + e.getMessage();
      if (settings.checkUnavailable() == CheckUnavailable.DENY) {
        f.deny(RULE_CHECK_UNAVAILABLE, message + "; try again");
      } else {
        f.warn(RULE_CHECK_UNAVAILABLE, message + "; admitted unchecked by the cluster's policy");
      }
    }
  }

  private static ClaimRef parse(String value, String targetNamespace, Findings f) {
    try {
      return ClaimRef.parseCloneRequest(value, targetNamespace);
    } catch (IllegalArgumentException e) {
      f.deny(RULE_SYNTAX, e.getMessage());
      return null;
    }
  }

  /**
   * The claim named by {@code dataSourceRef} (which the API server fills from {@code dataSource}
   * when only that is given) or {@code dataSource}; anything else cannot fill a Cinder volume of
   * ours, and letting it through would give a blank volume where the user expects data.
   */
  private static ClaimRef nativeSource(
      PersistentVolumeClaimSpec spec, String ns, String className, Findings f) {
    if (spec == null) {
      return null;
    }
    String apiGroup;
    String kind;
    String name;
    String namespace = null;
    if (spec.getDataSourceRef() != null) {
      apiGroup = spec.getDataSourceRef().getApiGroup();
      kind = spec.getDataSourceRef().getKind();
      name = spec.getDataSourceRef().getName();
      namespace = spec.getDataSourceRef().getNamespace();
    } else if (spec.getDataSource() != null) {
      apiGroup = spec.getDataSource().getApiGroup();
      kind = spec.getDataSource().getKind();
      name = spec.getDataSource().getName();
    } else {
      return null;
    }
    try {
      return ClaimRef.fromDataSource(apiGroup, kind, name, namespace, ns);
    } catch (IllegalArgumentException e) {
      f.deny(
          RULE_DATA_SOURCE_KIND,
          "StorageClass "
              + className
              + ": "
              + e.getMessage()
              + "; remove the data source or use another class");
      return null;
    }
  }

  /** The target's class exists (or the claim would not be ours to judge) or is missing. */
  private void checkTargetClass(String className, Optional<StorageClass> sc, Findings f) {
    if (sc.isEmpty()) {
      f.deny(
          RULE_CLASS,
          "a clone needs a StorageClass of "
              + settings.provisionerName()
              + " with smartclone \"true\"; StorageClass "
              + className
              + " does not exist");
      return;
    }
    boolean smartclone;
    try {
      smartclone = ClassParameters.parse(sc.get().getParameters()).smartclone();
    } catch (InvalidClassParametersException e) {
      smartclone = false;
    }
    if (!smartclone) {
      f.deny(
          RULE_CLASS,
          "StorageClass "
              + className
              + " does not allow cloning: its smartclone parameter is not \"true\"");
    }
  }

  private void checkSource(
      PersistentVolumeClaim target,
      String targetNs,
      ClaimRef src,
      AdmissionRequest request,
      boolean mutating,
      Findings f) {
    Optional<PersistentVolumeClaim> found = cluster.claim(src.namespace(), src.name());
    if (!src.namespace().equals(targetNs)) {
      if (!crossNamespaceAllowed(found, src.namespace(), targetNs, request)) {
        // The same answer whether the source exists or not: no probing of other namespaces.
        f.deny(
            RULE_CROSS_NAMESPACE,
            settings.crossNamespace() == CrossNamespace.DENY
                ? "cloning "
                    + src
                    + " into namespace "
                    + targetNs
                    + " is not allowed: the cluster's policy forbids clones across namespaces"
                : "cloning "
                    + src
                    + " into namespace "
                    + targetNs
                    + " is not allowed: you may not create pods in "
                    + src.namespace()
                    + " and the source grants no clone to "
                    + targetNs
                    + " (annotation "
                    + CLONE_GRANT
                    + ")");
        return;
      }
      if (settings.crossNamespace() == CrossNamespace.ALLOW) {
        f.warn(
            RULE_CROSS_NAMESPACE,
            "cloning "
                + src
                + " into namespace "
                + targetNs
                + " without an authorization check: the cluster's policy allows every clone"
                + " across namespaces");
      }
    }
    if (found.isEmpty()) {
      f.deny(RULE_SOURCE_MISSING, "source claim " + src + " does not exist");
      return;
    }
    PersistentVolumeClaim source = found.get();
    if (source.getMetadata().getDeletionTimestamp() != null) {
      f.deny(RULE_SOURCE_DELETING, "source claim " + src + " is being deleted");
    }
    if (source.getStatus() == null || !"Bound".equals(source.getStatus().getPhase())) {
      f.deny(RULE_SOURCE_UNBOUND, "source claim " + src + " is not Bound yet");
    }
    Map<String, String> ann = source.getMetadata().getAnnotations();
    if (ann == null
        || !settings.provisionerName().equals(ClaimAnnotations.provisioner(ann))
        || ann.get(VOLUME_ID) == null) {
      f.deny(
          RULE_SOURCE_FOREIGN,
          "source claim " + src + " was not provisioned by " + settings.provisionerName());
    }
    String sourceMode = mode(source);
    String targetMode = mode(target);
    if (!sourceMode.equals(targetMode)) {
      f.deny(
          RULE_VOLUME_MODE,
          "source claim "
              + src
              + " has volumeMode "
              + sourceMode
              + " and this claim "
              + targetMode
              + "; they must match");
    }
    checkSize(target, source, src, targetMode, mutating, f);
  }

  private void checkSize(
      PersistentVolumeClaim target,
      PersistentVolumeClaim source,
      ClaimRef src,
      String mode,
      boolean mutating,
      Findings f) {
    Quantity held =
        source.getStatus() == null || source.getStatus().getCapacity() == null
            ? null
            : source.getStatus().getCapacity().get("storage");
    Map<String, Quantity> requests =
        target.getSpec() == null || target.getSpec().getResources() == null
            ? null
            : target.getSpec().getResources().getRequests();
    Quantity wanted = requests == null ? null : requests.get("storage");
    if (held == null || wanted == null) {
      return;
    }
    int cmp = bytes(held).compareTo(bytes(wanted));
    if (cmp > 0) {
      if (settings.undersized() == Undersized.RAISE && mutating) {
        f.replace(RULE_SIZE, "/spec/resources/requests/storage", held.toString());
        f.warnPatched(
            RULE_SIZE,
            "the request was raised from "
                + wanted
                + " to "
                + held
                + ", the size of source claim "
                + src
                + ": a clone cannot be smaller than its source");
      } else {
        f.deny(
            RULE_SIZE,
            "source claim "
                + src
                + " holds "
                + held
                + ", more than this claim requests ("
                + wanted
                + "); request at least "
                + held);
      }
    } else if (cmp < 0 && "Filesystem".equals(mode)) {
      f.warn(
          RULE_SIZE,
          "this claim ("
              + wanted
              + ") is larger than its source claim "
              + src
              + " ("
              + held
              + "): the cloned filesystem keeps the source's size until it is grown");
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

  private boolean ours(StorageClass sc) {
    return settings.provisionerName().equals(sc.getProvisioner());
  }

  /** Whether the named class is ours; a class that does not exist (yet) counts as ours. */
  private boolean ours(String className) {
    if (className == null || className.isEmpty()) {
      return false;
    }
    return cluster.storageClass(className).map(this::ours).orElse(true);
  }

  private static String mode(PersistentVolumeClaim c) {
    return c.getSpec() == null || c.getSpec().getVolumeMode() == null
        ? "Filesystem"
        : c.getSpec().getVolumeMode();
  }

  private static BigDecimal bytes(Quantity q) {
    return Quantity.getAmountInBytes(q);
  }

  private static String annotation(PersistentVolumeClaim c, String key) {
    Map<String, String> a = c.getMetadata() == null ? null : c.getMetadata().getAnnotations();
    return a == null ? null : a.get(key);
  }

  private static String pointer(String key) {
    return key.replace("~", "~0").replace("/", "~1");
  }
}
