package org.standalonecinder.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** A claim's clone request as webhook and provisioner both read it, one row a case. */
class CloneRequestTest {

  static CloneRequest.DataSource claim(String name, String ns) {
    return new CloneRequest.DataSource(null, "PersistentVolumeClaim", name, ns);
  }

  static final CloneRequest.DataSource SNAPSHOT =
      new CloneRequest.DataSource("snapshot.storage.k8s.io", "VolumeSnapshot", "s", null);

  static Stream<Arguments> rows() {
    ClaimRef src = new ClaimRef("apps", "src");
    ClaimRef shared = new ClaimRef("team-b", "shared");
    return Stream.of(
        Arguments.of("nothing asked", null, null, null, null, null, false, false),
        Arguments.of("a bare name: this namespace", "src", null, null, src, null, false, false),
        Arguments.of("another namespace", "team-b/shared", null, null, shared, null, false, false),
        Arguments.of(
            "a malformed annotation", "a/b/c", null, null, null, "must be <claim>", false, false),
        Arguments.of(
            "a claim as dataSourceRef", null, claim("src", null), null, null, null, true, false),
        Arguments.of(
            "a dataSourceRef in another namespace",
            null,
            claim("shared", "team-b"),
            null,
            null,
            null,
            true,
            false),
        Arguments.of(
            "a dataSource alone", null, null, claim("src", "ignored"), null, null, true, false),
        Arguments.of("a snapshot: a restore", null, SNAPSHOT, null, null, null, true, false),
        Arguments.of(
            "a snapshot of another namespace: refused",
            null,
            new CloneRequest.DataSource("snapshot.storage.k8s.io", "VolumeSnapshot", "s", "team-b"),
            null,
            null,
            "own namespace",
            true,
            false),
        Arguments.of(
            "a snapshot of a malformed name",
            null,
            new CloneRequest.DataSource("snapshot.storage.k8s.io", "VolumeSnapshot", "S!", null),
            null,
            null,
            "does not name a snapshot",
            true,
            false),
        Arguments.of(
            "another kind: its populator's",
            null,
            new CloneRequest.DataSource("hello.example.com", "Hello", "h", null),
            null,
            null,
            null,
            true,
            false),
        Arguments.of(
            "annotation and a snapshot: two sources", "src", SNAPSHOT, null, src, null, true, true),
        Arguments.of(
            "annotation and data source agree",
            "src",
            claim("src", null),
            null,
            src,
            null,
            true,
            false),
        Arguments.of(
            "annotation and data source name two claims",
            "team-b/shared",
            claim("src", null),
            null,
            shared,
            null,
            true,
            true));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("rows")
  void isReadOnceForBoth(
      String name,
      String annotation,
      CloneRequest.DataSource ref,
      CloneRequest.DataSource plain,
      ClaimRef annotated,
      String error,
      boolean hasDataSource,
      boolean conflicting) {
    CloneRequest r = CloneRequest.read("apps", annotation, ref, plain);
    assertThat(r.annotated()).isEqualTo(annotated);
    if (error == null) {
      assertThat(r.annotationError()).isNull();
      assertThat(r.dataSourceError()).isNull();
    } else {
      assertThat(r.annotationError() != null ? r.annotationError() : r.dataSourceError())
          .contains(error);
    }
    assertThat(r.hasDataSource()).isEqualTo(hasDataSource);
    assertThat(r.conflicting()).isEqualTo(conflicting);
    if (ref == SNAPSHOT) {
      assertThat(r.snapshot()).isEqualTo(new ClaimRef("apps", "s"));
      assertThat(r.dataSource()).isNull();
    } else if (ref != null && "Hello".equals(ref.kind())) {
      assertThat(r.populator()).isEqualTo("hello.example.com/Hello");
      assertThat(r.dataSource()).isNull();
    } else if (ref != null && error == null) {
      assertThat(r.dataSource())
          .isEqualTo(new ClaimRef(ref.namespace() == null ? "apps" : ref.namespace(), ref.name()));
    }
    if (plain != null && ref == null) {
      assertThat(r.dataSource())
          .as("dataSource has no namespace")
          .isEqualTo(new ClaimRef("apps", "src"));
    }
  }
}
