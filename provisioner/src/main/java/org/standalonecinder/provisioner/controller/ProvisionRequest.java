package org.standalonecinder.provisioner.controller;

import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.storage.StorageClass;
import java.util.Map;
import java.util.function.Consumer;

/**
 * A claim to provision, as the loop found it.
 *
 * @param claim the claim
 * @param storageClass its class, whose provisioner is this one
 * @param pvName the name its PV must have: derived from the claim's uid, so a repeated attempt
 *     finds what an earlier one made
 * @param nodeLabels the labels of the node the scheduler selected ({@code WaitForFirstConsumer}),
 *     empty when it selected none
 * @param starting told, with a detail for the claim's {@code Provisioning} event, once the
 *     provisioner has checked the request and starts to make storage
 */
public record ProvisionRequest(
    PersistentVolumeClaim claim,
    StorageClass storageClass,
    String pvName,
    Map<String, String> nodeLabels,
    Consumer<String> starting) {

  /** The PV name of a claim: {@code pvc-<uid>}, as Kubernetes' provisioners name them. */
  public static String pvName(String claimUid) {
    return "pvc-" + claimUid;
  }

  /** Tells the loop that storage is about to be made ({@code detail} may be empty). */
  public void starting(String detail) {
    starting.accept(detail);
  }
}
