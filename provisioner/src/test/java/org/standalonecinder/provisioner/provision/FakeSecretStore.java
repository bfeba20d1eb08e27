package org.standalonecinder.provisioner.provision;

import io.fabric8.kubernetes.api.model.Secret;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Consumer;
import java.util.function.Supplier;

/** A SecretStore in memory that logs into a shared list and fails on request. */
final class FakeSecretStore implements SecretStore {

  final Map<String, Secret> secrets = Collections.synchronizedMap(new TreeMap<>());
  private final Consumer<String> log;
  private final List<Supplier<RuntimeException>> putFailures = new ArrayList<>();

  /** Logs into {@code log}, e.g. the fake Cinder's, so one list shows the whole sequence. */
  FakeSecretStore(Consumer<String> log) {
    this.log = log;
  }

  FakeSecretStore failNextPut(Supplier<RuntimeException> e) {
    putFailures.add(e);
    return this;
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
}
