package org.standalonecinder.provisioner.plugin;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.standalonecinder.provisioner.cinder.CinderClient;
import org.standalonecinder.provisioner.cinder.CinderDecorator;
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
    return CinderDecorator.wrap(
        cinder,
        (operation, args, call) -> {
          if (operation.equals("awaitVolumeStatus")) {
            var v = cinder.getVolume((String) args[0]);
            if (v.isPresent() && held.test(v.get())) {
              reached.countDown();
              try {
                if (!open.await(60, TimeUnit.SECONDS)) {
                  throw new IllegalStateException("the test never opened the gate");
                }
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
              }
            }
          }
          return call.proceed();
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
