package org.standalonecinder.e2e;

import com.marcnuri.helm.Helm;
import com.marcnuri.helm.InstallCommand;
import com.marcnuri.helm.Release;
import com.marcnuri.helm.UpgradeCommand;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code helm} for InstallDocsE2EIT, where no Helm binary is installed: the install, upgrade and
 * uninstall commands docs/install.md shows, run with Helm's own library (helm-java) against the
 * cluster of {@code $KUBECONFIG}. Anything else it does not know is an error, so the page cannot
 * show a flag the test silently ignores.
 */
public final class HelmShim {

  private HelmShim() {}

  public static void main(String[] args) {
    try {
      System.out.println(run(args));
    } catch (RuntimeException e) {
      System.err.println("Error: " + e.getMessage());
      System.exit(1);
    }
  }

  static String run(String[] args) {
    List<String> positional = new ArrayList<>();
    String namespace = "default";
    List<Path> values = new ArrayList<>();
    List<String[]> sets = new ArrayList<>();
    boolean createNamespace = false;
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "-n", "--namespace" -> namespace = args[++i];
        case "-f", "--values" -> values.add(Path.of(args[++i]));
        case "--set" -> sets.add(args[++i].split("=", 2));
        case "--create-namespace" -> createNamespace = true;
        default -> {
          if (args[i].startsWith("-")) {
            throw new IllegalArgumentException("the test's helm does not know " + args[i]);
          }
          positional.add(args[i]);
        }
      }
    }
    Path kubeconfig = Path.of(System.getenv("KUBECONFIG"));
    String verb = positional.get(0);
    switch (verb) {
      case "install" -> {
        InstallCommand c =
            Helm.install(positional.get(2))
                .withName(positional.get(1))
                .withNamespace(namespace)
                .withKubeConfig(kubeconfig);
        if (createNamespace) {
          c = c.createNamespace();
        }
        for (Path v : values) {
          c = c.withValuesFile(v);
        }
        for (String[] s : sets) {
          c = c.set(s[0], s[1]);
        }
        return describe(c.call());
      }
      case "upgrade" -> {
        UpgradeCommand c =
            Helm.upgrade(positional.get(2))
                .withName(positional.get(1))
                .withNamespace(namespace)
                .withKubeConfig(kubeconfig);
        for (Path v : values) {
          c = c.withValuesFile(v);
        }
        for (String[] s : sets) {
          c = c.set(s[0], s[1]);
        }
        return describe(c.call());
      }
      case "uninstall" -> {
        return Helm.uninstall(positional.get(1))
            .withNamespace(namespace)
            .withKubeConfig(kubeconfig)
            .call();
      }
      default -> throw new IllegalArgumentException("the test's helm does not know " + verb);
    }
  }

  private static String describe(Release r) {
    return "NAME: "
        + r.getName()
        + "\nNAMESPACE: "
        + r.getNamespace()
        + "\nSTATUS: "
        + r.getStatus()
        + "\nREVISION: "
        + r.getRevision();
  }
}
