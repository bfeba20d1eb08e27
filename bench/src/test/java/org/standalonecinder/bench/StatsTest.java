package org.standalonecinder.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Nearest-rank percentiles and medians, as the table reports them. */
class StatsTest {

  static final List<Double> TEN = List.of(10.0, 1.0, 9.0, 2.0, 8.0, 3.0, 7.0, 4.0, 6.0, 5.0);

  @ParameterizedTest(name = "p{0} of 1..10 is {1}")
  @CsvSource({"50, 5", "90, 9", "99, 10", "100, 10", "1, 1", "10, 1"})
  void percentilesByNearestRank(double p, double expected) {
    assertThat(Stats.percentile(TEN, p)).isEqualTo(expected);
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "odd count | 3,1,2 | 2",
        "even count: the middle two's mean | 4,1,3,2 | 2.5",
        "one | 7 | 7"
      })
  void medians(String name, String values, double expected) {
    List<Double> v = java.util.Arrays.stream(values.split(",")).map(Double::valueOf).toList();
    assertThat(Stats.median(v)).isEqualTo(expected);
  }

  @org.junit.jupiter.api.Test
  void theTableShowsRatiosWithTwoDecimalsAndNothingForNone() {
    Table t = new Table();
    t.add("claims/s", "142/s", "API 1463/s", 142.0 / 1463, "≥ 200/s");
    t.add("p50", "6.5 ms", "", Double.NaN, "");
    assertThat(t.render())
        .containsExactly(
            "| figure | value | baseline (same run) | ratio | target |",
            "| --- | ---: | --- | ---: | --- |",
            "| claims/s | 142/s | API 1463/s | 0.10× | ≥ 200/s |",
            "| p50 | 6.5 ms |  |  |  |");
  }
}
