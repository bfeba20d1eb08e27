package org.standalonecinder.provisioner.host;

import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import org.standalonecinder.provisioner.cinder.FakeCinderClient;

/**
 * A host that runs nothing: each command is written into the fake Cinder's call log as {@code run
 * <command>} (so a test sees Cinder's calls and the host's commands in one order), and the device
 * is there once a login or map ran and until a logout or unmap.
 */
final class FakeHost implements Host {

  private final FakeCinderClient log;
  private final Map<String, Integer> failing = new HashMap<>();
  boolean privileged = true;
  boolean deviceAppears = true;
  String usedBy;
  private boolean connected;

  FakeHost(FakeCinderClient log) {
    this.log = log;
  }

  /** Commands containing {@code part} exit with {@code code} from now on. */
  FakeHost failing(String part, int code) {
    failing.put(part, code);
    return this;
  }

  private final Map<String, Integer> failuresLeft = new HashMap<>();

  /** The next {@code times} commands containing {@code part} exit with {@code code}. */
  FakeHost failingTimes(String part, int code, int times) {
    failing.put(part, code);
    failuresLeft.put(part, times);
    return this;
  }

  boolean connected() {
    return connected;
  }

  @Override
  public boolean privileged() {
    return privileged;
  }

  @Override
  public Result run(Command command) {
    String shown = command.shown();
    log.note("run " + shown);
    for (Map.Entry<String, Integer> f : failing.entrySet()) {
      if (shown.contains(f.getKey()) && failuresLeft.getOrDefault(f.getKey(), 1) > 0) {
        failuresLeft.computeIfPresent(f.getKey(), (k, n) -> n - 1);
        return new Result(f.getValue(), "fake failure of " + f.getKey());
      }
    }
    if (shown.contains("--login") || shown.contains("device map")) {
      connected = true;
    }
    if (shown.contains("--logout") || shown.contains("device unmap")) {
      connected = false;
    }
    return new Result(0, "");
  }

  @Override
  public boolean exists(String device) {
    return connected && deviceAppears;
  }

  /** Device links the host has besides the attached volume's (other volumes' LUNs). */
  final java.util.List<String> otherLinks = new java.util.ArrayList<>();

  @Override
  public java.util.List<String> list(String folder) {
    return "/dev/disk/by-path".equals(folder)
        ? java.util.List.copyOf(otherLinks)
        : java.util.List.of();
  }

  @Override
  public Optional<String> usedBy(String device) {
    return Optional.ofNullable(usedBy);
  }
}
