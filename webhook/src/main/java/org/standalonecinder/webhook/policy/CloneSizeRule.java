package org.standalonecinder.webhook.policy;

import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Quantity;

/**
 * A clone holds at least what its source holds: Cinder refuses a smaller one. By policy the
 * mutating endpoint raises the request instead. A larger Filesystem clone gets a warning, as its
 * filesystem keeps the source's size until it is grown.
 *
 * <p>What the source holds is read as the smaller of its status capacity and its request: a node
 * may write the status of its Pods' claims (any capacity), and the source's owner its request;
 * neither alone raises a clone in another namespace past the source's real size (and so takes the
 * project's quota). The provisioner checks the clone against the Cinder volume itself.
 */
final class CloneSizeRule implements ClaimRule {

  /** The rule's name in denials, warnings and metrics. */
  static final String NAME = "clone-size";

  /** What to do with a clone that requests less than its source holds. */
  public enum Undersized {
    /** Deny it: the user says how much. */
    DENY,
    /** The mutating endpoint raises the request to the source's size, with a warning. */
    RAISE
  }

  @Override
  public void check(ClaimReview r, Findings f) {
    if (r.isUpdate()) {
      return;
    }
    r.visibleSourceClaim().ifPresent(source -> compare(r, source, f));
  }

  private static void compare(ClaimReview r, PersistentVolumeClaim source, Findings f) {
    Quantity held = held(source);
    Quantity wanted = r.claim.storageRequest();
    if (held == null || wanted == null) {
      return;
    }
    java.math.BigDecimal wantedBytes = bytes(wanted);
    if (wantedBytes == null) {
      // The API server refuses such a claim itself, before admission; only a forged review gets
      // here, and it gets a reason rather than an internal error.
      f.deny(NAME, "spec.resources.requests.storage (" + wanted + ") is not a quantity");
      return;
    }
    java.math.BigDecimal heldBytes = bytes(held);
    if (heldBytes == null) {
      return;
    }
    int cmp = heldBytes.compareTo(wantedBytes);
    if (cmp > 0) {
      if (r.settings.undersized() == Undersized.RAISE && r.mutating) {
        f.replace(NAME, "/spec/resources/requests/storage", held.toString());
        f.warnPatched(
            NAME,
            "the request was raised from "
                + wanted
                + " to "
                + held
                + ", the size of source claim "
                + r.source()
                + ": a clone cannot be smaller than its source");
      } else {
        f.deny(
            NAME,
            "source claim "
                + r.source()
                + " holds "
                + held
                + ", more than this claim requests ("
                + wanted
                + "); request at least "
                + held);
      }
    } else if (cmp < 0 && "Filesystem".equals(r.claim.mode())) {
      f.warn(
          NAME,
          "this claim ("
              + wanted
              + ") is larger than its source claim "
              + r.source()
              + " ("
              + held
              + "): the cloned filesystem keeps the source's size until it is grown");
    }
  }

  /**
   * What the source holds, as far as a claim says: its status capacity, unless its request is
   * smaller (a capacity a node wrote past it); null when it says no capacity.
   */
  private static Quantity held(PersistentVolumeClaim source) {
    Quantity capacity =
        source.getStatus() == null || source.getStatus().getCapacity() == null
            ? null
            : source.getStatus().getCapacity().get("storage");
    Quantity request =
        source.getSpec() == null
                || source.getSpec().getResources() == null
                || source.getSpec().getResources().getRequests() == null
            ? null
            : source.getSpec().getResources().getRequests().get("storage");
    if (capacity == null || request == null) {
      return capacity;
    }
    java.math.BigDecimal c = bytes(capacity);
    java.math.BigDecimal q = bytes(request);
    return c != null && q != null && q.compareTo(c) < 0 ? request : capacity;
  }

  /** The quantity in bytes; null when it is no quantity. */
  private static java.math.BigDecimal bytes(Quantity q) {
    try {
      return Quantity.getAmountInBytes(q);
    } catch (IllegalArgumentException | ArithmeticException e) {
      return null;
    }
  }
}
