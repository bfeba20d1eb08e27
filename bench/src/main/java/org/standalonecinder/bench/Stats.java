package org.standalonecinder.bench;

import java.util.Arrays;
import java.util.List;

/** Percentiles of a sample (nearest rank), and the median of repeated runs. */
final class Stats {

  private Stats() {}

  /** The {@code p}-th percentile (0 < p ≤ 100) by nearest rank; NaN for no values. */
  static double percentile(List<Double> values, double p) {
    if (values.isEmpty()) {
      return Double.NaN;
    }
    double[] v = values.stream().mapToDouble(Double::doubleValue).sorted().toArray();
    int rank = (int) Math.ceil(p / 100.0 * v.length);
    return v[Math.max(0, Math.min(v.length - 1, rank - 1))];
  }

  /** The median: the mean of the two middle values for an even count. */
  static double median(List<Double> values) {
    if (values.isEmpty()) {
      return Double.NaN;
    }
    double[] v = values.stream().mapToDouble(Double::doubleValue).toArray();
    Arrays.sort(v);
    int m = v.length / 2;
    return v.length % 2 == 1 ? v[m] : (v[m - 1] + v[m]) / 2;
  }
}
