package org.standalonecinder.provisioner.controller;

import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaimCondition;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaimSpec;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaimStatus;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.TypedLocalObjectReference;
import io.fabric8.kubernetes.api.model.TypedObjectReference;
import io.fabric8.kubernetes.api.model.VolumeResourceRequirements;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.standalonecinder.api.ClaimRef;

/**
 * What {@link ClaimStore} keeps of a claim's spec and status: the fields the provisioner reads,
 * each bounded. The API server bounds few of them: a data source's name, a resource map, the
 * finalizers, a condition's message may each run to megabytes on a claim of no class of ours, and
 * the cache holds every claim of the cluster.
 */
final class ClaimFields {

  /** A Kubernetes name's bound: a longer value names nothing, and is kept quoted. */
  static final int NAME = 253;

  /** A condition's message, kept up to this many characters. */
  static final int MESSAGE = 1024;

  /** Access modes, distinct: Kubernetes knows four. */
  static final int ACCESS_MODES = 4;

  /** A quantity's text: a size written out to more digits than this is kept quoted. */
  static final int QUANTITY = 64;

  /** The claim conditions read (a resize under way), first of each type. */
  static final Set<String> CONDITIONS = Set.of("Resizing", "FileSystemResizePending");

  private ClaimFields() {}

  static PersistentVolumeClaimSpec spec(PersistentVolumeClaimSpec s) {
    if (s == null) {
      return null;
    }
    PersistentVolumeClaimSpec k = new PersistentVolumeClaimSpec();
    k.setStorageClassName(name(s.getStorageClassName()));
    k.setVolumeName(name(s.getVolumeName()));
    k.setVolumeMode(name(s.getVolumeMode()));
    k.setAccessModes(accessModes(s.getAccessModes()));
    if (s.getResources() != null) {
      VolumeResourceRequirements r = new VolumeResourceRequirements();
      r.setRequests(storage(s.getResources().getRequests()));
      r.setLimits(storage(s.getResources().getLimits()));
      k.setResources(r);
    }
    TypedLocalObjectReference d = s.getDataSource();
    if (d != null) {
      k.setDataSource(
          new TypedLocalObjectReference(
              name(d.getApiGroup()), name(d.getKind()), name(d.getName())));
    }
    TypedObjectReference ref = s.getDataSourceRef();
    if (ref != null) {
      k.setDataSourceRef(
          new TypedObjectReference(
              name(ref.getApiGroup()),
              name(ref.getKind()),
              name(ref.getName()),
              name(ref.getNamespace())));
    }
    if (s.getSelector() != null) {
      // Only whether there is one is read: a claim with a selector is refused (ClaimRequest).
      k.setSelector(new LabelSelector());
    }
    return k;
  }

  static PersistentVolumeClaimStatus status(PersistentVolumeClaimStatus s) {
    if (s == null) {
      return null;
    }
    PersistentVolumeClaimStatus k = new PersistentVolumeClaimStatus();
    k.setPhase(name(s.getPhase()));
    k.setCapacity(storage(s.getCapacity()));
    if (s.getConditions() != null) {
      List<PersistentVolumeClaimCondition> kept = new ArrayList<>();
      for (PersistentVolumeClaimCondition c : s.getConditions()) {
        if (c != null
            && CONDITIONS.contains(c.getType())
            && kept.stream().noneMatch(x -> x.getType().equals(c.getType()))) {
          kept.add(
              new PersistentVolumeClaimCondition(
                  name(c.getLastProbeTime()),
                  name(c.getLastTransitionTime()),
                  bounded(c.getMessage(), MESSAGE),
                  name(c.getReason()),
                  name(c.getStatus()),
                  c.getType()));
        }
      }
      k.setConditions(kept);
    }
    return k;
  }

  /** The {@code storage} entry alone: the only resource a claim of ours asks for. */
  private static Map<String, Quantity> storage(Map<String, Quantity> resources) {
    Quantity q = resources == null ? null : resources.get("storage");
    if (q == null) {
      return null;
    }
    String text = q.toString();
    if (text.length() <= QUANTITY) {
      return Map.of("storage", q);
    }
    // Kept as its start and length, unparsed: a reader that parses it refuses the claim so.
    return Map.of(
        "storage",
        new Quantity(text.substring(0, 24) + "... (" + text.length() + " characters)", null));
  }

  private static List<String> accessModes(List<String> modes) {
    if (modes == null) {
      return null;
    }
    List<String> kept = new ArrayList<>();
    for (String m : modes) {
      if (kept.size() == ACCESS_MODES) {
        break;
      }
      String v = name(m);
      if (!kept.contains(v)) {
        kept.add(v);
      }
    }
    return kept;
  }

  static String name(String v) {
    return bounded(v, NAME);
  }

  private static String bounded(String v, int limit) {
    return v == null || v.length() <= limit ? v : ClaimRef.quote(v);
  }
}
