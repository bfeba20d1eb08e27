package org.standalonecinder.provisioner.controller;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.standalonecinder.provisioner.cinder.CinderClient;
import org.standalonecinder.provisioner.cinder.Volume;

/**
 * Holds a Cinder client's wait for a volume until the test opens the gate: the way to keep a clone
 * "in progress" for as long as a test needs, with the fake or the real Cinder.
 */
final class Gate {

  private final CountDownLatch open = new CountDownLatch(1);
  private final CountDownLatch reached = new CountDownLatch(1);

  /** The client whose awaitVolumeStatus blocks for volumes that {@code held} selects. */
  CinderClient around(CinderClient cinder, Predicate<Volume> held) {
    return (CinderClient)
        Proxy.newProxyInstance(
            CinderClient.class.getClassLoader(),
            new Class<?>[] {CinderClient.class},
            (proxy, method, args) -> {
              if (method.getName().equals("awaitVolumeStatus")) {
                var v = cinder.getVolume((String) args[0]);
                if (v.isPresent() && held.test(v.get())) {
                  reached.countDown();
                  if (!open.await(60, TimeUnit.SECONDS)) {
                    throw new IllegalStateException("the test never opened the gate");
                  }
                }
              }
              try {
                return method.invoke(cinder, args);
              } catch (InvocationTargetException e) {
                throw e.getCause();
              }
            });
  }

  /** Waits until a held volume reached the gate. */
  void awaitReached() throws InterruptedException {
    if (!reached.await(30, TimeUnit.SECONDS)) {
      throw new AssertionError("no volume reached the gate");
    }
  }

  void open() {
    open.countDown();
  }
}
