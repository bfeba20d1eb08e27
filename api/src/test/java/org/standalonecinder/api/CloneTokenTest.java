package org.standalonecinder.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;

/** The clone token: what verifies, and every way one does not, each with its reason. */
class CloneTokenTest {

  private static final byte[] KEY =
      "0123456789abcdef0123456789abcdef".getBytes(StandardCharsets.UTF_8);
  private static final ClaimRef SOURCE = new ClaimRef("team-b", "shared");
  private static final ClaimRef TARGET = new ClaimRef("apps", "copy");
  private static final Instant T0 = Instant.parse("2026-11-22T10:00:00Z");
  private static final CloneToken.Keys KEYS = CloneToken.Keys.of(KEY, null);
  private static final CloneToken.Principal BOB =
      new CloneToken.Principal(
          "bob|admin",
          "u-1",
          List.of("dev,ops", "system:authenticated"),
          Map.of("scopes.example.com", List.of("read;write", "x=y")));
  private static final CloneToken.Claims CLAIMS =
      new CloneToken.Claims(
          SOURCE,
          "uid-of-shared",
          TARGET,
          T0,
          T0.plus(CloneToken.VALIDITY),
          CloneToken.Basis.REQUESTER,
          BOB);
  private static final String TOKEN = CloneToken.sign(CLAIMS, KEYS);

  record Row(
      String name,
      UnaryOperator<String> token,
      CloneToken.Keys key,
      ClaimRef source,
      ClaimRef target,
      Instant created,
      String problem) {
    @Override
    public String toString() {
      return name;
    }
  }

  static Stream<Arguments> rows() {
    byte[] otherKey = "another key, another webhook....".getBytes(StandardCharsets.UTF_8);
    CloneToken.Keys other = CloneToken.Keys.of(otherKey, null);
    // v1: the format of the webhook before key ids, which bound no source uid.
    String v1 =
        Base64.getUrlEncoder()
                .withoutPadding()
                .encodeToString(
                    "v1|team-b|shared|apps|copy|1795860000|1795860300"
                        .getBytes(StandardCharsets.UTF_8))
            + ".AAAA";
    return Stream.of(
            new Row(
                "valid, created right away", t -> t, KEYS, SOURCE, TARGET, T0.plusSeconds(1), null),
            new Row(
                "valid at the last moment",
                t -> t,
                KEYS,
                SOURCE,
                TARGET,
                T0.plus(CloneToken.VALIDITY),
                null),
            new Row(
                "valid within the clock skew",
                t -> t,
                KEYS,
                SOURCE,
                TARGET,
                T0.minusSeconds(30),
                null),
            new Row(
                "no token",
                t -> null,
                KEYS,
                SOURCE,
                TARGET,
                T0,
                "carries no standalone-cinder.io/clone-token"),
            new Row("not a token", t -> "hello", KEYS, SOURCE, TARGET, T0, "is not a token"),
            new Row(
                "a v1 token, which named no source uid",
                t -> v1,
                KEYS,
                SOURCE,
                TARGET,
                T0,
                "has an unknown format (not a v3 token"),
            new Row(
                "signed with the previous key after a rotation",
                t -> t,
                CloneToken.Keys.of(otherKey, KEY),
                SOURCE,
                TARGET,
                T0,
                null),
            new Row(
                "its key dropped from the Secret",
                t -> t,
                CloneToken.Keys.of(otherKey, null),
                SOURCE,
                TARGET,
                T0,
                "was not signed by the webhook"),
            new Row(
                "signed with another key",
                t -> t,
                other,
                SOURCE,
                TARGET,
                T0,
                "was not signed by the webhook"),
            new Row(
                "payload changed, signature kept",
                t ->
                    Base64.getUrlEncoder()
                            .withoutPadding()
                            .encodeToString(
                                new String(
                                        Base64.getUrlDecoder().decode(t.split("\\.")[0]),
                                        StandardCharsets.UTF_8)
                                    .replace("team-b", "team-c")
                                    .getBytes(StandardCharsets.UTF_8))
                        + "."
                        + t.split("\\.")[1],
                KEYS,
                SOURCE,
                TARGET,
                T0,
                "was not signed by the webhook"),
            new Row(
                "another source",
                t -> t,
                KEYS,
                new ClaimRef("team-b", "secret"),
                TARGET,
                T0,
                "is for source team-b/shared, not team-b/secret"),
            new Row(
                "another target",
                t -> t,
                KEYS,
                SOURCE,
                new ClaimRef("apps", "other"),
                T0,
                "is for claim apps/copy, not apps/other"),
            new Row(
                "replayed on a claim of the same name in another namespace",
                t -> t,
                KEYS,
                SOURCE,
                new ClaimRef("team-c", "copy"),
                T0,
                "is for claim apps/copy, not team-c/copy"),
            new Row(
                "replayed later on a claim made again with its name",
                t -> t,
                KEYS,
                SOURCE,
                TARGET,
                T0.plus(CloneToken.VALIDITY).plus(CloneToken.SKEW).plusSeconds(1),
                "expired"),
            new Row(
                "created after it expired",
                t -> t,
                KEYS,
                SOURCE,
                TARGET,
                T0.plus(CloneToken.VALIDITY).plusSeconds(61),
                "expired"),
            new Row(
                "created long before it was issued",
                t -> t,
                KEYS,
                SOURCE,
                TARGET,
                T0.minusSeconds(3600),
                "expired"))
        .map(Arguments::of);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("rows")
  void verify(Row row) throws Exception {
    String token = row.token().apply(TOKEN);
    if (row.problem() == null) {
      CloneToken.Claims c =
          CloneToken.verify(token, row.key(), row.source(), row.target(), row.created());
      assertThat(c).isEqualTo(CLAIMS);
    } else {
      assertThatThrownBy(
              () -> CloneToken.verify(token, row.key(), row.source(), row.target(), row.created()))
          .isInstanceOf(CloneToken.InvalidTokenException.class)
          .hasMessageContaining(row.problem())
          .satisfies(
              e ->
                  assertThat(e.getMessage())
                      .doesNotContain(new String(KEY, StandardCharsets.UTF_8)));
    }
  }

  /**
   * Whom the webhook authenticated as the review's sender is signed with the rest: it is what lets
   * the provisioner honour a clone on the requester's rights. Changing it breaks the signature.
   */
  @org.junit.jupiter.api.Test
  void theAuthenticatedCallerIsSignedAndReadBack() throws Exception {
    CloneToken.Claims byApiServer =
        new CloneToken.Claims(
            SOURCE,
            "uid-of-shared",
            TARGET,
            T0,
            T0.plus(CloneToken.VALIDITY),
            CloneToken.Basis.REQUESTER,
            BOB,
            "kube-apiserver|webhooks");
    String token = CloneToken.sign(byApiServer, KEYS);
    CloneToken.Claims read = CloneToken.verify(token, KEYS, SOURCE, TARGET, T0);
    assertThat(read).isEqualTo(byApiServer);
    assertThat(read.callerAuthenticated()).isTrue();
    assertThat(CloneToken.verify(TOKEN, KEYS, SOURCE, TARGET, T0).callerAuthenticated())
        .as("a token of a review nobody authenticated")
        .isFalse();
    String payload =
        new String(Base64.getUrlDecoder().decode(token.split("\\.")[0]), StandardCharsets.UTF_8);
    String claimed = payload.substring(0, payload.lastIndexOf('|') + 1);
    assertThatThrownBy(
            () ->
                CloneToken.verify(
                    Base64.getUrlEncoder()
                            .withoutPadding()
                            .encodeToString(claimed.getBytes(StandardCharsets.UTF_8))
                        + "."
                        + token.split("\\.")[1],
                    KEYS,
                    SOURCE,
                    TARGET,
                    T0))
        .hasMessageContaining("was not signed by the webhook");
  }

  /**
   * A token of the webhook before callers were signed (v2) still verifies, and reads as one whose
   * sender nobody authenticated: a clone on the requester's rights is then not honoured.
   */
  @org.junit.jupiter.api.Test
  void aV2TokenReadsAsOneWhoseSenderWasNotAuthenticated() throws Exception {
    String v3 =
        new String(Base64.getUrlDecoder().decode(TOKEN.split("\\.")[0]), StandardCharsets.UTF_8);
    byte[] v2 = ("v2" + v3.substring(2, v3.lastIndexOf('|'))).getBytes(StandardCharsets.UTF_8);
    javax.crypto.Mac mac = javax.crypto.Mac.getInstance("HmacSHA256");
    mac.init(new javax.crypto.spec.SecretKeySpec(KEY, "HmacSHA256"));
    Base64.Encoder b64 = Base64.getUrlEncoder().withoutPadding();
    String token = b64.encodeToString(v2) + "." + b64.encodeToString(mac.doFinal(v2));
    CloneToken.Claims read = CloneToken.verify(token, KEYS, SOURCE, TARGET, T0);
    assertThat(read).isEqualTo(CLAIMS);
    assertThat(read.callerAuthenticated()).isFalse();
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "a claim in the same namespace | '' | PersistentVolumeClaim | src | '' | apps/src",
        "a claim in another namespace | '' | PersistentVolumeClaim | src | team-b | team-b/src",
        "a snapshot | snapshot.storage.k8s.io | VolumeSnapshot | s1 | '' | ",
        "a populator | example.com | Seed | s | '' | ",
        "a claim kind of another group | example.com | PersistentVolumeClaim | x | '' | "
      })
  void dataSources(
      String name, String group, String kind, String source, String ns, String expected) {
    if (expected == null) {
      assertThatThrownBy(() -> ClaimRef.fromDataSource(group, kind, source, ns, "apps"))
          .hasMessageContaining(kind + " " + source + " cannot fill a Cinder volume");
    } else {
      assertThat(ClaimRef.fromDataSource(group, kind, source, ns, "apps").toString())
          .isEqualTo(expected);
    }
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "a bare name takes the claim's namespace | data | apps | apps/data",
        "namespace and name | team-b/data | apps | team-b/data",
        "three parts | a/b/c | apps | ",
        "empty | '' | apps | ",
        "upper case | apps/Data | apps | ",
        "a namespace too long | aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa/x | apps | "
      })
  void cloneRequests(String name, String value, String ns, String expected) {
    if (expected == null) {
      assertThatThrownBy(() -> ClaimRef.parseCloneRequest(value == null ? "" : value, ns))
          .hasMessageContaining("must be <claim> or <namespace>/<claim>");
    } else {
      assertThat(ClaimRef.parseCloneRequest(value, ns).toString()).isEqualTo(expected);
    }
  }
}
