package dev.fcap.cli;

import java.util.SplittableRandom;

/**
 * Draws ranks 0..n-1 with probability proportional to 1 / (rank + 1)^s, by binary search over the
 * cumulative distribution: the popularity of recipients and message templates on real platforms.
 */
final class Zipf {
  private final double[] cumulative;

  Zipf(int n, double exponent) {
    cumulative = new double[n];
    double sum = 0;
    for (int i = 0; i < n; i++) {
      sum += 1 / Math.pow(i + 1, exponent);
      cumulative[i] = sum;
    }
    for (int i = 0; i < n; i++) {
      cumulative[i] /= sum;
    }
  }

  int next(SplittableRandom random) {
    double u = random.nextDouble();
    int lo = 0;
    int hi = cumulative.length - 1;
    while (lo < hi) {
      int mid = (lo + hi) >>> 1;
      if (cumulative[mid] < u) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return lo;
  }
}
