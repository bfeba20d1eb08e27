package org.standalonecinder.provisioner.cinder;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A Cinder API microversion such as {@code 3.27}.
 *
 * @param major the major version (3)
 * @param minor the minor version
 */
public record Microversion(int major, int minor) implements Comparable<Microversion> {

  private static final Pattern FORM = Pattern.compile("v?(\\d+)\\.(\\d+)");

  /** The attachments API. */
  public static final Microversion ATTACHMENTS = new Microversion(3, 27);

  /** {@code os-extend} of an attached ({@code in-use}) volume. */
  public static final Microversion EXTEND_IN_USE = new Microversion(3, 42);

  /** {@code os-complete} on an attachment. */
  /** Backups carry metadata (written at creation, listed with them). */
  public static final Microversion BACKUP_METADATA = new Microversion(3, 43);

  public static final Microversion ATTACHMENT_COMPLETE = new Microversion(3, 44);

  /** A volume is made from a backup by {@code POST /volumes} with {@code backup_id}. */
  public static final Microversion VOLUME_FROM_BACKUP = new Microversion(3, 47);

  /** An attachment's {@code mode} ({@code ro}) at its creation. */
  public static final Microversion ATTACH_MODE = new Microversion(3, 54);

  /**
   * Snapshots of {@code in-use} volumes without {@code force} (which is refused from here on, and
   * needed below it).
   */
  public static final Microversion SNAPSHOT_IN_USE = new Microversion(3, 66);

  /** The newest version this client was tested against (Cinder 2023.1). */
  public static final Microversion NEWEST_KNOWN = new Microversion(3, 70);

  /** The version Cinder uses when no header is sent. */
  public static final Microversion BASE = new Microversion(3, 0);

  /** Parses {@code 3.27} or {@code v3.27}. */
  public static Microversion parse(String s) {
    Matcher m = FORM.matcher(s == null ? "" : s.trim());
    if (!m.matches()) {
      throw new IllegalArgumentException("not a microversion: '" + s + "' (expected e.g. 3.27)");
    }
    return new Microversion(Integer.parseInt(m.group(1)), Integer.parseInt(m.group(2)));
  }

  public boolean atLeast(Microversion other) {
    return compareTo(other) >= 0;
  }

  @Override
  public int compareTo(Microversion o) {
    return major != o.major ? Integer.compare(major, o.major) : Integer.compare(minor, o.minor);
  }

  @Override
  public String toString() {
    return major + "." + minor;
  }
}
