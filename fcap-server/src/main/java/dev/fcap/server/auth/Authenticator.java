package dev.fcap.server.auth;

import dev.fcap.server.guard.ApiException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.List;
import java.util.function.Consumer;

/**
 * Finds the API key of a presented secret.
 *
 * <p>The presented secret is hashed with SHA-256 and compared with every configured hash using
 * {@link MessageDigest#isEqual} (constant time in the length), without stopping at the first match:
 * how long a check takes says nothing about which bytes of which key were right. Only hashes are
 * held, so a leaked config or heap dump does not leak usable secrets.
 *
 * <p>Every refusal is reported to the {@code onFailure} listener with its reason ({@code missing},
 * {@code malformed}, {@code unknown}): the server counts it ({@code fcap_auth_failures_total}) and logs
 * it at a bounded rate. Never the presented secret.
 */
public final class Authenticator {
  private final List<ApiKey> keys;
  private final Consumer<String> onFailure;

  public Authenticator(List<ApiKey> keys) {
    this(keys, reason -> { });
  }

  public Authenticator(List<ApiKey> keys, Consumer<String> onFailure) {
    this.keys = List.copyOf(keys);
    this.onFailure = onFailure;
  }

  /** True when no keys are configured: every (loopback) caller is {@link Principal#LOOPBACK}. */
  public boolean open() {
    return keys.isEmpty();
  }

  /**
   * The principal for a request's credentials: the value of {@code Authorization: Bearer ...} or
   * {@code X-Api-Key}. Throws a 401 {@link ApiException} when keys are configured and the secret is
   * missing or unknown.
   */
  public Principal authenticate(String authorization, String apiKeyHeader) {
    if (keys.isEmpty()) {
      return Principal.LOOPBACK;
    }
    String secret = apiKeyHeader;
    if (secret == null && authorization != null) {
      if (!authorization.regionMatches(true, 0, "Bearer ", 0, 7)) {
        throw unauthorized("malformed", "the Authorization header must be 'Bearer <api key>'");
      }
      secret = authorization.substring(7).trim();
    }
    if (secret == null || secret.isEmpty()) {
      throw unauthorized("missing", "an API key is required: send 'Authorization: Bearer <api key>' or 'X-Api-Key: <api key>'");
    }
    byte[] hash = sha256(secret);
    ApiKey found = null;
    for (ApiKey k : keys) {
      if (MessageDigest.isEqual(k.sha256(), hash) && found == null) {
        found = k;
      }
    }
    if (found == null) {
      throw unauthorized("unknown", "unknown API key");
    }
    return new Principal(found);
  }

  private ApiException unauthorized(String reason, String message) {
    onFailure.accept(reason);
    return new ApiException(401, "unauthenticated", message, null);
  }

  /** SHA-256 of a secret's UTF-8 bytes: what goes into the config. */
  public static byte[] sha256(String secret) {
    try {
      return MessageDigest.getInstance("SHA-256").digest(secret.getBytes(StandardCharsets.UTF_8));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is part of every Java platform", e);
    }
  }
}
