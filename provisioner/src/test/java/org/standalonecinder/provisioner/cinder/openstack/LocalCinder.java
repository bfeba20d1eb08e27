package org.standalonecinder.provisioner.cinder.openstack;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import org.standalonecinder.provisioner.cinder.openstack.config.CloudConfig;
import org.standalonecinder.provisioner.cinder.openstack.config.CloudConfigLoader;

/**
 * The local Cinder that dev/cinder-local/start.sh runs, as its env file describes it. Integration
 * tests fail (not skip) without it, so CI cannot pass by testing nothing.
 */
public final class LocalCinder {

  /**
   * The ways the client reaches Cinder: the noauth API, and the keystone API with each Keystone v3
   * method. Both APIs share one Cinder behind them.
   */
  public enum Mode {
    NOAUTH,
    KEYSTONE,
    KEYSTONE_APPLICATION_CREDENTIAL,
    KEYSTONE_TRUST
  }

  private static Map<String, String> env;

  private LocalCinder() {}

  /** The env file's variables. */
  public static synchronized Map<String, String> env() {
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
      if (!m.containsKey("CINDER_LOCAL_TRUST_ID")) {
        fail(
            "the local Cinder runs without keystone (or predates its trust and application"
                + " credential); restart it: dev/cinder-local/start.sh --keystone --fresh");
      }
      env = m;
    }
    return env;
  }

  /** The environment a user of this mode would set. */
  public static Map<String, String> osEnv(Mode mode) {
    Map<String, String> e = env();
    Map<String, String> os = new HashMap<>();
    if (mode == Mode.NOAUTH) {
      os.put("OS_CINDER_ENDPOINT", e.get("CINDER_ENDPOINT"));
      os.put("OS_PROJECT_ID", e.get("CINDER_PROJECT_ID"));
      os.put("OS_USERNAME", "it");
    } else if (mode == Mode.KEYSTONE_APPLICATION_CREDENTIAL) {
      os.put("OS_AUTH_URL", e.get("OS_AUTH_URL"));
      os.put("OS_APPLICATION_CREDENTIAL_ID", e.get("CINDER_LOCAL_APPCRED_ID"));
      os.put("OS_APPLICATION_CREDENTIAL_SECRET", e.get("CINDER_LOCAL_APPCRED_SECRET"));
    } else if (mode == Mode.KEYSTONE_TRUST) {
      os.put("OS_AUTH_URL", e.get("OS_AUTH_URL"));
      os.put("OS_USERNAME", e.get("CINDER_LOCAL_TRUSTEE_USER"));
      os.put("OS_PASSWORD", e.get("CINDER_LOCAL_TRUSTEE_PASSWORD"));
      os.put("OS_USER_DOMAIN_NAME", "Default");
      os.put("OS_TRUST_ID", e.get("CINDER_LOCAL_TRUST_ID"));
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

  /** The configuration a user of this mode would have. */
  public static CloudConfig config(Mode mode) {
    return CloudConfigLoader.load(null, osEnv(mode));
  }

  static String iscsiPortal() {
    return env().getOrDefault("CINDER_ISCSI_PORTAL", "127.0.0.1:3260");
  }
}
