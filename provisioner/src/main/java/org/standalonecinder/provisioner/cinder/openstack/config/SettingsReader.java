package org.standalonecinder.provisioner.cinder.openstack.config;

import java.net.URI;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;

/** Typed access to the raw settings, with errors that name key and source. */
final class SettingsReader {
  private final Map<ConfigKey, Setting> s;

  SettingsReader(Map<ConfigKey, Setting> s) {
    this.s = s;
  }

  String get(ConfigKey k) {
    Setting v = s.get(k);
    return v == null ? null : v.value();
  }

  ConfigException error(ConfigKey k, String what) {
    Setting v = s.get(k);
    String where = v == null ? k.display() : k.display() + " (from " + v.source() + ")";
    return new ConfigException(where + " " + what);
  }

  ConfigException missing(ConfigKey k, String why) {
    return new ConfigException(k.display() + " is missing: " + why);
  }

  void require(ConfigKey k, String why) {
    if (get(k) == null) {
      throw missing(k, why);
    }
  }

  void requireUser() {
    if (get(ConfigKey.USERNAME) == null && get(ConfigKey.USER_ID) == null) {
      throw new ConfigException("[Global] username and user-id are both missing: set one of them");
    }
  }

  void forbid(String why, ConfigKey... keys) {
    for (ConfigKey k : keys) {
      if (s.containsKey(k)) {
        throw error(k, "must not be set: " + why);
      }
    }
  }

  CloudConfig.AuthMethod authMethod(URI authUrl, URI cinderEndpoint) {
    if (authUrl != null && cinderEndpoint != null) {
      throw new ConfigException(
          "contradiction: "
              + ConfigKey.AUTH_URL.display()
              + " (from "
              + s.get(ConfigKey.AUTH_URL).source()
              + ") selects Keystone and "
              + ConfigKey.CINDER_ENDPOINT.display()
              + " (from "
              + s.get(ConfigKey.CINDER_ENDPOINT).source()
              + ") selects noauth; set only one");
    }
    if (cinderEndpoint != null) {
      return CloudConfig.AuthMethod.NOAUTH;
    }
    if (authUrl == null) {
      throw new ConfigException(
          "no cloud configured: set [Global] auth-url (Keystone) or [Global] cinder-endpoint"
              + " (Cinder with noauth), in cloud.conf, as OS_AUTH_URL / OS_CINDER_ENDPOINT,"
              + " or through OS_CLOUD and clouds.yaml");
    }
    String path = authUrl.getPath() == null ? "" : authUrl.getPath();
    boolean v2 = path.matches(".*/v2(\\.0)?/?");
    boolean appCred =
        get(ConfigKey.APPLICATION_CREDENTIAL_ID) != null
            || get(ConfigKey.APPLICATION_CREDENTIAL_NAME) != null;
    if (v2) {
      return CloudConfig.AuthMethod.V2_PASSWORD;
    }
    if (appCred) {
      return CloudConfig.AuthMethod.V3_APPLICATION_CREDENTIAL;
    }
    if (get(ConfigKey.TRUST_ID) != null) {
      return CloudConfig.AuthMethod.V3_TRUST;
    }
    return CloudConfig.AuthMethod.V3_PASSWORD;
  }

  URI uri(ConfigKey k) {
    String v = get(k);
    if (v == null) {
      return null;
    }
    URI u;
    try {
      u = URI.create(v);
    } catch (IllegalArgumentException e) {
      throw error(k, "is not a URL: " + e.getMessage());
    }
    if (u.getScheme() == null
        || !(u.getScheme().equals("http") || u.getScheme().equals("https"))
        || u.getHost() == null) {
      throw error(k, "must be an http:// or https:// URL with a host, was '" + v + "'");
    }
    return u;
  }

  boolean bool(ConfigKey k, boolean dflt) {
    String v = get(k);
    if (v == null) {
      return dflt;
    }
    return switch (v.toLowerCase(Locale.ROOT)) {
      case "true", "yes", "1", "on" -> true;
      case "false", "no", "0", "off" -> false;
      default -> throw error(k, "is '" + v + "'; expected true or false");
    };
  }

  Duration seconds(ConfigKey k, Duration dflt) {
    String v = get(k);
    if (v == null) {
      return dflt;
    }
    String n = v.endsWith("s") ? v.substring(0, v.length() - 1) : v;
    try {
      long secs = Long.parseLong(n.trim());
      if (secs < 1 || secs > 3600) {
        throw error(k, "must be between 1 and 3600 seconds, was " + v);
      }
      return Duration.ofSeconds(secs);
    } catch (NumberFormatException e) {
      throw error(k, "is '" + v + "'; expected a number of seconds such as 30");
    }
  }

  int positiveInt(ConfigKey k, int dflt) {
    String v = get(k);
    if (v == null) {
      return dflt;
    }
    try {
      int i = Integer.parseInt(v.trim());
      if (i < 1 || i > 256) {
        throw error(k, "must be between 1 and 256, was " + v);
      }
      return i;
    } catch (NumberFormatException e) {
      throw error(k, "is '" + v + "'; expected a whole number");
    }
  }
}
