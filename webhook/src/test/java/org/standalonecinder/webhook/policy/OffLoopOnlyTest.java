package org.standalonecinder.webhook.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.authentication.UserInfo;
import io.fabric8.kubernetes.api.model.storage.StorageClass;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.standalonecinder.api.ClaimRef;
import org.standalonecinder.webhook.admission.Claim;
import org.standalonecinder.webhook.admission.WouldBlock;

/** Every blocking call of the policy refuses a thread that may not block, before any I/O. */
class OffLoopOnlyTest {

  /** The calls it makes, in place of the API server and the resolver. */
  private final List<String> calls = new ArrayList<>();

  private final ClusterView cluster =
      new ClusterView() {
        @Override
        public Optional<StorageClass> storageClass(String name) {
          calls.add("storageClass");
          return Optional.empty();
        }

        @Override
        public Optional<io.fabric8.kubernetes.api.model.PersistentVolume> volume(String name) {
          calls.add("volume");
          return Optional.empty();
        }

        @Override
        public Optional<PersistentVolumeClaim> claim(String namespace, String name) {
          calls.add("claim");
          return Optional.empty();
        }

        @Override
        public Map<String, String> namespaceLabels(String namespace) {
          calls.add("namespaceLabels");
          return Map.of();
        }

        @Override
        public boolean canCreatePods(UserInfo user, String namespace) {
          calls.add("canCreatePods");
          return false;
        }

        @Override
        public org.standalonecinder.api.ReferenceGrants.Page referenceGrants(
            String namespace, String next) {
          calls.add("referenceGrants");
          return org.standalonecinder.api.ReferenceGrants.Page.of(java.util.List.of());
        }
      };

  private final CloneCheck check =
      (source, claim) -> {
        calls.add("refusal");
        return Optional.empty();
      };

  record Guarded(ClusterView cluster, CloneCheck check) {}

  private Guarded guarded(boolean mayBlock) {
    return new Guarded(
        OffLoopOnly.clusterView(cluster, () -> mayBlock),
        OffLoopOnly.cloneCheck(check, () -> mayBlock));
  }

  static Stream<Arguments> calls() {
    return Stream.of(
        Arguments.of(
            "storageClass", (Function<Guarded, Object>) g -> g.cluster().storageClass("a")),
        Arguments.of("claim", (Function<Guarded, Object>) g -> g.cluster().claim("ns", "a")),
        Arguments.of("volume", (Function<Guarded, Object>) g -> g.cluster().volume("pv-a")),
        Arguments.of(
            "namespaceLabels", (Function<Guarded, Object>) g -> g.cluster().namespaceLabels("ns")),
        Arguments.of(
            "canCreatePods",
            (Function<Guarded, Object>) g -> g.cluster().canCreatePods(new UserInfo(), "ns")),
        Arguments.of(
            "referenceGrants",
            (Function<Guarded, Object>) g -> g.cluster().referenceGrants("ns", null)),
        Arguments.of(
            "refusal",
            (Function<Guarded, Object>)
                g ->
                    g.check()
                        .refusal(
                            new ClaimRef("ns", "src"), Claim.of(new PersistentVolumeClaim()))));
  }

  @ParameterizedTest(name = "{0} on an event loop")
  @MethodSource("calls")
  void refusedWhereTheThreadMayNotBlock(String call, Function<Guarded, Object> make) {
    Guarded g = guarded(false);
    assertThatThrownBy(() -> make.apply(g)).isSameAs(WouldBlock.INSTANCE);
    assertThat(calls).as("nothing asked").isEmpty();
  }

  @ParameterizedTest(name = "{0} on a worker")
  @MethodSource("calls")
  void madeWhereItMay(String call, Function<Guarded, Object> make) {
    Guarded g = guarded(true);
    make.apply(g);
    assertThat(calls).containsExactly(call);
  }
}
