package org.standalonecinder.provisioner.cli;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.standalonecinder.api.settings.Setting;
import org.standalonecinder.api.settings.Values;
import org.standalonecinder.provisioner.cinder.openstack.config.CloudConfig;
import org.standalonecinder.provisioner.cinder.openstack.config.CloudConfigLoader;
import org.standalonecinder.provisioner.cinder.openstack.config.ConfigException;
import org.standalonecinder.provisioner.provision.Placement;
import org.standalonecinder.provisioner.provision.ProvisionerSettings;

/** The settings {@code run} and {@code resolver} share: one declaration, so they cannot drift. */
final class SharedSettings {

  private SharedSettings() {}

  static final Setting<Path> CLOUD_CONFIG =
      Setting.path("--cloud-config")
          .env("CLOUD_CONFIG")
          .shownDefault("OS_* or OS_CLOUD")
          .doc(
              "cloud.conf ([Global], [BlockStorage]); the OS_* variables and OS_CLOUD with"
                  + " clouds.yaml also count (docs/configuration.md)");

  static final Setting<String> PROVISIONER_NAME =
      Setting.text("--provisioner-name")
          .env("PROVISIONER_NAME")
          .byDefault(ProvisionerSettings.DEFAULT_NAME)
          .doc("the name StorageClasses use; the resolver's sources must have been made by it");

  static final Setting<String> ZONE_LABEL =
      Setting.of("--zone-label", Placement.Topology::zoneLabel)
          .env("ZONE_LABEL")
          .byDefault(Placement.DEFAULT_ZONE_LABEL)
          .doc(
              "the node label with a node's zone: a WaitForFirstConsumer claim's volume is made in"
                  + " its node's zone, classes' allowedTopologies name it, and a clone's class must"
                  + " allow its source's zone");

  static final Setting<Path> KUBECONFIG =
      Setting.path("--kubeconfig")
          .env("KUBECONFIG")
          .shownDefault("in-cluster")
          .doc("kubeconfig; in a pod the service account is used");

  static final List<Setting<?>> ALL =
      List.of(CLOUD_CONFIG, PROVISIONER_NAME, ZONE_LABEL, KUBECONFIG);

  /** The cloud config the file and the OS_* environment make, or null with the problem noted. */
  static CloudConfig cloud(Values v, Map<String, String> env) {
    try {
      return CloudConfigLoader.load(v.get(CLOUD_CONFIG), env);
    } catch (ConfigException e) {
      v.problem(e.getMessage());
      return null;
    }
  }

  /** The topology under the zone label, as the cloud config says about volumes' zones. */
  static Placement.Topology topology(Values v, CloudConfig cloud) {
    String label = v.get(ZONE_LABEL);
    return cloud == null || label == null
        ? null
        : new Placement.Topology(label, cloud.ignoreVolumeAz());
  }

  /** A loopback address: the clone check is for the webhook beside it in the Pod, no one else. */
  static String loopback(String host) {
    try {
      if (!InetAddress.getByName(host.trim()).isLoopbackAddress()) {
        throw new IllegalArgumentException("must be a loopback address, was " + host.trim());
      }
    } catch (UnknownHostException e) {
      throw new IllegalArgumentException("unknown address " + host.trim());
    }
    return host.trim();
  }
}
