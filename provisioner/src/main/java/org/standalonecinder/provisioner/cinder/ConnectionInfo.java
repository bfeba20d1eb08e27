package org.standalonecinder.provisioner.cinder;

import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * What Cinder returns when it exports a volume: the protocol and its parameters (portal, IQN, LUN,
 * CHAP credentials for iSCSI; WWNs for FC; monitors and image for RBD).
 *
 * <p>{@link #toString()} masks every credential: the data holds CHAP passwords.
 *
 * @param driverVolumeType {@code iscsi}, {@code fibre_channel}, {@code rbd}...
 * @param data the protocol's parameters as Cinder sent them
 */
public record ConnectionInfo(String driverVolumeType, Map<String, Object> data) {

  private static final Set<String> SECRET_KEYS =
      Set.of("auth_password", "discovery_auth_password", "secret", "keyring", "auth_key");

  public ConnectionInfo {
    data = data == null ? Map.of() : java.util.Collections.unmodifiableMap(new TreeMap<>(data));
  }

  /** A string parameter, or null when absent. */
  public String string(String key) {
    Object v = data.get(key);
    return v == null ? null : v.toString();
  }

  @Override
  public String toString() {
    Map<String, Object> shown = new TreeMap<>();
    data.forEach((k, v) -> shown.put(k, SECRET_KEYS.contains(k) && v != null ? "***" : v));
    return "ConnectionInfo[driverVolumeType=" + driverVolumeType + ", data=" + shown + "]";
  }
}
