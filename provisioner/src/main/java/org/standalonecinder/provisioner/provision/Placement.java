package org.standalonecinder.provisioner.provision;

import io.fabric8.kubernetes.api.model.TopologySelectorLabelRequirement;
import io.fabric8.kubernetes.api.model.TopologySelectorTerm;
import io.fabric8.kubernetes.api.model.storage.StorageClass;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import org.standalonecinder.api.ClaimRef;
import org.standalonecinder.provisioner.controller.ProvisioningException;

/**
 * Where a claim's volume goes: the Cinder availability zone to ask for, and the zone of nodes its
 * PV is for. Decided from, in this order: the node the scheduler selected (a class with {@code
 * WaitForFirstConsumer}), its {@code allowedTopologies}, its {@code availability} parameter; a
 * clone stays in its source's zone.
 *
 * @param cinderZone the zone Cinder is asked for, or null for Cinder's default
 * @param nodeZone the node zone the PV gets node affinity to, or null for any node
 * @param from where the zone came from, for events and logs
 */
public record Placement(String cinderZone, String nodeZone, String from) {

  /** No zone: Cinder's default, any node. */
  public static final Placement ANYWHERE = new Placement(null, null, "no zone asked for");

  /** Where the claim's volume is made and which nodes its PV is for ({@link #decide}). */
  static Placement forClaim(
      io.fabric8.kubernetes.api.model.PersistentVolumeClaim claim,
      StorageClass storageClass,
      ClaimRequest req,
      VolumeSource source,
      Map<String, String> nodeLabels,
      Topology topology) {
    Map<String, String> ann = claim.getMetadata().getAnnotations();
    return decide(
        storageClass,
        req.params().availabilityZone(),
        ann == null ? null : ann.get(org.standalonecinder.api.ClaimAnnotations.SELECTED_NODE),
        nodeLabels,
        claim.getMetadata().getUid(),
        source == null ? null : source.availabilityZone(),
        topology);
  }

  /**
   * Requires a volume made for an earlier look to be in the zone the claim needs now: the scheduler
   * may have chosen another node meanwhile (its first one gone).
   *
   * @throws ProvisioningException (not final) when it is not: the volume is undone, a new one made
   */
  void requireZoneOf(org.standalonecinder.provisioner.cinder.Volume volume) {
    if (cinderZone != null && !cinderZone.equals(volume.availabilityZone())) {
      throw new ProvisioningException(
          "volume "
              + volume.id()
              + " of this claim is in zone "
              + volume.availabilityZone()
              + " and the claim now needs zone "
              + cinderZone
              + " ("
              + from
              + "); it is deleted and a new one is made",
          false,
          null);
    }
  }

  /**
   * Decides the placement of a claim's volume.
   *
   * @param sc the claim's class
   * @param availability the class's {@code availability} parameter, or null
   * @param node the selected node's name, or null when the class binds immediately
   * @param nodeLabels the selected node's labels (empty when there is none)
   * @param claimUid spreads claims of an immediate class over its allowed zones, the same zone on
   *     every attempt
   * @param sourceZone the clone source's Cinder zone, or null when it is no clone
   * @param topology the zone label and whether Cinder's zones are the nodes' zones
   * @throws ProvisioningException (final) when the sources disagree, with what to change
   */
  static Placement decide(
      StorageClass sc,
      String availability,
      String node,
      Map<String, String> nodeLabels,
      String claimUid,
      String sourceZone,
      Topology topology) {
    String key = topology.zoneLabel();
    String className = sc.getMetadata().getName();
    NodeZone chosen = nodeZone(sc, availability, node, nodeLabels, claimUid, sourceZone, key);
    String nodeZone = chosen.zone();
    String from = chosen.from();
    String unlabelled = chosen.unlabelled();
    if (nodeZone == null) {
      // No node zone: the class alone places the volume in Cinder, the PV fits any node.
      String zone = availability != null ? availability : sourceZone;
      if (zone == null) {
        return ANYWHERE;
      }
      return new Placement(
          topology.ignoreVolumeAz() ? null : zone,
          null,
          (from != null ? from : "the clone source's zone") + unlabelled);
    }
    if (topology.ignoreVolumeAz()) {
      // Cinder's zones are not the nodes' (ignore-volume-az): only the PV is placed.
      return new Placement(null, nodeZone, from);
    }
    if (availability != null && !availability.equals(nodeZone)) {
      throw ProvisioningException.invalid(
          "StorageClass "
              + className
              + " asks for availability "
              + availability
              + " and the volume must be in zone "
              + nodeZone
              + " of "
              + from
              + ": drop availability from the class (the zone then comes from the node), or set"
              + " ignore-volume-az = true when Cinder's zones are not the nodes' zones");
    }
    if (sourceZone != null && !sourceZone.equals(nodeZone)) {
      throw ProvisioningException.invalid(
          "the clone source is in zone "
              + sourceZone
              + " and a clone stays in its source's zone, but it must be in zone "
              + nodeZone
              + " of "
              + from
              + "; use a class that allows zone "
              + sourceZone);
    }
    return new Placement(nodeZone, nodeZone, from);
  }

  /**
   * The zone of nodes the PV is for (null for any), and where it came from.
   *
   * @param unlabelled said after {@code from} when the selected node has no zone label
   */
  private record NodeZone(String zone, String from, String unlabelled) {}

  /** The node zone: the selected node's, else one the class allows, else none. */
  private static NodeZone nodeZone(
      StorageClass sc,
      String availability,
      String node,
      Map<String, String> nodeLabels,
      String claimUid,
      String sourceZone,
      String key) {
    String className = sc.getMetadata().getName();
    TreeSet<String> allowed = allowedZones(sc, key);
    String nodeZone;
    String from;
    String unlabelled = "";
    if (node != null && nodeLabels.get(key) == null) {
      // The node says nothing of its zone: the class or the source places the volume.
      nodeZone = null;
      from = availability != null ? "StorageClass " + className + " availability" : null;
      unlabelled = " (the selected node " + node + " has no " + key + " label)";
    } else if (node != null) {
      nodeZone = nodeLabels.get(key);
      from = "selected node " + node + " (" + key + "=" + nodeZone + ")";
      if (nodeZone != null && !allowed.isEmpty() && !allowed.contains(nodeZone)) {
        // the scheduler keeps to allowedTopologies; a node relabelled since may not
        throw ProvisioningException.invalid(
            "the selected node "
                + node
                + " is in zone "
                + nodeZone
                + ", which StorageClass "
                + className
                + " does not allow ("
                + key
                + " in "
                + allowed
                + ")");
      }
    } else if (!allowed.isEmpty()) {
      if (availability != null && allowed.contains(availability)) {
        nodeZone = availability;
      } else if (sourceZone != null && allowed.contains(sourceZone)) {
        nodeZone = sourceZone;
      } else {
        nodeZone = List.copyOf(allowed).get(Math.floorMod(claimUid.hashCode(), allowed.size()));
      }
      from = "StorageClass " + className + " allowedTopologies (" + key + " in " + allowed + ")";
    } else {
      nodeZone = null;
      from = availability != null ? "StorageClass " + className + " availability" : null;
    }
    return new NodeZone(nodeZone, from, unlabelled);
  }

  /**
   * The zones a class's {@code allowedTopologies} allow under the zone label; empty when it does
   * not restrict them.
   *
   * @throws ProvisioningException (final) when it restricts another label, which this provisioner
   *     could not honour
   */
  public static TreeSet<String> allowedZones(StorageClass sc, String key) {
    TreeSet<String> zones = new TreeSet<>();
    List<TopologySelectorTerm> terms = sc.getAllowedTopologies();
    if (terms == null) {
      return zones;
    }
    for (TopologySelectorTerm t : terms) {
      if (t.getMatchLabelExpressions() == null) {
        continue;
      }
      for (TopologySelectorLabelRequirement r : t.getMatchLabelExpressions()) {
        if (!key.equals(r.getKey())) {
          throw ProvisioningException.invalid(
              "StorageClass "
                  + sc.getMetadata().getName()
                  + " allowedTopologies restricts "
                  + r.getKey()
                  + ", and this provisioner places volumes by "
                  + key
                  + " only (its --zone-label)");
        }
        if (r.getValues() != null) {
          zones.addAll(r.getValues());
        }
      }
    }
    return zones;
  }

  /**
   * How this cluster's nodes name their zones.
   *
   * @param zoneLabel the node label that holds a node's zone
   * @param ignoreVolumeAz whether Cinder is asked for no zone (its zones are not the nodes'), as
   *     {@code ignore-volume-az} in the cloud config says
   */
  public record Topology(String zoneLabel, boolean ignoreVolumeAz) {

    // Declared before DEFAULT: static fields initialise in order.
    private static final java.util.regex.Pattern LABEL_KEY =
        java.util.regex.Pattern.compile(
            "([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
                + "[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?");

    /** The label Kubernetes' cloud providers set, and Cinder's zones as the nodes' zones. */
    public static final Topology DEFAULT = new Topology(DEFAULT_ZONE_LABEL, false);

    public Topology {
      zoneLabel = zoneLabel(zoneLabel);
    }

    /** A node label key, checked. */
    public static String zoneLabel(String key) {
      // A prefix of 253 and a name of 63: checked before the pattern, whose repeated group
      // recurses once a label.
      if (key == null || key.trim().length() > 317 || !LABEL_KEY.matcher(key.trim()).matches()) {
        throw new IllegalArgumentException(
            "'" + ClaimRef.quote(key) + "' is not a label key such as " + DEFAULT_ZONE_LABEL);
      }
      return key.trim();
    }
  }

  /** The well-known label of a node's zone. */
  public static final String DEFAULT_ZONE_LABEL = "topology.kubernetes.io/zone";
}
