package org.standalonecinder.webhook.policy;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.authentication.UserInfoBuilder;
import io.fabric8.kubernetes.api.model.authorization.v1.SubjectAccessReview;
import io.fabric8.kubernetes.api.model.authorization.v1.SubjectAccessReviewBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import java.util.List;
import org.junit.jupiter.api.Test;

/** SubjectAccessReviews as the API server answers them, and failing closed when it cannot. */
@EnableKubernetesMockClient
class KubernetesClusterViewTest {

  static KubernetesMockServer server;
  static KubernetesClient client;

  private static final String SAR = "/apis/authorization.k8s.io/v1/subjectaccessreviews";

  private static SubjectAccessReview answer(boolean allowed) {
    return new SubjectAccessReviewBuilder()
        .withNewStatus()
        .withAllowed(allowed)
        .endStatus()
        .build();
  }

  private final KubernetesClusterView view = new KubernetesClusterView(client);
  private final io.fabric8.kubernetes.api.model.authentication.UserInfo bob =
      new UserInfoBuilder().withUsername("bob").withUid("u-1").withGroups(List.of("dev")).build();

  @Test
  void asksAboutCreatingPodsInTheSourceNamespace() throws Exception {
    server.expect().post().withPath(SAR).andReturn(201, answer(true)).once();
    assertThat(view.canCreatePods(bob, "team-b")).isTrue();
    var sent = server.getLastRequest();
    String body = sent.getBody().readUtf8();
    assertThat(body)
        .contains(
            "\"user\":\"bob\"",
            "\"groups\":[\"dev\"]",
            "\"namespace\":\"team-b\"",
            "\"verb\":\"create\"",
            "\"resource\":\"pods\"");
  }

  @Test
  void aNoIsANo() {
    server.expect().post().withPath(SAR).andReturn(201, answer(false)).once();
    assertThat(view.canCreatePods(bob, "team-b")).isFalse();
  }

  @Test
  void anApiServerErrorFailsClosed() {
    server.expect().post().withPath(SAR).andReturn(500, "boom").once();
    assertThat(view.canCreatePods(bob, "team-b")).isFalse();
  }

  /** Found by the fuzzer: a review naming no user nor group was asked about, and got a 422. */
  @org.junit.jupiter.params.ParameterizedTest(name = "{0}")
  @org.junit.jupiter.params.provider.MethodSource("nobodies")
  void aRequesterWhoIsNobodyIsNeverAskedAbout(
      String name, io.fabric8.kubernetes.api.model.authentication.UserInfo nobody) {
    int before = server.getRequestCount();
    assertThat(view.canCreatePods(nobody, "team-b")).isFalse();
    assertThat(server.getRequestCount()).as("requests sent").isEqualTo(before);
  }

  static java.util.stream.Stream<org.junit.jupiter.params.provider.Arguments> nobodies() {
    return java.util.stream.Stream.of(
        org.junit.jupiter.params.provider.Arguments.of(
            "no user info", new UserInfoBuilder().build()),
        org.junit.jupiter.params.provider.Arguments.of(
            "an empty name, no groups", new UserInfoBuilder().withUsername("").build()),
        org.junit.jupiter.params.provider.Arguments.of(
            "a blank name, empty groups",
            new UserInfoBuilder().withUsername(" ").withGroups(List.of()).build()));
  }

  /** Found by the fuzzer: a class named ".." was asked for, and the path went elsewhere. */
  @org.junit.jupiter.params.ParameterizedTest(name = "name ''{0}''")
  @org.junit.jupiter.params.provider.ValueSource(
      strings = {"..", ".", "../x", "a/b", "", "A", "a b", "%2e%2e"})
  void aNameThatCannotBeOneIsNeverAskedFor(String bad) {
    int before = server.getRequestCount();
    assertThat(view.storageClass(bad)).isEmpty();
    assertThat(view.claim(bad, "data")).isEmpty();
    assertThat(view.claim("apps", bad)).isEmpty();
    assertThat(view.namespaceLabels(bad)).isEmpty();
    assertThat(view.canCreatePods(bob, bad)).isFalse();
    assertThat(server.getRequestCount()).as("requests sent").isEqualTo(before);
  }
}
