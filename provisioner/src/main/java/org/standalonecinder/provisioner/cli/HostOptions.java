package org.standalonecinder.provisioner.cli;

import java.nio.file.Path;
import org.standalonecinder.provisioner.cinder.Connector;
import org.standalonecinder.provisioner.host.HostConnector;
import picocli.CommandLine.Option;

/** How the {@code connector}, {@code attach} and {@code detach} commands describe this host. */
final class HostOptions {

  @Option(
      names = {"--multipath"},
      description = "ask Cinder for every portal and log in to each (multipathd makes the device)")
  boolean multipath;

  @Option(
      names = {"--host-name"},
      description = "the host name to give Cinder (default: this machine's)")
  String hostName;

  @Option(
      names = {"--ip"},
      description = "the address to give Cinder (default: the first IPv4 address that is up)")
  String ip;

  /** Where /etc and /sys are; tests lay out a host of their own. */
  @Option(
      names = {"--host-root"},
      hidden = true,
      defaultValue = "/")
  Path root;

  Connector connector() {
    return HostConnector.discover(
        root,
        hostName != null ? hostName : HostConnector.hostName(),
        ip != null ? ip : HostConnector.ip(),
        multipath);
  }
}
