package dev.fcap.spring;

import dev.fcap.client.Decision;
import dev.fcap.client.FcapClient;
import dev.fcap.client.Message;

/** Decisions by an fcap server, through {@link FcapClient}. */
final class ClientFcap implements Fcap {
  private final FcapClient client;

  ClientFcap(FcapClient client) {
    this.client = client;
  }

  FcapClient client() {
    return client;
  }

  @Override
  public Decision decide(Message message) {
    return client.decide(message);
  }

  @Override
  public Decision check(Message message) {
    return client.check(message);
  }

  @Override
  public boolean release(String decisionId) {
    return client.release(decisionId);
  }

  @Override
  public boolean ready() {
    return client.ready();
  }

  @Override
  public String mode() {
    return "client";
  }
}
