package dev.fcap.server.guard;

import java.time.Duration;
import java.util.List;

/**
 * What protects the server from hostile callers and web pages (docs/security.md): which {@code Host}
 * and {@code Origin} a keyless server accepts, how long a request may take to arrive, the shape limits
 * of bodies, the bounds on metric labels, and how long a hand-edited rules file must stay unchanged
 * before it is applied.
 *
 * @param allowedHosts further {@code Host} names a server without API keys answers ({@code http.allowedHosts});
 *     loopback names and the listen address are always allowed
 * @param allowedOrigins origins ({@code http://host:port}) whose pages may call the API across origins
 *     ({@code http.allowedOrigins}); the server's own origin is always allowed
 * @param requestTimeout time for a whole request to arrive and be answered ({@code http.requestTimeout}); a
 *     body that has not arrived in time is answered 408
 * @param limits the shape of bodies
 * @param metricsMaxTenants distinct {@code tenant} label values; further tenants count under {@code _other}
 * @param metricsMaxRulesPerTenant distinct {@code rule} label values per tenant; further rules count under
 *     {@code _other}
 * @param rulesSettle how long a hand edit of the rules file must stay unchanged before it is applied
 */
public record Safeguards(List<String> allowedHosts, List<String> allowedOrigins, Duration requestTimeout,
    InputLimits limits, int metricsMaxTenants, int metricsMaxRulesPerTenant, Duration rulesSettle) {
  public static final String OVERFLOW_LABEL = "_other";

  public Safeguards {
    allowedHosts = List.copyOf(allowedHosts);
    allowedOrigins = List.copyOf(allowedOrigins);
  }
}
