package org.standalonecinder.webhook.cli;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import org.standalonecinder.certs.CertificateAuthority;
import org.standalonecinder.certs.IssuedCertificate;
import org.standalonecinder.certs.ServiceNames;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** Certificate chores: a CA and a serving certificate into a folder, for trying things by hand. */
@Command(
    name = "certs",
    mixinStandardHelpOptions = true,
    description = "Certificates for the webhook.",
    subcommands = {CertsCommand.Generate.class})
final class CertsCommand {

  @Command(
      name = "generate",
      mixinStandardHelpOptions = true,
      description =
          "Write ca.crt, ca.key, tls.crt (chain) and tls.key for the webhook Service into a folder.")
  static final class Generate implements Callable<Integer> {

    @Spec CommandSpec spec;

    @Option(names = "--out", required = true, description = "folder to write into (created)")
    Path out;

    @Option(
        names = "--service",
        defaultValue = "standalone-cinder-webhook",
        description = "Service name (default ${DEFAULT-VALUE})")
    String service;

    @Option(
        names = "--namespace",
        defaultValue = "standalone-cinder",
        description = "Service namespace (default ${DEFAULT-VALUE})")
    String namespace;

    @Option(names = "--san", description = "extra DNS name (repeatable), e.g. localhost")
    List<String> extraNames = new ArrayList<>();

    @Option(names = "--ip", description = "IP address name (repeatable), e.g. 127.0.0.1")
    List<String> ips = new ArrayList<>();

    @Option(
        names = "--days",
        defaultValue = "90",
        description = "serving certificate validity (default ${DEFAULT-VALUE})")
    int days;

    @Option(names = "--force", description = "overwrite existing files")
    boolean force;

    @Override
    public Integer call() throws IOException {
      PrintWriter err = spec.commandLine().getErr();
      if (days < 1 || days > 3650) {
        err.println("--days must be between 1 and 3650, was " + days);
        return 2;
      }
      List<String> names;
      try {
        names = ServiceNames.of(service, namespace, extraNames);
      } catch (IllegalArgumentException e) {
        err.println(e.getMessage());
        return 2;
      }
      Files.createDirectories(out);
      for (String f : List.of("ca.crt", "ca.key", "tls.crt", "tls.key")) {
        if (!force && Files.exists(out.resolve(f))) {
          err.println(out.resolve(f) + " exists; use --force to overwrite");
          return 2;
        }
      }
      Clock clock = Clock.systemUTC();
      // The CA outlives its leaves so that renewing a leaf keeps the caBundle valid.
      CertificateAuthority ca =
          CertificateAuthority.generate(
              service + "." + namespace + "-ca", Duration.ofDays(days * 4L), clock);
      IssuedCertificate leaf;
      try {
        leaf = ca.issueServing(names, ips, Duration.ofDays(days), clock);
      } catch (IllegalArgumentException e) {
        err.println(e.getMessage());
        return 2;
      }
      write(out.resolve("ca.crt"), ca.certificatePem(), false);
      write(out.resolve("ca.key"), ca.keyPem(), true);
      write(out.resolve("tls.crt"), leaf.chainPem(), false);
      write(out.resolve("tls.key"), leaf.keyPem(), true);
      spec.commandLine()
          .getOut()
          .println(
              "wrote "
                  + out
                  + "/{ca.crt,ca.key,tls.crt,tls.key}: "
                  + String.join(", ", names)
                  + (ips.isEmpty() ? "" : ", " + String.join(", ", ips))
                  + "; valid until "
                  + leaf.certificate().getNotAfter().toInstant());
      return 0;
    }

    private static void write(Path p, String text, boolean secret) throws IOException {
      Files.deleteIfExists(p);
      if (secret) {
        Files.createFile(
            p, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
      }
      Files.writeString(p, text);
    }
  }
}
