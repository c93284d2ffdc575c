package dev.fcap.store.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fcap.store.StoreException.Reason;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.RedisConnectionException;
import io.lettuce.core.RedisException;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.Test;

class FailuresTest {
  private static Reason reason(Throwable t) {
    return Failures.map(new CompletionException(t), "DECIDE").reason();
  }

  @Test
  void timeoutsOutagesAndErrorsAreTold() {
    assertThat(reason(new RedisCommandTimeoutException("timed out"))).isEqualTo(Reason.TIMEOUT);
    assertThat(reason(new RedisConnectionException("refused"))).isEqualTo(Reason.UNAVAILABLE);
    assertThat(reason(new RedisException("Currently not connected. Commands are rejected."))).isEqualTo(Reason.UNAVAILABLE);
    assertThat(reason(new RedisCommandExecutionException("MOVED 3999 127.0.0.1:7001"))).isEqualTo(Reason.UNAVAILABLE);
    assertThat(reason(new RedisCommandExecutionException("ASK 3999 127.0.0.1:7001"))).isEqualTo(Reason.UNAVAILABLE);
    assertThat(reason(new RedisCommandExecutionException("CLUSTERDOWN Hash slot not served"))).isEqualTo(Reason.UNAVAILABLE);
    assertThat(reason(new RedisCommandExecutionException("TRYAGAIN Multiple keys request during rehashing")))
        .isEqualTo(Reason.UNAVAILABLE);
    assertThat(reason(new RedisCommandExecutionException("LOADING Redis is loading"))).isEqualTo(Reason.UNAVAILABLE);
    assertThat(reason(new RedisCommandExecutionException("ERR user_script:1: Script attempted to access ...")))
        .isEqualTo(Reason.ERROR);
    assertThat(reason(new RedisCommandExecutionException("WRONGTYPE Operation against a key"))).isEqualTo(Reason.ERROR);
  }

  @Test
  void theCauseAndWhatFailedAreKept() {
    var cause = new RedisCommandTimeoutException("Command timed out after 1 second(s)");
    var e = Failures.map(new CompletionException(cause), "DECIDE");
    assertThat(e).hasCause(cause).hasMessageContaining("DECIDE").hasMessageContaining("TIMEOUT");
    assertThat(Failures.isNoScript(new RedisCommandExecutionException("NOSCRIPT No matching script"))).isTrue();
  }
}
