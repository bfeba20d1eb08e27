package org.standalonecinder.provisioner.mapping;

import io.fabric8.kubernetes.api.model.CSIPersistentVolumeSource;
import io.fabric8.kubernetes.api.model.CSIPersistentVolumeSourceBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolumeSpec;
import io.fabric8.kubernetes.api.model.RBDPersistentVolumeSource;
import io.fabric8.kubernetes.api.model.RBDPersistentVolumeSourceBuilder;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.api.model.SecretReference;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;
import org.standalonecinder.api.ClassParameters;
import org.standalonecinder.api.Digests;
import org.standalonecinder.provisioner.cinder.ConnectionInfo;

/**
 * Ceph RBD: Cinder's {@code rbd} export ({@code name} = pool/image, monitors from {@code hosts} and
 * {@code ports}, the Ceph user in {@code auth_username}) becomes either in-tree {@code spec.rbd} or
 * a static ceph-csi volume in {@code spec.csi} ({@link RbdForm}).
 *
 * <p>Cinder never returns the cephx key, so it comes from the admin's Secret ({@link Cephx}). The
 * PV refers to a Secret in the provisioner's namespace, in the shape its form reads (in-tree: type
 * {@code kubernetes.io/rbd}, key {@code key}; ceph-csi: {@code userID} and {@code userKey}), one
 * per form, admin Secret and user, shared by every PV that needs it: nothing is ever copied into a
 * user's namespace, because both forms take a namespaced reference.
 */
public final class RbdMapper implements VolumeMapper {

  /** The Secret type the kubelet's in-tree rbd plugin insists on. */
  public static final String RBD_SECRET_TYPE = "kubernetes.io/rbd";

  /** The key of the in-tree Secret. */
  /**
   * The label that marks a Secret of the provisioner's namespace as an admin's cephx Secret: only
   * such a Secret may be named by {@code --cephx-secret} or a class's {@code cephxSecret}.
   */
  public static final String CEPHX_LABEL = "standalone-cinder.io/cephx";

  public static final String KEY = "key";

  /** The keys of ceph-csi's node-stage Secret. */
  public static final String CSI_USER_ID = "userID";

  public static final String CSI_USER_KEY = "userKey";

  @Override
  public String driverVolumeType() {
    return "rbd";
  }

  @Override
  public MappedVolume map(ConnectionInfo info, MappingContext ctx) {
    RbdOptions o = ctx.rbd();
    RbdImage img = RbdImage.of(info);
    String pool = img.pool();
    String image = img.image();
    List<String> monitors = img.monitors();
    checkForm(o, ctx.multiNode());
    boolean auth = img.auth();
    Cephx cephx = o.cephx();
    boolean needsKey = auth || o.form() == RbdForm.CSI;
    if (needsKey && cephx.secretName() == null) {
      throw UnmappableExportException.awaitingConfiguration(
          (auth
                  ? "Ceph requires cephx for user '" + info.string("auth_username") + "'"
                  : "ceph-csi needs a Ceph user and key")
              + ", and Cinder never sends the key: create a Secret with it in namespace "
              + cephx.secretNamespace()
              + " and name it with --cephx-secret (env CEPHX_SECRET) or the class parameter"
              + " cephxSecret");
    }
    if (needsKey && !cephx.usable()) {
      throw UnmappableExportException.awaitingConfiguration(cephx.problem());
    }
    String user = cephx.userId() != null ? cephx.userId() : info.string("auth_username");
    if (needsKey && blank(user)) {
      throw new UnmappableExportException(
          "Cinder's RBD connection info names no auth_username, and the cephx Secret "
              + cephx.secretName()
              + " names no userID: set userID in it");
    }
    if (o.form() == RbdForm.CSI && blank(o.clusterId())) {
      throw UnmappableExportException.awaitingConfiguration(
          "the csi form of RBD volumes needs ceph-csi's clusterID for this Ceph cluster (monitors "
              + String.join(",", monitors)
              + "): set --ceph-cluster-id (env CEPH_CLUSTER_ID) or the class parameter"
              + " cephClusterID");
    }
    boolean readOnly = ctx.readOnly() || "ro".equalsIgnoreCase(info.string("access_mode"));
    String fsType = ctx.block() ? null : ctx.fsType();

    Optional<Secret> secret = Optional.empty();
    SecretReference ref = null;
    if (needsKey) {
      String secretName = sharedSecretName(o.form(), cephx.secretName(), user);
      ref = new SecretReference(secretName, cephx.secretNamespace());
      secret = Optional.of(secret(o.form(), ref, user, cephx.key(), ctx.sharedSecretLabels()));
    }
    Consumer<PersistentVolumeSpec> source =
        o.form() == RbdForm.RBD
            ? inTree(monitors, pool, image, user, ref, fsType, readOnly)
            : csi(o, pool, image, ref, fsType, readOnly);
    return new MappedVolume(source, secret, true);
  }

  /** Whether the PV form is known, and fit for the claim's access and class. */
  private static void checkForm(RbdOptions o, boolean multiNode) {
    RbdForm form = o.form();
    if (form == null) {
      throw UnmappableExportException.awaitingConfiguration(
          "Cinder exported the volume over RBD, and the provisioner could not tell which PV form"
              + " this cluster needs (its Kubernetes version was unknown): set --rbd-form (env"
              + " RBD_FORM) or the class parameter rbdForm to rbd or csi");
    }
    if (multiNode && form == RbdForm.RBD) {
      throw new UnmappableExportException(
          "ReadWriteMany on Ceph needs the csi form of RBD volumes (rbdForm csi, with ceph-csi on"
              + " the nodes): Kubernetes' in-tree rbd plugin maps an image for writing on one node"
              + " at a time and would keep every other node's pod waiting for the first to let go");
    }
    if (form == RbdForm.RBD && o.growableClass() != null) {
      throw new UnmappableExportException(
          "Cinder exported the volume over RBD, and " + growableRefusal(o.growableClass()));
    }
  }

  /**
   * Why no in-tree rbd PV is made in {@code className}, which allows volume expansion: said when
   * the class asks for them (before Cinder is asked) and when Cinder exports over RBD.
   */
  public static String growableRefusal(String className) {
    return "StorageClass "
        + className
        + " allows volume expansion: an in-tree rbd PV there could be grown by any user who may"
        + " edit the claim, and Kubernetes' own expand controller takes such claims too (on 1.20"
        + " it crashed the whole controller-manager). Give Ceph volume types a class without"
        + " allowVolumeExpansion, or the csi form (rbdForm csi); nothing is kept in Cinder";
  }

  /** Kubernetes' in-tree {@code rbd} source. */
  private static Consumer<PersistentVolumeSpec> inTree(
      List<String> monitors,
      String pool,
      String image,
      String user,
      SecretReference ref,
      String fsType,
      boolean readOnly) {
    RBDPersistentVolumeSource rbd =
        new RBDPersistentVolumeSourceBuilder()
            .withMonitors(monitors)
            .withPool(pool)
            .withImage(image)
            .withUser(blank(user) ? null : user)
            .withSecretRef(ref)
            .withFsType(fsType)
            .withReadOnly(readOnly)
            .build();
    return spec -> spec.setRbd(rbd);
  }

  /** A ceph-csi static volume's source. */
  private static Consumer<PersistentVolumeSpec> csi(
      RbdOptions o,
      String pool,
      String image,
      SecretReference ref,
      String fsType,
      boolean readOnly) {
    Map<String, String> attributes = new LinkedHashMap<>();
    attributes.put("clusterID", o.clusterId());
    attributes.put("pool", pool);
    attributes.put("staticVolume", "true");
    attributes.put("imageFeatures", o.imageFeatures());
    CSIPersistentVolumeSource csi =
        new CSIPersistentVolumeSourceBuilder()
            .withDriver(o.csiDriver())
            .withVolumeHandle(image)
            .withFsType(fsType)
            .withReadOnly(readOnly)
            .withVolumeAttributes(attributes)
            .withNodeStageSecretRef(ref)
            .build();
    return spec -> spec.setCsi(csi);
  }

  /**
   * The shared Secret's name: the admin's Secret, the form and the user ({@code cephx-rbd-cinder}),
   * made a valid name (and kept apart by a hash) when the user's name is not one.
   */
  public static String sharedSecretName(RbdForm form, String adminSecret, String user) {
    String plain = adminSecret + "-" + form.spelling() + "-" + user;
    if (ClassParameters.isDnsSubdomain(plain)) {
      return plain;
    }
    String base = adminSecret.length() > 230 ? adminSecret.substring(0, 230) : adminSecret;
    base = base.replaceAll("[.-]+$", "");
    return base + "-" + form.spelling() + "-" + Digests.sha256Hex(plain).substring(0, 12);
  }

  private static Secret secret(
      RbdForm form, SecretReference ref, String user, String key, Map<String, String> labels) {
    Map<String, String> data = new LinkedHashMap<>();
    SecretBuilder b =
        new SecretBuilder()
            .withNewMetadata()
            .withName(ref.getName())
            .withNamespace(ref.getNamespace())
            .withLabels(labels)
            .endMetadata();
    if (form == RbdForm.RBD) {
      data.put(KEY, key);
      b.withType(RBD_SECRET_TYPE);
    } else {
      data.put(CSI_USER_ID, user);
      data.put(CSI_USER_KEY, key);
      b.withType("Opaque");
    }
    return b.withStringData(data).build();
  }

  private static boolean blank(String s) {
    return s == null || s.isBlank();
  }
}
