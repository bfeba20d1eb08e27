package org.standalonecinder.provisioner;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The rules of the shape the project keeps, read off the sources of every module (this module's
 * tests run from {@code provisioner/}): who may import what. A row names the files (a folder of
 * main sources), what they must not import, and an exception (a folder that may).
 */
class LayersTest {

  private static final Path ROOT = Path.of("..");

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "only the Cinder adapter imports openstack4j | provisioner | org.openstack4j | provisioner/src/main/java/org/standalonecinder/provisioner/cinder/openstack",
        "the mapping layer reads top to bottom: no provisioning, controller or CLI | provisioner/src/main/java/org/standalonecinder/provisioner/mapping | org.standalonecinder.provisioner.provision | -",
        "the mapping layer knows no controller | provisioner/src/main/java/org/standalonecinder/provisioner/mapping | org.standalonecinder.provisioner.controller | -",
        "the claim loop knows no Cinder | provisioner/src/main/java/org/standalonecinder/provisioner/controller | org.standalonecinder.provisioner.cinder | -",
        "the claim loop knows no mapping | provisioner/src/main/java/org/standalonecinder/provisioner/controller | org.standalonecinder.provisioner.mapping | -",
        "the claim loop knows no volume provisioning | provisioner/src/main/java/org/standalonecinder/provisioner/controller | org.standalonecinder.provisioner.provision | -",
        "the claim loop knows no clones | provisioner/src/main/java/org/standalonecinder/provisioner/controller | org.standalonecinder.provisioner.clone | -",
        "the claim loop knows no plug-in | provisioner/src/main/java/org/standalonecinder/provisioner/controller | org.standalonecinder.provisioner.plugin | -",
        "the claim loop knows no wiring | provisioner/src/main/java/org/standalonecinder/provisioner/controller | org.standalonecinder.provisioner.app | -",
        "the plug-in knows no wiring | provisioner/src/main/java/org/standalonecinder/provisioner/plugin | org.standalonecinder.provisioner.app | -",
        "clones know no plug-in | provisioner/src/main/java/org/standalonecinder/provisioner/clone | org.standalonecinder.provisioner.plugin | -",
        "volume provisioning knows no clone resolution | provisioner/src/main/java/org/standalonecinder/provisioner/provision | org.standalonecinder.provisioner.clone | -",
        "volume provisioning knows no plug-in | provisioner/src/main/java/org/standalonecinder/provisioner/provision | org.standalonecinder.provisioner.plugin | -",
        "provisioning knows no CLI | provisioner/src/main/java/org/standalonecinder/provisioner/provision | org.standalonecinder.provisioner.cli | -",
        "the claim loop reads no cloud config | provisioner/src/main/java/org/standalonecinder/provisioner/controller | org.standalonecinder.provisioner.cinder.openstack.config | -",
        "volume provisioning reads no cloud config | provisioner/src/main/java/org/standalonecinder/provisioner/provision | org.standalonecinder.provisioner.cinder.openstack.config | -",
        "the plug-in reads no cloud config | provisioner/src/main/java/org/standalonecinder/provisioner/plugin | org.standalonecinder.provisioner.cinder.openstack.config | -",
        "the Cinder interface reads no cloud config (only its adapter does) | provisioner/src/main/java/org/standalonecinder/provisioner/cinder | org.standalonecinder.provisioner.cinder.openstack.config | provisioner/src/main/java/org/standalonecinder/provisioner/cinder/openstack",
        "the snapshot loop knows no plug-in | provisioner/src/main/java/org/standalonecinder/provisioner/snapshot | org.standalonecinder.provisioner.plugin | -",
        "the snapshot loop knows no wiring | provisioner/src/main/java/org/standalonecinder/provisioner/snapshot | org.standalonecinder.provisioner.app | -",
        "the snapshot loop knows no clone resolution | provisioner/src/main/java/org/standalonecinder/provisioner/snapshot | org.standalonecinder.provisioner.clone | -",
        "the snapshot loop reads no cloud config | provisioner/src/main/java/org/standalonecinder/provisioner/snapshot | org.standalonecinder.provisioner.cinder.openstack | -",
        "the claim loop knows no snapshots | provisioner/src/main/java/org/standalonecinder/provisioner/controller | org.standalonecinder.provisioner.snapshot | -",
        "volume provisioning knows no snapshots | provisioner/src/main/java/org/standalonecinder/provisioner/provision | org.standalonecinder.provisioner.snapshot | -",
        "the node component knows no plug-in | provisioner/src/main/java/org/standalonecinder/provisioner/node | org.standalonecinder.provisioner.plugin | -",
        "expansion knows no plug-in | provisioner/src/main/java/org/standalonecinder/provisioner/expansion | org.standalonecinder.provisioner.plugin | -",
        "expansion knows no wiring | provisioner/src/main/java/org/standalonecinder/provisioner/expansion | org.standalonecinder.provisioner.app | -",
        "the claim loop knows no expansion | provisioner/src/main/java/org/standalonecinder/provisioner/controller | org.standalonecinder.provisioner.expansion | -",
        "volume provisioning knows no expansion of claims | provisioner/src/main/java/org/standalonecinder/provisioner/provision | org.standalonecinder.provisioner.expansion | -",
        "the snapshot loop knows no expansion | provisioner/src/main/java/org/standalonecinder/provisioner/snapshot | org.standalonecinder.provisioner.expansion | -",
        "only certs imports Bouncy Castle (provisioner) | provisioner | org.bouncycastle | -",
        "only certs imports Bouncy Castle (webhook) | webhook | org.bouncycastle | -",
        "only certs imports Bouncy Castle (api) | api | org.bouncycastle | -",
        "only certs imports Bouncy Castle (demo) | demo | org.bouncycastle | -",
        "policy code has no Vert.x in it | webhook/src/main/java/org/standalonecinder/webhook/policy | io.vertx | -",
        "admission logic has no Vert.x in it | webhook/src/main/java/org/standalonecinder/webhook/admission | io.vertx | -",
        "the host side talks to no API server | provisioner/src/main/java/org/standalonecinder/provisioner/host | io.fabric8.kubernetes.client | -",
        "the host side knows no controller | provisioner/src/main/java/org/standalonecinder/provisioner/host | org.standalonecinder.provisioner.controller | -",
        "the host side knows no provisioning | provisioner/src/main/java/org/standalonecinder/provisioner/host | org.standalonecinder.provisioner.provision | -",
        "api depends on nothing of ours | api | org.standalonecinder.provisioner | -"
      })
  void importsFollowTheLayers(String rule, String folder, String forbidden, String allowed)
      throws IOException {
    Path base = ROOT.resolve(folder);
    Path main = folder.contains("/src/") ? base : base.resolve("src/main/java");
    List<String> offenders;
    try (Stream<Path> files = Files.walk(main)) {
      offenders =
          files
              .filter(f -> f.toString().endsWith(".java"))
              .filter(f -> allowed.equals("-") || !f.startsWith(ROOT.resolve(allowed)))
              .filter(f -> imports(f, forbidden))
              .map(f -> ROOT.relativize(f).toString())
              .toList();
    }
    assertThat(Files.isDirectory(main)).as(main + " exists").isTrue();
    assertThat(offenders).as(rule).isEmpty();
  }

  /**
   * Each webhook rule owns its name, settings and decision: no rule reaches back into the policy
   * that runs it (the policy builds the rules, and only it knows them all).
   */
  @org.junit.jupiter.api.Test
  void webhookRulesDoNotReachBackIntoTheirPolicy() throws IOException {
    Path policy = ROOT.resolve("webhook/src/main/java/org/standalonecinder/webhook/policy");
    List<String> offenders;
    try (Stream<Path> files = Files.list(policy)) {
      offenders =
          files
              .filter(f -> f.getFileName().toString().endsWith("Rule.java"))
              .filter(f -> !f.getFileName().toString().equals("ClaimRule.java"))
              .filter(
                  f -> {
                    try {
                      return Files.readString(f).contains("ClonePolicy");
                    } catch (IOException e) {
                      throw new java.io.UncheckedIOException(e);
                    }
                  })
              .map(f -> f.getFileName().toString())
              .toList();
    }
    assertThat(offenders).as("rules that read ClonePolicy").isEmpty();
  }

  private static boolean imports(Path file, String prefix) {
    try {
      return Files.readAllLines(file).stream()
          .anyMatch(
              l ->
                  l.startsWith("import " + prefix)
                      || l.startsWith("import static " + prefix)
                      || l.contains(" " + prefix + "."));
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }
}
