package org.standalonecinder.provisioner.controller;

import io.fabric8.kubernetes.api.model.HasMetadata;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BiConsumer;
import java.util.function.Predicate;

/**
 * What the controller has finished working on, key by key, with the object as it saw it. A test
 * that checks that something did <em>not</em> happen waits here until the controller has worked on
 * the object in the state that matters, instead of sleeping and hoping it had.
 */
public final class Processed implements BiConsumer<WorkKey, HasMetadata> {

  private final List<WorkKey> keys = new ArrayList<>();
  private final List<HasMetadata> objects = new ArrayList<>();

  /** Listens to {@code controller}. */
  public static Processed by(ClaimController controller) {
    Processed p = new Processed();
    controller.onProcessed(p);
    return p;
  }

  @Override
  public synchronized void accept(WorkKey key, HasMetadata object) {
    keys.add(key);
    objects.add(object);
  }

  private synchronized boolean seen(WorkKey key, Predicate<HasMetadata> state) {
    for (int i = 0; i < keys.size(); i++) {
      if (keys.get(i).equals(key) && state.test(objects.get(i))) {
        return true;
      }
    }
    return false;
  }

  /** Waits until the controller has finished working on {@code key} seen in {@code state}. */
  public void await(WorkKey key, Predicate<HasMetadata> state) {
    Cluster.await(
        "the controller to work on " + key, () -> seen(key, state), Duration.ofSeconds(10));
  }

  /** Waits until the controller has finished working on the claim {@code ns/name} once. */
  public void claim(String ns, String name) {
    await(claimKey(ns, name), o -> o != null);
  }

  /** The key of a claim as the controller queues it. */
  public static WorkKey claimKey(String ns, String name) {
    return new WorkKey.Claim(ns, name);
  }

  /** The key of a PV as the controller queues it. */
  public static WorkKey volumeKey(String name) {
    return new WorkKey.Volume(name);
  }

  /** Whether nothing at all was worked on. */
  public synchronized boolean none() {
    return keys.isEmpty();
  }
}
