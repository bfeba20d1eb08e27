package org.standalonecinder.provisioner.provision;

import io.fabric8.kubernetes.api.model.Secret;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Map;
import java.util.Optional;
import org.standalonecinder.api.ClassParameters;
import org.standalonecinder.provisioner.controller.ProvisioningException;
import org.standalonecinder.provisioner.mapping.Cephx;
import org.standalonecinder.provisioner.mapping.RbdForm;
import org.standalonecinder.provisioner.mapping.RbdMapper;
import org.standalonecinder.provisioner.mapping.RbdOptions;

/**
 * The RBD choices of a class (form, Ceph cluster id, cephx Secret) over the provisioner's defaults,
 * with the admin's cephx key read and checked before anything is made in Cinder.
 */
final class RbdChoices {

  private final SecretStore secrets;
  private final ProvisionerSettings settings;

  RbdChoices(SecretStore secrets, ProvisionerSettings settings) {
    this.secrets = secrets;
    this.settings = settings;
  }

  /**
   * The RBD choices for a claim of this class. A class that names Ceph (any of rbdForm,
   * cephClusterID, cephxSecret) expects RBD: its cephx key is read now, and its configuration
   * problems stop the claim here, with nothing made in Cinder. For other classes the key is read
   * only if Cinder exports over RBD, and its problems are reported then (and the export and the
   * volume are undone); an iSCSI or FC claim never reads it.
   */
  RbdOptions of(ClassParameters p, io.fabric8.kubernetes.api.model.storage.StorageClass sc) {
    // No in-tree rbd PV in a class that allows expansion: see RbdOptions#inGrowableClass.
    String growableClass =
        Boolean.TRUE.equals(sc.getAllowVolumeExpansion()) ? sc.getMetadata().getName() : null;
    ProvisionerSettings.RbdDefaults d = settings.rbd();
    RbdForm form = p.rbdForm() != null ? RbdForm.parse(p.rbdForm()) : d.form();
    String clusterId = p.cephClusterId() != null ? p.cephClusterId() : d.clusterId();
    String secretName = p.cephxSecret() != null ? p.cephxSecret() : d.cephxSecret();
    if (p.namesCeph() && form == RbdForm.RBD && growableClass != null) {
      // Known before Cinder is asked: nothing is made.
      throw ProvisioningException.invalid(
          "it asks for in-tree rbd volumes (rbdForm rbd), and "
              + org.standalonecinder.provisioner.mapping.RbdMapper.growableRefusal(growableClass));
    }
    if (!p.namesCeph()) {
      return new RbdOptions(
              form,
              clusterId,
              d.csiDriver(),
              d.imageFeatures(),
              secretName == null
                  ? () -> Cephx.none(settings.secretNamespace())
                  : once(() -> cephx(secretName)))
          .inGrowableClass(growableClass);
    }
    Cephx cephx = secretName == null ? Cephx.none(settings.secretNamespace()) : cephx(secretName);
    if (!cephx.usable() && cephx.problem() != null) {
      throw new ProvisioningException(cephx.problem(), false, null);
    }
    if (form == RbdForm.CSI && clusterId == null) {
      throw new ProvisioningException(
          "StorageClass asks for ceph-csi volumes but names no cephClusterID, and the"
              + " provisioner has no --ceph-cluster-id",
          false,
          null);
    }
    return new RbdOptions(form, clusterId, d.csiDriver(), d.imageFeatures(), cephx)
        .inGrowableClass(growableClass);
  }

  private static <T> java.util.function.Supplier<T> once(java.util.function.Supplier<T> s) {
    return new java.util.function.Supplier<>() {
      private T value;

      @Override
      public synchronized T get() {
        if (value == null) {
          value = s.get();
        }
        return value;
      }
    };
  }

  /** Reads the admin's cephx Secret; what is wrong with it becomes the reason, never the key. */
  private Cephx cephx(String name) {
    String ns = settings.secretNamespace();
    String where = "the cephx Secret " + ns + "/" + name;
    Optional<Secret> found;
    try {
      found = secrets.get(ns, name);
    } catch (RuntimeException e) {
      return Cephx.unusable(ns, name, "cannot read " + where + ": " + e.getMessage());
    }
    if (found.isEmpty()) {
      return Cephx.unusable(
          ns,
          name,
          where
              + " does not exist: create it with the key of the Ceph user Cinder names, e.g."
              + " kubectl -n "
              + ns
              + " create secret generic "
              + name
              + " --from-literal=key=\"$(ceph auth get-key client.cinder)\"");
    }
    Secret s = found.get();
    Map<String, String> labels = s.getMetadata() == null ? null : s.getMetadata().getLabels();
    if (labels == null || !"true".equals(labels.get(RbdMapper.CEPHX_LABEL))) {
      // A class names the Secret; only Secrets the admin marked may become the key that nodes
      // map images with (copied into a shared Secret), never another Secret of this namespace
      // (CHAP credentials, the webhook's CA or clone token key).
      return Cephx.unusable(
          ns,
          name,
          where
              + " is not marked as a cephx Secret: if it is one, label it: kubectl -n "
              + ns
              + " label secret "
              + name
              + " "
              + RbdMapper.CEPHX_LABEL
              + "=true");
    }
    String key;
    String user;
    try {
      key = value(s, RbdMapper.KEY);
      if (key == null) {
        key = value(s, RbdMapper.CSI_USER_KEY);
      }
      user = value(s, RbdMapper.CSI_USER_ID);
    } catch (IllegalArgumentException e) {
      return Cephx.unusable(ns, name, where + " holds a value that is not base64");
    }
    if (key == null) {
      return Cephx.unusable(
          ns,
          name,
          where
              + " has no key: put the cephx key under 'key' (or 'userKey'), and the user under"
              + " 'userID' if it is not the one Cinder names");
    }
    return Cephx.of(ns, name, user, key);
  }

  /** A Secret's value, trimmed (a key from a file ends with a newline), or null when blank. */
  private static String value(Secret s, String k) {
    String v = null;
    if (s.getStringData() != null && s.getStringData().get(k) != null) {
      v = s.getStringData().get(k);
    } else if (s.getData() != null && s.getData().get(k) != null) {
      v = new String(Base64.getDecoder().decode(s.getData().get(k).trim()), StandardCharsets.UTF_8);
    }
    return v == null || v.isBlank() ? null : v.trim();
  }
}
