package dev.fcap.client;

/**
 * The server's answer to a release by decision id: {@code released} (also when it was released
 * before: release is idempotent, so a retry after a timeout answers true and gives back nothing more),
 * or why not: {@code reason} is {@code "expired"} (older than the server's {@code release.horizon})
 * or {@code "unknown"} (garbled, forged, denied, or another tenant's decision).
 *
 * @param reason null when released
 */
public record Release(boolean released, String reason) {}
