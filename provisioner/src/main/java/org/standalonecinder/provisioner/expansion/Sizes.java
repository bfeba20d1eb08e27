package org.standalonecinder.provisioner.expansion;

import io.fabric8.kubernetes.api.model.Quantity;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.LinkedHashMap;
import java.util.Map;
import org.standalonecinder.provisioner.controller.ProvisioningException;
import org.standalonecinder.provisioner.provision.ClaimRequest;

/** Sizes as claims and PVs write them, read so that no value written on a claim can throw. */
final class Sizes {

  private static final BigDecimal GIB = BigDecimal.valueOf(1L << 30);

  private Sizes() {}

  /** A copy of {@code capacity} (a PV's or a claim's status's) with {@code gib} of storage. */
  static Map<String, Quantity> withStorage(Map<String, Quantity> capacity, int gib) {
    Map<String, Quantity> m =
        capacity == null ? new LinkedHashMap<>() : new LinkedHashMap<>(capacity);
    m.put("storage", new Quantity(gib + "Gi"));
    return m;
  }

  static Quantity storage(Map<String, Quantity> m) {
    return m == null ? null : m.get("storage");
  }

  /** Whether {@code q} rounds up to more than {@code gib} GiB (however large it is). */
  static boolean exceeds(Quantity q, int gib) {
    return q != null && ClaimRequest.wholeGib(q).compareTo(BigDecimal.valueOf(gib)) > 0;
  }

  /**
   * Whole GiB, held within an int: a claim's status is written by nodes and controllers, and one
   * that says 2^31 GiB or more once made every look at the claim throw, for good.
   */
  static int gib(Quantity q, RoundingMode mode) {
    if (q == null) {
      return 0;
    }
    BigDecimal bytes;
    try {
      bytes = Quantity.getAmountInBytes(q);
    } catch (IllegalArgumentException | ArithmeticException e) {
      throw ProvisioningException.invalid(q + " is not a size");
    }
    if (bytes.precision() - bytes.scale() > ClaimRequest.MAX_DIGITS) {
      return bytes.signum() < 0 ? Integer.MIN_VALUE : Integer.MAX_VALUE;
    }
    BigDecimal g = bytes.divide(GIB, 0, mode);
    return g.max(BigDecimal.valueOf(Integer.MIN_VALUE))
        .min(BigDecimal.valueOf(Integer.MAX_VALUE))
        .intValueExact();
  }

  /**
   * A claim status's GiB: one that is no size (a node wrote it, the cache kept it quoted) reads as
   * none, so that the status is written as the PV's.
   */
  static int statusGib(Quantity q) {
    try {
      return gib(q, RoundingMode.FLOOR);
    } catch (ProvisioningException noSize) {
      return 0;
    }
  }
}
