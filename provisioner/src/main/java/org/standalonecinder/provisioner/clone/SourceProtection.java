package org.standalonecinder.provisioner.clone;

import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;
import org.standalonecinder.api.ClaimRef;
import org.standalonecinder.provisioner.controller.ClusterCache;
import org.standalonecinder.provisioner.controller.ProvisioningException;
import org.standalonecinder.provisioner.provision.Names;

/**
 * Keeps a clone's source claim, and so its volume, from going while Cinder copies it: a finalizer
 * per clone ({@link Names#cloneFinalizer}) on the source, so that concurrent clones never remove
 * each other's protection.
 */
public final class SourceProtection {

  /**
   * How often a finalizer edit is tried when someone else wrote the claim in between (409): at once
   * again, with the fresh claim; past this the claim loop retries the key with its backoff.
   */
  static final int CONFLICT_ATTEMPTS = 5;

  private final KubernetesClient client;
  private final ClusterCache cache;

  /**
   * The source of each clone this process protected or looked at, until its protection is released:
   * the cache keeps a claim's first few finalizers of ours only, and a clone's past them is found
   * here rather than by asking the API server for every claim that has more.
   */
  private final java.util.Map<String, ClaimRef> sources =
      new java.util.concurrent.ConcurrentHashMap<>();

  public SourceProtection(KubernetesClient client, ClusterCache cache) {
    this.client = client;
    this.cache = cache;
  }

  /** Whether {@code source} carries the finalizer of the clone {@code cloneUid}. */
  public static boolean holds(PersistentVolumeClaim source, String cloneUid) {
    List<String> f = source.getMetadata().getFinalizers();
    return f != null && cloneUid != null && f.contains(Names.cloneFinalizer(cloneUid));
  }

  /**
   * Puts the clone's finalizer on the source, the claim of uid {@code sourceUid} (as resolved).
   *
   * @throws ProvisioningException when the source is being deleted, is another claim now, or cannot
   *     be updated
   */
  public void protect(ClaimRef source, String sourceUid, String cloneUid) {
    sources.putIfAbsent(cloneUid, source);
    String finalizer = Names.cloneFinalizer(cloneUid);
    edit(
        source,
        c -> {
          if (sourceUid != null && !sourceUid.equals(c.getMetadata().getUid())) {
            // Created again under its name since it was resolved: the volume resolved is not
            // this claim's, and this claim did not consent; the next look resolves it afresh.
            throw new ProvisioningException(
                "source claim " + source + " was deleted and created again; it is checked again",
                false,
                null);
          }
          if (holds(c, cloneUid)) {
            return false; // an earlier look protected it: being deleted, it waits for the clone
          }
          if (c.getMetadata().getDeletionTimestamp() != null) {
            throw new ProvisioningException(
                "source claim " + source + " is being deleted", false, null);
          }
          List<String> f =
              c.getMetadata().getFinalizers() == null
                  ? new ArrayList<>()
                  : new ArrayList<>(c.getMetadata().getFinalizers());
          f.add(finalizer);
          c.getMetadata().setFinalizers(f);
          return true;
        });
  }

  /** Takes the clone's finalizer off the source; a source that is gone or has none is done. */
  public void unprotect(ClaimRef source, String cloneUid) {
    String finalizer = Names.cloneFinalizer(cloneUid);
    edit(
        source,
        c -> {
          List<String> f = c.getMetadata().getFinalizers();
          if (f == null || !f.contains(finalizer)) {
            return false;
          }
          List<String> rest = new ArrayList<>(f);
          rest.remove(finalizer);
          c.getMetadata().setFinalizers(rest);
          return true;
        });
  }

  /**
   * Takes the clone's finalizer off the source when the cache says it is there: most resyncs need
   * no API call.
   */
  public void unprotectIfCached(ClaimRef source, String cloneUid) {
    sources.putIfAbsent(cloneUid, source);
    PersistentVolumeClaim cached = cache.claim(source.namespace(), source.name());
    if (cached != null && ClusterCache.mayHaveFinalizer(cached, Names.cloneFinalizer(cloneUid))) {
      unprotect(source, cloneUid);
    }
  }

  /**
   * Remembers the source a clone named, seen as the clone goes: its protection is released once
   * nothing of it is left, and the cache may not show every claim that holds it.
   */
  public void remember(ClaimRef source, String cloneUid) {
    sources.putIfAbsent(cloneUid, source);
  }

  /** Takes the protection of a clone that is gone off every claim that has it. */
  public void release(String cloneUid) {
    String finalizer = Names.cloneFinalizer(cloneUid);
    // The claims the cache has with it, and the source this process knows of, which may hold it
    // past what the cache keeps. Not every claim marked as having more: a tenant can mark any
    // number, and each would cost a GET at every deletion of a claim of ours.
    java.util.Set<ClaimRef> holders = new java.util.LinkedHashSet<>();
    for (PersistentVolumeClaim c : cache.claimsWithFinalizer(finalizer)) {
      holders.add(new ClaimRef(c.getMetadata().getNamespace(), c.getMetadata().getName()));
    }
    ClaimRef known = sources.get(cloneUid);
    if (known != null) {
      PersistentVolumeClaim cached = cache.claim(known.namespace(), known.name());
      if (cached == null || ClusterCache.mayHaveFinalizer(cached, finalizer)) {
        holders.add(known);
      }
    }
    for (ClaimRef holder : holders) {
      unprotect(holder, cloneUid);
    }
    sources.remove(cloneUid);
  }

  /**
   * Read-modify-write of a claim's finalizers, with the resourceVersion (finalizers are a list: a
   * blind write could drop someone else's), repeated on a conflict. A missing claim is done.
   */
  private void edit(ClaimRef ref, Predicate<PersistentVolumeClaim> change) {
    var resource =
        client.persistentVolumeClaims().inNamespace(ref.namespace()).withName(ref.name());
    for (int attempt = 1; ; attempt++) {
      PersistentVolumeClaim c = resource.get();
      if (c == null || !change.test(c)) {
        return;
      }
      try {
        client.persistentVolumeClaims().inNamespace(ref.namespace()).resource(c).update();
        return;
      } catch (KubernetesClientException e) {
        if (e.getCode() == 404) {
          return;
        }
        if (e.getCode() != 409 || attempt >= CONFLICT_ATTEMPTS) {
          throw new ProvisioningException(
              "cannot update the finalizers of source claim " + ref + ": " + e.getMessage(),
              false,
              e);
        }
      }
    }
  }
}
