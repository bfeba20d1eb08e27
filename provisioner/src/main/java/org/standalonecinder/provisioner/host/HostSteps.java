package org.standalonecinder.provisioner.host;

import java.time.Duration;
import java.util.List;
import java.util.function.Consumer;

/**
 * The host's part of an attach or detach: its commands run in order (again while an exit code says
 * so), and the wait for the device a login makes. Each step is reported, never a secret.
 */
final class HostSteps {

  private static final Duration POLL = Duration.ofMillis(200);

  /** Runs of a command whose exit code says to run it again: about 2 s in all. */
  static final int ATTEMPTS = 5;

  private final Host host;
  private final Duration deviceTimeout;
  private final Consumer<String> say;

  HostSteps(Host host, Duration deviceTimeout, Consumer<String> say) {
    this.host = host;
    this.deviceTimeout = deviceTimeout;
    this.say = say;
  }

  void runAll(List<Command> commands) {
    for (Command c : commands) {
      say.accept("run: " + c.shown());
      Host.Result r = host.run(c);
      for (int attempt = 1; attempt < ATTEMPTS && c.tryAgain(r.exit()); attempt++) {
        say.accept("again (exit code " + r.exit() + "): " + c.shown());
        pause(Duration.ofMillis(200L * attempt));
        r = host.run(c);
      }
      if (!c.done(r.exit())) {
        throw new HostException(
            "'"
                + c.shown()
                + "' failed with exit code "
                + r.exit()
                + (r.output().isBlank() ? "" : ": " + r.output()));
      }
    }
  }

  String awaitDevice(HostExport export) {
    long deadline = System.nanoTime() + deviceTimeout.toNanos();
    while (true) {
      for (String d : export.devices()) {
        if (host.exists(d)) {
          return d;
        }
      }
      if (System.nanoTime() - deadline > 0) {
        throw new HostException(
            "the device did not appear within "
                + deviceTimeout.toSeconds()
                + " s after the login (looked for "
                + String.join(", ", export.devices())
                + "; is udev running?)");
      }
      pause(POLL);
    }
  }

  private static void pause(Duration d) {
    try {
      Thread.sleep(d.toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new HostException("interrupted while waiting on the host", e);
    }
  }
}
