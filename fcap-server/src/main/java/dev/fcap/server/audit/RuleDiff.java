package dev.fcap.server.audit;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * One rule as a change left it: its definition before and after, as {@code GET /v1/rules} shows a
 * rule; {@code before} is null for a rule added, {@code after} for a rule deleted.
 */
public record RuleDiff(String rule, JsonNode before, JsonNode after) {}
