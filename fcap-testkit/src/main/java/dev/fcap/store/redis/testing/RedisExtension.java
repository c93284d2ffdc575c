package dev.fcap.store.redis.testing;

import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * JUnit 5 extension that runs a {@link RedisDeployment} for a test class:
 *
 * <pre>
 * &#64;RegisterExtension static final RedisExtension REDIS = RedisExtension.cluster();
 * ... RedisStore.connect(REDIS.uri()) ...
 * </pre>
 *
 * The processes start before the first test of the class and stop after the last. A missing
 * {@code redis-server} fails the class (never a silent skip).
 */
public final class RedisExtension implements BeforeAllCallback, AfterAllCallback {
  private final RedisDeployment.Kind kind;
  private RedisDeployment deployment;

  private RedisExtension(RedisDeployment.Kind kind) {
    this.kind = kind;
  }

  public static RedisExtension standalone() {
    return new RedisExtension(RedisDeployment.Kind.STANDALONE);
  }

  public static RedisExtension sentinel() {
    return new RedisExtension(RedisDeployment.Kind.SENTINEL);
  }

  public static RedisExtension cluster() {
    return new RedisExtension(RedisDeployment.Kind.CLUSTER);
  }

  @Override
  public void beforeAll(ExtensionContext context) throws Exception {
    deployment = RedisDeployment.start(kind);
  }

  @Override
  public void afterAll(ExtensionContext context) {
    if (deployment != null) {
      deployment.close();
      deployment = null;
    }
  }

  public RedisDeployment deployment() {
    if (deployment == null) {
      throw new IllegalStateException("the Redis deployment runs only between beforeAll and afterAll");
    }
    return deployment;
  }

  public String uri() {
    return deployment().uri();
  }
}
