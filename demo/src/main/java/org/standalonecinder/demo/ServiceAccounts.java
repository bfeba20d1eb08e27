package org.standalonecinder.demo;

import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.Base64;

/** What a pod of an account would mount: its token, as a kubeconfig for a host process. */
final class ServiceAccounts {

  private ServiceAccounts() {}

  /**
   * A kubeconfig holding the ServiceAccount's token from the API server (Kubernetes 1.20's token
   * controller puts one in a Secret of the account) and the cluster's CA, as a pod would mount.
   */
  static Path kubeconfig(KubernetesClient admin, String server, Path work, String account)
      throws IOException {
    Secret[] found = new Secret[1];
    Waits.await(
        "the token of " + account,
        () -> {
          ServiceAccount sa =
              admin.serviceAccounts().inNamespace(LocalInstall.NS).withName(account).get();
          if (sa == null || sa.getSecrets() == null || sa.getSecrets().isEmpty()) {
            return false;
          }
          found[0] =
              admin
                  .secrets()
                  .inNamespace(LocalInstall.NS)
                  .withName(sa.getSecrets().get(0).getName())
                  .get();
          return found[0] != null
              && found[0].getData() != null
              && found[0].getData().get("token") != null;
        },
        Duration.ofSeconds(30));
    String token =
        new String(
            Base64.getDecoder().decode(found[0].getData().get("token")), StandardCharsets.UTF_8);
    Path f = work.resolve(account + ".kubeconfig");
    Files.deleteIfExists(f);
    Files.createFile(
        f, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
    Files.writeString(
        f,
        "apiVersion: v1\nkind: Config\nclusters:\n- name: kube-local\n  cluster:\n    server: "
            + server
            + "\n    certificate-authority-data: "
            + found[0].getData().get("ca.crt")
            + "\nusers:\n- name: "
            + account
            + "\n  user:\n    token: "
            + token
            + "\ncontexts:\n- name: "
            + account
            + "\n  context: {cluster: kube-local, user: "
            + account
            + ", namespace: "
            + LocalInstall.NS
            + "}\ncurrent-context: "
            + account
            + "\n");
    return f;
  }
}
