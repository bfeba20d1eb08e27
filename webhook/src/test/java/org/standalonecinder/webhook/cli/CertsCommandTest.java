package org.standalonecinder.webhook.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.standalonecinder.certs.CertificateAuthority;
import org.standalonecinder.certs.Pem;
import picocli.CommandLine;

/** {@code certs generate}: the files, their names and permissions, and every refusal. */
class CertsCommandTest {

  @TempDir Path dir;

  private int run(StringWriter out, StringWriter err, String... args) {
    return new CommandLine(new WebhookMain())
        .setOut(new PrintWriter(out, true))
        .setErr(new PrintWriter(err, true))
        .execute(args);
  }

  @Test
  void writesACaAndAServingChain() throws Exception {
    StringWriter out = new StringWriter();
    int code =
        run(
            out,
            new StringWriter(),
            "certs",
            "generate",
            "--out",
            dir.toString(),
            "--san",
            "localhost",
            "--ip",
            "127.0.0.1");
    assertThat(code).isZero();
    assertThat(out.toString())
        .contains("standalone-cinder-webhook.standalone-cinder.svc", "127.0.0.1");
    CertificateAuthority ca =
        CertificateAuthority.fromPem(
            Files.readString(dir.resolve("ca.crt")), Files.readString(dir.resolve("ca.key")));
    var chain = Pem.certificates(Files.readString(dir.resolve("tls.crt")));
    assertThat(chain).hasSize(2);
    assertThat(ca.signed(chain.get(0))).isTrue();
    assertThat(Pem.privateKey(Files.readString(dir.resolve("tls.key")))).isNotNull();
    assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(dir.resolve("tls.key"))))
        .isEqualTo("rw-------");
    assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(dir.resolve("ca.key"))))
        .isEqualTo("rw-------");
    List<String> names = new ArrayList<>();
    for (List<?> san : chain.get(0).getSubjectAlternativeNames()) {
      names.add(san.get(1).toString());
    }
    assertThat(names)
        .contains(
            "standalone-cinder-webhook.standalone-cinder.svc.cluster.local",
            "localhost",
            "127.0.0.1");
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "bad service | --service=Bad_Name | not a DNS label",
        "bad ip | --ip=300.1.2.3.4 | is not an IP address",
        "bad days | --days=0 | --days must be between 1 and 3650"
      })
  void refusals(String name, String arg, String message) {
    StringWriter err = new StringWriter();
    int code = run(new StringWriter(), err, "certs", "generate", "--out", dir.toString(), arg);
    assertThat(code).isEqualTo(2);
    assertThat(err.toString()).contains(message);
  }

  @Test
  void existingFilesAreKeptUnlessForced() {
    assertThat(
            run(
                new StringWriter(),
                new StringWriter(),
                "certs",
                "generate",
                "--out",
                dir.toString()))
        .isZero();
    StringWriter err = new StringWriter();
    assertThat(run(new StringWriter(), err, "certs", "generate", "--out", dir.toString()))
        .isEqualTo(2);
    assertThat(err.toString()).contains("exists; use --force");
    assertThat(
            run(
                new StringWriter(),
                new StringWriter(),
                "certs",
                "generate",
                "--out",
                dir.toString(),
                "--force"))
        .isZero();
  }
}
