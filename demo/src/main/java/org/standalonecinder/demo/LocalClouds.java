package org.standalonecinder.demo;

import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

/**
 * What the provisioner is given of the local Cinder (dev/cinder-local's cinder-local.env): its
 * cloud.conf and, where Cinder runs Ceph, the cephx Secret.
 */
final class LocalClouds {

  private LocalClouds() {}

  /** A noauth cloud.conf for {@code project}, written once into {@code work}. */
  static Path noauth(Path work, Map<String, String> cinderEnv, String project) {
    Path f = work.resolve("cloud-" + project + ".conf");
    if (!Files.exists(f)) {
      try {
        Files.writeString(
            f,
            "[Global]\ncinder-endpoint = "
                + cinderEnv.get("CINDER_ENDPOINT")
                + "\ntenant-id = "
                + project
                + "\nusername = standalone-cinder\n");
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    return f;
  }

  /** The text of a cloud.conf that authenticates to the local Keystone as its provisioner user. */
  static String keystone(Map<String, String> cinderEnv) {
    return String.join(
        "\n",
        "[Global]",
        "auth-url = " + cinderEnv.get("OS_AUTH_URL"),
        "username = " + cinderEnv.get("OS_USERNAME"),
        "password = " + cinderEnv.get("OS_PASSWORD"),
        "tenant-name = " + cinderEnv.get("OS_PROJECT_NAME"),
        "user-domain-name = " + cinderEnv.get("OS_USER_DOMAIN_NAME"),
        "project-domain-name = " + cinderEnv.get("OS_PROJECT_DOMAIN_NAME"),
        "region = " + cinderEnv.get("OS_REGION_NAME"),
        "");
  }

  /**
   * The admin's one step for Ceph: the key of the user Cinder names, in a Secret the provisioner is
   * told about. Only when the local Cinder runs Ceph.
   */
  static void cephxSecret(KubernetesClient admin, Map<String, String> cinderEnv)
      throws IOException {
    String keyring = cinderEnv.get("CEPH_CINDER_KEYRING");
    if (keyring == null) {
      return;
    }
    String key = null;
    for (String line : Files.readAllLines(Path.of(keyring))) {
      if (line.trim().startsWith("key")) {
        key = line.substring(line.indexOf('=') + 1).trim();
      }
    }
    if (key == null) {
      throw new IllegalStateException("no key in " + keyring);
    }
    admin
        .secrets()
        .inNamespace(LocalInstall.NS)
        .resource(
            new io.fabric8.kubernetes.api.model.SecretBuilder()
                .withNewMetadata()
                .withName(LocalInstall.CEPHX_SECRET)
                .withNamespace(LocalInstall.NS)
                .addToLabels("standalone-cinder.io/cephx", "true")
                .endMetadata()
                .withStringData(Map.of("key", key))
                .build())
        .createOr(io.fabric8.kubernetes.client.dsl.NonDeletingOperation::update);
  }
}
