package org.standalonecinder.provisioner.provision;

import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.Secret;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.standalonecinder.provisioner.mapping.SecretRefs;

/**
 * A SecretStore in memory that logs into a shared list and fails on request. {@link #pvs} stands
 * for the API server's PVs, which {@link #referenced} looks at.
 */
final class FakeSecretStore implements SecretStore {

  final Map<String, Secret> secrets = Collections.synchronizedMap(new TreeMap<>());
  final Map<String, PersistentVolume> pvs = Collections.synchronizedMap(new TreeMap<>());
  private final Consumer<String> log;
  private final List<Supplier<RuntimeException>> putFailures = new ArrayList<>();
  private final List<Supplier<RuntimeException>> getFailures = new ArrayList<>();

  /** Logs into {@code log}, e.g. the fake Cinder's, so one list shows the whole sequence. */
  FakeSecretStore(Consumer<String> log) {
    this.log = log;
  }

  FakeSecretStore failNextPut(Supplier<RuntimeException> e) {
    putFailures.add(e);
    return this;
  }

  FakeSecretStore failNextGet(Supplier<RuntimeException> e) {
    getFailures.add(e);
    return this;
  }

  /** The PV now exists in the API server. */
  void created(PersistentVolume pv) {
    pvs.put(pv.getMetadata().getName(), pv);
  }

  @Override
  public void put(Secret s) {
    log.accept("putSecret " + s.getMetadata().getName());
    if (!putFailures.isEmpty()) {
      throw putFailures.remove(0).get();
    }
    secrets.put(s.getMetadata().getNamespace() + "/" + s.getMetadata().getName(), s);
  }

  @Override
  public void delete(String namespace, String name) {
    log.accept("deleteSecret " + name);
    secrets.remove(namespace + "/" + name);
  }

  @Override
  public Optional<Secret> get(String namespace, String name) {
    log.accept("getSecret " + name);
    if (!getFailures.isEmpty()) {
      throw getFailures.remove(0).get();
    }
    return Optional.ofNullable(secrets.get(namespace + "/" + name));
  }

  @Override
  public List<Secret> list(String namespace, Map<String, String> labels) {
    synchronized (secrets) {
      return secrets.values().stream()
          .filter(s -> namespace.equals(s.getMetadata().getNamespace()))
          .filter(
              s ->
                  s.getMetadata().getLabels() != null
                      && s.getMetadata().getLabels().entrySet().containsAll(labels.entrySet()))
          .toList();
    }
  }

  @Override
  public boolean referenced(String namespace, String name, String exceptPv) {
    synchronized (pvs) {
      return pvs.values().stream()
          .filter(pv -> !pv.getMetadata().getName().equals(exceptPv))
          .anyMatch(pv -> SecretRefs.refersTo(pv.getSpec(), namespace, name));
    }
  }
}
