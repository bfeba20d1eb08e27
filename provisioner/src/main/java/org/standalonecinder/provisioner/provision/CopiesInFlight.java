package org.standalonecinder.provisioner.provision;

import java.util.HashMap;
import java.util.Map;

/**
 * The copies Cinder is making for claims (clones and restores), bounded by {@link CopyLimits}.
 *
 * <p>Counted per claim, from the moment its copy is asked for until Cinder has made it, or it is
 * deleted. After a restart a copy is counted again at the first look that finds it being made, so a
 * new process may briefly see more than the limits: it asks for no new copy until enough end.
 */
final class CopiesInFlight {

  private final CopyLimits limits;
  private final Map<String, String> namespaceOf = new HashMap<>();
  private final Map<String, Integer> perNamespace = new HashMap<>();

  CopiesInFlight(CopyLimits limits) {
    this.limits = limits;
  }

  CopyLimits limits() {
    return limits;
  }

  /**
   * Counts the claim's copy if there is room for it.
   *
   * @return null when counted (or counted already), else why it must wait
   */
  synchronized String reserve(String claimUid, String namespace) {
    if (namespaceOf.containsKey(claimUid)) {
      return null;
    }
    int inNamespace = perNamespace.getOrDefault(namespace, 0);
    if (inNamespace >= limits.perNamespace()) {
      return inNamespace
          + " copies are in flight in namespace "
          + namespace
          + " (at most "
          + limits.perNamespace()
          + " at once, --max-copies-per-namespace)";
    }
    if (namespaceOf.size() >= limits.total()) {
      return namespaceOf.size()
          + " copies are in flight (at most "
          + limits.total()
          + " at once, --max-copies)";
    }
    add(claimUid, namespace);
    return null;
  }

  /** Counts a copy found under way (after a restart), whatever the limits say. */
  synchronized void track(String claimUid, String namespace) {
    if (!namespaceOf.containsKey(claimUid)) {
      add(claimUid, namespace);
    }
  }

  /** The claim's copy is made, failed or gone: it no longer counts. */
  synchronized void release(String claimUid) {
    String ns = namespaceOf.remove(claimUid);
    if (ns != null) {
      perNamespace.compute(ns, (k, n) -> n == null || n <= 1 ? null : n - 1);
    }
  }

  /** How many copies count now, overall. */
  synchronized int size() {
    return namespaceOf.size();
  }

  private void add(String claimUid, String namespace) {
    namespaceOf.put(claimUid, namespace);
    perNamespace.merge(namespace, 1, Integer::sum);
  }
}
