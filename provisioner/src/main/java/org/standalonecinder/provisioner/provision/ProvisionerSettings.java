package org.standalonecinder.provisioner.provision;

import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.regex.Pattern;
import org.standalonecinder.api.ClassParameters;
import org.standalonecinder.provisioner.mapping.RbdForm;
import org.standalonecinder.provisioner.mapping.RbdOptions;

/**
 * What the provisioner needs to know about itself and the cluster.
 *
 * @param provisionerName the name StorageClasses and claims use, {@code
 *     openstack.org/standalone-cinder} by default
 * @param identity written on every PV this instance creates; only PVs with it are deleted
 * @param clusterId written into the metadata of every volume, so that clusters sharing a project
 *     never take each other's volumes
 * @param initiatorName the one iSCSI initiator IQN of the cluster's nodes: sent to Cinder in the
 *     connector and written into every PV
 * @param connectorHost the host name Cinder records for the export
 * @param connectorIp the address Cinder records for the export
 * @param secretNamespace the provisioner's own namespace, where CHAP Secrets live
 * @param multipath whether to ask Cinder for every portal
 * @param wwpns the Fibre Channel port names of the nodes' HBAs, sent in the connector (16 hex
 *     digits each, normalised); empty without FC
 * @param wwnns their node names
 * @param rbd the defaults for volumes Cinder exports over RBD
 * @param topology how the nodes name their zones
 * @param iscsiChapOptional whether an iSCSI export without CHAP may become a PV (a class's {@code
 *     iscsiChap} wins); false by default: any pod that reaches such a portal can read the volume
 * @param adoptedIdentities identities of the Go standalone-cinder (its {@code -id}, a new random
 *     one at each of its starts unless set) whose PVs this instance releases as that provisioner
 *     did ({@link GoProvisionerPvs}); empty by default: PVs of another identity are left alone
 */
public record ProvisionerSettings(
    String provisionerName,
    String identity,
    String clusterId,
    String initiatorName,
    String connectorHost,
    String connectorIp,
    String secretNamespace,
    boolean multipath,
    List<String> wwpns,
    List<String> wwnns,
    RbdDefaults rbd,
    Placement.Topology topology,
    boolean iscsiChapOptional,
    Set<String> adoptedIdentities) {

  /**
   * The provisioner-wide RBD choices; a StorageClass may override the form, the cluster id and the
   * Secret.
   *
   * @param form the PV form, or null for "decide from the cluster's Kubernetes version"
   * @param cephxSecret the admin's Secret with the cephx key, in {@link #secretNamespace}, or null
   * @param clusterId ceph-csi's {@code clusterID}, or null
   * @param csiDriver ceph-csi's RBD driver name
   * @param imageFeatures the {@code imageFeatures} attribute of ceph-csi volumes
   */
  public record RbdDefaults(
      RbdForm form, String cephxSecret, String clusterId, String csiDriver, String imageFeatures) {

    private static final Pattern FEATURES = Pattern.compile("[a-z-]+(,[a-z-]+)*");

    // Declared after the patterns: static fields initialise in order.
    /** Nothing configured: the form from the cluster's version, no cephx Secret. */
    public static final RbdDefaults NONE =
        new RbdDefaults(
            null, null, null, RbdOptions.DEFAULT_CSI_DRIVER, RbdOptions.DEFAULT_IMAGE_FEATURES);

    public RbdDefaults {
      cephxSecret = cephxSecret == null || cephxSecret.isBlank() ? null : cephxSecret(cephxSecret);
      clusterId = clusterId == null || clusterId.isBlank() ? null : clusterId.trim();
      csiDriver =
          csiDriver == null || csiDriver.isBlank()
              ? RbdOptions.DEFAULT_CSI_DRIVER
              : csiDriver(csiDriver);
      imageFeatures =
          imageFeatures == null || imageFeatures.isBlank()
              ? RbdOptions.DEFAULT_IMAGE_FEATURES
              : imageFeatures(imageFeatures);
    }

    /** The name of the Secret with the cephx key, checked. */
    public static String cephxSecret(String name) {
      String n = name.trim();
      if (!ClassParameters.isDnsSubdomain(n)) {
        throw new IllegalArgumentException(
            "cephx Secret '" + n + "' is not a Secret name (a DNS subdomain)");
      }
      return n;
    }

    /** ceph-csi's driver name, checked. */
    public static String csiDriver(String name) {
      String n = name.trim();
      if (n.length() > 63 || !ClassParameters.isDnsSubdomain(n)) {
        throw new IllegalArgumentException(
            "ceph-csi driver '" + n + "' is not a CSI driver name such as rbd.csi.ceph.com");
      }
      return n;
    }

    /** The image features, without spaces, checked. */
    public static String imageFeatures(String list) {
      String l = list.replace(" ", "");
      if (!FEATURES.matcher(l).matches()) {
        throw new IllegalArgumentException(
            "RBD image features '"
                + l
                + "' are not a comma-separated list such as layering,exclusive-lock");
      }
      return l;
    }

    public RbdDefaults withForm(RbdForm f) {
      return new RbdDefaults(f, cephxSecret, clusterId, csiDriver, imageFeatures);
    }
  }

  /** The same, with these RBD defaults. */
  public ProvisionerSettings withRbd(RbdDefaults r) {
    return new ProvisionerSettings(
        provisionerName,
        identity,
        clusterId,
        initiatorName,
        connectorHost,
        connectorIp,
        secretNamespace,
        multipath,
        wwpns,
        wwnns,
        r,
        topology,
        iscsiChapOptional,
        adoptedIdentities);
  }

  /** The same, with this topology. */
  public ProvisionerSettings withTopology(Placement.Topology t) {
    return new ProvisionerSettings(
        provisionerName,
        identity,
        clusterId,
        initiatorName,
        connectorHost,
        connectorIp,
        secretNamespace,
        multipath,
        wwpns,
        wwnns,
        rbd,
        t,
        iscsiChapOptional,
        adoptedIdentities);
  }

  /** The same, with iSCSI exports without CHAP allowed (or not). */
  public ProvisionerSettings withIscsiChapOptional(boolean optional) {
    return new ProvisionerSettings(
        provisionerName,
        identity,
        clusterId,
        initiatorName,
        connectorHost,
        connectorIp,
        secretNamespace,
        multipath,
        wwpns,
        wwnns,
        rbd,
        topology,
        optional,
        adoptedIdentities);
  }

  /** The same, releasing the PVs of these Go provisioner identities as that provisioner did. */
  public ProvisionerSettings withAdoptedIdentities(Set<String> ids) {
    return new ProvisionerSettings(
        provisionerName,
        identity,
        clusterId,
        initiatorName,
        connectorHost,
        connectorIp,
        secretNamespace,
        multipath,
        wwpns,
        wwnns,
        rbd,
        topology,
        iscsiChapOptional,
        ids);
  }

  /**
   * Whether a PV with this identity annotation is this instance's to release: its own or adopted.
   */
  public boolean owns(String pvIdentity) {
    return pvIdentity != null
        && (identity.equals(pvIdentity) || adoptedIdentities.contains(pvIdentity));
  }

  /** Whether a PV with this identity annotation was made by an adopted Go provisioner. */
  public boolean adopted(String pvIdentity) {
    return pvIdentity != null && adoptedIdentities.contains(pvIdentity);
  }

  /**
   * The essentials; no Fibre Channel, no RBD defaults, the default topology, CHAP required, no
   * adopted identities (each has a {@code with} method).
   */
  public ProvisionerSettings(
      String provisionerName,
      String identity,
      String clusterId,
      String initiatorName,
      String connectorHost,
      String connectorIp,
      String secretNamespace,
      boolean multipath) {
    this(
        provisionerName,
        identity,
        clusterId,
        initiatorName,
        connectorHost,
        connectorIp,
        secretNamespace,
        multipath,
        List.of(),
        List.of(),
        RbdDefaults.NONE,
        Placement.Topology.DEFAULT,
        false,
        Set.of());
  }

  /** The same, with the nodes' Fibre Channel port and node names. */
  public ProvisionerSettings withFibreChannel(List<String> ports, List<String> nodes) {
    return new ProvisionerSettings(
        provisionerName,
        identity,
        clusterId,
        initiatorName,
        connectorHost,
        connectorIp,
        secretNamespace,
        multipath,
        ports,
        nodes,
        rbd,
        topology,
        iscsiChapOptional,
        adoptedIdentities);
  }

  public static final String DEFAULT_NAME = "openstack.org/standalone-cinder";

  private static final Pattern IQN = Pattern.compile("iqn\\.\\d{4}-\\d{2}\\.[^\\s:]+(:[^\\s]+)?");

  public ProvisionerSettings {
    wwpns = fibreChannelNames("WWPN", wwpns);
    wwnns = fibreChannelNames("WWNN", wwnns);
    rbd = rbd == null ? RbdDefaults.NONE : rbd;
    topology = topology == null ? Placement.Topology.DEFAULT : topology;
    Objects.requireNonNull(provisionerName, "provisionerName");
    Objects.requireNonNull(identity, "identity");
    Objects.requireNonNull(clusterId, "clusterId");
    Objects.requireNonNull(connectorHost, "connectorHost");
    Objects.requireNonNull(connectorIp, "connectorIp");
    Objects.requireNonNull(secretNamespace, "secretNamespace");
    adoptedIdentities = adoptedIdentities == null ? Set.of() : Set.copyOf(adoptedIdentities);
    if (adoptedIdentities.contains(identity)) {
      // Its own PVs would then be released as the Go provisioner's, with that one's connector.
      throw new IllegalArgumentException(
          "adopted identity '"
              + identity
              + "' is this provisioner's own identity; adopt only the identities of the Go"
              + " provisioner's PVs");
    }
    initiatorName = initiatorName(initiatorName);
  }

  /** An iSCSI initiator name, checked to be an IQN. */
  public static String initiatorName(String name) {
    if (name == null || !IQN.matcher(name.trim()).matches()) {
      throw new IllegalArgumentException(
          "initiator name '"
              + name
              + "' is not an iSCSI qualified name such as iqn.2026-11.org.example:k8s");
    }
    return name.trim();
  }

  private static final Pattern WWN = Pattern.compile("[0-9a-f]{16}");

  /**
   * Fibre Channel names normalised (lower case, no colons or 0x), each checked to be 16 hex digits.
   *
   * @param what WWPN or WWNN, for the message
   */
  public static List<String> fibreChannelNames(String what, List<String> raw) {
    if (raw == null) {
      return List.of();
    }
    List<String> out = new java.util.ArrayList<>();
    for (String w : raw) {
      String n = org.standalonecinder.provisioner.mapping.FcMapper.normalise(w);
      if (!WWN.matcher(n).matches()) {
        throw new IllegalArgumentException(
            what
                + " '"
                + w
                + "' is not a Fibre Channel name of 16 hex digits (e.g. 10:00:00:00:c9:a1:b2:c3)");
      }
      out.add(n);
    }
    return List.copyOf(out);
  }

  /** The connector this cluster presents to Cinder. */
  public org.standalonecinder.provisioner.cinder.Connector connector() {
    return new org.standalonecinder.provisioner.cinder.Connector(
        initiatorName(), connectorHost(), connectorIp(), multipath(), wwpns(), wwnns());
  }
}
