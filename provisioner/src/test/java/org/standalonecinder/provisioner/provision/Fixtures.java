package org.standalonecinder.provisioner.provision;

import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaimBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.storage.StorageClass;
import io.fabric8.kubernetes.api.model.storage.StorageClassBuilder;
import java.util.List;
import java.util.Map;

/** Tiny builders for claims, classes and settings. */
public final class Fixtures {

  public static final String UID = "0b6c3f2e-1111-4e5a-9c1d-5e2f3a4b5c6d";
  public static final String PV = "pvc-" + UID;

  private Fixtures() {}

  public static ProvisionerSettings settings() {
    return new ProvisionerSettings(
        ProvisionerSettings.DEFAULT_NAME,
        "cluster-a",
        "cluster-a",
        "iqn.2026-11.org.standalonecinder:cluster-a",
        "k8s-cluster-a",
        "10.0.0.1",
        "standalone-cinder",
        false);
  }

  public static PersistentVolumeClaim claim(String size, String... modes) {
    return claimOf(UID, "data", size, null, modes);
  }

  public static PersistentVolumeClaim claimOf(
      String uid, String name, String size, String volumeMode, String... modes) {
    return new PersistentVolumeClaimBuilder()
        .withNewMetadata()
        .withName(name)
        .withNamespace("apps")
        .withUid(uid)
        .endMetadata()
        .withNewSpec()
        .withAccessModes(modes.length == 0 ? List.of("ReadWriteOnce") : List.of(modes))
        .withVolumeMode(volumeMode)
        .withStorageClassName("cinder")
        .withNewResources()
        .withRequests(Map.of("storage", new Quantity(size)))
        .endResources()
        .endSpec()
        .build();
  }

  public static StorageClass storageClass(Map<String, String> params) {
    return new StorageClassBuilder()
        .withNewMetadata()
        .withName("cinder")
        .endMetadata()
        .withProvisioner(ProvisionerSettings.DEFAULT_NAME)
        .withParameters(params)
        .withReclaimPolicy("Delete")
        .withMountOptions("noatime")
        .build();
  }
}
