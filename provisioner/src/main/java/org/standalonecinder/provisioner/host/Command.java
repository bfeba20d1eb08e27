package org.standalonecinder.provisioner.host;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * One command to run on the host.
 *
 * @param argv the program and its arguments
 * @param alsoOk exit codes besides 0 that mean it is done already
 * @param again exit codes that mean another process was in the way for a moment: run it again
 */
public record Command(List<String> argv, Set<Integer> alsoOk, Set<Integer> again) {

  public Command {
    argv = List.copyOf(argv);
    alsoOk = Set.copyOf(alsoOk);
    again = Set.copyOf(again);
  }

  /** A command that is never run again. */
  public Command(List<String> argv, Set<Integer> alsoOk) {
    this(argv, alsoOk, Set.of());
  }

  /** A command for which only 0 means done. */
  public static Command of(String... argv) {
    return new Command(List.of(argv), Set.of());
  }

  /** A command for which only 0 means done. */
  public static Command of(List<String> argv) {
    return new Command(argv, Set.of());
  }

  /** The same command, with {@code code} also meaning done. */
  public Command alsoOk(int code) {
    return new Command(argv, Set.of(code), again);
  }

  /** The same command, run again (a few times, shortly after) when it exits with {@code code}. */
  public Command againOn(int code) {
    return new Command(argv, alsoOk, Set.of(code));
  }

  /** Whether the exit code says to run it again. */
  public boolean tryAgain(int exit) {
    return again.contains(exit);
  }

  /** Whether the exit code means the command did its work, now or before. */
  public boolean done(int exit) {
    return exit == 0 || alsoOk.contains(exit);
  }

  /**
   * The command as it may be printed or logged: a secret after its name ({@code
   * node.session.auth.password -v X}, as iscsiadm takes CHAP secrets) is masked.
   */
  public String shown() {
    List<String> out = new ArrayList<>(argv);
    for (int i = 2; i < out.size(); i++) {
      if (out.get(i - 1).equals("-v") && out.get(i - 2).endsWith(".password")) {
        out.set(i, "***");
      }
    }
    return String.join(" ", out);
  }

  @Override
  public String toString() {
    return shown();
  }
}
