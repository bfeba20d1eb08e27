package org.standalonecinder.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

import java.util.Map;
import java.util.function.Function;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The attack on the parsers: a tenant writes a name of tens of thousands of DNS labels (an
 * annotation may hold 256 KiB) where a claim's name is expected. A pattern with a repeated group
 * recurses once a label, and such a name overflowed the stack of every provisioner worker that read
 * it. Each reader must refuse it with a short reason, and never throw an {@link Error}.
 */
class HostileNamesTest {

  /** {@code a.a.a...}: 100,001 labels, 200,001 characters. */
  static final String DOTTED = "a" + ".a".repeat(100_000);

  /** Each reader: the value in, why it is refused out (null: accepted). */
  static Map<String, Function<String, String>> readers() {
    return Map.of(
        "k8s.io/CloneRequest as a name",
        v -> CloneRequest.read("apps", v, null, null).annotationError(),
        "k8s.io/CloneRequest as namespace/name",
        v -> CloneRequest.read("apps", "apps/" + v, null, null).annotationError(),
        "k8s.io/CloneRequest with the name as namespace",
        v -> CloneRequest.read("apps", v + "/src", null, null).annotationError(),
        "a dataSourceRef's name",
        v ->
            CloneRequest.read(
                    "apps",
                    null,
                    new CloneRequest.DataSource(null, "PersistentVolumeClaim", v, null),
                    null)
                .dataSourceError(),
        "a dataSourceRef's namespace",
        v ->
            CloneRequest.read(
                    "apps",
                    null,
                    new CloneRequest.DataSource(null, "PersistentVolumeClaim", "src", v),
                    null)
                .dataSourceError(),
        "a VolumeSnapshot data source's name",
        v ->
            CloneRequest.read(
                    "apps",
                    null,
                    new CloneRequest.DataSource(
                        CloneRequest.SNAPSHOT_GROUP, CloneRequest.SNAPSHOT_KIND, v, null),
                    null)
                .dataSourceError(),
        "another kind's group and kind, as said (quoted)",
        v -> {
          String said =
              CloneRequest.read("apps", null, new CloneRequest.DataSource(v, v, "x", null), null)
                  .populator();
          return said.length() < 400 && v.length() > 400 ? "quoted" : null;
        },
        "a name checked alone",
        v -> ClaimRef.isName(v) ? null : "not a name",
        "a namespace checked alone",
        v -> ClaimRef.isNamespace(v) ? null : "not a namespace",
        "a class's secret name",
        v -> ClassParameters.isDnsSubdomain(v) ? null : "not a subdomain");
  }

  static Stream<Arguments> hostile() {
    return readers().entrySet().stream()
        .flatMap(
            e ->
                Stream.of(
                    Arguments.of(e.getKey() + ", dotted", e.getValue(), DOTTED),
                    Arguments.of(
                        e.getKey() + ", one long label", e.getValue(), "a".repeat(200_000)),
                    Arguments.of(
                        e.getKey() + ", dashes", e.getValue(), "a" + "-".repeat(200_000) + "a")));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("hostile")
  void aHugeNameIsRefusedWithAShortReason(
      String name, Function<String, String> reader, String value) {
    String[] why = new String[1];
    assertThatCode(() -> why[0] = reader.apply(value)).doesNotThrowAnyException();
    assertThat(why[0]).as("refused").isNotNull();
    assertThat(why[0].length()).as(why[0]).isLessThan(400);
  }

  static Stream<Arguments> ordinary() {
    // Not the kind: only a PersistentVolumeClaim can be a data source at all.
    return readers().entrySet().stream()
        .filter(e -> !e.getKey().contains("another kind"))
        .map(e -> Arguments.of(e.getKey(), e.getValue()));
  }

  /** The same readers still take a name of the usual shape (the check is not "refuse all"). */
  @ParameterizedTest(name = "{0}")
  @MethodSource("ordinary")
  void anOrdinaryNameStillReads(String name, Function<String, String> reader) {
    assertThat(reader.apply("db-1")).isNull();
  }
}
