package dev.fcap.server.auth;

import java.util.HexFormat;
import java.util.Objects;
import java.util.Set;

/**
 * One configured API key. The secret itself is never configured or kept: only its SHA-256.
 *
 * @param name who the key belongs to; shown in logs, audit and the rules history, never secret
 * @param sha256 the SHA-256 of the secret (32 bytes)
 * @param tenants the tenants the key may use; {@code *} means every tenant
 * @param roles what the key may do
 */
public record ApiKey(String name, byte[] sha256, Set<String> tenants, Set<Role> roles) {
  public static final String ALL_TENANTS = "*";

  public ApiKey {
    Objects.requireNonNull(name, "name");
    if (sha256 == null || sha256.length != 32) {
      throw new IllegalArgumentException("api key '" + name + "': sha256 must be 64 hex digits");
    }
    sha256 = sha256.clone();
    tenants = Set.copyOf(tenants);
    roles = Set.copyOf(roles);
  }

  /** A key from the hex form of the hash, as written in config. */
  public static ApiKey of(String name, String sha256Hex, Set<String> tenants, Set<Role> roles) {
    byte[] hash;
    try {
      hash = HexFormat.of().parseHex(sha256Hex);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("api key '" + name + "': sha256 must be 64 hex digits");
    }
    return new ApiKey(name, hash, tenants, roles);
  }

  public boolean allowsTenant(String tenant) {
    return tenants.contains(ALL_TENANTS) || tenants.contains(tenant);
  }

  @Override
  public String toString() {
    return "ApiKey[" + name + ", tenants=" + tenants + ", roles=" + roles + "]";
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof ApiKey k && k.name.equals(name);
  }

  @Override
  public int hashCode() {
    return name.hashCode();
  }
}
