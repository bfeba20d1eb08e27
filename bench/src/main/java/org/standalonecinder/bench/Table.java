package org.standalonecinder.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/** The one table the benchmark prints: each figure beside its baseline and their ratio. */
final class Table {

  /**
   * One row.
   *
   * @param figure what was measured
   * @param value its value, formatted
   * @param baseline what it is compared with, measured in the same run, or empty
   * @param ratio value / baseline (or the ratio that reads "higher is better"), or NaN
   * @param target what the project aims for, or empty
   */
  record Row(String figure, String value, String baseline, double ratio, String target) {}

  private final List<Row> rows = new ArrayList<>();

  void add(String figure, String value, String baseline, double ratio, String target) {
    rows.add(new Row(figure, value, baseline, ratio, target));
  }

  List<Row> rows() {
    return List.copyOf(rows);
  }

  /** Markdown, so that docs/benchmarks.md can hold a run as printed. */
  List<String> render() {
    List<String> out = new ArrayList<>();
    out.add("| figure | value | baseline (same run) | ratio | target |");
    out.add("| --- | ---: | --- | ---: | --- |");
    for (Row r : rows) {
      out.add(
          "| "
              + r.figure()
              + " | "
              + r.value()
              + " | "
              + r.baseline()
              + " | "
              + (Double.isNaN(r.ratio()) ? "" : String.format(Locale.ROOT, "%.2f×", r.ratio()))
              + " | "
              + r.target()
              + " |");
    }
    return out;
  }

  static String ms(double millis) {
    return String.format(Locale.ROOT, "%.1f ms", millis);
  }

  static String perSecond(double rate) {
    return String.format(Locale.ROOT, "%.0f/s", rate);
  }
}
