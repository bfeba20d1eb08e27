package org.standalonecinder.provisioner.host;

import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.standalonecinder.provisioner.diagnostics.IscsiProbe;
import org.standalonecinder.provisioner.mapping.IscsiMapper;

/**
 * A host whose kernel initiator is libiscsi: it keeps open-iscsi's node records and sessions as
 * {@code iscsiadm} would (the same exit codes: 15 for a session that exists, 21 for nothing to log
 * out or delete), and a device "appears" when libiscsi, logging in with the node record's initiator
 * name and CHAP settings, can read the LUN the udev path names. So the commands the attacher runs
 * are what carry the credentials: a wrong or missing one means no device.
 */
class LibiscsiHost implements Host {

  private static final Pattern NODE =
      Pattern.compile("iscsiadm -m node -T (\\S+) -p (\\S+) --interface default (.*)");
  private static final Pattern DEVICE =
      Pattern.compile("/dev/disk/by-path/ip-(.+)-iscsi-(.+)-lun-(\\d+)");

  private final String initiator;
  private final List<String> commands = new ArrayList<>();
  private final Map<String, Map<String, String>> records = new HashMap<>();
  private final Set<String> sessions = new HashSet<>();
  private final Set<String> readOnly = new HashSet<>();

  /**
   * @param initiator this host's initiator name, as its /etc/iscsi/initiatorname.iscsi says
   */
  LibiscsiHost(String initiator) {
    this.initiator = initiator;
  }

  /** Every command run, as {@link Command#shown()} prints it. */
  synchronized List<String> commands() {
    return List.copyOf(commands);
  }

  synchronized Set<String> sessions() {
    return Set.copyOf(sessions);
  }

  synchronized Set<String> records() {
    return Set.copyOf(records.keySet());
  }

  synchronized Set<String> readOnlyDevices() {
    return Set.copyOf(readOnly);
  }

  /** The LUN behind a udev path, reached as this host's session to it logs in. */
  synchronized IscsiProbe.Target target(String device) {
    Matcher m = DEVICE.matcher(device);
    if (!m.matches()) {
      throw new IllegalArgumentException("not an iSCSI udev path: " + device);
    }
    Map<String, String> r = records.getOrDefault(m.group(2) + " " + m.group(1), Map.of());
    boolean chap = "CHAP".equals(r.get("node.session.auth.authmethod"));
    return new IscsiProbe.Target(
        m.group(1),
        m.group(2),
        Integer.parseInt(m.group(3)),
        initiator,
        chap ? r.get(IscsiMapper.SESSION_USER) : null,
        chap ? r.get(IscsiMapper.SESSION_PASSWORD) : null);
  }

  @Override
  public boolean privileged() {
    return true;
  }

  @Override
  public synchronized Result run(Command command) {
    commands.add(command.shown());
    List<String> argv = command.argv();
    if (argv.get(0).equals("blockdev") && argv.size() == 3 && argv.get(1).equals("--setro")) {
      readOnly.add(argv.get(2));
      return new Result(0, "");
    }
    Matcher m = NODE.matcher(String.join(" ", argv));
    if (!m.matches()) {
      return new Result(127, "not a command this host knows: " + command.shown());
    }
    String key = m.group(1) + " " + m.group(2);
    String rest = m.group(3);
    if (rest.equals("--op new")) {
      records.putIfAbsent(key, new HashMap<>());
      return new Result(0, "");
    }
    Map<String, String> record = records.get(key);
    if (record == null) {
      return new Result(21, "iscsiadm: No records found");
    }
    Matcher u = Pattern.compile("--op update -n (\\S+) -v (.+)").matcher(rest);
    if (u.matches()) {
      record.put(u.group(1), u.group(2));
      return new Result(0, "");
    }
    return switch (rest) {
      case "--login" ->
          sessions.add(key) ? new Result(0, "") : new Result(15, "iscsiadm: session exists");
      case "--logout" ->
          sessions.remove(key)
              ? new Result(0, "")
              : new Result(21, "iscsiadm: No matching sessions found");
      case "--op delete" -> {
        records.remove(key);
        yield new Result(0, "");
      }
      default -> new Result(127, "not an iscsiadm command this host knows: " + rest);
    };
  }

  @Override
  public java.util.List<String> list(String folder) {
    // libiscsi makes no device links: no other LUN is ever seen in use.
    return java.util.List.of();
  }

  @Override
  public boolean exists(String device) {
    Matcher m = DEVICE.matcher(device);
    synchronized (this) {
      if (!m.matches() || !sessions.contains(m.group(2) + " " + m.group(1))) {
        return false;
      }
    }
    try {
      return target(device).io("read 0 512").ok();
    } catch (IOException e) {
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  @Override
  public Optional<String> usedBy(String device) {
    return Optional.empty();
  }
}
