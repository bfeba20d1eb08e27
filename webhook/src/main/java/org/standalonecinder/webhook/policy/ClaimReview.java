package org.standalonecinder.webhook.policy;

import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.storage.StorageClass;
import java.math.BigDecimal;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;
import org.standalonecinder.api.AccessModes;
import org.standalonecinder.api.ClaimAnnotations;
import org.standalonecinder.api.ClaimRef;
import org.standalonecinder.api.CloneRequest;
import org.standalonecinder.api.CloneToken;
import org.standalonecinder.webhook.admission.Claim;
import org.standalonecinder.webhook.admission.ReviewRequest;

/**
 * One claim request as the claim rules see it: what the request says, read without any lookup, and
 * what the cluster says, looked up at most once per request and only when a rule asks. A lookup
 * that fails throws {@link LookupFailedException} to every rule that asks again.
 */
final class ClaimReview {

  final ClonePolicy.Settings settings;
  final ReviewRequest request;
  final Claim claim;

  /** The claim before an update; null on create. */
  final Claim old;

  final boolean mutating;

  /** The claim's namespace. */
  final String namespace;

  /** Whether the requester is the provisioner's service account. */
  final boolean byProvisioner;

  private final ClusterView cluster;
  private final Lookup<Optional<StorageClass>> storageClass;
  private final Lookup<Optional<PersistentVolumeClaim>> sourceClaim;
  private final Lookup<Optional<PersistentVolume>> volume;
  private final Lookup<Optional<CloneToken.Basis>> crossNamespaceBasis;
  private final ClaimRef annotatedSource;
  private final String syntaxError;
  private final NativeRef nativeRef;

  ClaimReview(
      ClonePolicy.Settings settings,
      ClusterView cluster,
      ReviewRequest request,
      Claim claim,
      boolean mutating) {
    this.settings = settings;
    this.cluster = cluster;
    this.request = request;
    this.claim = claim;
    this.old = request.oldClaim();
    this.mutating = mutating;
    this.namespace = request.namespace() != null ? request.namespace() : claim.namespace();
    String user = request.userInfo() == null ? null : request.userInfo().getUsername();
    this.byProvisioner = settings.provisionerUser().equals(user);
    Claim.Spec spec = claim.spec();
    Claim.Source ref = spec == null ? null : spec.dataSourceRef();
    Claim.Source plain = spec == null ? null : spec.dataSource();
    CloneRequest requested =
        CloneRequest.read(
            namespace,
            annotation(ClonePolicy.CLONE_REQUEST),
            ref == null
                ? null
                : new CloneRequest.DataSource(
                    ref.apiGroup(), ref.kind(), ref.name(), ref.namespace()),
            plain == null
                ? null
                : new CloneRequest.DataSource(plain.apiGroup(), plain.kind(), plain.name(), null));
    this.annotatedSource = requested.annotated();
    this.syntaxError = requested.annotationError();
    this.nativeRef = new NativeRef(requested.dataSource(), requested.dataSourceError());
    this.notAClaim =
        requested.snapshot() != null
            ? "VolumeSnapshot " + requested.snapshot()
            : requested.populator();
    String className = className();
    this.storageClass =
        new Lookup<>(
            () ->
                className == null || className.isEmpty()
                    ? Optional.empty()
                    : cluster.storageClass(className));
    this.sourceClaim =
        new Lookup<>(
            () -> {
              ClaimRef src = source();
              return src == null ? Optional.empty() : cluster.claim(src.namespace(), src.name());
            });
    this.crossNamespaceBasis = new Lookup<>(() -> CrossNamespaceRule.decide(this));
    String volumeName = spec == null ? null : spec.volumeName();
    this.volume =
        new Lookup<>(
            () ->
                volumeName == null || volumeName.isEmpty()
                    ? Optional.empty()
                    : cluster.volume(volumeName));
  }

  boolean isUpdate() {
    return old != null;
  }

  String annotation(String key) {
    return claim.annotation(key);
  }

  String oldAnnotation(String key) {
    return old == null ? null : old.annotation(key);
  }

  String className() {
    return claim.className();
  }

  /** Whether an update raises the claim's storage request: a growth. Read from the request. */
  boolean grows() {
    if (old == null) {
      return false;
    }
    BigDecimal now = storage(claim);
    BigDecimal before = storage(old);
    return now != null && before != null && now.compareTo(before) > 0;
  }

  /** The storage request; null when there is none or it is no quantity. */
  static BigDecimal storage(Claim c) {
    Claim.Spec spec = c.spec();
    if (spec == null || spec.resources() == null || spec.resources().requests() == null) {
      return null;
    }
    Quantity q = spec.resources().requests().get("storage");
    try {
      return q == null ? null : q.getNumericalAmount();
    } catch (RuntimeException e) {
      // The API server refuses a malformed quantity before any webhook sees it.
      return null;
    }
  }

  /** The volumeMode of a claim the cluster holds, with the API's default. */
  static String mode(PersistentVolumeClaim c) {
    return c.getSpec() == null || c.getSpec().getVolumeMode() == null
        ? "Filesystem"
        : c.getSpec().getVolumeMode();
  }

  /** Why the claim's access modes cannot be served by our volumes, if they cannot. */
  Optional<String> sharedFilesystem() {
    Claim.Spec spec = claim.spec();
    return AccessModes.refusal(
        spec == null ? null : spec.accessModes(), spec == null ? null : spec.volumeMode());
  }

  private boolean hasDataSource() {
    return claim.spec() != null
        && (claim.spec().dataSource() != null || claim.spec().dataSourceRef() != null);
  }

  /** A claim that says nothing about clones: no rule needs a lookup for it. */
  boolean plain() {
    return annotation(ClonePolicy.CLONE_REQUEST) == null
        && annotation(ClonePolicy.CLONE_OF) == null
        && annotation(ClaimAnnotations.CLONE_TOKEN) == null
        && !hasDataSource()
        && sharedFilesystem().isEmpty();
  }

  /** The source {@code k8s.io/CloneRequest} names; null when there is none or it is malformed. */
  ClaimRef annotatedSource() {
    return annotatedSource;
  }

  /** Why {@code k8s.io/CloneRequest} is malformed; null when it is absent or well-formed. */
  String syntaxError() {
    return syntaxError;
  }

  // ---- lookups: each may throw LookupFailedException ----

  /** The claim's class; empty when the claim names none or it does not exist (yet). */
  Optional<StorageClass> storageClass() {
    return storageClass.get();
  }

  /** The PersistentVolume the claim is bound to; empty when it is unbound or the PV is gone. */
  Optional<PersistentVolume> volume() {
    return volume.get();
  }

  /** Whether the claim's class exists and is ours. */
  boolean ourClass() {
    return storageClass()
        .filter(sc -> settings.provisionerName().equals(sc.getProvisioner()))
        .isPresent();
  }

  /**
   * Whether the claim is ours to judge: its class is ours, or names a class that does not exist
   * yet. Another provisioner's claims (KubeVirt's CDI uses the same clone annotations for its own
   * clones), and claims bound statically without a class, are not.
   */
  boolean inScope() {
    Optional<StorageClass> sc = storageClass();
    if (sc.isPresent()) {
      return settings.provisionerName().equals(sc.get().getProvisioner());
    }
    String className = className();
    return className != null && !className.isEmpty();
  }

  /**
   * The claim a native {@code dataSourceRef} (which the API server fills from {@code dataSource}
   * when only that is given) or {@code dataSource} names, into our class; null when there is none
   * or it is not a claim (see {@link #dataSourceError()}). Native clones into other provisioners'
   * classes are theirs to judge.
   */
  ClaimRef nativeSource() {
    return ourClass() ? nativeRef.source() : null;
  }

  /** Why the native data source cannot fill our volume; null when it can or there is none. */
  String dataSourceError() {
    return ourClass() ? nativeRef.error() : null;
  }

  private record NativeRef(ClaimRef source, String error) {}

  private final String notAClaim;

  /**
   * The data source when it is no claim: {@code VolumeSnapshot <ns>/<name>} (a restore) or the
   * {@code group/kind} of a populated one; null otherwise.
   */
  String otherDataSource() {
    return notAClaim;
  }

  /**
   * The source to clone: the native one, else the annotated one; null when there is none, or when
   * {@code k8s.io/CloneRequest} is malformed (nothing is checked against a source the user did not
   * manage to name).
   */
  ClaimRef source() {
    if (syntaxError != null) {
      return null;
    }
    ClaimRef nativeSource = nativeSource();
    return nativeSource != null ? nativeSource : annotatedSource;
  }

  /** Whether the source lives in another namespace. */
  boolean crossNamespace() {
    ClaimRef src = source();
    return src != null && !src.namespace().equals(namespace);
  }

  /**
   * Whether the webhook looks at the source claim at all. Only where it knows that the API server
   * sent the review ({@code --client-ca}): a review any pod can write must not learn whether a
   * claim exists in some namespace, nor its phase, size or volume, since the answer would tell. Or
   * where the admin's policy lets anyone clone any claim anyway. Elsewhere the provisioner checks
   * the source when it clones and tells the claim by its events.
   */
  boolean looksAtSource() {
    return settings.callerAuthenticated()
        || settings.crossNamespace() == CrossNamespaceRule.CrossNamespace.ALLOW;
  }

  /** The source claim as the cluster has it. */
  Optional<PersistentVolumeClaim> sourceClaim() {
    return sourceClaim.get();
  }

  /** Whether the requester may clone across namespaces from the source (true when not across). */
  boolean crossNamespaceAllowed() {
    return !crossNamespace() || crossNamespaceBasis.get().isPresent();
  }

  /** On what a clone across namespaces is allowed; empty when it is not (or is not across). */
  Optional<CloneToken.Basis> crossNamespaceBasis() {
    return crossNamespace() ? crossNamespaceBasis.get() : Optional.empty();
  }

  /**
   * Whether a ReferenceGrant in the source's namespace lets claims of this namespace use the
   * source.
   */
  boolean referenceGranted() {
    ClaimRef src = source();
    return src != null
        && org.standalonecinder.api.ReferenceGrants.allowClaim(
            next -> cluster.referenceGrants(src.namespace(), next), namespace, src.name());
  }

  /** Whether the requester may create pods in {@code namespace} (a SubjectAccessReview). */
  boolean requesterCanCreatePods(String namespace) {
    return cluster.canCreatePods(request.userInfo(), namespace);
  }

  /**
   * The source claim when the requester may see it: an unauthorized requester learns nothing of
   * another namespace's claims, not even whether they exist.
   */
  Optional<PersistentVolumeClaim> visibleSourceClaim() {
    return looksAtSource() && source() != null && crossNamespaceAllowed()
        ? sourceClaim()
        : Optional.empty();
  }

  static String annotation(PersistentVolumeClaim c, String key) {
    Map<String, String> a = c.getMetadata() == null ? null : c.getMetadata().getAnnotations();
    return a == null ? null : a.get(key);
  }

  /** A value looked up once: later calls get the same value, or the same failure. */
  private static final class Lookup<T> {
    private final Supplier<T> supplier;
    private T value;
    private RuntimeException failure;
    private boolean done;

    Lookup(Supplier<T> supplier) {
      this.supplier = supplier;
    }

    T get() {
      if (!done) {
        try {
          value = supplier.get();
        } catch (RuntimeException e) {
          failure = e;
        }
        done = true;
      }
      if (failure != null) {
        throw failure;
      }
      return value;
    }
  }
}
