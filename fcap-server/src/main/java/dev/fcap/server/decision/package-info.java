/**
 * One decision's path through the server, transport-neutral: {@link dev.fcap.server.decision.DecisionService}
 * owns role checks, batch assembly and decision-id checks for both the HTTP and the gRPC API, which only
 * translate.
 */
package dev.fcap.server.decision;
