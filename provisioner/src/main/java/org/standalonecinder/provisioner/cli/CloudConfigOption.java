package org.standalonecinder.provisioner.cli;

import java.nio.file.Path;
import java.util.Map;
import org.standalonecinder.provisioner.cinder.openstack.config.CloudConfig;
import org.standalonecinder.provisioner.cinder.openstack.config.CloudConfigLoader;
import org.standalonecinder.provisioner.cinder.openstack.config.ConfigException;
import picocli.CommandLine.Option;

/**
 * {@code --cloud-config} and the environment, as the {@code cinder} commands read them: the file
 * from the flag, else from {@code CLOUD_CONFIG} as {@code run} reads it, so that a command run
 * inside the provisioner's container checks the cloud the provisioner uses without being told.
 */
final class CloudConfigOption {

  @Option(
      names = {"--cloud-config"},
      description =
          "cloud.conf INI file ([Global], [BlockStorage]); default: env CLOUD_CONFIG (as run"
              + " reads it); env OS_* and OS_CLOUD also count")
  Path cloudConfig;

  /** The environment the OS_* variables come from; tests replace it. */
  Map<String, String> env = System.getenv();

  CloudConfig load() throws ConfigException {
    return CloudConfigLoader.load(file(), env);
  }

  /**
   * The cloud.conf these commands read: the flag's, else the variable of run's own setting row
   * ({@link SharedSettings#CLOUD_CONFIG}, read with its parser; blank: none).
   */
  Path file() {
    if (cloudConfig != null) {
      return cloudConfig;
    }
    String fromEnv = env.get(SharedSettings.CLOUD_CONFIG.env());
    return fromEnv == null || fromEnv.isBlank() ? null : SharedSettings.CLOUD_CONFIG.parse(fromEnv);
  }
}
