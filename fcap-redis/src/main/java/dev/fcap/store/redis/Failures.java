package dev.fcap.store.redis;

import dev.fcap.store.StoreException;
import dev.fcap.store.StoreException.Reason;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.RedisConnectionException;
import io.lettuce.core.RedisException;
import io.lettuce.core.RedisNoScriptException;
import java.io.IOException;
import java.nio.channels.ClosedChannelException;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;

/**
 * Maps what Lettuce and Redis throw to a {@link StoreException} with a {@link Reason}, so that the
 * server's failure policy can tell an outage from a bug.
 *
 * <ul>
 *   <li>TIMEOUT: the command timed out. The script may still have run: a timed-out DECIDE may have
 *       been recorded (never half-recorded), so the failure policy errs on the side of refusing.
 *   <li>UNAVAILABLE: not connected, connection lost, Redis loading or failing over, the cluster down
 *       or still redirecting after the allowed redirects (MOVED/ASK/TRYAGAIN storms), a read-only
 *       replica where a master was expected.
 *   <li>ERROR: Redis answered with any other error (a script error, a wrong type at the key).
 * </ul>
 */
final class Failures {
  private static final String[] UNAVAILABLE_PREFIXES = {
    "LOADING", "MASTERDOWN", "CLUSTERDOWN", "READONLY", "TRYAGAIN", "MOVED", "ASK", "BUSY", "NOREPLICAS",
    "UNBLOCKED", "NOTREADY",
  };

  private Failures() {}

  static Throwable unwrap(Throwable t) {
    while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) {
      t = t.getCause();
    }
    return t;
  }

  static boolean isNoScript(Throwable t) {
    t = unwrap(t);
    return t instanceof RedisNoScriptException
        || (t instanceof RedisCommandExecutionException && String.valueOf(t.getMessage()).startsWith("NOSCRIPT"));
  }

  static StoreException map(Throwable error, String what) {
    Throwable t = unwrap(error);
    if (t instanceof StoreException se) {
      return se;
    }
    Reason reason = reason(t);
    return new StoreException(reason, what + " failed (" + reason + "): " + t.getMessage(), t);
  }

  private static Reason reason(Throwable t) {
    if (t instanceof RedisCommandTimeoutException || t instanceof TimeoutException) {
      return Reason.TIMEOUT;
    }
    if (t instanceof RedisCommandExecutionException) {
      String message = String.valueOf(t.getMessage());
      for (String prefix : UNAVAILABLE_PREFIXES) {
        if (message.startsWith(prefix)) {
          return Reason.UNAVAILABLE;
        }
      }
      return Reason.ERROR;
    }
    if (t instanceof RedisConnectionException || t instanceof IOException || t instanceof ClosedChannelException
        || t instanceof CancellationException) {
      return Reason.UNAVAILABLE;
    }
    if (t instanceof RedisException) {
      // "Currently not connected", "Connection closed", "Connection disconnected", redirect limits...
      return Reason.UNAVAILABLE;
    }
    return Reason.ERROR;
  }
}
