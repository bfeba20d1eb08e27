package org.standalonecinder.e2e.standin;

/** Byte counts as Kubernetes' {@code resource.NewQuantity(n, BinarySI)} prints them. */
final class Quantities {

  private Quantities() {}

  private static final String[] SUFFIXES = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};

  /**
   * The canonical form: the largest power of 1024 that divides {@code n} exactly ({@code 1Gi},
   * {@code 1536Mi}, {@code 1073741825}); below 1024 a decimal one ({@code 1k} for 1000).
   */
  static String binarySI(long n) {
    if (n > -1024 && n < 1024) {
      return n != 0 && n % 1000 == 0 ? (n / 1000) + "k" : Long.toString(n);
    }
    int i = 0;
    long v = n;
    while (i < SUFFIXES.length - 1 && v % 1024 == 0) {
      v /= 1024;
      i++;
    }
    return v + SUFFIXES[i];
  }
}
