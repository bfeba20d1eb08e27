package org.standalonecinder.webhook.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.storage.StorageClass;
import java.nio.charset.StandardCharsets;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.standalonecinder.webhook.admission.Claim;
import org.standalonecinder.webhook.admission.ReviewRequest;

/**
 * What the reader makes of a request's object, by the apiVersion and kind it says wherever they
 * stand in it, and that the request's fields after the object are still read (the object is read or
 * skipped exactly to its end).
 */
class ReviewReaderTest {

  private static final String CLAIM_FIELDS =
      "\"metadata\":{\"name\":\"data\",\"annotations\":{\"k8s.io/CloneRequest\":\"src\"},"
          + "\"managedFields\":[{\"manager\":\"kubectl\"}]},"
          + "\"spec\":{\"storageClassName\":\"fast\",\"volumeMode\":\"Block\","
          + "\"resources\":{\"requests\":{\"storage\":\"1Gi\"}}},\"status\":{\"phase\":\"Pending\"}";

  static Stream<Arguments> objects() {
    return Stream.of(
        row(
            "a claim, kind and apiVersion first (the API server's order)",
            "{\"kind\":\"PersistentVolumeClaim\",\"apiVersion\":\"v1\"," + CLAIM_FIELDS + "}",
            "Claim"),
        row(
            "a claim, kind and apiVersion last",
            "{" + CLAIM_FIELDS + ",\"apiVersion\":\"v1\",\"kind\":\"PersistentVolumeClaim\"}",
            "Claim"),
        row(
            "a claim, kind first and apiVersion last",
            "{\"kind\":\"PersistentVolumeClaim\"," + CLAIM_FIELDS + ",\"apiVersion\":\"v1\"}",
            "Claim"),
        row(
            "a claim of another version is no claim",
            "{\"kind\":\"PersistentVolumeClaim\",\"apiVersion\":\"v2\"," + CLAIM_FIELDS + "}",
            "Unread v2 PersistentVolumeClaim"),
        row(
            "a kind that is no string",
            "{\"kind\":[\"PersistentVolumeClaim\"],\"apiVersion\":\"v1\"," + CLAIM_FIELDS + "}",
            "Unread v1 null"),
        row(
            "a StorageClass",
            "{\"apiVersion\":\"storage.k8s.io/v1\",\"kind\":\"StorageClass\","
                + "\"metadata\":{\"name\":\"fast\"},\"provisioner\":\"p\"}",
            "StorageClass"),
        row(
            "a StorageClass of v1beta1 is not judged",
            "{\"apiVersion\":\"storage.k8s.io/v1beta1\",\"kind\":\"StorageClass\","
                + "\"metadata\":{\"name\":\"fast\"},\"provisioner\":\"p\"}",
            "Unread storage.k8s.io/v1beta1 StorageClass"),
        row(
            "a StatefulSet",
            "{\"apiVersion\":\"apps/v1\",\"kind\":\"StatefulSet\",\"metadata\":{\"name\":\"db\"}}",
            "StatefulSet"),
        row(
            "a Pod, skipped with all it holds",
            "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\"},"
                + "\"spec\":{\"containers\":[{\"name\":\"c\",\"args\":[\"a\",{\"b\":[1,2]}]}]}}",
            "Unread v1 Pod"),
        row("an array", "[{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolumeClaim\"}]", "Unread"),
        row("a string", "\"PersistentVolumeClaim\"", "Unread"),
        row("null", "null", "null"));
  }

  private static Arguments row(String name, String object, String read) {
    return Arguments.of(name, object, read);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("objects")
  void readsTheObjectByWhatItSaysItIs(String name, String object, String read) throws Exception {
    String body =
        "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{"
            + "\"uid\":\"u-1\",\"object\":"
            + object
            + ",\"namespace\":\"apps\",\"userInfo\":{\"username\":\"alice\"},\"oldObject\":"
            + object
            + ",\"operation\":\"UPDATE\"}}";
    ReviewRequest r = ReviewReader.read(body.getBytes(StandardCharsets.UTF_8)).request();

    assertThat(describe(r.object())).isEqualTo(read);
    assertThat(describe(r.oldObject())).isEqualTo(read);
    // What follows each object is read.
    assertThat(r.namespace()).isEqualTo("apps");
    assertThat(r.userInfo().getUsername()).isEqualTo("alice");
    assertThat(r.operation()).isEqualTo("UPDATE");
    if (r.object() instanceof Claim c) {
      assertThat(c.apiVersion()).isEqualTo("v1");
      assertThat(c.kind()).isEqualTo("PersistentVolumeClaim");
      assertThat(c.name()).isEqualTo("data");
      assertThat(c.annotation("k8s.io/CloneRequest")).isEqualTo("src");
      assertThat(c.className()).isEqualTo("fast");
      assertThat(c.mode()).isEqualTo("Block");
      assertThat(c.storageRequest()).hasToString("1Gi");
    }
  }

  static Stream<Arguments> twoWays() {
    return Stream.of(
        row(
            "a claim read from the stream that says its kind again",
            "{\"kind\":\"PersistentVolumeClaim\",\"apiVersion\":\"v1\","
                + CLAIM_FIELDS
                + ",\"kind\":\"Pod\"}",
            "kind"),
        row(
            "a skipped object that says its kind again",
            "{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"kind\":\"PersistentVolumeClaim\"}",
            "kind"),
        row(
            "a claim whose skipped status is given twice",
            "{\"kind\":\"PersistentVolumeClaim\",\"apiVersion\":\"v1\","
                + CLAIM_FIELDS
                + ",\"status\":{}}",
            "status"),
        row(
            "a claim copied before it is read, an annotation given twice",
            "{\"metadata\":{\"annotations\":{\"a\":\"1\",\"a\":\"2\"}},"
                + "\"apiVersion\":\"v1\",\"kind\":\"PersistentVolumeClaim\"}",
            "a"));
  }

  /**
   * A key given twice may be read two ways (by us and by the API server): refused on every path.
   */
  @ParameterizedTest(name = "{0}")
  @MethodSource("twoWays")
  void anObjectThatReadsTwoWaysIsRefused(String name, String object, String key) {
    String body =
        "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{"
            + "\"uid\":\"u-1\",\"object\":"
            + object
            + "}}";
    assertThatThrownBy(() -> ReviewReader.read(body.getBytes(StandardCharsets.UTF_8)))
        .hasMessageContaining("Duplicate field '" + key + "'");
  }

  private static String describe(Object o) {
    if (o == null) {
      return "null";
    }
    if (o instanceof ReviewRequest.Unread u) {
      return u.apiVersion() == null && u.kind() == null
          ? "Unread"
          : "Unread " + u.apiVersion() + " " + u.kind();
    }
    if (o instanceof Claim || o instanceof StorageClass || o instanceof StatefulSet) {
      return o.getClass().getSimpleName();
    }
    return "unexpected " + o.getClass().getName();
  }
}
