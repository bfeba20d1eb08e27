package org.standalonecinder.provisioner.node;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;
import org.standalonecinder.provisioner.host.Command;
import org.standalonecinder.provisioner.host.Host;

/** A root host that runs nothing: it records each command and answers as the test says. */
final class RecordingHost implements Host {

  final List<String> ran = new ArrayList<>();
  private final Function<Command, Result> answer;

  RecordingHost(Function<Command, Result> answer) {
    this.answer = answer;
  }

  @Override
  public boolean privileged() {
    return true;
  }

  @Override
  public Result run(Command command) {
    ran.add(command.shown());
    return answer.apply(command);
  }

  @Override
  public boolean exists(String device) {
    return true;
  }

  @Override
  public List<String> list(String folder) {
    return List.of();
  }

  @Override
  public Optional<String> usedBy(String device) {
    return Optional.empty();
  }
}
