package dev.fcap.client;

/**
 * One result of {@link FcapClient#decideAll}: a decision, or the server's error for that one message
 * (the other messages of the batch are decided all the same).
 */
public record BatchItem(Decision decision, FcapException error) {

  public boolean isDecision() {
    return decision != null;
  }

  /** The decision; throws the item's error if the server refused this message. */
  public Decision orThrow() {
    if (error != null) {
      throw error;
    }
    return decision;
  }
}
