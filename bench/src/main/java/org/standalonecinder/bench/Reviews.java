package org.standalonecinder.bench;

/** The AdmissionReviews the bench sends: a PVC and a StorageClass CREATE as kubectl sends them. */
final class Reviews {

  private Reviews() {}

  /** An AdmissionReview of a CREATE of {@code object} by a developer. */
  static String review(String uid, String kind, String group, String resource, String object) {
    return """
        {"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"%s",\
        "kind":{"group":"%s","version":"v1","kind":"%s"},\
        "resource":{"group":"%s","version":"v1","resource":"%s"},\
        "requestKind":{"group":"%s","version":"v1","kind":"%s"},\
        "requestResource":{"group":"%s","version":"v1","resource":"%s"},\
        "name":"data","namespace":"apps","operation":"CREATE",\
        "userInfo":{"username":"alice","uid":"4b1d","groups":["developers","system:authenticated"]},\
        "object":%s,"oldObject":null,"dryRun":false,\
        "options":{"kind":"CreateOptions","apiVersion":"meta.k8s.io/v1","fieldManager":"kubectl-client-side-apply"}}}"""
        .formatted(uid, group, kind, group, resource, group, kind, group, resource, object);
  }

  /**
   * A PVC CREATE as kubectl apply sends it, with its last-applied annotation and managed fields.
   */
  static String pvcReview() {
    String claim =
        """
        {"kind":"PersistentVolumeClaim","apiVersion":"v1","metadata":{"name":"data","namespace":"apps",\
        "uid":"0b6c3f2e-1111-4e5a-9c1d-5e2f3a4b5c6d","creationTimestamp":null,\
        "labels":{"app.kubernetes.io/name":"postgres","app.kubernetes.io/instance":"orders"},\
        "annotations":{"kubectl.kubernetes.io/last-applied-configuration":\
        "{\\"apiVersion\\":\\"v1\\",\\"kind\\":\\"PersistentVolumeClaim\\",\\"metadata\\":{\\"annotations\\":{},\
        \\"labels\\":{\\"app.kubernetes.io/instance\\":\\"orders\\",\\"app.kubernetes.io/name\\":\\"postgres\\"},\
        \\"name\\":\\"data\\",\\"namespace\\":\\"apps\\"},\\"spec\\":{\\"accessModes\\":[\\"ReadWriteOnce\\"],\
        \\"resources\\":{\\"requests\\":{\\"storage\\":\\"10Gi\\"}},\\"storageClassName\\":\\"bench\\"}}\\n"},\
        "managedFields":[{"manager":"kubectl-client-side-apply","operation":"Update","apiVersion":"v1",\
        "time":"2026-11-23T10:00:00Z","fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:annotations":\
        {".":{},"f:kubectl.kubernetes.io/last-applied-configuration":{}},"f:labels":{".":{},\
        "f:app.kubernetes.io/instance":{},"f:app.kubernetes.io/name":{}}},"f:spec":{"f:accessModes":{},\
        "f:resources":{"f:requests":{".":{},"f:storage":{}}},"f:storageClassName":{},"f:volumeMode":{}}}}]},\
        "spec":{"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"10Gi"}},\
        "storageClassName":"bench","volumeMode":"Filesystem"},"status":{"phase":"Pending"}}""";
    return review(
        "5f0a3d1e-2b4c-4d6e-8f10-1a2b3c4d5e6f",
        "PersistentVolumeClaim",
        "",
        "persistentvolumeclaims",
        claim);
  }

  /**
   * The same claim as {@link #pvcReview}, asking to clone {@code apps/src} (a class with
   * smartclone): on {@code /validate} the webhook looks the source up and asks the provisioner's
   * resolver whether Cinder can clone it.
   */
  static String cloneReview() {
    String pvc = pvcReview();
    String clone =
        pvc.replace(
                "\"spec\":{\"accessModes\":[\"ReadWriteOnce\"],\"resources\":{\"requests\":{\"storage\":\"10Gi\"}},\"storageClassName\":\"bench\"",
                "\"spec\":{\"accessModes\":[\"ReadWriteOnce\"],\"resources\":{\"requests\":{\"storage\":\"10Gi\"}},\"storageClassName\":\""
                    + ProvisionerBench.CLONES
                    + "\"")
            .replace(
                "\"annotations\":{\"kubectl",
                "\"annotations\":{\"k8s.io/CloneRequest\":\""
                    + ProvisionerBench.SOURCE
                    + "\",\"kubectl");
    if (clone.equals(pvc) || !clone.contains(ProvisionerBench.CLONES)) {
      throw new IllegalStateException("the clone review did not come out of the PVC review");
    }
    return clone;
  }

  static String storageClassReview() {
    String sc =
        """
        {"kind":"StorageClass","apiVersion":"storage.k8s.io/v1","metadata":{"name":"fast",\
        "creationTimestamp":null},"provisioner":"openstack.org/standalone-cinder",\
        "parameters":{"type":"fast","fsType":"ext4","smartclone":"true"},\
        "reclaimPolicy":"Delete","volumeBindingMode":"Immediate"}""";
    return review(
        "6a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d",
        "StorageClass",
        "storage.k8s.io",
        "storageclasses",
        sc);
  }
}
