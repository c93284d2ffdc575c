package dev.fcap.bench;

import dev.fcap.model.Message;
import java.util.SplittableRandom;

/**
 * The synthetic key stream every benchmark in this module replays: the seed's scale in miniature.
 *
 * <p><b>Recipients.</b> A population of {@link #RECIPIENTS} phone-number-like ids with Zipf
 * popularity (exponent {@link #ZIPF_EXPONENT}, the YCSB default): the rank is drawn from the exact
 * Zipf distribution and then mapped through a fixed random permutation, so hot recipients are not
 * neighbours in any id order.
 *
 * <p><b>Contents.</b> {@link #TEMPLATE_SHARE} of the messages use one of {@link #TEMPLATES} fixed
 * templates, themselves Zipf-popular (a marketing campaign, a shipping notice...); the rest are
 * unique texts (one-time passwords, personalised bodies). Template strings are shared instances, as
 * an application holding its templates would pass them.
 *
 * <p>Everything is drawn from one {@link SplittableRandom} with a fixed seed, so every
 * implementation in a run, and every run, sees the same stream.
 */
public final class Workload {
  public static final int RECIPIENTS = 1_000_000;
  public static final double ZIPF_EXPONENT = 0.99;
  public static final int TEMPLATES = 300;
  public static final double TEMPLATE_SHARE = 0.9;
  public static final int DEFAULT_LENGTH = 1 << 21;
  public static final long SEED = 20_240_601L;

  private Workload() {}

  /** {@code length} messages of the stream with the default seed. */
  public static Message[] messages(int length) {
    return messages(length, SEED);
  }

  public static Message[] messages(int length, long seed) {
    SplittableRandom random = new SplittableRandom(seed);
    Zipf recipientRank = new Zipf(RECIPIENTS, ZIPF_EXPONENT);
    Zipf templateRank = new Zipf(TEMPLATES, ZIPF_EXPONENT);
    int[] permutation = permutation(RECIPIENTS, random);
    String[] recipients = new String[RECIPIENTS];
    String[] templates = new String[TEMPLATES];
    for (int t = 0; t < TEMPLATES; t++) {
      templates[t] = template(t);
    }
    Message[] out = new Message[length];
    for (int i = 0; i < length; i++) {
      int r = permutation[recipientRank.sample(random)];
      String recipient = recipients[r];
      if (recipient == null) {
        recipient = recipients[r] = recipientId(r);
      }
      String content = random.nextDouble() < TEMPLATE_SHARE
          ? templates[templateRank.sample(random)]
          : "Your verification code is " + (100_000 + random.nextInt(900_000)) + ". Ref " + i
              + ". Do not share it with anyone.";
      out[i] = Message.builder(recipient).content(content).build();
    }
    return out;
  }

  /** The recipient id of population index {@code i}: a 12-character phone number. */
  public static String recipientId(int i) {
    return "+1555" + String.format("%07d", i);
  }

  static String template(int t) {
    return "Hello! Template " + t + ": your order has shipped and will arrive within "
        + (1 + t % 7) + " days. Track it in the app or reply STOP to opt out.";
  }

  private static int[] permutation(int n, SplittableRandom random) {
    int[] p = new int[n];
    for (int i = 0; i < n; i++) {
      p[i] = i;
    }
    for (int i = n - 1; i > 0; i--) {
      int j = random.nextInt(i + 1);
      int t = p[i];
      p[i] = p[j];
      p[j] = t;
    }
    return p;
  }

  /**
   * Exact Zipf over ranks 0..n-1 by inverse transform on the cumulative distribution. The same 30 lines
   * as fcap-cli's {@code Zipf} ({@code fcap gen}), kept twice on purpose: the only module both may
   * depend on is fcap-core, whose API carries no traffic generator, and the shipped jar no test kit.
   */
  static final class Zipf {
    private final double[] cdf;

    Zipf(int n, double exponent) {
      cdf = new double[n];
      double sum = 0;
      for (int k = 0; k < n; k++) {
        sum += 1.0 / Math.pow(k + 1, exponent);
        cdf[k] = sum;
      }
      for (int k = 0; k < n; k++) {
        cdf[k] /= sum;
      }
    }

    int sample(SplittableRandom random) {
      double u = random.nextDouble();
      int lo = 0;
      int hi = cdf.length - 1;
      while (lo < hi) {
        int mid = (lo + hi) >>> 1;
        if (cdf[mid] < u) {
          lo = mid + 1;
        } else {
          hi = mid;
        }
      }
      return lo;
    }
  }
}
