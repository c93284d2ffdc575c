package dev.fcap.spring;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.fcap.client.ClientOptions;
import dev.fcap.client.Fallback;
import dev.fcap.client.FcapClient;
import dev.fcap.model.Policy;
import dev.fcap.policy.PolicyParser;
import io.micrometer.core.instrument.MeterRegistry;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.actuate.health.HealthIndicator;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The {@link Fcap} bean: a client of {@code fcap.url}, or an embedded engine with {@code fcap.rules}
 * or {@code fcap.rules-file}; timed and counted in the application's {@link MeterRegistry} when it has
 * one; {@link CapBeforeSend} methods guarded; an Actuator health indicator {@code fcap} when Actuator
 * is present. An application that defines its own {@link Fcap} bean keeps it.
 */
@AutoConfiguration
@EnableConfigurationProperties(FcapProperties.class)
public class FcapAutoConfiguration {

  @Bean
  @ConditionalOnMissingBean(Fcap.class)
  Fcap fcap(FcapProperties properties, ObjectProvider<MeterRegistry> registry) {
    Fcap fcap = properties.getUrl() != null && !properties.getUrl().isBlank() ? new ClientFcap(client(properties))
        : new EmbeddedFcap(policies(properties));
    MeterRegistry r = registry.getIfAvailable();
    return r == null ? fcap : new MeteredFcap(fcap, r);
  }

  @Bean
  static CapBeforeSendPostProcessor fcapCapBeforeSendPostProcessor(ObjectProvider<Fcap> fcap) {
    return new CapBeforeSendPostProcessor(fcap);
  }

  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(HealthIndicator.class)
  static class Health {
    @Bean
    @ConditionalOnMissingBean(name = "fcapHealthIndicator")
    HealthIndicator fcapHealthIndicator(Fcap fcap, FcapProperties properties) {
      return new FcapHealthIndicator(fcap, properties.getUrl());
    }
  }

  static FcapClient client(FcapProperties p) {
    Fallback fallback = switch (p.getFallback()) {
      case ALLOW -> Fallback.allow();
      case DENY -> Fallback.deny();
      case FAIL -> Fallback.fail();
    };
    return FcapClient.create(ClientOptions.builder(p.getUrl()).apiKey(p.getApiKey())
        .requestTimeout(p.getRequestTimeout()).maxAttempts(p.getMaxAttempts()).fallback(fallback).build());
  }

  /** The rules of the embedded engine, validated exactly as the server validates a rules file. */
  static List<Policy> policies(FcapProperties p) {
    boolean inline = !p.getRules().isEmpty();
    if (p.getRulesFile() != null && inline) {
      throw new IllegalStateException("fcap: set either fcap.rules or fcap.rules-file, not both");
    }
    if (p.getRulesFile() != null) {
      try {
        return PolicyParser.parseFile(Path.of(p.getRulesFile()));
      } catch (IOException e) {
        throw new UncheckedIOException("fcap.rules-file: cannot read " + p.getRulesFile(), e);
      }
    }
    if (!inline) {
      throw new IllegalStateException("fcap: set fcap.url (decisions by an fcap server) or fcap.rules / "
          + "fcap.rules-file (decisions in this application)");
    }
    ObjectMapper json = new ObjectMapper();
    ArrayNode rules = json.createArrayNode();
    for (FcapProperties.RuleProperties r : p.getRules()) {
      ObjectNode n = rules.addObject();
      put(n, "id", r.getId());
      put(n, "description", r.getDescription());
      if (r.getLimit() != null) {
        n.put("limit", r.getLimit());
      }
      put(n, "window", r.getWindow());
      if (!r.getKey().isEmpty() || r.getSendWindow() == null) {
        r.getKey().forEach(n.putArray("key")::add);
      }
      condition(n, "match", r.getMatch());
      condition(n, "exempt", r.getExempt());
      put(n, "algorithm", r.getAlgorithm());
      if (r.getPrecision() != null) {
        n.put("precision", r.getPrecision());
      }
      put(n, "mode", r.getMode());
      put(n, "zone", r.getZone());
      if (r.getSendWindow() != null) {
        sendWindow(n.putObject("sendWindow"), r.getSendWindow());
      }
    }
    java.time.ZoneId timeZone = PolicyParser.parseTimeZone(p.getTenant(),
        p.getTimeZone() == null ? null : json.getNodeFactory().textNode(p.getTimeZone()));
    return List.of(new Policy(p.getTenant(), 1, PolicyParser.parseRules(p.getTenant(), rules), timeZone));
  }

  private static void sendWindow(ObjectNode n, FcapProperties.SendWindowProperties w) {
    put(n, "zone", w.getZone());
    ArrayNode allow = n.putArray("allow");
    for (FcapProperties.IntervalProperties i : w.getAllow()) {
      ObjectNode o = allow.addObject();
      if (!i.getDays().isEmpty()) {
        i.getDays().forEach(o.putArray("days")::add);
      }
      put(o, "from", i.getFrom());
      put(o, "to", i.getTo());
    }
    if (!w.getClosed().isEmpty()) {
      w.getClosed().forEach(n.putArray("closed")::add);
    }
  }

  private static void put(ObjectNode n, String field, String value) {
    if (value != null) {
      n.put(field, value);
    }
  }

  private static void condition(ObjectNode n, String field, Map<String, List<String>> values) {
    if (!values.isEmpty()) {
      ObjectNode c = n.putObject(field);
      values.forEach((k, v) -> v.forEach(c.putArray(k)::add));
    }
  }
}
