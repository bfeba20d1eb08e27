package org.standalonecinder.provisioner.provision;

import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaimSpec;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.storage.StorageClass;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.List;
import org.standalonecinder.api.AccessModes;
import org.standalonecinder.api.ClassParameters;
import org.standalonecinder.api.InvalidClassParametersException;
import org.standalonecinder.provisioner.cinder.Volume;
import org.standalonecinder.provisioner.controller.ProvisioningException;

/**
 * A claim's request, validated against what this provisioner can do: its size in whole GiB, its
 * class's parameters, and its access and volume modes.
 *
 * @param sizeGib the size to ask Cinder for
 * @param params the class's parameters
 * @param block whether the claim wants a raw block device
 * @param readOnly whether every access mode is ReadOnlyMany
 * @param multiNode whether the claim asks for ReadWriteMany
 */
public record ClaimRequest(
    int sizeGib, ClassParameters params, boolean block, boolean readOnly, boolean multiNode) {

  private static final BigDecimal GIB = BigDecimal.valueOf(1L << 30);

  /** The most digits a size is read to: past them, it is past every bound. */
  public static final int MAX_DIGITS = 60;

  /**
   * Reads and checks the claim's request against its class.
   *
   * @throws ProvisioningException (final) saying what to change
   */
  public static ClaimRequest of(PersistentVolumeClaim claim, StorageClass sc) {
    ClassParameters params;
    try {
      params = ClassParameters.parse(sc.getParameters());
    } catch (InvalidClassParametersException e) {
      throw ProvisioningException.invalid(e.getMessage());
    }
    var spec = claim.getSpec();
    noSelector(spec);
    List<String> modes = accessModes(spec.getAccessModes());
    boolean block = "Block".equals(spec.getVolumeMode());
    if (!block && spec.getVolumeMode() != null && !"Filesystem".equals(spec.getVolumeMode())) {
      throw ProvisioningException.invalid("unknown volumeMode " + spec.getVolumeMode());
    }
    long gib = sizeGib(spec, sc.getMetadata().getName(), params);
    boolean readOnly = modes.stream().allMatch("ReadOnlyMany"::equals);
    boolean multiNode = modes.contains("ReadWriteMany");
    AccessModes.refusal(modes, spec.getVolumeMode())
        .ifPresent(
            reason -> {
              throw ProvisioningException.invalid(reason);
            });
    return new ClaimRequest((int) gib, params, block, readOnly, multiNode);
  }

  /**
   * A claim that selects among existing PVs is not one to provision for, as Kubernetes' own
   * provisioners say: a new volume matches no selector, and the claim would bind elsewhere.
   */
  private static void noSelector(PersistentVolumeClaimSpec spec) {
    if (spec.getSelector() != null) {
      throw ProvisioningException.invalid(
          "the claim has a selector (spec.selector): it asks for an existing PV, and a"
              + " provisioned volume matches no selector; remove the selector to have a volume"
              + " made");
    }
  }

  /** The whole GiB the claim asks for, within its limit and its class's largest size. */
  private static long sizeGib(PersistentVolumeClaimSpec spec, String className, ClassParameters p) {
    Quantity request =
        spec.getResources() == null || spec.getResources().getRequests() == null
            ? null
            : spec.getResources().getRequests().get("storage");
    if (request == null) {
      throw ProvisioningException.invalid("the claim requests no storage size");
    }
    BigDecimal bytes = bytes(request, "storage request");
    if (bytes.signum() <= 0) {
      throw ProvisioningException.invalid("the claim requests " + request + " of storage");
    }
    BigDecimal wholeGib = wholeGib(request);
    if (wholeGib.compareTo(BigDecimal.valueOf(p.largestGib())) > 0) {
      throw ProvisioningException.invalid(
          "the claim requests "
              + request
              + "; "
              + largest(className, p)
              + ": nothing was asked of Cinder");
    }
    long gib = wholeGib.longValueExact();
    Quantity limit =
        spec.getResources().getLimits() == null
            ? null
            : spec.getResources().getLimits().get("storage");
    if (limit != null
        && bytes(limit, "storage limit").compareTo(GIB.multiply(BigDecimal.valueOf(gib))) < 0) {
      throw ProvisioningException.invalid(
          "Cinder allocates whole GiB: the claim's request rounds up to "
              + gib
              + "Gi, above its limit of "
              + limit);
    }
    return gib;
  }

  /** A quantity's bytes; one that is no size (kept quoted by the cache) refuses the claim. */
  private static BigDecimal bytes(Quantity q, String what) {
    try {
      return Quantity.getAmountInBytes(q);
    } catch (IllegalArgumentException | ArithmeticException e) {
      throw ProvisioningException.invalid("the claim's " + what + " " + q + " is not a size");
    }
  }

  /** The claim's access modes, each one Kubernetes knows, at least one. */
  private static List<String> accessModes(List<String> asked) {
    List<String> modes = asked == null ? List.of() : asked;
    if (modes.isEmpty()) {
      throw ProvisioningException.invalid("the claim names no access mode");
    }
    for (String m : modes) {
      if (!List.of("ReadWriteOnce", "ReadOnlyMany", "ReadWriteOncePod", "ReadWriteMany")
          .contains(m)) {
        throw ProvisioningException.invalid("unknown access mode " + m);
      }
    }
    return modes;
  }

  /** The whole GiB a size takes, rounded up, however large (Cinder allocates whole GiB). */
  public static BigDecimal wholeGib(Quantity size) {
    BigDecimal b = bytes(size, "size");
    // "1e300000000" is eleven characters; dividing it whole would build all its digits, minutes
    // of a worker's time for one look. Any size past this many digits is past every bound anyway.
    if (b.precision() - b.scale() > MAX_DIGITS) {
      return BigDecimal.TEN.pow(MAX_DIGITS).multiply(BigDecimal.valueOf(b.signum()));
    }
    return b.divide(GIB, 0, RoundingMode.CEILING);
  }

  /** What bounds a volume of the class, for a refusal. */
  public static String largest(String className, ClassParameters params) {
    return params.maxSizeGib() == null
        ? "the largest volume is " + ClassParameters.MAX_GIB + " GiB"
        : "StorageClass "
            + className
            + " allows at most "
            + params.maxSizeGib()
            + " GiB a volume (parameter maxSizeGiB)";
  }

  /**
   * Checks that a clone of {@code source} (null: no clone) fits this request.
   *
   * @throws ProvisioningException (final) when the source holds more than the claim asks for
   */
  void requireRoomFor(VolumeSource source) {
    if (source != null && source.sizeGib() > sizeGib) {
      throw ProvisioningException.invalid(
          (source.restore() ? "VolumeSnapshot " : "source claim ")
              + source.claim()
              + " holds "
              + source.sizeGib()
              + " GiB, more than this claim requests ("
              + sizeGib
              + " GiB)");
    }
  }

  /** A claim for many nodes needs a volume Cinder attaches to many. */
  void requireMultiattach(Volume volume) {
    if (multiNode() && !volume.multiattach()) {
      throw ProvisioningException.invalid(
          "ReadWriteMany needs a multiattach volume type, and volume type '"
              + volume.volumeType()
              + "' is not one: set parameter type to a type with multiattach=\"<is> True\"");
    }
  }
}
