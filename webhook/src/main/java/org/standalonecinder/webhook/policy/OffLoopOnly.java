package org.standalonecinder.webhook.policy;

import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.authentication.UserInfo;
import io.fabric8.kubernetes.api.model.storage.StorageClass;
import java.util.Map;
import java.util.Optional;
import java.util.function.BooleanSupplier;
import org.standalonecinder.api.ClaimRef;
import org.standalonecinder.webhook.admission.Claim;
import org.standalonecinder.webhook.admission.WouldBlock;

/**
 * The policy's blocking calls (the API server's answers, the provisioner's clone check) behind a
 * guard: where the thread may not block, they throw {@link WouldBlock} before any I/O, and the
 * review is decided again where it may. Which threads may block is the caller's to say, so the
 * policy knows nothing of the server that runs it.
 */
public final class OffLoopOnly {

  private OffLoopOnly() {}

  /** The cluster as {@code cluster} answers it, on threads where {@code mayBlock} holds. */
  public static ClusterView clusterView(ClusterView cluster, BooleanSupplier mayBlock) {
    return new ClusterView() {
      @Override
      public Optional<StorageClass> storageClass(String name) {
        check(mayBlock);
        return cluster.storageClass(name);
      }

      @Override
      public Optional<PersistentVolumeClaim> claim(String namespace, String name) {
        check(mayBlock);
        return cluster.claim(namespace, name);
      }

      @Override
      public Optional<PersistentVolume> volume(String name) {
        check(mayBlock);
        return cluster.volume(name);
      }

      @Override
      public Map<String, String> namespaceLabels(String namespace) {
        check(mayBlock);
        return cluster.namespaceLabels(namespace);
      }

      @Override
      public boolean canCreatePods(UserInfo user, String namespace) {
        check(mayBlock);
        return cluster.canCreatePods(user, namespace);
      }

      @Override
      public org.standalonecinder.api.ReferenceGrants.Page referenceGrants(
          String namespace, String next) {
        check(mayBlock);
        return cluster.referenceGrants(namespace, next);
      }
    };
  }

  /** The clone check as {@code check} makes it, on threads where {@code mayBlock} holds. */
  public static CloneCheck cloneCheck(CloneCheck check, BooleanSupplier mayBlock) {
    if (check == CloneCheck.NONE) {
      return check;
    }
    return (ClaimRef source, Claim claim) -> {
      check(mayBlock);
      return check.refusal(source, claim);
    };
  }

  private static void check(BooleanSupplier mayBlock) {
    if (!mayBlock.getAsBoolean()) {
      throw WouldBlock.INSTANCE;
    }
  }
}
