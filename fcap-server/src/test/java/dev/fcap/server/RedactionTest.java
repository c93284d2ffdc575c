package dev.fcap.server;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class RedactionTest {
  @Test
  void passwordsNeverReachTheLog() {
    assertThat(Redaction.uri("redis://user:s3cr3t@host:6379/0")).isEqualTo("redis://user:***@host:6379/0");
    assertThat(Redaction.uri("redis://:s3cr3t@host:6379")).isEqualTo("redis://:***@host:6379");
    assertThat(Redaction.uri("redis-sentinel://:pw@h1:26379,h2:26379#mymaster"))
        .isEqualTo("redis-sentinel://:***@h1:26379,h2:26379#mymaster").doesNotContain("pw@");
    assertThat(Redaction.uri("redis-cluster://h1:7000,h2:7001")).isEqualTo("redis-cluster://h1:7000,h2:7001");
    assertThat(Redaction.uri("memory")).isEqualTo("memory");
    assertThat(Redaction.uri("file:data/audit.jsonl")).isEqualTo("file:data/audit.jsonl");
  }
}
