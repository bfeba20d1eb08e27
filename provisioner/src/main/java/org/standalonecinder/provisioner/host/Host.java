package org.standalonecinder.provisioner.host;

import java.util.Optional;

/**
 * The machine a volume is attached to: the commands that log it in to an export, and its block
 * devices. {@link LocalHost} is the real one; tests bring their own (one records commands, one
 * stands libiscsi in for the kernel's initiator).
 */
public interface Host {

  /** The end of a command: its exit code and its output (stdout and stderr together). */
  record Result(int exit, String output) {}

  /** Whether this process may log in to targets and map block devices: root on Linux. */
  boolean privileged();

  /**
   * Runs the command to its end.
   *
   * @throws HostException when the program is missing or does not end in time
   */
  Result run(Command command);

  /** Whether the device node, or the link udev makes for it, exists. */
  boolean exists(String device);

  /** The names in a folder of device links (e.g. {@code /dev/disk/by-path}); empty when none. */
  java.util.List<String> list(String folder);

  /**
   * What is using the device so that taking it away would lose data: a mount of it or of one of its
   * partitions, or a holder such as device-mapper; empty when nothing is.
   */
  Optional<String> usedBy(String device);
}
