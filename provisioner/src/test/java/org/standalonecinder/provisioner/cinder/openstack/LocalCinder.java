package org.standalonecinder.provisioner.cinder.openstack;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import org.standalonecinder.provisioner.config.CloudConfig;
import org.standalonecinder.provisioner.config.CloudConfigLoader;

/**
 * The local Cinder that dev/cinder-local/start.sh runs, as its env file describes it. Integration
 * tests fail (not skip) without it, so CI cannot pass by testing nothing.
 */
final class LocalCinder {

  /** The two ways the client reaches Cinder; both APIs share one Cinder behind them. */
  enum Mode {
    NOAUTH,
    KEYSTONE
  }

  private static Map<String, String> env;

  private LocalCinder() {}

  static synchronized Map<String, String> env() {
    if (env == null) {
      String file = System.getProperty("cinder.local.env", "/tmp/cinder-local/cinder-local.env");
      Map<String, String> m = new HashMap<>();
      try {
        for (String line : Files.readAllLines(Path.of(file))) {
          int eq = line.indexOf('=');
          if (!line.startsWith("#") && eq > 0) {
            m.put(line.substring(0, eq), line.substring(eq + 1));
          }
        }
      } catch (IOException e) {
        fail(
            "no local Cinder: "
                + file
                + " is missing. Run dev/test.sh, or dev/cinder-local/start.sh --keystone first");
      }
      if (!m.containsKey("OS_AUTH_URL")) {
        fail("the local Cinder runs without keystone; restart it with start.sh --keystone");
      }
      env = m;
    }
    return env;
  }

  /** The environment a user of this mode would set. */
  static Map<String, String> osEnv(Mode mode) {
    Map<String, String> e = env();
    Map<String, String> os = new HashMap<>();
    if (mode == Mode.NOAUTH) {
      os.put("OS_CINDER_ENDPOINT", e.get("CINDER_ENDPOINT"));
      os.put("OS_PROJECT_ID", e.get("CINDER_PROJECT_ID"));
      os.put("OS_USERNAME", "it");
    } else {
      for (String k :
          new String[] {
            "OS_AUTH_URL",
            "OS_USERNAME",
            "OS_PASSWORD",
            "OS_PROJECT_NAME",
            "OS_USER_DOMAIN_NAME",
            "OS_PROJECT_DOMAIN_NAME",
            "OS_REGION_NAME"
          }) {
        os.put(k, e.get(k));
      }
    }
    return os;
  }

  static CloudConfig config(Mode mode) {
    return CloudConfigLoader.load(null, osEnv(mode));
  }

  static String iscsiPortal() {
    return env().getOrDefault("CINDER_ISCSI_PORTAL", "127.0.0.1:3260");
  }
}
