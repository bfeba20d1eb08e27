package org.standalonecinder.provisioner.cli;

import java.nio.file.Path;
import java.util.Map;
import org.standalonecinder.provisioner.cinder.openstack.config.CloudConfig;
import org.standalonecinder.provisioner.cinder.openstack.config.CloudConfigLoader;
import org.standalonecinder.provisioner.cinder.openstack.config.ConfigException;
import picocli.CommandLine.Option;

/** {@code --cloud-config} and the environment, as the {@code cinder} commands read them. */
final class CloudConfigOption {

  @Option(
      names = {"--cloud-config"},
      description =
          "cloud.conf INI file ([Global], [BlockStorage]); env OS_* and OS_CLOUD also count")
  Path cloudConfig;

  /** The environment the OS_* variables come from; tests replace it. */
  Map<String, String> env = System.getenv();

  CloudConfig load() throws ConfigException {
    return CloudConfigLoader.load(cloudConfig, env);
  }
}
