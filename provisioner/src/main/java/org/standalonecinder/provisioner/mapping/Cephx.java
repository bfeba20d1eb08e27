package org.standalonecinder.provisioner.mapping;

import java.util.Objects;

/**
 * The cephx credentials nodes use to map RBD images, as read from the Secret the admin named (the
 * key itself never leaves this object except into the Secret the PV refers to).
 *
 * @param secretNamespace the namespace of the admin's Secret (the provisioner's)
 * @param secretName the admin's Secret, or null when none is configured
 * @param userId the Ceph user the admin's Secret names ({@code userID}), or null to use the one
 *     Cinder names
 * @param key the cephx key, or null when it could not be read
 * @param problem why there is no key (missing, unreadable, empty Secret), or null
 */
public record Cephx(
    String secretNamespace, String secretName, String userId, String key, String problem) {

  public Cephx {
    if (key == null && problem == null && secretName != null) {
      throw new IllegalArgumentException("a cephx Secret without a key needs the reason");
    }
  }

  /** No cephx Secret is configured. */
  public static Cephx none(String secretNamespace) {
    return new Cephx(secretNamespace, null, null, null, null);
  }

  /** The key of {@code userId} (null: Cinder's user) from the admin's Secret. */
  public static Cephx of(String namespace, String name, String userId, String key) {
    return new Cephx(namespace, name, userId, Objects.requireNonNull(key, "key"), null);
  }

  /** The admin's Secret is named but cannot be used, for the reason given. */
  public static Cephx unusable(String namespace, String name, String problem) {
    return new Cephx(namespace, name, null, null, Objects.requireNonNull(problem, "problem"));
  }

  /** Whether a key was read. */
  public boolean usable() {
    return key != null;
  }

  @Override
  public String toString() {
    return "Cephx[secret="
        + secretNamespace
        + "/"
        + secretName
        + ", userId="
        + userId
        + ", key="
        + (key == null ? "none" : "***")
        + ", problem="
        + problem
        + "]";
  }
}
