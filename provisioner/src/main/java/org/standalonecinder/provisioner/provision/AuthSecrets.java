package org.standalonecinder.provisioner.provision;

import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.SecretReference;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.standalonecinder.provisioner.cinder.Rollback;
import org.standalonecinder.provisioner.mapping.IscsiMapper;
import org.standalonecinder.provisioner.mapping.MappedVolume;
import org.standalonecinder.provisioner.mapping.SecretRefs;

/**
 * The auth Secrets of PVs: a PV's own (CHAP), put with it and deleted with it, and those several
 * PVs use (cephx), deleted when no PV refers to them any more, never while a provisioning that put
 * one has not made its PV yet.
 */
final class AuthSecrets {

  private final SecretStore secrets;
  private final ProvisionerSettings settings;

  AuthSecrets(SecretStore secrets, ProvisionerSettings settings) {
    this.secrets = secrets;
    this.settings = settings;
  }

  /**
   * Puts the Secret the mapping asks for, if any; its undo is pushed first, since a put that times
   * out may still have created it.
   */
  void put(MappedVolume mapped, String pvName, Rollback rollback) {
    mapped
        .secret()
        .ifPresent(
            s -> {
              String ns = s.getMetadata().getNamespace();
              String name = s.getMetadata().getName();
              if (mapped.sharedSecret()) {
                rollback.push(
                    "release shared secret " + name, () -> releaseShared(ns, name, pvName));
                putShared(s, pvName);
              } else {
                rollback.push("delete secret " + name, () -> secrets.delete(ns, name));
                secrets.put(s);
              }
            });
  }

  /** The PV's storage is gone: its own Secret goes, and a shared one if no other PV needs it. */
  void release(PersistentVolume pv) {
    String pvName = pv.getMetadata().getName();
    for (SecretReference ref : SecretRefs.of(pv.getSpec())) {
      String ns = ref.getNamespace() == null ? settings.secretNamespace() : ref.getNamespace();
      if (ref.getName().equals(IscsiMapper.secretName(pvName))) {
        secrets.delete(ns, ref.getName());
      } else if (ns.equals(settings.secretNamespace())) {
        releaseShared(ns, ref.getName(), pvName);
      }
    }
    settle(pvName);
  }

  /**
   * Deletes a PV's own Secret that another provisioner made (the Go provisioner's CHAP Secret in
   * the claim's namespace); one already gone is fine.
   */
  void deleteOwn(SecretReference ref) {
    secrets.delete(ref.getNamespace(), ref.getName());
  }

  // Shared Secrets: provisionings that put one and whose PV does not exist yet, by Secret.
  // A release never deletes a Secret that is pending, and a PV that exists is seen by the
  // release's look at the API server: together they close the window between a put and the PV's
  // creation. One process acts at a time (one replica, or the leader).
  private final Map<String, Set<String>> pendingShared = new HashMap<>();

  private void putShared(Secret s, String pvName) {
    synchronized (pendingShared) {
      pendingShared
          .computeIfAbsent(
              s.getMetadata().getNamespace() + "/" + s.getMetadata().getName(),
              k -> new HashSet<>())
          .add(pvName);
      secrets.put(s);
    }
  }

  /** The PV exists (or never will): it no longer holds its shared Secret as pending. */
  void settle(String pvName) {
    synchronized (pendingShared) {
      pendingShared.values().forEach(users -> users.remove(pvName));
      pendingShared.values().removeIf(Set::isEmpty);
    }
  }

  /**
   * Deletes a shared Secret of ours once nothing needs it: no provisioning pending with it, and no
   * PV but {@code exceptPv} referring to it. Safe to repeat; a Secret without our labels is never
   * touched.
   */
  private void releaseShared(String ns, String name, String exceptPv) {
    synchronized (pendingShared) {
      Set<String> pending = pendingShared.get(ns + "/" + name);
      if (pending != null) {
        pending.remove(exceptPv);
        if (!pending.isEmpty()) {
          return;
        }
        pendingShared.remove(ns + "/" + name);
      }
      Optional<Secret> s = secrets.get(ns, name);
      if (s.isEmpty() || !isShared(s.get())) {
        return;
      }
      if (!secrets.referenced(ns, name, exceptPv)) {
        secrets.delete(ns, name);
      }
    }
  }

  private static boolean isShared(Secret s) {
    Map<String, String> labels = s.getMetadata().getLabels();
    return labels != null
        && Names.MANAGED_BY.equals(labels.get(Names.LABEL_MANAGED_BY))
        && labels.containsKey(Names.LABEL_SHARED_SECRET);
  }

  /**
   * Deletes the shared Secrets of ours that no PV refers to: those a crash left between their put
   * and their PV's creation. Run with the orphan sweep.
   *
   * @return how many were deleted
   */
  int sweepSharedSecrets() {
    int n = 0;
    String ns = settings.secretNamespace();
    for (Secret s : secrets.list(ns, Names.sharedSecretLabels())) {
      String name = s.getMetadata().getName();
      synchronized (pendingShared) {
        if (pendingShared.containsKey(ns + "/" + name)
            || !isShared(s)
            || secrets.referenced(ns, name, null)) {
          continue;
        }
        secrets.delete(ns, name);
        n++;
      }
    }
    return n;
  }
}
