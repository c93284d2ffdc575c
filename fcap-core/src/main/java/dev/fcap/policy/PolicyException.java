package dev.fcap.policy;

import java.util.List;
import java.util.stream.Collectors;

/** A policy was refused, whole: nothing of it was applied. Lists every error found. */
public final class PolicyException extends RuntimeException {
  private static final long serialVersionUID = 1L;
  private final transient List<PolicyError> errors;

  public PolicyException(List<PolicyError> errors) {
    super(errors.stream().map(PolicyError::toString).collect(Collectors.joining("; ")));
    this.errors = List.copyOf(errors);
  }

  public List<PolicyError> errors() {
    return errors;
  }
}
