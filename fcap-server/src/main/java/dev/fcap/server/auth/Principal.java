package dev.fcap.server.auth;

import dev.fcap.server.guard.ApiException;

/**
 * Who is calling: an API key, or {@link #LOOPBACK} when the server runs without keys (it then
 * listens on loopback only, and every local caller may do everything).
 */
public final class Principal {
  /** The caller of a server without API keys. */
  public static final Principal LOOPBACK = new Principal(null);

  private final ApiKey key;

  Principal(ApiKey key) {
    this.key = key;
  }

  /** The key's name, or {@code local} without keys; recorded as "who" in audit and history. */
  public String name() {
    return key == null ? "local" : key.name();
  }

  /** Refuses (403) unless the key has {@code role} and may use {@code tenant}. */
  public void require(Role role, String tenant) {
    require(role, tenant, null);
  }

  /** Refuses (403) unless the key has {@code role}. */
  public void require(Role role) {
    require(role, (String) null, null);
  }

  /**
   * Refuses (403) unless the key has {@code role} (admin includes suppress) and may use
   * {@code tenant} (null: any); the error names {@code field}, the part of the request that needs the
   * role (null: the request).
   */
  public void require(Role role, String tenant, String field) {
    if (key != null && !key.roles().contains(role) && !(role == Role.SUPPRESS && key.roles().contains(Role.ADMIN))) {
      throw new ApiException(403, "forbidden", "API key '" + key.name() + "' lacks the role '" + role.id()
          + "' needed " + (field == null ? "here" : "for " + field), field);
    }
    if (tenant != null && key != null && !key.allowsTenant(tenant)) {
      throw new ApiException(403, "forbidden", "API key '" + key.name() + "' may not use tenant '" + tenant + "'",
          "tenant");
    }
  }

  public boolean mayUse(String tenant) {
    return key == null || key.allowsTenant(tenant);
  }
}
