package org.standalonecinder.provisioner.app;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.standalonecinder.provisioner.cinder.Capacity;
import org.standalonecinder.provisioner.cinder.CinderException;
import org.standalonecinder.provisioner.cinder.FakeCinderClient;
import org.standalonecinder.provisioner.cinder.Pool;

/** The pools' capacity as gauges: numbers, "infinite" and "unknown", pools that come and go. */
class PoolMetricsTest {

  private final FakeCinderClient cinder = new FakeCinderClient();
  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  private final PoolMetrics metrics = new PoolMetrics(cinder, registry);

  private Double gauge(String pool, String kind) {
    var g =
        registry
            .find("standalone_cinder_pool_capacity_gib")
            .tags("pool", pool, "kind", kind)
            .gauge();
    return g == null ? null : g.value();
  }

  private double up() {
    return registry.find("standalone_cinder_pools_up").gauge().value();
  }

  static Stream<Arguments> capacities() {
    return Stream.of(
        Arguments.of("a number", new Capacity.Gib(18.72), 18.72),
        Arguments.of(
            "infinite (thin, no limit)", new Capacity.Infinite(), Double.POSITIVE_INFINITY),
        Arguments.of("unknown (Ceph without a manager)", new Capacity.Unknown(), Double.NaN));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("capacities")
  void everyCapacityIsAGauge(String name, Capacity total, double expected) {
    cinder.pools(
        List.of(
            new Pool(
                "h@rbd#rbd",
                "rbd",
                "ceph",
                total,
                new Capacity.Gib(10),
                new Capacity.Gib(3),
                new Capacity.Gib(40),
                20.0)));
    metrics.refresh();
    // Compared as objects: Double.equals holds for NaN, == does not.
    assertThat(gauge("h@rbd#rbd", "total")).isEqualTo(Double.valueOf(expected));
    assertThat(gauge("h@rbd#rbd", "free")).isEqualTo(10.0);
    assertThat(gauge("h@rbd#rbd", "allocated")).isEqualTo(3.0);
    assertThat(gauge("h@rbd#rbd", "provisioned")).isEqualTo(40.0);
    assertThat(
            registry
                .find("standalone_cinder_pool_max_over_subscription_ratio")
                .tags("pool", "h@rbd#rbd")
                .gauge()
                .value())
        .isEqualTo(20.0);
    assertThat(up()).isEqualTo(1.0);
  }

  @Test
  void aPoolThatGoesLosesItsSeriesAndAFailedListingSaysSo() {
    List<Pool> two = new ArrayList<>();
    two.add(new Pool("h@a#a", "a", "iSCSI", new Capacity.Gib(100), new Capacity.Gib(50)));
    two.add(new Pool("h@b#b", "b", "iSCSI", new Capacity.Gib(10), new Capacity.Gib(5)));
    cinder.pools(two);
    metrics.refresh();
    assertThat(gauge("h@b#b", "total")).isEqualTo(10.0);

    cinder.pools(List.of(two.get(0)));
    metrics.refresh();
    assertThat(gauge("h@b#b", "total")).isNull();
    assertThat(gauge("h@a#a", "total")).isEqualTo(100.0);

    cinder.failNext(
        "pools", () -> new CinderException.Forbidden("Policy doesn't allow get_pools", "req-p"));
    metrics.refresh();
    assertThat(up()).as("the listing failed").isEqualTo(0.0);
    metrics.refresh();
    assertThat(up()).isEqualTo(1.0);
  }
}
