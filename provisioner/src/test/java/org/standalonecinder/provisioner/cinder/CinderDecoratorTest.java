package org.standalonecinder.provisioner.cinder;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The one wrapping mechanism: what an interceptor sees, and what the caller gets back. */
class CinderDecoratorTest {

  private final FakeCinderClient fake = new FakeCinderClient();
  private final List<String> seen = new ArrayList<>();
  private final CinderClient wrapped =
      CinderDecorator.wrap(
          fake,
          (operation, args, call) -> {
            seen.add(operation + "/" + args.length);
            return call.proceed();
          });

  @Test
  void aFailureComesOutAsItWasThrown() {
    RuntimeException gone = new CinderException.NotFound("gone", "req-1");
    fake.failNext("getVolume", () -> gone);
    assertThatThrownBy(() -> wrapped.getVolume("vol-x")).isSameAs(gone);
    assertThat(seen).containsExactly("getVolume/1");
  }

  @Test
  void aDefaultMethodReachesTheInterceptorOnceUnderItsOwnName() {
    Volume v = fake.createVolume(VolumeSpec.blank("v", 1));
    fake.awaitVolumeStatus(v.id(), java.util.Set.of("available"), Backoff.DEFAULT);
    wrapped.createAttachment(
        v.id(), new Connector("iqn.2026-11.org.example:n", "n", "127.0.0.1", false));
    assertThat(seen).containsExactly("createAttachment/2");
  }

  @Test
  void objectMethodsAreTheWrappersOwn() {
    assertThat(wrapped).isEqualTo(wrapped).isNotEqualTo(fake);
    assertThat(wrapped.hashCode()).isEqualTo(System.identityHashCode(wrapped));
    assertThat(wrapped.toString()).startsWith("decorated ");
    assertThat(seen).isEmpty();
  }
}
